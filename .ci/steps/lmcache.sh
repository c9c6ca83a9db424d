#!/usr/bin/env bash
# The lmcache step: bitplan against the real LMCache release
# (scripts/test-lmcache): a venv of its own with lmcache==0.5.6 and
# torch==2.13.0 installed as the README tells users to, the wheel the
# wheel step built, and crates/bitplan-py/tests/lmcache_real: the same
# scenarios through a stock StorageManager and one with bitplan installed,
# LMCache's eviction thread under load with each policy, the drop-ins
# against the release's own classes, and the switch.
#
# Needs the wheel step's wheel in target/wheels-ci (built first if there
# is none, as the tests step does) and python3 >= 3.9 with venv.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start lmcache

python_ready || need_step tooling "python3 >= 3.9 with venv and pip"
wheels=(target/wheels-ci/bitplan-*.whl)
if [[ ${#wheels[@]} == 1 && ! -e ${wheels[0]} ]]; then
    echo "lmcache: no wheel from the wheel step in target/wheels-ci: building it first (.ci/steps/wheel.sh)"
    "$BASH" "$CI_DIR/steps/wheel.sh"
    wheels=(target/wheels-ci/bitplan-*.whl)
fi
if [[ ${#wheels[@]} != 1 || ! -f ${wheels[0]} ]]; then
    echo "error: expected one wheel from the wheel step in target/wheels-ci, found: ${wheels[*]}" >&2
    exit 1
fi
run BITPLAN_WHEEL="${wheels[0]}" scripts/test-lmcache
