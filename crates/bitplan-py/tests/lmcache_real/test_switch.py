"""The switch itself (issue #37, items 1 and 3): ``install()`` and
``uninstall()`` round trips, ``installed()``, the version check, and the
no-code switch (``BITPLAN_LMCACHE=1``, ``python -m bitplan.lmcache run``)
in a fresh interpreter."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import subprocess
import sys

import pytest

import bitplan.lmcache
import bitplan.lmcache.integration as integration
from bitplan.lmcache.integration import _switch
from bitplan.lmcache.integration._table import REPLACEMENTS


def current(replacement):
    module = importlib.import_module(replacement.module)
    value = getattr(module, replacement.name)
    return value if replacement.item is None else value.get(replacement.item, "<absent>")


@pytest.fixture
def modules():
    """Every module the table names that imports here (some adapters need
    packages this venv lacks)."""
    loaded = []
    for replacement in REPLACEMENTS:
        try:
            importlib.import_module(replacement.module)
        except ImportError:
            continue
        loaded.append(replacement)
    integration.uninstall()
    yield loaded
    integration.uninstall()


def test_install_replaces_and_uninstall_restores_every_name(modules):
    originals = {r.where: current(r) for r in modules}
    assert integration.installed() == {}
    bitplan.lmcache.install()
    state = integration.installed()
    assert set(state) == {r.where for r in REPLACEMENTS}
    for r in modules:
        assert state[r.where] == "replaced", r.where
        assert current(r) is not originals[r.where], r.where
        assert current(r) is _switch.built(r.where), r.where
    replaced = {r.where: current(r) for r in modules}
    bitplan.lmcache.install()  # twice: nothing changes
    assert {r.where: current(r) for r in modules} == replaced
    assert integration.installed() == state
    bitplan.lmcache.uninstall()
    assert integration.installed() == {}
    for r in modules:
        assert current(r) is originals[r.where], r.where
    from lmcache.v1.distributed.storage_controllers import prefetch_policy

    assert "balanced" not in prefetch_policy.get_registered_prefetch_policies()
    bitplan.lmcache.uninstall()  # twice: nothing changes


def test_the_registry_names(modules):
    from lmcache.v1.distributed.storage_controllers import prefetch_policy

    integration.install()
    assert prefetch_policy.get_registered_prefetch_policies() == ["default", "retain", "balanced"]
    policy = prefetch_policy.create_prefetch_policy("balanced")
    assert isinstance(policy, prefetch_policy.PrefetchPolicy)
    with pytest.raises(ValueError, match="already registered"):
        prefetch_policy.register_prefetch_policy("default", type(policy))


def test_another_version_is_refused_by_name(monkeypatch, modules):
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.5.7" if name == "lmcache" else real(name))
    with pytest.raises(integration.LMCacheVersionError) as error:
        integration.install()
    assert "0.5.7" in str(error.value) and "0.5.6" in str(error.value)
    assert integration.installed() == {}
    integration.install(check_version=False)
    assert integration.installed()
    integration.uninstall()
    monkeypatch.setenv(integration.ANY_VERSION_ENV, "1")
    integration.install()
    assert integration.installed()


def run(code, **env):
    environment = dict(os.environ, **env)
    done = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


CHECK = (
    "import sys; assert 'lmcache' not in sys.modules;"
    "from lmcache.v1.distributed import storage_manager as sm;"
    "print(sm.L1Manager.__name__, sm.PrefetchController.__name__)"
)


def test_install_before_lmcache_is_imported():
    code = "import bitplan.lmcache as b; b.install();" + CHECK
    assert run(code).split() == ["BitplanL1Manager", "BitplanPrefetchController"]


def test_the_environment_switch_at_start_up():
    assert run(CHECK, BITPLAN_LMCACHE="1").split() == ["BitplanL1Manager", "BitplanPrefetchController"]
    assert run(CHECK, BITPLAN_LMCACHE="0").split() == ["L1Manager", "PrefetchController"]


def test_the_launcher():
    done = subprocess.run(
        [sys.executable, "-m", "bitplan.lmcache", "run", "--", sys.executable, "-c", CHECK],
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "BITPLAN_LMCACHE"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["BitplanL1Manager", "BitplanPrefetchController"]
    check = subprocess.run([sys.executable, "-m", "bitplan.lmcache", "check"], capture_output=True, text=True, check=False)
    assert check.returncode == 0 and "0.5.6 (supported)" in check.stdout, check.stdout
