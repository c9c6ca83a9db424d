#!/usr/bin/env bash
# The miri step: Miri checks the kernels' unsafe code for undefined
# behaviour. Isolation is off because the tests read BITMAP_CORE_KERNEL and
# BITMAP_CORE_TEST_KERNELS.
#
# All of bitmap-core's `unsafe` is in src/kernel/, and its unit tests
# (`kernel::`) call each kernel directly over every operation, input count
# and loop shape (under Miri, one length of each loop shape: see
# `lengths()` in kernel/tests.rs). So Miri runs those, once per kernel with
# `unsafe` code, each job restricted to its own kernel
# (BITMAP_CORE_TEST_KERNELS):
#   - default features: the portable kernel (wide's SSE2 backend), with
#     the rest of the unit tests (Bitmap, SplitWriter, storage) over it;
#   - +avx2,+popcnt,+bmi2: the AVX2 kernel's `kernel::tests` and
#     `kernel::class_tests`, and the
#     bit-move tests (`kernel::bit_tests`), whose `unsafe` code is BMI2's
#     pext/pdep moves and AVX2's byte-rank reduction (`bits::*_best` takes
#     them where the CPU has BMI2 and AVX2, and every kernel's table points
#     at `*_best`). They ran in the portable job before, where `*_best`
#     takes the safe `Soft` moves: Miri checked no `unsafe` code of ours
#     there, and none of BMI2's;
#   - the AVX-512 features: the AVX-512 kernel's `kernel::tests` and
#     `kernel::class_tests` (Miri
#     lacks `vpternlogq`, so there the kernel evaluates its truth tables
#     with AND/OR/NOT; see kernel/x86_64/avx512/lanes.rs);
# and one integration test binary (LMCache's cases) through dispatch. Not
# the scalar kernel, which has no `unsafe`, and not the other integration
# tests or the doctests: they reach the same kernel code through the safe
# `Bitmap` API, and under Miri they took over 15 minutes. Not GFNI's row
# split either (AVX-512's `split_rows` for 8 and 64 rows): no job enables
# `gfni`. docs/FUZZING.md gives the command for the full run.
#
# Each job builds its own feature set's tests and runs them. Miri runs a
# test binary on one thread, so a job's build overlaps the other job's run
# (building all three first, one after the other, left a core idle). The
# longest jobs go first, so that the two cores stay busy to the end; the
# dispatch job goes last, as it shares the portable job's build.
#
# Needs a nightly toolchain with miri and rust-src (the tooling step
# installs them).
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start miri

# `env` arguments that take lib.sh's CARGO_INCREMENTAL and
# CARGO_PROFILE_DEV_DEBUG back to cargo's defaults (Miri's builds).
CARGO_BUILD_DEFAULTS=(-u CARGO_INCREMENTAL -u CARGO_PROFILE_DEV_DEBUG)
# The target features that make the AVX-512 kernel available under Miri.
AVX512_FEATURES="+avx512f,+avx512bw,+avx512vl,+avx512vpopcntdq,+avx2,+popcnt"
# The target features of the AVX2 kernel's Miri job, with BMI2 for the bit
# moves (see the job list at the end).
AVX2_BMI2_FEATURES="+avx2,+popcnt,+bmi2"

# One Miri run: `miri_job KERNEL TARGET_FEATURES CARGO_TEST_ARGS...`.
# TARGET_FEATURES (e.g. "+avx2,+popcnt") builds with those features enabled,
# which is how Miri is told the "CPU" has them: under Miri, run-time feature
# detection reports exactly the compile-time features. Such a build gets its
# own target directory, since different RUSTFLAGS would rebuild the other.
# MIRI_TEST_KERNELS, if set, restricts the kernel unit tests to those
# kernels (BITMAP_CORE_TEST_KERNELS).
miri_job() {
    local kernel=$1 features=$2
    shift 2
    # Miri's builds keep cargo's defaults for incremental compilation and
    # debug info, as in every Miri timing in docs/CI.md. A run with the
    # values exported by lib.sh reaching Miri too (2026-12-04) took 7m38s
    # here, its jobs 1.6 to 1.7 times as long as in the run before,
    # against 1.2 to 1.5 times for the steps that no change touched
    # (clippy, kernels); the next run, with the defaults, 5m49s (1.2 to
    # 1.4 times, against 1.0 to 1.15). On a machine this noisy that is no
    # clear effect either way; Miri's jobs are mostly interpretation.
    local env=("${CARGO_BUILD_DEFAULTS[@]}" MIRIFLAGS=-Zmiri-disable-isolation BITMAP_CORE_KERNEL="$kernel")
    [[ -z ${MIRI_TEST_KERNELS:-} ]] || env+=(BITMAP_CORE_TEST_KERNELS="$MIRI_TEST_KERNELS")
    if [[ -n $features ]]; then
        env+=(RUSTFLAGS="-C target-feature=$features"
            CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/miri-${features//[^a-z0-9]/}")
    fi
    run "${env[@]}" cargo +nightly miri test -p bitmap-core --all-features "$@"
}

# Runs `miri_job` for each spec "KERNEL|TARGET_FEATURES|CARGO_TEST_ARGS" or
# "KERNEL|TARGET_FEATURES|CARGO_TEST_ARGS|TEST_KERNELS" (MIRI_TEST_KERNELS), as
# many at a time as there are cores: Miri interprets a whole test binary on
# one host thread, so separate processes are the only way to use the second
# core. Each job's output is printed in one piece when it finishes; the step
# fails if any job failed, after all have finished (so every failure shows).
run_miri_jobs() {
    local max_jobs spec
    max_jobs=$(nproc)
    background_logdir=$(mktemp -d)
    local logdir=$background_logdir
    local -A job_spec=() job_start=()
    local running=0 failures=0 next=0
    local specs=("$@")
    local pid rc kernel features args test_kernels
    # Job control gives each job its own process group, so that an
    # interrupted CI run can stop a job's cargo and Miri processes too (see
    # stop_background_jobs in lib.sh, which the step's EXIT trap calls);
    # without it, background jobs ignore SIGINT.
    set -m
    while ((next < ${#specs[@]} || running > 0)); do
        if ((next < ${#specs[@]} && running < max_jobs)); then
            spec=${specs[$next]}
            IFS='|' read -r kernel features args test_kernels <<<"$spec"
            read -ra args <<<"$args"
            (MIRI_TEST_KERNELS=$test_kernels miri_job "$kernel" "$features" "${args[@]}") >"$logdir/$next.log" 2>&1 &
            pid=$!
            background_jobs+=("$pid")
            job_spec[$pid]="$next|$spec"
            job_start[$pid]=$EPOCHREALTIME
            printf '[%s] started miri job: %s\n' "$(date -u +%H:%M:%S)" "$spec"
            running=$((running + 1))
            next=$((next + 1))
            continue
        fi
        rc=0
        wait -n -p pid || rc=$?
        running=$((running - 1))
        local index=${job_spec[$pid]%%|*} done_spec=${job_spec[$pid]#*|}
        printf '\n%s--- miri job %s: %s (%s)%s\n' "$bold" "$done_spec" \
            "$( ((rc == 0)) && echo ok || echo "FAILED, exit $rc")" \
            "$(fmt_seconds "$(elapsed_since "${job_start[$pid]}")")" "$reset"
        cat "$logdir/$index.log"
        ((rc == 0)) || failures=$((failures + 1))
    done
    set +m
    background_jobs=()
    rm -rf "$logdir"
    background_logdir=""
    if ((failures > 0)); then
        echo "error: $failures miri job(s) failed (see above)" >&2
        return 1
    fi
}

if ! nightly_installed || ! nightly_has_miri; then
    need_step tooling "a nightly toolchain with miri and rust-src"
fi
run "${CARGO_BUILD_DEFAULTS[@]}" cargo +nightly miri setup
jobs=()
if [[ $(uname -m) == x86_64 ]]; then
    jobs+=("avx2|$AVX2_BMI2_FEATURES|--lib kernel::|avx2")
fi
# The portable run of the lib's tests (all but the AVX2-only bit
# moves) in two jobs, its kernel tests (6m29s of its 7m36s on a slow
# machine) and the rest, so that two cores pack the jobs: the rest
# runs after AVX2's long job, while the other core takes the portable
# kernel tests, then AVX-512's (12m54s before the split).
jobs+=("portable||--lib kernel:: -- --skip kernel::bit_tests|portable")
if [[ $(uname -m) == x86_64 ]]; then
    jobs+=("avx512|$AVX512_FEATURES|--lib kernel:: -- --skip kernel::bit_tests|avx512")
fi
jobs+=("portable||--lib -- --skip kernel::|portable")
jobs+=("portable||--test lmcache|portable")
run_miri_jobs "${jobs[@]}"
