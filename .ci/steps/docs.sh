#!/usr/bin/env bash
# The docs step: rustdoc with `-D warnings`. Broken intra-doc links and
# malformed doc markup are rustdoc warnings that neither rustc nor clippy
# reports. Needs only the pinned toolchain.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start docs

run RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features
