#!/usr/bin/env bash
# The kernels step: the Rust suites of the kernel-dependent crates once per
# forced kernel: the default run of the tests step only exercised the
# fastest one. Nothing is rebuilt: the kernel is chosen at run time, and the
# executables are the tests step's. The doctests run too, from the same
# build. What a forced run leaves out: KERNEL_DIRECT_TESTS (lib.sh).
#
# Then checks that the kernels tested are exactly those bitmap-core detects
# (`prefetch-plan features`), so that neither a cpuinfo parsing slip here nor
# a detection bug in the crate can silently skip a kernel (AVX-512 above
# all: most machines lack it, so a skip would look normal).
# The kernel that the default run selected itself (`active` in the report,
# with BITMAP_CORE_KERNEL unset, as in the tests step) is not run again:
# that run was this one.
#
# Needs the tests step's build (`cargo test --workspace --all-features`):
# if there is none, this step builds its executables first, and says so;
# the auto-selected kernel's run stays the tests step's.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start kernels

# The crates whose results depend on the kernel: bitmap-core's, and the
# plans, folds and tier states computed over it. (The CLI and the Python
# package only convert and call into these; running their suites four more
# times cost minutes and tested no other kernel code.)
KERNEL_PACKAGES=(bitmap-core prefetch-policy tier-state)

# The test executables of the tests step's build (`cargo test --workspace
# --all-features`) that belong to KERNEL_PACKAGES, one "crate-directory
# target kind executable" per line. They are run directly rather than through `cargo
# test -p bitmap-core -p prefetch-policy`: that resolves features for those
# two packages alone (no bytemuck/extern_crate_alloc, either/std, ... from
# the rest of the workspace), and so rebuilt 20 crates, about a minute of
# CI, to test the same code.
kernel_test_executables() {
    local metadata
    metadata=$(cargo metadata --no-deps --format-version 1)
    cargo test --workspace --all-features --no-run --message-format=json 2>/dev/null |
        python3 -c '
import json, os, sys
wanted = set(sys.argv[2:])
manifests = {p["manifest_path"] for p in json.loads(sys.argv[1])["packages"] if p["name"] in wanted}
for line in sys.stdin:
    message = json.loads(line)
    if (message.get("reason") == "compiler-artifact" and message.get("executable") and message["profile"]["test"]
            and message["manifest_path"] in manifests):
        kind = "lib" if "lib" in message["target"]["kind"] else "test"
        print(os.path.dirname(message["manifest_path"]), message["target"]["name"], kind, message["executable"])
' "$metadata" "${KERNEL_PACKAGES[@]}"
}

prefetch_plan=${CARGO_TARGET_DIR:-target}/debug/prefetch-plan
if [[ ! -x $prefetch_plan ]]; then
    echo "kernels: no build from the tests step ($prefetch_plan is missing): building its test" \
        "executables first (the auto-selected kernel's run is the tests step's: .ci/steps/tests.sh)"
    run cargo test --workspace --all-features --no-run
fi

tested=()
report=$(env -u BITMAP_CORE_KERNEL "$prefetch_plan" features --json)
echo "$report"
active=$(grep -o '"active": *"[a-z0-9]*"' <<<"$report" | grep -o '"[a-z0-9]*"$' | tr -d '"')
executables=$(kernel_test_executables)
if [[ -z $executables ]]; then
    echo "error: no test executables of ${KERNEL_PACKAGES[*]} in the tests step's build" >&2
    exit 1
fi
for k in $(available_kernels); do
    if [[ $k == "$active" ]]; then
        printf '\n%s--- BITMAP_CORE_KERNEL=%s: the tests step ran it (auto-selected)%s\n' "$bold" "$k" "$reset"
    else
        printf '\n%s--- BITMAP_CORE_KERNEL=%s%s\n' "$bold" "$k" "$reset"
        while read -r directory target kind executable; do
            skip=()
            [[ $target/$kind != bitmap_core/lib ]] || skip=("${KERNEL_DIRECT_TESTS[@]}")
            # As `cargo test` runs them: from the crate's directory.
            (cd "$directory" && run BITMAP_CORE_KERNEL="$k" "$executable" -q "${skip[@]}")
        done <<<"$executables"
        run BITMAP_CORE_KERNEL="$k" cargo test --workspace --all-features --doc -q
    fi
    tested+=("$k")
done
detected=$(grep -o '"kernels": *\[[^]]*\]' <<<"$report" | grep -o '"[a-z0-9]*"' | grep -v kernels | tr -d '"' | xargs)
echo "kernels tested: ${tested[*]}"
echo "kernels detected by bitmap-core: $detected"
if [[ "${tested[*]}" != "$detected" ]]; then
    echo "error: the kernels tested (from /proc/cpuinfo) are not those bitmap-core detects" >&2
    exit 1
fi
if cpu_has avx512f avx512bw avx512vl avx512_vpopcntdq && [[ " ${tested[*]} " != *" avx512 "* ]]; then
    echo "error: this CPU reports AVX-512 (F, BW, VL, VPOPCNTDQ) but the avx512 kernel was not tested" >&2
    exit 1
fi
if ! cpu_has avx512f avx512bw avx512vl avx512_vpopcntdq; then
    echo "avx512: skipped (this CPU lacks AVX512F, BW, VL or VPOPCNTDQ; Miri checks the kernel instead)"
fi
