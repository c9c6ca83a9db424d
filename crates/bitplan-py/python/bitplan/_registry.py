"""The registry of flat prefetch policies by name, as in LMCache's
``prefetch_policy`` module: Python classes, so that a controller can
register its own ``PrefetchPolicy`` subclass beside the built-ins."""

from __future__ import annotations

import threading

from bitplan._native import (
    BalancedPrefetchPolicy,
    DefaultPrefetchPolicy,
    PrefetchPolicy,
    RetainPrefetchPolicy,
)

# Registration is rare and lookups are dict reads; the lock keeps
# check-then-insert atomic for threads that register at once.
_LOCK = threading.Lock()
_REGISTRY: dict[str, type[PrefetchPolicy]] = {}


def register_prefetch_policy(name: str, policy_cls: type[PrefetchPolicy]) -> None:
    """Registers ``policy_cls`` under ``name``.

    Raises ``ValueError`` if ``name`` is taken, ``TypeError`` if
    ``policy_cls`` is not a class.
    """
    if not isinstance(name, str):
        raise TypeError(f"a policy name must be a str, not {type(name).__name__}")
    if not isinstance(policy_cls, type):
        raise TypeError(f"policy_cls must be a class, not {policy_cls!r}")
    with _LOCK:
        if name in _REGISTRY:
            raise ValueError(f"Prefetch policy already registered: {name!r}")
        _REGISTRY[name] = policy_cls


def get_registered_prefetch_policies() -> list[str]:
    """The registered names, in registration order."""
    with _LOCK:
        return list(_REGISTRY)


def create_prefetch_policy(name: str) -> PrefetchPolicy:
    """A new instance of the policy registered as ``name`` (``ValueError`` if none is)."""
    with _LOCK:
        policy_cls = _REGISTRY.get(name)
        known = ", ".join(sorted(_REGISTRY)) or "(none)"
    if policy_cls is None:
        raise ValueError(f"Unknown prefetch policy {name!r}. Known: {known}")
    return policy_cls()


register_prefetch_policy("default", DefaultPrefetchPolicy)
register_prefetch_policy("retain", RetainPrefetchPolicy)
register_prefetch_policy("balanced", BalancedPrefetchPolicy)
