#!/usr/bin/env bash
# The fmt step: `cargo fmt --check`, no import circles between a crate's
# files, and both lock files current. Text checks, seconds; needs only the
# pinned toolchain (it installs itself) and python3.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start fmt

run cargo fmt --all --check
# No import circles between a crate's files (a seconds-long text check).
run python3 scripts/check-import-cycles crates/*/src
# Both lock files current, checked here in seconds: a stale
# fuzz/Cargo.lock (a new dependency of a workspace crate) otherwise
# fails only the last step, half an hour in.
run bash -c 'cargo metadata --locked --format-version 1 >/dev/null'
run bash -c 'cargo metadata --locked --format-version 1 --manifest-path fuzz/Cargo.toml >/dev/null'
