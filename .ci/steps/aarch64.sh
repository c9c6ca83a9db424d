#!/usr/bin/env bash
# The aarch64 step: NEON under qemu. The default run checks that dispatch
# picks NEON by itself; the forced runs check NEON and the portable kernel
# (wide's NEON backend). Doctests run too (cargo cross-compiles them and
# uses the runner).
#
# Built at opt-level 1: qemu interprets every instruction, and unoptimised
# SIMD code (each intrinsic an out-of-line call) made one run take ~4 minutes
# instead of ~17 s. Only the optimisation level changes: debug assertions and
# overflow checks stay on, and the tests and their sizes are the same.
#
# Needs what the tooling step installs: qemu-aarch64, the aarch64 cross
# linker and libc, and the pinned toolchain's aarch64 target.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start aarch64

# Cross-compiling and running the aarch64 tests from an x86-64 host. These are
# environment variables, not a `[target.aarch64-unknown-linux-gnu]` section in
# .cargo/config.toml, because such a section also applies when the *host* is
# aarch64: a native aarch64 contributor would then link with a cross gcc they
# do not have and run every test under qemu.
AARCH64_TARGET=aarch64-unknown-linux-gnu
aarch64_env=(
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
    "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=qemu-aarch64 -L $AARCH64_SYSROOT"
)

if [[ $(uname -m) == aarch64 ]]; then
    echo "host is aarch64: NEON already ran natively in the kernel matrix; no cross run needed"
    exit 0
fi
absent=$(missing_system_packages)
[[ -z $absent ]] || need_step tooling "qemu and the aarch64 cross linker and libc (missing: $absent)"
if ! grep -qx "$AARCH64_TARGET" <<<"$(rustup target list --installed)"; then
    need_step tooling "the pinned toolchain's $AARCH64_TARGET target"
fi
# `default` selects NEON (every aarch64 CPU has it), and each run's unit
# tests call every available kernel directly; the forced `portable` run
# adds the portable kernel behind dispatch. A forced `neon` run repeated
# the default one (40 s).
# The forced run leaves out the unit tests that call each kernel
# directly (KERNEL_DIRECT_TESTS): the default run ran them over every
# kernel, NEON and portable included, on the same inputs.
for k in default portable; do
    printf '\n%s--- aarch64, BITMAP_CORE_KERNEL=%s%s\n' "$bold" "$k" "$reset"
    kernel_env=() skip=()
    [[ $k == default ]] || kernel_env=(BITMAP_CORE_KERNEL="$k") skip=(-- "${KERNEL_DIRECT_TESTS[@]}")
    run "${aarch64_env[@]}" "${kernel_env[@]}" CARGO_PROFILE_DEV_OPT_LEVEL=1 \
        cargo test -p bitmap-core --all-features --target "$AARCH64_TARGET" "${skip[@]}"
done
