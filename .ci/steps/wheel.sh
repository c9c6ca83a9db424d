#!/usr/bin/env bash
# The wheel step: one x86-64 wheel, built as releases are (scripts/wheels:
# zig, manylinux2014, DWARF stripped) for the CPython that runs CI, then
# installed as a user would have it (scripts/check-wheels: tags, glibc
# symbols and size; a fresh venv with no cargo or rustc on PATH, the install
# timed, `python -m bitplan`). The package's pytest suite runs against this
# wheel in the tests step, which follows (`--no-pytest` here: it ran in both
# steps before). The other nine wheels, the aarch64 run under qemu and the
# sdist build take about 15 minutes more: docs/RELEASING.md runs them before
# a release.
#
# Needs python3 >= 3.9 with venv (the tooling step installs it); the build
# tools come from PyPI. Leaves the wheel in target/wheels-ci for the tests
# step.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ci_step_start wheel

python_ready || need_step tooling "python3 >= 3.9 with venv and pip"
version=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# A wheel left by an earlier run (another version number) would be
# checked too.
rm -rf target/wheels-ci
run scripts/wheels --python "$version" --arch x86_64 --no-sdist --out target/wheels-ci
run scripts/check-wheels --dir target/wheels-ci --python "$version" --no-aarch64 --no-pytest
