"""The switch's machinery: which names are replaced, and the import hook
that replaces a name as soon as its LMCache module has run.

A :class:`Replacement` names one place in LMCache (a module attribute, or
one entry of a registry dict a module holds) and how to build bitplan's
object for it. :func:`apply` replaces every place whose module is imported
already and registers a ``sys.meta_path`` finder that replaces the others
right after their module executes, so it does not matter whether LMCache
was imported before the switch or after it; nothing of LMCache is imported
here. :func:`restore` puts every original back.

A name one LMCache module imported from another (``Bitmap2D`` in the
controller, from ``storage_controllers.utils``) is a place of its own: the
controller keeps the object it imported, so replacing the source would not
reach it. When a module imports a name that an earlier replacement already
put in its source, the original recorded for it is LMCache's, not ours.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

#: What :func:`restore` leaves in a registry dict for an entry LMCache
#: did not have.
_ABSENT = object()


@dataclass(frozen=True)
class Replacement:
    """One name bitplan replaces in LMCache.

    ``module`` and ``name`` say where: the attribute ``name`` of the module,
    or, with ``item`` set, the entry ``item`` of the dict that attribute
    holds (a registry). ``build`` makes bitplan's object; it is called once,
    after the module has run. ``why`` is the docs' one-line description.
    """

    module: str
    name: str
    build: Callable[[], Any]
    why: str
    item: str | None = None

    @property
    def where(self) -> str:
        """``module.name`` or ``module.name["item"]``, as the docs list it."""
        base = f"{self.module}.{self.name}"
        return base if self.item is None else f'{base}["{self.item}"]'


class _Applied:
    """What :func:`apply` changed, to be undone by :func:`restore`."""

    def __init__(self) -> None:
        # where -> (module, replacement, original object or _ABSENT)
        self.places: dict[str, tuple[ModuleType, Replacement, Any]] = {}
        # id(bitplan object) -> LMCache's original it stands for
        self.originals: dict[int, Any] = {}
        self.built: dict[str, Any] = {}


_lock = threading.RLock()
_applied: _Applied | None = None
_table: tuple[Replacement, ...] = ()
_finder: _PostImportFinder | None = None


def _build(replacement: Replacement) -> Any:
    assert _applied is not None
    where = replacement.where
    if where not in _applied.built:
        _applied.built[where] = replacement.build()
    return _applied.built[where]


def _patch(module: ModuleType, replacement: Replacement) -> None:
    """Replaces one place in ``module`` (idempotent)."""
    assert _applied is not None
    where = replacement.where
    if where in _applied.places:
        return
    ours = _build(replacement)
    if replacement.item is None:
        current = getattr(module, replacement.name, _ABSENT)
        # A name imported from a module patched before: LMCache's own
        # object is the one this module would hold without bitplan.
        original = _applied.originals.get(id(current), current)
        setattr(module, replacement.name, ours)
    else:
        registry = getattr(module, replacement.name)
        current = registry.get(replacement.item, _ABSENT)
        original = _applied.originals.get(id(current), current)
        registry[replacement.item] = ours
    _applied.originals[id(ours)] = original
    _applied.places[where] = (module, replacement, original)


def _patch_module(module: ModuleType) -> None:
    with _lock:
        if _applied is None:
            return
        for replacement in _table:
            if replacement.module == module.__name__:
                _patch(module, replacement)


class _PatchingLoader(importlib.abc.Loader):
    """Runs the real loader, then replaces the module's names."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _patch_module(module)

    def __getattr__(self, name: str) -> Any:
        # get_source, get_filename, is_package, ... of the real loader.
        return getattr(self._loader, name)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: it asks the finders after it for the modules
    the table names and wraps their loader with :class:`_PatchingLoader`."""

    def __init__(self, modules: frozenset[str]) -> None:
        self._modules = modules
        self._busy = threading.local()

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self._modules or getattr(self._busy, "on", False):
            return None
        self._busy.on = True
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            self._busy.on = False
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _PatchingLoader(spec.loader)
        return spec


def apply(table: tuple[Replacement, ...]) -> None:
    """Replaces every place of ``table``: now for the modules imported
    already, on import for the others. A second call changes nothing."""
    global _applied, _table, _finder
    with _lock:
        if _applied is not None:
            return
        _applied = _Applied()
        _table = table
        _finder = _PostImportFinder(frozenset(r.module for r in table))
        sys.meta_path.insert(0, _finder)
        try:
            # In the table's order: a module's sources come before it.
            for replacement in table:
                module = sys.modules.get(replacement.module)
                if module is not None:
                    _patch(module, replacement)
        except BaseException:
            restore()
            raise


def restore() -> None:
    """Puts every original back and removes the import hook."""
    global _applied, _table, _finder
    with _lock:
        if _finder is not None and _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        if _applied is not None:
            for module, replacement, original in reversed(list(_applied.places.values())):
                if replacement.item is None:
                    if original is _ABSENT:
                        if hasattr(module, replacement.name):
                            delattr(module, replacement.name)
                    else:
                        setattr(module, replacement.name, original)
                else:
                    registry = getattr(module, replacement.name)
                    if original is _ABSENT:
                        registry.pop(replacement.item, None)
                    else:
                        registry[replacement.item] = original
        _applied, _table, _finder = None, (), None


def status() -> dict[str, str]:
    """``where`` -> ``"replaced"`` or ``"on import"`` for every place of the
    table; empty when the switch is off."""
    with _lock:
        if _applied is None:
            return {}
        return {r.where: ("replaced" if r.where in _applied.places else "on import") for r in _table}


def built(where: str) -> Any:
    """bitplan's object for a place (built on first use)."""
    with _lock:
        if _applied is None:
            raise RuntimeError("bitplan.lmcache.install() has not been called")
        for replacement in _table:
            if replacement.where == where:
                return _build(replacement)
    raise KeyError(where)
