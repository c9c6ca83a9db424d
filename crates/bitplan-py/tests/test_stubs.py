"""The type stubs (``_native.pyi``) describe the module that is built:
every function, class, method and property they name exists, and the
public names of the compiled module are all in the stubs."""

import ast
import importlib.resources

import pytest

from bitplan import _native

STUB = ast.parse(importlib.resources.files("bitplan").joinpath("_native.pyi").read_text())
TYPING_ONLY = {"HasIndex", "_T"}


def stub_items():
    for node in STUB.body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, None
        elif isinstance(node, ast.ClassDef) and node.name not in TYPING_ONLY:
            yield node.name, None
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield node.name, item.name
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    yield node.name, item.target.id


ITEMS = list(stub_items())


@pytest.mark.parametrize("owner,member", ITEMS, ids=[f"{o}.{m}" if m else o for o, m in ITEMS])
def test_every_stubbed_name_exists(owner, member):
    obj = getattr(_native, owner)
    if member is None:
        return
    if member == "__buffer__":
        memoryview(_native.Bitmap(8))  # the buffer protocol, by whatever slot
        return
    if member == "__hash__":
        assert getattr(obj, "__hash__") is None
        return
    if member in ("index", "name", "weight"):
        instance = _native.AdapterDescriptor(0)
        assert hasattr(instance, member)
        return
    assert hasattr(obj, member), f"{owner}.{member} is in the stubs but not in the module"


def test_every_public_name_is_stubbed():
    stubbed = {node.name for node in STUB.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    stubbed |= {t.id for node in STUB.body if isinstance(node, ast.AnnAssign) for t in [node.target]}
    public = {name for name in dir(_native) if not name.startswith("_") and name != "lmcache"}
    assert public - stubbed == set()


GRID_STUB = ast.parse(importlib.resources.files("bitplan.lmcache").joinpath("grids.pyi").read_text())
GRID_ITEMS = [
    (node.name, item.name)
    for node in GRID_STUB.body
    if isinstance(node, ast.ClassDef)
    for item in node.body
    if isinstance(item, ast.FunctionDef)
]


@pytest.mark.parametrize("owner,member", GRID_ITEMS, ids=[f"{o}.{m}" for o, m in GRID_ITEMS])
def test_every_stubbed_grid_method_exists(owner, member):
    from bitplan.lmcache import grids

    assert hasattr(getattr(grids, owner), member), f"{owner}.{member} is in grids.pyi but not in the module"


@pytest.mark.parametrize("owner", ["Bitmap2D", "MapState"])
def test_every_public_grid_method_is_stubbed(owner):
    from bitplan.lmcache import grids

    stubbed = {member for o, member in GRID_ITEMS if o == owner}
    public = {name for name in dir(getattr(grids, owner)) if not name.startswith("_")}
    assert public - stubbed == set()


TIERS_STUB = ast.parse(importlib.resources.files("bitplan.lmcache").joinpath("tiers.pyi").read_text())
TIERS_ITEMS = [
    (node.name, item.name)
    for node in TIERS_STUB.body
    if isinstance(node, ast.ClassDef) and node.name != "L1Error"
    for item in node.body
    if isinstance(item, ast.FunctionDef)
]


@pytest.mark.parametrize("owner,member", TIERS_ITEMS, ids=[f"{o}.{m}" for o, m in TIERS_ITEMS])
def test_every_stubbed_tier_method_exists(owner, member):
    from bitplan.lmcache import tiers

    assert hasattr(getattr(tiers, owner), member), f"{owner}.{member} is in tiers.pyi but not in the module"


def test_every_public_tier_name_is_stubbed():
    from bitplan.lmcache import tiers

    classes = {node.name for node in TIERS_STUB.body if isinstance(node, ast.ClassDef)}
    assigned = {node.target.id for node in TIERS_STUB.body if isinstance(node, ast.AnnAssign)}
    assert set(tiers.__all__) - classes - assigned == set()
    for owner in classes - {"L1Error"}:
        stubbed = {member for o, member in TIERS_ITEMS if o == owner}
        public = {name for name in dir(getattr(tiers, owner)) if not name.startswith("_")}
        assert public - stubbed == set(), owner


EVICTION_STUB = ast.parse(importlib.resources.files("bitplan.lmcache").joinpath("eviction_policy.pyi").read_text())
EVICTION_CLASSES = {node.name: node for node in EVICTION_STUB.body if isinstance(node, ast.ClassDef)}
# Enums and dataclasses: their members are fields, checked by the tests of the face.
EVICTION_DATA = {"EvictionDestination", "EvictionAction", "ObjectKey", "EvictionConfig"}


def _stubbed_members(name: str) -> set[str]:
    """The methods and properties the stubs give class ``name``, its stubbed bases' included."""
    node = EVICTION_CLASSES[name]
    members = {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in EVICTION_CLASSES:
            members |= _stubbed_members(base.id)
    return members


# `_EvictionCore` derives from `EvictionPolicy` in the stubs only (for the
# type checker); its own methods are checked on each policy class.
EVICTION_ITEMS = [
    (owner, member)
    for owner in EVICTION_CLASSES
    if owner not in EVICTION_DATA | {"_EvictionCore"}
    for member in sorted(_stubbed_members(owner))
]


@pytest.mark.parametrize("owner,member", EVICTION_ITEMS, ids=[f"{o}.{m}" for o, m in EVICTION_ITEMS])
def test_every_stubbed_eviction_member_exists(owner, member):
    from bitplan.lmcache import eviction_policy

    assert hasattr(getattr(eviction_policy, owner), member), f"{owner}.{member} is in eviction_policy.pyi but not in the module"


def test_every_public_eviction_name_is_stubbed():
    from bitplan.lmcache import eviction_policy

    functions = {node.name for node in EVICTION_STUB.body if isinstance(node, ast.FunctionDef)}
    assigned = {node.target.id for node in EVICTION_STUB.body if isinstance(node, ast.AnnAssign)}
    assert set(eviction_policy.__all__) - set(EVICTION_CLASSES) - functions - assigned == set()
    for owner in set(EVICTION_CLASSES) - EVICTION_DATA - {"_EvictionCore"}:
        if owner not in eviction_policy.__all__:
            continue
        public = {name for name in dir(getattr(eviction_policy, owner)) if not name.startswith("_")}
        assert public - _stubbed_members(owner) == set(), owner
