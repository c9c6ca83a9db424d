#!/usr/bin/env bash
# The benches step: compiles every bench target, then runs each benchmark
# once as a test (criterion's `--test`: one iteration, no measurement), so a
# benchmark that panics or no longer builds fails CI without CI timing
# anything. Needs only the pinned toolchain.
#
# At opt-level 1 without line tables: nothing is timed, and on the slower
# machine (2026-12-04, one build each from an empty target directory) the
# release profile took 196 s to build and 32 s to run the benchmarks once,
# opt-level 1 146 s and 46 s. The same code is compiled and run.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start benches

profile=(CARGO_PROFILE_BENCH_OPT_LEVEL=1 CARGO_PROFILE_BENCH_DEBUG=false)
run "${profile[@]}" cargo bench --workspace --no-run
run "${profile[@]}" cargo bench --workspace -- --test
