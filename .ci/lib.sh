# shellcheck shell=bash
# What bitplan's CI steps share: sourced by .ci/run and by every step in
# .ci/steps/, never run by itself. It checks the bash version, moves to the
# repository root, sets the environment every step builds in, and defines the
# helpers (echoed commands, apt-get, the CPU's kernels, a step's frame when
# it runs alone, background jobs stopped on the way out).
#
# A step is one script, .ci/steps/ID.sh, that runs by itself from anywhere:
#
#   #!/usr/bin/env bash
#   # The ID step: what it guards; what it needs first.
#   set -euo pipefail
#   # shellcheck source=SCRIPTDIR/../lib.sh
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
#   ci_step_start ID
#   run cargo ...
#
# and one line in .ci/run, `step ID "ID: title"`, which places it in CI's order.

set -euo pipefail

# EPOCHREALTIME needs bash 5.0, `wait -n -p` 5.1.
if ((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] < 501)); then
    echo "error: $0 needs bash >= 5.1 (this is $BASH_VERSION)" >&2
    exit 1
fi

# This directory (.ci), absolute; the steps run from the repository root.
CI_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$CI_DIR/.."

# The kernels step sets BITMAP_CORE_KERNEL itself; a value inherited from the
# caller would silently turn the default-kernel runs into forced ones.
unset BITMAP_CORE_KERNEL

# Every build of a CI run starts from nothing and is built once, so
# incremental compilation only writes caches that no later build reads, and
# no one runs a debugger on CI's binaries: line tables keep file and line in
# a panic's backtrace. Measured on the 2-core machine (2026-12-04, the tests
# step's `cargo test --workspace --all-features --no-run` from an empty
# target directory): 259 s as a developer builds, 200 s without incremental
# compilation, 186 s with line tables instead of full debug info too. Both
# apply to every step's dev and test builds (clippy, docs, tests, aarch64)
# but Miri's (see miri_job in steps/miri.sh); the tests and kernel steps see
# the same values, so the kernel matrix still reuses the tests step's
# executables (every step sets them here, also when it runs alone).
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=line-tables-only

# The aarch64 cross linker's sysroot: the tooling step installs its libc
# (libc6-dev-arm64-cross), the aarch64 step links and runs against it.
AARCH64_SYSROOT=/usr/aarch64-linux-gnu

# Colour only on a terminal: CI logs are read as plain text.
if [[ -t 1 ]]; then
    bold=$'\033[1m' red=$'\033[1;31m' cyan=$'\033[36m' reset=$'\033[0m'
else
    bold="" red="" cyan="" reset=""
fi

# Whole seconds (rounded) from EPOCHREALTIME value $1 to now.
elapsed_since() {
    local start=$1 now=$EPOCHREALTIME
    local start_us=$((10#${start%.*} * 1000000 + 10#${start#*.}))
    local now_us=$((10#${now%.*} * 1000000 + 10#${now#*.}))
    echo $(((now_us - start_us + 500000) / 1000000))
}

# "1m05s" / "42s".
fmt_seconds() {
    local s=$1
    if ((s >= 60)); then
        printf '%dm%02ds' $((s / 60)) $((s % 60))
    else
        printf '%ds' "$s"
    fi
}

# Echoes a command, then runs it; `env` handles leading VAR=value words.
run() {
    printf '%s+ %s%s\n' "$cyan" "$*" "$reset"
    env "$@"
}

# ---------------------------------------------------------------------------
# A step's frame
# ---------------------------------------------------------------------------

# Process groups of jobs started in the background, and the directory of
# their logs (see run_miri_jobs in steps/miri.sh). The step's EXIT trap
# stops them, however the step ends.
background_jobs=()
background_logdir=""

stop_background_jobs() {
    local pid
    for pid in "${background_jobs[@]}"; do
        kill -TERM -- "-$pid" 2>/dev/null || :  # the job may have finished
    done
    [[ -z $background_logdir ]] || rm -rf "$background_logdir"
}

# `ci_step_start ID`, first thing in .ci/steps/ID.sh. Under .ci/run (which
# exports BITPLAN_CI_RUN=1) the header, the time and the summary are
# .ci/run's; run alone, the step prints a header and a closing line of its
# own. Either way its exit status is the failing command's (set -e), and
# an interrupt stops it, background jobs included, with 130 (143 for TERM).
ci_step_start() {
    ci_step_id=$1
    ci_step_began=$EPOCHREALTIME
    trap ci_step_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    if [[ -z ${BITPLAN_CI_RUN:-} ]]; then
        printf '%s==> [%s] %s (.ci/steps/%s.sh, alone)%s\n' "$bold" "$(date -u +%H:%M:%S)" \
            "$ci_step_id" "$ci_step_id" "$reset"
    fi
}

ci_step_exit() {
    local rc=$?
    # A second signal (.ci/run passes a TERM on) must not cut the cleanup short.
    trap '' INT TERM
    stop_background_jobs
    if [[ -z ${BITPLAN_CI_RUN:-} ]]; then
        local took
        took=$(fmt_seconds "$(elapsed_since "$ci_step_began")")
        if ((rc == 0)); then
            printf '%s<== %s: ok in %s%s\n' "$bold" "$ci_step_id" "$took" "$reset"
        else
            printf '%s<== %s: FAILED (exit %s) in %s%s\n' "$red" "$ci_step_id" "$rc" "$took" "$reset"
        fi
    fi
    exit "$rc"
}

# `need_step STEP WHAT`: fails the running step, which needs WHAT from the
# step STEP, with a message that says how to get it.
need_step() {
    echo "error: the ${ci_step_id:-?} step needs $2, which the $1 step provides:" \
        "run \`bash .ci/steps/$1.sh\` first (or \`CI_STEPS=\"$1 ${ci_step_id:-}\" bash .ci/run\`)" >&2
    exit 1
}

# ---------------------------------------------------------------------------
# What the tooling step installs, and the checks of the steps that need it
# ---------------------------------------------------------------------------

as_root() {
    if ((EUID == 0)); then
        "$@"
    elif command -v sudo >/dev/null; then
        sudo "$@"
    else
        echo "error: need root (or sudo) to run: $*" >&2
        return 1
    fi
}

# apt-get quietly, but print its whole output if it fails.
apt_quiet() {
    local log
    log=$(mktemp)
    echo "+ apt-get $*"
    if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get "$@" >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "error: apt-get $* failed" >&2
        return 1
    fi
    rm -f "$log"
}

# The Debian packages missing for the aarch64 step, one word each (none: an
# empty line). System packages: a C toolchain to link, the aarch64 cross
# linker and libc, and qemu to run aarch64 test binaries.
missing_system_packages() {
    local missing=()
    command -v cc >/dev/null || missing+=(gcc libc6-dev)
    command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
    command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu)
    # The link needs the C runtime's start files and libc's link-time files
    # (libc6-dev-arm64-cross); libc.so.6 alone (libc6-arm64-cross, which
    # other packages pull in) runs binaries but cannot link them.
    local crt
    for crt in Scrt1.o crti.o crtn.o libc.so libc.so.6; do
        if [[ ! -e $AARCH64_SYSROOT/lib/$crt ]]; then
            missing+=(libc6-dev-arm64-cross)
            break
        fi
    done
    echo "${missing[*]}"
}

# Python (>= 3.9, with venv and pip) for the Python package's wheel and
# tests; scripts/test-python makes the venv and installs the PyPI packages.
python_ready() {
    python3 -c 'import sys, venv, ensurepip; assert sys.version_info >= (3, 9)' 2>/dev/null
}

# Whether a nightly toolchain is installed. (Listing, not `rustup run
# nightly`, which may itself install nightly with the default profile.)
nightly_installed() {
    grep -q '^nightly-' <<<"$(rustup toolchain list)"
}

# Whether the nightly toolchain has the components Miri needs: miri and
# rust-src.
nightly_has_miri() {
    local installed
    installed=$(rustup component list --toolchain nightly --installed)
    grep -q '^miri' <<<"$installed" && grep -q '^rust-src' <<<"$installed"
}

# ---------------------------------------------------------------------------
# The CPU's kernels (the kernels step, and .ci/run's title for it)
# ---------------------------------------------------------------------------

# Whether /proc/cpuinfo lists every one of the CPU flags given (cpuinfo's
# spelling: `avx512_vpopcntdq`, where std says `avx512vpopcntdq`).
cpu_has() {
    local flags flag
    flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
    for flag in "$@"; do
        [[ $flags == *" $flag "* ]] || return 1
    done
}

# The kernels this machine can run. CPU flags are read from /proc/cpuinfo,
# which agrees with std's run-time detection on Linux (steps/kernels.sh
# checks that it does). Forcing an unavailable kernel is an error by design,
# so only available ones are listed.
available_kernels() {
    local kernels=(scalar portable)
    cpu_has avx2 popcnt && kernels+=(avx2)
    cpu_has avx512f avx512bw avx512vl avx512_vpopcntdq avx2 popcnt && kernels+=(avx512)
    [[ $(uname -m) == aarch64 ]] && kernels+=(neon)
    echo "${kernels[@]}"
}

# What a forced-kernel run leaves out (the kernels step's runs, and the
# aarch64 step's forced one): bitmap-core's unit tests that call each
# kernel directly against a naive reference (`kernel::tests::*_reference`,
# the tail and uninit checks, and `kernel::bit_tests`). They call
# `Kernel` values, not the dispatch, so BITMAP_CORE_KERNEL does not change
# what they run: the tests step ran them over every available kernel, with
# the same deterministic inputs, and a forced run repeated exactly that
# (the bit-by-bit references in a debug build, about 50 s of CPU a run).
# The unit tests that read BITMAP_CORE_KERNEL (`environment_variable_*`,
# `dispatched_functions_agree_with_the_scalar_kernel`) run in every forced
# run, as does everything else of the kernels step's crates.
# shellcheck disable=SC2034  # used by the steps that source this file
KERNEL_DIRECT_TESTS=(--skip kernel::bit_tests:: --skip _match_reference --skip _matches_reference
    --skip first_wins_uninit_writes_every_word --skip kernels_never_write_past_the_slice)
