"""The clock every sample is timed with, chosen once per run (``--clock``).

* ``cpu`` (the default): ``time.process_time()``, the CPU time of this process.
  On a small shared machine other processes steal the CPU for whole time
  slices; wall time then counts their work as ours, CPU time does not. With
  three busy processes on two cores, a 4 us/item row measured 11-13 us/item on
  the wall clock and 3.8-4.1 us/item on this one. It counts every thread of the
  process and not the time an event loop sleeps with nothing to run, which is
  right for the channel rows (always runnable, one thread) and for "CPU per
  timer firing"; a row whose point is waiting or thread parallelism should say
  so and be run with ``--clock wall``.
* ``wall``: ``time.perf_counter()``, elapsed real time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

__all__ = ["CLOCKS", "DESCRIPTIONS", "now", "use"]

CLOCKS: Final[dict[str, Callable[[], float]]] = {
    "cpu": time.process_time,
    "wall": time.perf_counter,
}
DESCRIPTIONS: Final = {
    "cpu": "CPU time of the process (time.process_time)",
    "wall": "wall time (time.perf_counter)",
}

_now: Callable[[], float] = time.process_time


def now() -> float:
    """The current reading of the run's clock, in seconds."""
    return _now()


def use(name: str) -> None:
    """Time every following sample with clock ``name`` (a key of CLOCKS).

    Raises:
        KeyError: ``name`` is not a known clock.
    """
    global _now
    _now = CLOCKS[name]
