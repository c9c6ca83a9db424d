"""LMCache's eviction policies, native (issue #29): drop-ins for
``lmcache.v1.distributed.eviction_policy`` and the types around it.

=================================================================  ==========================================
LMCache                                                            here
=================================================================  ==========================================
``eviction_policy.LRUEvictionPolicy`` (chunk-coherent victims)     :class:`LRUEvictionPolicy`
``eviction_policy.IsolatedLRUEvictionPolicy``                      :class:`IsolatedLRUEvictionPolicy`
``eviction_policy.S3FIFOEvictionPolicy`` (``s3fifo.py``)           :class:`S3FIFOEvictionPolicy`
``eviction_policy.ARCEvictionPolicy``                              :class:`ARCEvictionPolicy`
``eviction_policy.NoOpEvictionPolicy``                             :class:`NoOpEvictionPolicy`
``eviction_policy.CreateEvictionPolicy``                           :func:`CreateEvictionPolicy`
``eviction.EvictionPolicy``, ``L1EvictionPolicy``,                 the same names
``L2EvictionPolicy``
``internal_api.EvictionAction``, ``EvictionDestination``           the same names
``config.EvictionConfig``, ``api.ObjectKey``                       the same names
=================================================================  ==========================================

The policies keep LMCache's rules exactly (``docs`` of each class); the
keys are any hashable objects, LMCache's ``ObjectKey`` included. What
differs is the cost: each key is hashed once per event and mapped to a dense
slot, and the policy's lists are intrusive lists over slots in Rust, so an
event costs about one ``__hash__`` a key where LMCache's ``OrderedDict``\\ s
cost two or three, and victim selection makes no Python object but the
answer. One lock per policy object; large batches run with the GIL released.

:class:`SlotEvictionPolicy` is the positional fast path: the caller names
keys by dense slot ids (numpy ``uint32`` arrays), passes eligibility as a
``Bitmap`` over slots, and gets victims back as a numpy array.

Differences, on purpose: a ``key_eligible_filter`` that raises ends the scan
(every later key counts as refused) and its exception is raised once the
policy is done, so ARC's victims found before it stay pending and S3-FIFO's
have left their queues, as LMCache's would have had the filter said no;
``EvictionConfig`` refuses a watermark or ratio outside [0, 1]
(``ValueError`` naming the field); ``CreateEvictionPolicy`` knows every
policy here and lists them when it refuses a name. ``note_key_positions``
(an LRU extension that orders one prefix's batches across calls) is not
implemented: the bridges call it only if the policy has it, and without it
LRU follows its plain rule. ``capture``/``restore`` are the interface's
defaults (empty, no-op).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bitplan import _native

_lm = _native.lmcache
# The native base of the policy classes (the key table and the policy).
_EvictionCore = _lm._EvictionCore

#: The names :func:`CreateEvictionPolicy` accepts (LMCache's factory names).
POLICY_NAMES = ("LRU", "IsolatedLRU", "S3FIFO", "ARC", "noop")


class EvictionDestination(enum.Enum):
    """LMCache's ``EvictionDestination`` (``internal_api.py``)."""

    DISCARD = enum.auto()
    """Discard the evicted objects"""

    L2_CACHE = enum.auto()
    """Evict to L2 storage"""


@dataclass(frozen=True)
class EvictionAction:
    """LMCache's ``EvictionAction``: the keys to evict and where to."""

    destination: EvictionDestination
    keys: list = field(default_factory=list)


_lm._register_eviction_action(EvictionAction)


@dataclass(frozen=True)
class ObjectKey:
    """LMCache's ``ObjectKey`` (``lmcache/v1/distributed/api.py``): the same
    fields, validation, hash and equality (a frozen dataclass), and static
    helpers, for callers without LMCache. The policies take LMCache's own
    ``ObjectKey`` as well, or any hashable key."""

    chunk_hash: bytes
    model_name: str
    kv_rank: int
    object_group_id: int = 0
    cache_salt: str = ""

    _SALT_FORBIDDEN_CHARS = frozenset("@/\\\x00")
    _SALT_MAX_LEN = 128

    def __post_init__(self) -> None:
        if "@" in self.model_name:
            raise ValueError(f"model_name must not contain '@' (got {self.model_name!r})")
        if self.object_group_id < 0:
            raise ValueError(f"object_group_id must be >= 0 (got {self.object_group_id})")
        bad = self._SALT_FORBIDDEN_CHARS & set(self.cache_salt)
        if bad:
            raise ValueError(f"cache_salt must not contain {bad!r} (got {self.cache_salt!r})")
        if len(self.cache_salt) > self._SALT_MAX_LEN:
            raise ValueError(f"cache_salt exceeds max length {self._SALT_MAX_LEN} (got {len(self.cache_salt)})")

    @staticmethod
    def IntHash2Bytes(chunk_hash: int) -> bytes:  # noqa: N802 - LMCache's name
        """4 big-endian bytes, as LMCache's tests build chunk hashes."""
        return chunk_hash.to_bytes(4, byteorder="big")

    @staticmethod
    def Bytes2IntHash(chunk_hash: bytes) -> int:  # noqa: N802 - LMCache's name
        return int.from_bytes(chunk_hash, byteorder="big") & ((1 << 64) - 1)

    @staticmethod
    def ComputeKVRank(world_size: int, global_rank: int, local_world_size: int, local_rank: int) -> int:  # noqa: N802
        """The packed rank: world size in bits 24-31, global rank 16-23,
        local world size 8-15, local rank 0-7."""
        return (world_size << 24) | (global_rank << 16) | (local_world_size << 8) | local_rank


@dataclass
class EvictionConfig:
    """LMCache's ``EvictionConfig``: the policy's factory name, the usage
    that triggers eviction, and the fraction of the tracked keys (by count)
    one eviction asks for."""

    eviction_policy: str
    trigger_watermark: float = 0.8
    eviction_ratio: float = 0.2

    def __post_init__(self) -> None:
        for name in ("trigger_watermark", "eviction_ratio"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value!r}")


class EvictionPolicy:
    """LMCache's ``EvictionPolicy`` interface: the events
    (``on_keys_created``, ``on_keys_touched``, ``on_keys_removed``),
    ``register_eviction_destination`` and ``get_eviction_actions``, and the
    checkpoint hooks with their defaults."""

    @property
    def support_isolation(self) -> bool:
        return False

    @property
    def name(self) -> str:
        return "eviction_policy"

    def capture(self) -> Mapping[str, object]:
        return {}

    def restore(self, state: Mapping[str, object]) -> None:
        pass

    def register_eviction_destination(self, destination: EvictionDestination) -> None:
        raise NotImplementedError

    def on_keys_created(self, keys: list) -> None:
        raise NotImplementedError

    def on_keys_reserved(self, keys: list) -> None:
        """Keys reserved for a write (LMCache 0.5.6): created, unless the
        policy has a rule of its own (ARC's)."""
        self.on_keys_created(keys)

    def on_keys_touched(self, keys: list) -> None:
        raise NotImplementedError

    def on_keys_removed(self, keys: list) -> None:
        raise NotImplementedError

    def get_eviction_actions(
        self,
        expected_ratio: float,
        key_eligible_filter: Callable[[Any], bool] | None = None,
        cache_salt: str | None = None,
    ) -> list[EvictionAction]:
        raise NotImplementedError


class LRUEvictionPolicy(_EvictionCore, EvictionPolicy):
    """LMCache's LRU: ``created`` inserts or refreshes, walking the batch in
    reverse (its first key ends most recent); ``touched`` refreshes tracked
    keys only; victims are taken oldest first, a whole chunk family
    (``ObjectKey``\\ s differing only in ``kv_rank`` and ``object_group_id``)
    at a time, skipping families with an untracked or ineligible member."""

    def __new__(cls, default_destination: EvictionDestination = EvictionDestination.DISCARD):
        return super().__new__(cls, "LRU", default_destination)

    def get_eviction_candidates(self, count: int) -> list:
        """The first ``count`` keys of the LRU order (testing helper)."""
        return self._eviction_candidates(count)


class IsolatedLRUEvictionPolicy(_EvictionCore, EvictionPolicy):
    """LMCache's per-``cache_salt`` LRU: one LRU order per salt, chunk-coherent
    victims within the salt; ``get_eviction_actions`` requires ``cache_salt``
    (``ValueError`` on ``None``)."""

    def __new__(cls, default_destination: EvictionDestination = EvictionDestination.DISCARD):
        return super().__new__(cls, "IsolatedLRU", default_destination)

    @property
    def support_isolation(self) -> bool:
        return True

    @property
    def name(self) -> str:
        return "lru_order"

    def get_tracked_salts(self) -> list[str]:
        return self._tracked_salts()


class S3FIFOEvictionPolicy(_EvictionCore, EvictionPolicy):
    """LMCache's S3-FIFO: new keys enter the small FIFO (a ghost key goes to
    main); a touch moves a key to the end of main; victims come from small,
    then main, leave their queue when chosen and enter the (unbounded) ghost
    set; ``small_max_size`` trims small into the ghost set."""

    def __new__(
        cls,
        default_destination: EvictionDestination = EvictionDestination.DISCARD,
        small_max_size: int | None = None,
    ):
        return super().__new__(cls, "S3FIFO", default_destination, small_max_size)


class ARCEvictionPolicy(_EvictionCore, EvictionPolicy):
    """LMCache's ARC: T1 (recent), T2 (frequent), ghosts B1/B2 and the
    adaptive target ``p``; the capacity is the largest resident count seen;
    victims stay resident (pending) until ``on_keys_removed`` confirms them
    into B1/B2."""

    def __new__(cls, default_destination: EvictionDestination = EvictionDestination.DISCARD):
        return super().__new__(cls, "ARC", default_destination)

    def get_debug_state(self) -> dict[str, object]:
        """``t1``, ``t2``, ``b1``, ``b2`` (oldest first), ``capacity``,
        ``target_t1_size``."""
        return self._debug_state()


class NoOpEvictionPolicy(_EvictionCore, EvictionPolicy):
    """LMCache's no-op policy: tracks nothing, never evicts."""

    def __new__(cls, default_destination: EvictionDestination = EvictionDestination.DISCARD):
        return super().__new__(cls, "noop", default_destination)


def CreateEvictionPolicy(eviction_config: EvictionConfig) -> EvictionPolicy:  # noqa: N802 - LMCache's name
    """LMCache's factory: the policy ``eviction_config.eviction_policy``
    names; ``ValueError`` listing the known names for any other."""
    name = eviction_config.eviction_policy
    if name == "LRU":
        return LRUEvictionPolicy()
    if name == "IsolatedLRU":
        return IsolatedLRUEvictionPolicy()
    if name == "S3FIFO":
        return S3FIFOEvictionPolicy()
    if name == "ARC":
        return ARCEvictionPolicy()
    if name == "noop":
        return NoOpEvictionPolicy()
    raise ValueError(f"Unsupported eviction policy: {name!r}; known: {', '.join(POLICY_NAMES)}")


class L1EvictionPolicy:
    """LMCache's bridge from ``L1Manager`` events to a policy: a write
    reserved, finished, or finished and read-reserved is *created*; a
    manager's delete is *removed*; an access (``touch_keys``) is
    *touched*; reads are nothing."""

    def __init__(self, policy: EvictionPolicy) -> None:
        self._policy = policy

    @property
    def policy(self) -> EvictionPolicy:
        return self._policy

    def on_l1_keys_reserved_read(self, keys: list) -> None:
        pass

    def on_l1_keys_read_finished(self, keys: list) -> None:
        pass

    def on_l1_keys_reserved_write(self, keys: list) -> None:
        # LMCache 0.5.6: tracked from the reservation, which ARC does not
        # count as an access (its own on_keys_reserved).
        self._policy.on_keys_reserved(keys)

    def on_l1_keys_write_finished(self, keys: list) -> None:
        self._policy.on_keys_created(keys)

    def on_l1_keys_deleted_by_manager(self, keys: list) -> None:
        self._policy.on_keys_removed(keys)

    def on_l1_keys_finish_write_and_reserve_read(self, keys: list) -> None:
        self._policy.on_keys_created(keys)

    def note_key_positions(self, keys: list, positions: list[int]) -> None:
        fn = getattr(self._policy, "note_key_positions", None)
        if fn is not None:
            fn(keys, positions)

    def on_l1_keys_accessed(self, keys: list) -> None:
        self._policy.on_keys_touched(keys)


class L2EvictionPolicy:
    """LMCache's bridge from L2 adapter events: stored is *created*,
    accessed is *touched*, deleted is *removed*."""

    def __init__(self, policy: EvictionPolicy) -> None:
        self._policy = policy

    @property
    def policy(self) -> EvictionPolicy:
        return self._policy

    def on_l2_keys_stored(self, keys: list, sizes: list[int]) -> None:
        self._policy.on_keys_created(keys)

    def on_l2_keys_accessed(self, keys: list) -> None:
        self._policy.on_keys_touched(keys)

    def on_l2_keys_deleted(self, keys: list) -> None:
        self._policy.on_keys_removed(keys)


SlotEvictionPolicy = _lm.SlotEvictionPolicy

__all__ = [
    "POLICY_NAMES",
    "ARCEvictionPolicy",
    "CreateEvictionPolicy",
    "EvictionAction",
    "EvictionConfig",
    "EvictionDestination",
    "EvictionPolicy",
    "IsolatedLRUEvictionPolicy",
    "L1EvictionPolicy",
    "L2EvictionPolicy",
    "LRUEvictionPolicy",
    "NoOpEvictionPolicy",
    "ObjectKey",
    "S3FIFOEvictionPolicy",
    "SlotEvictionPolicy",
]
