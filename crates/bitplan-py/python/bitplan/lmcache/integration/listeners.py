"""Calling an L1 manager's listeners as LMCache does, without building what
nobody reads.

LMCache's ``L1Manager`` calls every registered listener's method for each
event, with the list of keys, in registration order. Most of those methods
do nothing (the eviction bridge ignores reads, the store listener ignores
all but finished writes), but LMCache still builds every list. Here a
method whose body does nothing (``pass``, a docstring, ``return None``) is
not called, and an event that no remaining method and no event-bus
subscriber reads builds no list: :meth:`Listeners.wants` says which.
Every other call is made as LMCache makes it, in the same order.
"""

from __future__ import annotations

import dis
import functools
from collections.abc import Callable, Sequence
from typing import Any

#: The ``L1ManagerListener`` methods, LMCache 0.5.6's event names.
EVENTS = (
    "on_l1_keys_reserved_read",
    "on_l1_keys_read_finished",
    "on_l1_keys_reserved_write",
    "on_l1_keys_write_finished",
    "on_l1_keys_finish_write_and_reserve_read",
    "on_l1_keys_deleted_by_manager",
    "on_l1_keys_accessed",
)

_SKIPPED = frozenset({"RESUME", "NOP", "CACHE", "EXTENDED_ARG"})


@functools.lru_cache(maxsize=256)
def _does_nothing(code: Any) -> bool:
    ops = [ins for ins in dis.get_instructions(code) if ins.opname not in _SKIPPED]
    if len(ops) == 1:
        return ops[0].opname == "RETURN_CONST" and ops[0].argval is None
    return len(ops) == 2 and ops[0].opname == "LOAD_CONST" and ops[0].argval is None and ops[1].opname == "RETURN_VALUE"


def does_nothing(method: Callable[..., Any]) -> bool:
    """Whether calling ``method`` can have no effect: a plain Python
    function (or bound method) whose body only returns ``None``."""
    function = getattr(method, "__func__", method)
    code = getattr(function, "__code__", None)
    if code is None or getattr(function, "__wrapped__", None) is not None:
        return False
    return _does_nothing(code)


class Listeners:
    """The listeners' methods that do something, per event, for a list of
    listeners that may grow (LMCache's ``_registered_listeners``)."""

    def __init__(self, listeners: list[Any]) -> None:
        self._listeners = listeners
        self._seen = -1
        #: Per listener, in registration order: event -> its bound method,
        #: for the events on which it does something.
        self._acting: list[dict[str, Callable[[list], Any]]] = []
        self._calls: dict[str, tuple[Callable[[list], Any], ...]] = {}

    def _refresh(self) -> None:
        listeners = list(self._listeners)
        self._acting = [
            {event: method for event in EVENTS if not does_nothing(method := getattr(listener, event))}
            for listener in listeners
        ]
        self._calls = {
            event: tuple(acting[event] for acting in self._acting if event in acting) for event in EVENTS
        }
        self._seen = len(listeners)

    def calls(self, event: str) -> tuple[Callable[[list], Any], ...]:
        """The bound methods to call for ``event``, in registration order."""
        if self._seen != len(self._listeners):
            self._refresh()
        return self._calls[event]

    def wants(self, event: str) -> bool:
        """Whether some listener does something on ``event``."""
        return bool(self.calls(event))

    def emit(self, event: str, keys: Sequence[Any] | None) -> None:
        """Calls every listener that does something on ``event``."""
        for call in self.calls(event):
            call(keys if keys is not None else [])

    def emit_pairs(self, first: str, first_keys: Any, second: str, second_keys: Any) -> None:
        """Per listener, ``first`` then ``second`` (LMCache's ``finish_read``
        calls each listener twice in a row)."""
        if self._seen != len(self._listeners):
            self._refresh()
        for acting in self._acting:
            call = acting.get(first)
            if call is not None:
                call(first_keys if first_keys is not None else [])
            call = acting.get(second)
            if call is not None:
                call(second_keys if second_keys is not None else [])
