#!/usr/bin/env bash
# The tooling step: installs what the other steps need, and only what is
# missing: the pinned toolchain with clippy, rustfmt and the aarch64 target;
# qemu and the aarch64 cross linker (apt); python3 with venv; nightly with
# Miri; cargo-fuzz. Needs rustup, and root or sudo for apt-get.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start tooling

# The pinned toolchain (rust-toolchain.toml) installs itself on first use
# with its components and target; rustup adds a missing component or
# target to an already-installed toolchain only on `rustup toolchain
# install`, hence the explicit call.
run rustup toolchain install
run rustup show
run cargo --version
run cargo clippy --version
run cargo fmt --version

# System packages: a C toolchain to link, the aarch64 cross linker and
# libc, and qemu to run aarch64 test binaries (lib.sh's
# missing_system_packages says which are missing).
read -ra missing <<<"$(missing_system_packages)"
if ((${#missing[@]})); then
    apt_quiet update
    apt_quiet install -y --no-install-recommends "${missing[@]}"
else
    echo "system packages present (cc, qemu-aarch64, aarch64-linux-gnu-gcc, arm64 libc)"
fi
run qemu-aarch64 --version
run aarch64-linux-gnu-gcc --version

# Python (>= 3.9, with venv and pip) for the Python package's tests;
# scripts/test-python makes the venv and installs the PyPI packages.
if ! python_ready; then
    apt_quiet update
    apt_quiet install -y --no-install-recommends python3 python3-venv python3-pip python3-dev
fi
run python3 --version

# Miri needs a nightly toolchain with miri and rust-src.
if ! nightly_installed; then
    run rustup toolchain install nightly --profile minimal
fi
if ! nightly_has_miri; then
    run rustup component add miri rust-src --toolchain nightly
fi
run cargo +nightly miri --version

# cargo-fuzz builds with nightly; installed here so the fuzz step finds it.
if ! cargo fuzz --version >/dev/null 2>&1; then
    run cargo install cargo-fuzz --locked
fi
run cargo fuzz --version
