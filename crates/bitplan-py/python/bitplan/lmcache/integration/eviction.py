"""bitplan's eviction policies behind LMCache's ``CreateEvictionPolicy``.

Each class subclasses LMCache 0.5.6's ``EvictionPolicy`` (``eviction.py``)
and keeps its whole interface: the events (``on_keys_created``,
``on_keys_reserved``, ``on_keys_touched``, ``on_keys_removed``),
``register_eviction_destination``, ``get_eviction_actions`` answering with
LMCache's ``EvictionAction``, and ``support_isolation``, ``name``,
``persistence_type``, ``capture``/``restore``. The rules are the release's
(``eviction_policy/lru.py``, ``arc.py``, ``isolated_lru.py``,
``noop.py``): its LRU and isolated LRU evict key by key, oldest first (no
chunk families); ARC keeps its ghost lists and adaptive target. The
bookkeeping is bitplan's (``tier-state``): a key gets a dense slot once,
and an event costs a native field hash of each key (none for a key object
the policy holds), where LMCache's ``OrderedDict``\\ s call the key's
Python ``__hash__`` two or three times.

``S3FIFO`` (bitplan's S3-FIFO, which LMCache 0.5.6 does not have) is
selected by that name: ``EvictionConfig(eviction_policy="S3FIFO")``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from lmcache.v1.distributed.config import EvictionConfig
from lmcache.v1.distributed.eviction import EvictionPolicy
from lmcache.v1.distributed.internal_api import EvictionAction, EvictionDestination

# Registers the action type the native core answers with (converted below).
import bitplan.lmcache.eviction_policy  # noqa: F401
from bitplan import _native

_EvictionCore = _native.lmcache._EvictionCore

class _NativePolicy(_EvictionCore, EvictionPolicy):
    """What the classes share: LMCache's ``EvictionAction`` as the answer."""

    def get_eviction_actions(
        self,
        expected_ratio: float,
        key_eligible_filter: Callable[[Any], bool] | None = None,
        cache_salt: str | None = None,
    ) -> list[EvictionAction]:
        actions = _EvictionCore.get_eviction_actions(self, expected_ratio, key_eligible_filter, cache_salt)
        return [EvictionAction(destination=action.destination, keys=action.keys) for action in actions]


class LRUEvictionPolicy(_NativePolicy):
    """LMCache 0.5.6's LRU: ``created`` inserts or refreshes, walking the
    batch in reverse (its first key ends most recent); ``touched`` refreshes
    tracked keys only; victims oldest first, skipping ineligible keys."""

    def __new__(cls, default_destination: EvictionDestination = EvictionDestination.DISCARD) -> LRUEvictionPolicy:
        return super().__new__(cls, "LRU", default_destination, None, True)

    def get_eviction_candidates(self, count: int) -> list:
        """The first ``count`` keys of the LRU order (LMCache's test helper)."""
        return self._eviction_candidates(count)


class IsolatedLRUEvictionPolicy(_NativePolicy):
    """LMCache 0.5.6's per-``cache_salt`` LRU: one LRU order per salt;
    ``get_eviction_actions`` needs a ``cache_salt`` (``ValueError`` on
    ``None``); ``capture``/``restore`` carry each salt's order."""

    def __new__(
        cls,
        default_destination: EvictionDestination = EvictionDestination.DISCARD,
        section_name: str = "lru_order",
    ) -> IsolatedLRUEvictionPolicy:
        return super().__new__(cls, "IsolatedLRU", default_destination, None, True)

    def __init__(
        self,
        default_destination: EvictionDestination = EvictionDestination.DISCARD,
        section_name: str = "lru_order",
    ) -> None:
        self._section_name = section_name

    @property
    def support_isolation(self) -> bool:
        return True

    @property
    def name(self) -> str:
        return self._section_name

    def get_tracked_salts(self) -> list[str]:
        return self._tracked_salts()

    def capture(self) -> Mapping[str, object]:
        """Each salt's keys in eviction order (LMCache's checkpoint form)."""
        from lmcache.v1.mp_coordinator.utils.encoding import encode_key

        return {
            "buckets": {salt: [encode_key(key) for key in self._order(salt)] for salt in self._tracked_salts()}
        }

    def restore(self, state: Mapping[str, object]) -> None:
        """Replaces every salt's order with a captured one."""
        from lmcache.v1.mp_coordinator.utils.encoding import decode_key

        buckets = cast("Mapping[str, list[object]]", state["buckets"])
        decoded = [[decode_key(encoded) for encoded in ordered] for ordered in buckets.values()]
        self._clear()
        for keys in decoded:
            # ``created`` walks a batch in reverse: the batch's last key is
            # taken first, the oldest.
            self.on_keys_created(keys[::-1])


class ARCEvictionPolicy(_NativePolicy):
    """LMCache 0.5.6's ARC: T1 (recent), T2 (frequent), ghosts B1/B2, the
    adaptive target; victims stay resident (pending) until removed."""

    def __new__(cls, default_destination: EvictionDestination = EvictionDestination.DISCARD) -> ARCEvictionPolicy:
        return super().__new__(cls, "ARC", default_destination, None, True)

    def get_debug_state(self) -> dict[str, object]:
        return self._debug_state()


class NoOpEvictionPolicy(_NativePolicy):
    """LMCache 0.5.6's no-op policy: tracks nothing, never evicts."""

    def __new__(cls, default_destination: EvictionDestination = EvictionDestination.DISCARD) -> NoOpEvictionPolicy:
        return super().__new__(cls, "noop", default_destination, None, True)


class S3FIFOEvictionPolicy(_NativePolicy):
    """bitplan's S3-FIFO (``tier-state``): a small FIFO, a main FIFO and a
    ghost set; LMCache 0.5.6 has no such policy."""

    def __new__(
        cls,
        default_destination: EvictionDestination = EvictionDestination.DISCARD,
        small_max_size: int | None = None,
    ) -> S3FIFOEvictionPolicy:
        return super().__new__(cls, "S3FIFO", default_destination, small_max_size, True)


_BY_NAME: dict[str, Callable[[], EvictionPolicy]] = {
    "LRU": LRUEvictionPolicy,
    "ARC": ARCEvictionPolicy,
    "IsolatedLRU": IsolatedLRUEvictionPolicy,
    "noop": NoOpEvictionPolicy,
    "S3FIFO": S3FIFOEvictionPolicy,
}

#: The names ``CreateEvictionPolicy`` accepts under bitplan: LMCache
#: 0.5.6's four and bitplan's S3-FIFO.
POLICY_NAMES = tuple(_BY_NAME)


def CreateEvictionPolicy(eviction_config: EvictionConfig) -> EvictionPolicy:  # noqa: N802 - LMCache's name
    """LMCache's factory with bitplan's policies: the policy
    ``eviction_config.eviction_policy`` names; LMCache's ``ValueError`` for
    any other name."""
    make = _BY_NAME.get(eviction_config.eviction_policy)
    if make is None:
        # LMCache's own refusal, word for word.
        raise ValueError(f"Unsupported eviction policy: {eviction_config.eviction_policy}")
    return make()


__all__ = [
    "POLICY_NAMES",
    "ARCEvictionPolicy",
    "CreateEvictionPolicy",
    "IsolatedLRUEvictionPolicy",
    "LRUEvictionPolicy",
    "NoOpEvictionPolicy",
    "S3FIFOEvictionPolicy",
]
