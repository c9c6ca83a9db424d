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
# Needs the wheel step's wheel in target/wheels-ci: if there is none, this
# step builds it first with the wheel step (.ci/steps/wheel.sh), and says
# so. Needs python3 >= 3.9 with venv (the tooling step installs it).
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start tests

python_ready || need_step tooling "python3 >= 3.9 with venv and pip"
wheels=(target/wheels-ci/bitplan-*.whl)
if [[ ${#wheels[@]} == 1 && ! -e ${wheels[0]} ]]; then
    # The glob matched nothing (it stays as written).
    echo "tests: no wheel from the wheel step in target/wheels-ci: building it first (.ci/steps/wheel.sh)"
    "$BASH" "$CI_DIR/steps/wheel.sh"
    wheels=(target/wheels-ci/bitplan-*.whl)
fi
if [[ ${#wheels[@]} != 1 || ! -f ${wheels[0]} ]]; then
    echo "error: expected one wheel from the wheel step in target/wheels-ci, found: ${wheels[*]}" >&2
    exit 1
fi
echo "tests: against the wheel step's wheel, built $(date -u -r "${wheels[0]}" '+%Y-%m-%d %H:%M:%S UTC')"
# The suite against the real LMCache is the lmcache step's.
run BITPLAN_WHEEL="${wheels[0]}" BITPLAN_SKIP_LMCACHE=1 scripts/test
