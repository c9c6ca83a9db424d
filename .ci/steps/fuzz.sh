#!/usr/bin/env bash
# The fuzz step: every fuzz target for a bounded time on stable (`-s none`),
# from the committed seeds and regression inputs; any finding fails the step
# (docs/FUZZING.md). The replay of those inputs as unit tests ran in the
# tests step (crates/fuzz-checks).
# 20 s a target keeps CI within its 30-minute budget (30 s each left 2.5
# minutes of it at 27m35s, most of the rest being Miri); longer runs (10
# minutes under AddressSanitizer) are in docs/FUZZING.md.
#
# Needs cargo-fuzz (the tooling step installs it); scripts/ci-fuzz installs
# a C++ compiler if there is none.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start fuzz

cargo fuzz --version >/dev/null 2>&1 || need_step tooling "cargo-fuzz"
run FUZZ_SECONDS="${FUZZ_SECONDS:-20}" scripts/ci-fuzz
