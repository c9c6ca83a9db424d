"""Registries of prefetch policies by name, as in LMCache's
``prefetch_policy`` module: Python classes, so that a controller can
register its own ``PrefetchPolicy`` subclass beside the built-ins.

:mod:`bitplan` and :mod:`bitplan.lmcache.prefetch_policy` each have one
(their built-ins differ); both are a :class:`PolicyRegistry`.
"""

from __future__ import annotations

# No `import threading` or `typing` at run time: with what they pull in
# (collections, functools, re, enum, warnings) they were most of `import
# bitplan`'s time (docs/perf/2026-12-02-shipping.md). The lock is
# threading.Lock's own type, from _thread; the type parameter is for type
# checkers, which take the TYPE_CHECKING branch (by that name).
from _thread import allocate_lock

from bitplan._native import (
    BalancedPrefetchPolicy,
    DefaultPrefetchPolicy,
    PrefetchPolicy,
    RetainPrefetchPolicy,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Generic, TypeVar

    _P = TypeVar("_P")

    class _Generic(Generic[_P]):
        pass

else:
    _P = None

    class _Generic:
        # `PolicyRegistry[X]` is PolicyRegistry itself at run time.
        def __class_getitem__(cls, item):
            return cls


class PolicyRegistry(_Generic[_P]):
    """Name -> policy class (or any callable that makes a policy)."""

    def __init__(self) -> None:
        # Registration is rare and lookups are dict reads; the lock keeps
        # check-then-insert atomic for threads that register at once.
        self._lock = allocate_lock()
        self._classes: dict[str, Callable[[], _P]] = {}

    def register(self, name: str, policy_cls: Callable[[], _P]) -> None:
        """``ValueError`` if ``name`` is taken."""
        with self._lock:
            if name in self._classes:
                raise ValueError(f"Prefetch policy already registered: {name!r}")
            self._classes[name] = policy_cls

    def names(self) -> list[str]:
        """The registered names, in registration order."""
        with self._lock:
            return list(self._classes)

    def create(self, name: str) -> _P:
        """A new instance of the policy registered as ``name`` (``ValueError`` if none is)."""
        with self._lock:
            policy_cls = self._classes.get(name)
            known = ", ".join(sorted(self._classes)) or "(none)"
        if policy_cls is None:
            raise ValueError(f"Unknown prefetch policy {name!r}. Known: {known}")
        return policy_cls()


_REGISTRY: PolicyRegistry[PrefetchPolicy] = PolicyRegistry()


def register_prefetch_policy(name: str, policy_cls: type[PrefetchPolicy]) -> None:
    """Registers ``policy_cls`` under ``name``.

    Raises ``ValueError`` if ``name`` is taken, ``TypeError`` if ``name`` is
    not a ``str`` or ``policy_cls`` is not a class.
    """
    if not isinstance(name, str):
        raise TypeError(f"a policy name must be a str, not {type(name).__name__}")
    if not isinstance(policy_cls, type):
        raise TypeError(f"policy_cls must be a class, not {policy_cls!r}")
    _REGISTRY.register(name, policy_cls)


def get_registered_prefetch_policies() -> list[str]:
    """The registered names, in registration order."""
    return _REGISTRY.names()


def create_prefetch_policy(name: str) -> PrefetchPolicy:
    """A new instance of the policy registered as ``name`` (``ValueError`` if none is)."""
    return _REGISTRY.create(name)


register_prefetch_policy("default", DefaultPrefetchPolicy)
register_prefetch_policy("retain", RetainPrefetchPolicy)
register_prefetch_policy("balanced", BalancedPrefetchPolicy)
