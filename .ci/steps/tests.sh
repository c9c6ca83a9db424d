#!/usr/bin/env bash
# The tests step: the README's test command, scripts/test: the Rust
# workspace's tests, then the Python package's pytest suite in .venv. With
# BITPLAN_WHEEL, scripts/test-python installs the wheel step's wheel (pip,
# binary only) instead of building the extension again with `maturin
# develop --release`: one release build serves both steps, and the suite
# runs once, against the wheel users install (it ran twice before, 100 s
# each on a slow machine, plus a 2-minute build). pytest's closing line
# stays at the end of this step's output.
#
# Needs the wheel step's wheel in target/wheels-ci.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start tests

wheels=(target/wheels-ci/bitplan-*.whl)
if [[ ${#wheels[@]} != 1 || ! -f ${wheels[0]} ]]; then
    echo "error: expected one wheel from the wheel step in target/wheels-ci, found: ${wheels[*]}" >&2
    exit 1
fi
run BITPLAN_WHEEL="${wheels[0]}" scripts/test
