#!/usr/bin/env bash
# The clippy step: `-D warnings` over every target and feature. A check
# build; needs only the pinned toolchain (it installs itself with clippy).
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start clippy

run cargo clippy --workspace --all-targets --all-features -- -D warnings
