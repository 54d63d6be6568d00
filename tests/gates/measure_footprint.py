"""Measure what an idle actor retains and what spawning one costs in calls.

Run in a fresh interpreter (the gate in ``test_footprint.py`` does, and so can
you): ``python tests/gates/measure_footprint.py BACKEND [--breakdown N]``
prints one JSON object with the figures for ``asyncio`` or ``trio``;
``python tests/gates/measure_footprint.py --write-budgets`` measures both and
rewrites ``footprint_budgets.json`` (see ``README.md`` in this directory).

How a figure is taken:

* ``idle.bytes``, ``idle.blocks``: bytes and memory blocks still allocated
  (``tracemalloc``) per actor after N actors of a class with no state of its
  own were spawned by a task, have run their ``on_start`` and sit idle with
  an empty mailbox (``anyio.wait_all_tasks_blocked``: nothing of theirs is
  left to run), after a full garbage collection. The actors' refs are kept
  alive by the measuring task, as a user's would be. Per actor is the
  difference of two such runs, :data:`SMALL` and :data:`LARGE` actors, over
  the difference in actors: what a run pays once cancels out, and the
  containers that grow by doubling (the system's sets and dicts of actors)
  are spread over the actors that filled them.
* ``mailed.bytes``, ``mailed.blocks``: the same for actors that were each
  told one message and handled it, then stayed idle until they hibernated
  (gave up their task: ``actors._hibernation``). The systems run on a
  ``ManualClock``, so the idle threshold passes when the measurement
  advances it by ``hibernate_after`` twice (two ticks), never by waiting:
  the figure is as deterministic as ``idle.*``. ``mailed_tasked`` (never
  gated) is the same before the clock moves, each actor parked with its
  task: what an idle actor that has had mail kept before hibernation.
* ``spawn.call``, ``spawn.c_call``: Python calls (``sys.setprofile``'s
  ``call`` events, coroutine resumptions included) and C calls per spawned
  actor, from ``system.spawn`` until the last actor's ``on_start`` returned
  and the test task woke: the spawn itself, the start of the actor's task,
  its start hook and its first step into an idle wait. The same difference of
  two runs.
* ``baseline.bytes``: for comparison only (never gated), the same
  measurement for the lightest hand-written equivalent of an idle actor: an
  anyio task in a task group parked on an ``anyio.Event``, with a
  ``collections.deque`` as its mailbox.

Nothing here depends on timing: garbage collection is off while counting,
warm-up runs go first, and Trio's scheduler is reseeded before each run (see
``measure_calls.py``), so the same code, Python, anyio and Trio give the same
figures on every run.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

# The sibling modules (a script's own directory is first on sys.path).
from gate_budgets import command_line, versions
from measure_calls import (
    Counts,
    _profiler,
    _seed_trio_scheduler,
)

from actors import Actor, ActorSystem
from actors.testing import ManualClock

SMALL, LARGE = 500, 1_500  #: idle actors per run of the footprint
SPAWN_SMALL, SPAWN_LARGE = 200, 600  #: actors per run of the spawn count
BACKENDS = ("asyncio", "trio")
FIGURES = (
    "idle.bytes",
    "idle.blocks",
    "mailed.bytes",
    "mailed.blocks",
    "spawn.call",
    "spawn.c_call",
)
#: Seconds on the mailed runs' ManualClock: their systems' hibernate_after.
HIBERNATE_AFTER = 1.0
BUDGETS = Path(__file__).with_name("footprint_budgets.json")
#: How far the two measurements in one process may differ, as a share of the
#: figure: blocks and calls repeat exactly but for Trio's housekeeping; bytes
#: move by a few per actor (the allocator's size classes of strings and
#: tables that grew by doubling land a little differently).
TOLERANCE = {"bytes": 0.02, "blocks": 0.005, "call": 0.005, "c_call": 0.005}


class Idle(Actor):
    """An actor with no state of its own: what it retains is the runtime's."""

    def receive(self, message: Any) -> None:
        pass


class Started:
    """Counts start hooks; ``done`` at ``target``."""

    def __init__(self) -> None:
        self.count = 0
        self.target = 0
        self.done: anyio.Event | None = None


class Starter(Actor):
    """Counts its start on the tally (the spawn count's actor)."""

    def __init__(self, started: Started) -> None:
        self.started = started

    def on_start(self) -> None:
        started = self.started
        started.count += 1
        if started.count == started.target and started.done is not None:
            started.done.set()

    def receive(self, message: Any) -> None:
        pass


async def _settle() -> None:
    # Every task has run as far as it can: the actors' start hooks and their
    # first step into an idle wait (no sleep: anyio asks the loop).
    for _ in range(3):
        await anyio.wait_all_tasks_blocked()


async def _retained(
    make: Callable[[int], Awaitable[list[Any]]],
    n: int,
    then: Callable[[], Awaitable[None]] | None = None,
) -> tuple[int, int, list[Any]]:
    """Bytes and blocks retained by ``make(n)``'s ``n`` idle things (after
    ``then()``, when given, has run too)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        keep = await make(n)
        await _settle()
        if then is not None:
            await then()
            await _settle()
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    diff = after.compare_to(before, "filename")
    return (
        sum(s.size_diff for s in diff),
        sum(s.count_diff for s in diff),
        keep,
    )


async def _idle_bytes() -> dict[str, list[tuple[int, int]]]:
    runs: dict[str, list[tuple[int, int]]] = {"idle": [], "baseline": []}
    # A fresh system per run: its tables of actors (which never shrink) grow
    # from empty in every run alike, so their share is in every figure. The
    # warm-up is a large run: the tables outside the system (anyio's, the
    # loop's) have grown to their size before any measured run.
    for n in (LARGE, SMALL, LARGE, SMALL, LARGE):  # the first: warm-up
        async with ActorSystem() as system:
            spawn = system.spawn

            async def actors(n: int, spawn: Any = spawn) -> list[Any]:
                return [spawn(Idle) for _ in range(n)]

            _seed_trio_scheduler()
            size, blocks, keep = await _retained(actors, n)
            runs["idle"].append((size, blocks))
            del keep
    runs["idle"] = runs["idle"][1:]

    # Told one message each, handled, idle: before the clock moves (each
    # parked with its task) and after two ticks (hibernated).
    for key, ticks in (("mailed_tasked", 0), ("mailed", 2)):
        for n in (LARGE, SMALL, LARGE, SMALL, LARGE):  # the first: warm-up
            clock = ManualClock()
            async with ActorSystem(
                clock=clock, hibernate_after=HIBERNATE_AFTER
            ) as system:
                spawn = system.spawn

                async def mailed(n: int, spawn: Any = spawn) -> list[Any]:
                    refs = [spawn(Idle) for _ in range(n)]
                    for ref in refs:
                        ref.tell(None)
                    return refs

                async def idle_through(
                    clock: ManualClock = clock, ticks: int = ticks
                ) -> None:
                    for _ in range(ticks):
                        await clock.advance(HIBERNATE_AFTER)

                _seed_trio_scheduler()
                size, blocks, keep = await _retained(mailed, n, idle_through)
                runs.setdefault(key, []).append((size, blocks))
                del keep
        runs[key] = runs[key][1:]

    async def parked(event: anyio.Event, mailbox: deque[Any]) -> None:
        while True:
            await event.wait()
            mailbox.popleft()

    for n in (SMALL, SMALL, LARGE, SMALL, LARGE):  # the first: warm-up
        async with anyio.create_task_group() as tg:

            async def tasks(n: int, tg: Any = tg) -> list[Any]:
                keep = []
                for _ in range(n):
                    event, mailbox = anyio.Event(), deque[Any]()
                    tg.start_soon(parked, event, mailbox)
                    keep.append((event, mailbox))
                return keep

            _seed_trio_scheduler()
            size, blocks, _ = await _retained(tasks, n)
            runs["baseline"].append((size, blocks))
            tg.cancel_scope.cancel()
    runs["baseline"] = runs["baseline"][1:]
    return runs


async def _spawn_calls() -> list[Counts]:
    runs: list[Counts] = []
    started = Started()
    async with ActorSystem() as system:
        spawn = system.spawn

        def spawns(n: int) -> Callable[[], Awaitable[list[Any]]]:
            async def body() -> list[Any]:
                started.target = started.count + n
                done = started.done = anyio.Event()
                refs = [spawn(Starter, started) for _ in range(n)]
                await done.wait()
                return refs

            return body

        async def counted(n: int) -> Counts:
            counts: Counts = Counter()
            _seed_trio_scheduler()
            gc.collect()
            gc.disable()
            sys.setprofile(_profiler(counts))
            try:
                refs = await spawns(n)()
            finally:
                sys.setprofile(None)
                gc.enable()
            await _settle()
            for ref in refs:
                ref.stop()
            await _settle()
            return counts

        for n in (SPAWN_LARGE, SPAWN_SMALL):  # warm-up
            await counted(n)
        for _ in range(2):
            runs += [await counted(SPAWN_SMALL), await counted(SPAWN_LARGE)]
    return runs


def _per(runs: list[tuple[int, int]], units: int, first: int) -> tuple[float, float]:
    small, large = runs[first], runs[first + 1]
    return (
        round((large[0] - small[0]) / units, 1),
        round((large[1] - small[1]) / units, 2),
    )


def measure(backend: str, breakdown: int = 15) -> dict[str, Any]:
    """Measure one backend; the JSON object the gate compares with budgets."""
    memory = anyio.run(_idle_bytes, backend=backend)
    calls = anyio.run(_spawn_calls, backend=backend)
    units = LARGE - SMALL
    spawn_units = SPAWN_LARGE - SPAWN_SMALL
    out: dict[str, Any] = {"backend": backend, "figures": {}, "repeat": {}}
    for key, first in (("figures", 0), ("repeat", 2)):
        for kind in ("idle", "mailed"):
            size, blocks = _per(memory[kind], units, first)
            out[key][f"{kind}.bytes"] = size
            out[key][f"{kind}.blocks"] = blocks
        diff: Counts = Counter(calls[first + 1])
        diff.subtract(calls[first])
        for event in ("call", "c_call"):
            total = sum(v for (e, _), v in diff.items() if e == event)
            out[key][f"spawn.{event}"] = round(total / spawn_units, 2)
        if first == 0:
            top = sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:breakdown]
            out["breakdown"] = [
                f"{v / spawn_units:8.3f}  {event:6}  {where}"
                for (event, where), v in top
            ]
    size, blocks = _per(memory["mailed_tasked"], units, 0)
    out["mailed_tasked"] = {"bytes": size, "blocks": blocks}
    size, blocks = _per(memory["baseline"], units, 0)
    out["baseline"] = {"bytes": size, "blocks": blocks}
    out["idle_over_baseline"] = round(out["figures"]["idle.bytes"] / size, 3)
    out["repeatable"] = all(
        abs(out["figures"][k] - out["repeat"][k])
        <= TOLERANCE[k.split(".", 1)[1]] * out["figures"][k]
        for k in FIGURES
    )
    out["versions"] = versions()
    return out


if __name__ == "__main__":
    command_line(__doc__, BACKENDS, measure, BUDGETS, "figures")
