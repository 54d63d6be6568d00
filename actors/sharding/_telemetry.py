"""Sharding's metrics, when the system has telemetry
(``ActorSystem(telemetry=Telemetry())``): observable instruments over each
node's ``statistics()``, so the message path does no telemetry work.

Instruments (meter ``actors.sharding``; attributes ``actors.sharding.node``
and ``actors.sharding.type``): gauges ``actors.sharding.shards`` (shards
hosted), ``actors.sharding.entities`` (entities running) and
``actors.sharding.buffered`` (messages waiting); counters
``actors.sharding.hand_offs``, ``actors.sharding.activations``,
``actors.sharding.passivations`` and ``actors.sharding.dropped``.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Observation

if TYPE_CHECKING:
    from .. import Telemetry
    from ._state import TypeState

__all__ = ["watch"]

_GAUGES: Final = (
    ("shards", "{shard}", "Shards hosted by the node.", lambda s: len(s.hosted)),
    (
        "entities",
        "{entity}",
        "Entities running on the node.",
        lambda s: sum(len(h.entities) for h in s.hosted.values()),
    ),
    (
        "buffered",
        "{message}",
        "Messages waiting for their entity.",
        lambda s: sum(s.inflight),
    ),
)
_COUNTERS: Final = (
    ("hand_offs", "{shard}", "Shards handed off by the node.", lambda s: s.hand_offs),
    ("activations", "{entity}", "Entities started.", lambda s: s.activations),
    ("passivations", "{entity}", "Entities passivated.", lambda s: s.passivations),
    ("dropped", "{message}", "Messages dropped as dead letters.", lambda s: s.dropped),
)


class _Metrics:
    """The instruments of one Telemetry, over every node's types it sees."""

    def __init__(self, telemetry: Telemetry) -> None:
        self._lock = threading.Lock()
        self._types: weakref.WeakSet[TypeState] = weakref.WeakSet()
        meter = metrics.get_meter(
            "actors.sharding", meter_provider=telemetry.meter_provider
        )
        for name, unit, description, read in _GAUGES:
            meter.create_observable_gauge(
                f"actors.sharding.{name}",
                callbacks=[self._observer(read)],
                unit=unit,
                description=description,
            )
        for name, unit, description, read in _COUNTERS:
            meter.create_observable_counter(
                f"actors.sharding.{name}",
                callbacks=[self._observer(read)],
                unit=unit,
                description=description,
            )

    def add(self, state: TypeState) -> None:
        with self._lock:
            self._types.add(state)

    def _observer(self, read: Callable[[Any], int]) -> Any:
        def observe(options: CallbackOptions) -> Iterable[Observation]:
            with self._lock:
                types = list(self._types)
            out: list[Observation] = []
            for state in types:
                try:
                    value = read(state)
                except Exception:  # a snapshot while the loop changes it
                    continue
                attributes = {
                    "actors.sharding.node": state.node,
                    "actors.sharding.type": state.entity.type_name,
                }
                out.append(Observation(value, attributes))
            return out

        return observe


_registry: weakref.WeakKeyDictionary[Telemetry, _Metrics] = weakref.WeakKeyDictionary()
_registry_lock = threading.Lock()


def watch(telemetry: Telemetry, state: TypeState) -> None:
    """Report ``state``'s figures through ``telemetry``'s meter provider."""
    with _registry_lock:
        found = _registry.get(telemetry)
        if found is None:
            found = _registry[telemetry] = _Metrics(telemetry)
    found.add(state)
