"""The prefetch controller's request records with bitplan's grids.

LMCache 0.5.6's ``PrefetchKeyState`` is a dataclass whose fields default to
``MapState()``; a dataclass captures its default factory when the class is
defined, so replacing the ``MapState`` name in the controller's module does
not reach it. The controller's module makes its requests with
``_build_request`` and resets a request's states with
``PrefetchKeyState()``: the switch replaces those two names with these,
which make the same records over bitplan's ``MapState``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lmcache.v1.distributed.storage_controllers import prefetch_controller as _pc

from bitplan.lmcache.grids import MapState


@dataclass
class PrefetchKeyState(_pc.PrefetchKeyState):
    """LMCache's ``PrefetchKeyState``, over bitplan's ``MapState``."""

    l1_locked_keys: Any = field(default_factory=MapState)
    l2_locked_keys: Any = field(default_factory=MapState)
    l1_reserved_keys: Any = field(default_factory=MapState)


def build_request(request_id: int, spec: Any) -> _pc.InFlightPrefetchRequest:
    """LMCache's ``_build_request``: the in-flight request for ``spec``, in
    the lookup phase, its key states over bitplan's maps."""
    return _pc.InFlightPrefetchRequest(
        request_id=request_id,
        key_groups=spec.key_groups,
        fetching_policy=spec.fetching_policy,
        lock_mode=spec.lock_mode,
        num_kv_readers=spec.num_kv_readers,
        key_states=PrefetchKeyState(),
    )
