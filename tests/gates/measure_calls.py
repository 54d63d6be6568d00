"""Count the Python calls of the hot paths: tell -> receive, and ask round trips.

Run in a fresh interpreter (the gate in ``test_call_counts.py`` does, and so can
you): ``python tests/gates/measure_calls.py BACKEND [--breakdown N]`` prints one
JSON object with the figures for ``asyncio`` or ``trio``;
``python tests/gates/measure_calls.py --write-budgets`` measures both and
rewrites ``budgets.json`` (see ``README.md`` in this directory).

How a figure is taken (``sys.setprofile``: ``call`` events are Python function
calls, coroutine resumptions included; ``c_call`` events are calls of builtins
and C functions):

* ``tell``: one actor with a sync ``receive`` and a drain of 256 (the default). The
  profiler is on from the first ``tell`` until the test task wakes from an
  event the handler sets at the last message; the actor's return to its
  mailbox (it parks again) falls inside too. Per message is the difference of
  two such runs, :data:`SMALL` and :data:`LARGE` messages, over the difference
  in messages: everything paid once per run (the event, the wakeups of the
  test task) cancels out, and what a batch of 256 costs is spread over its
  messages, as in a real backlog. Both counts are multiples of the drain, so
  every batch is full.
* ``ask``: ``await ref.ask(i)`` one after the other, the same difference of
  two runs.
* ``ping_pong``: two actors tell a message back and forth (``receive`` tells
  the peer), per round trip; the pinger's handler sets the event at the last
  one. Both actors' loops, their parks or yields and the event loop's
  scheduling between them are in the figure.

Nothing here depends on timing: tells never yield, the handler says when it is
done, no sleeps, garbage collection is off while counting (a collection would
run finalizers at an arbitrary point), and warm-up runs go first (imports,
first-call paths, the interpreter's specialised bytecode). Each figure is
measured twice in the process and both must agree (``repeatable``); Trio's
scheduler, which shuffles runnable tasks at random, is reseeded before each run,
so separate processes give the very same figures.
"""

from __future__ import annotations

import gc
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import FrameType
from typing import Any

import anyio

# The sibling module (a script's own directory is first on sys.path).
from gate_budgets import command_line, versions

import actors
from actors import Actor, ActorSystem

DRAIN = 256  #: items the actor takes per wake (the runtime's default, pinned)
SMALL, LARGE = 10 * DRAIN, 30 * DRAIN  #: messages per run: full batches only
ASK_SMALL, ASK_LARGE = 300, 1100  #: round trips per run
PING_SMALL, PING_LARGE = 300, 1100  #: ping-pong round trips per run
#: Seconds. Asks with one timeout share one deadline timer that fires once per
#: timeout period (about 100 calls on Trio, for any number of asks): with a
#: timeout longer than the whole measurement, no firing lands in one run and
#: not in its repeat.
ASK_TIMEOUT = 600.0
#: Seconds. The system's idle tick (hibernation: an actor idle since the
#: tick before gives up its task) runs every ``hibernate_after`` while an
#: actor holds a task, and the actors of one measurement sit idle while the
#: others run: a tick (and the task start of the actor it hibernated) would
#: land in some runs and not in their repeats. Longer than the whole
#: measurement, no tick lands; what hibernation costs a message (nothing:
#: a run registers once, at its first park) is counted all the same.
HIBERNATE_AFTER = 600.0
BACKENDS = ("asyncio", "trio")
EVENTS = ("call", "c_call")
BUDGETS = Path(__file__).with_name("budgets.json")
#: How far the two measurements in one process may differ. Not timing: event
#: loops do housekeeping every so many operations (Trio prunes its deadline
#: heap about every 1,000 cancel scopes), which lands in one run or the next,
#: +-1 call over a run, 0.0025 per ask round trip.
TOLERANCE = 0.05
_ACTORS = str(Path(actors.__file__ or "").resolve().parent)


class Tally:
    """The handler's side of a run: counts messages, says when all arrived."""

    def __init__(self) -> None:
        self.handled = 0
        self.target = 0
        self.done: anyio.Event | None = None


class Sink(Actor):
    """A sync receive: one ``call`` per message, no other calls but the last."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def receive(self, message: Any) -> Any:
        tally = self.tally
        tally.handled += 1
        if tally.handled == tally.target and tally.done is not None:
            tally.done.set()
        return message


class Ponger(Actor):
    """Tells every message back to its sender (the pinger)."""

    def __init__(self, pinger: Any) -> None:
        self.pinger = pinger

    def receive(self, message: Any) -> None:
        self.pinger.tell(message)


class Pinger(Actor):
    """Counts round trips on the tally and pings its ponger (a child) again
    until the target."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def on_start(self) -> None:
        self.ponger = self.context.spawn(Ponger, self.context.self_ref)

    def receive(self, message: Any) -> None:
        tally = self.tally
        tally.handled += 1
        if tally.handled == tally.target:
            if tally.done is not None:
                tally.done.set()
        else:
            self.ponger.tell(message)


Counts = Counter[tuple[str, str]]  # (event, where) -> calls


def _profiler(counts: Counts) -> Callable[[FrameType, str, Any], None]:
    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            counts["call", _function(frame)] += 1
        elif event == "c_call":  # the frame is the caller's: name both
            name = getattr(arg, "__qualname__", None) or repr(arg)
            counts["c_call", f"{_function(frame)} -> {name}"] += 1

    return profile


def _function(frame: FrameType) -> str:
    """``actors/_ref.py:ActorRef.tell``, ``anyio/...``, ``python3.11/asyncio/...``."""
    code = frame.f_code
    filename = code.co_filename
    if filename.startswith(_ACTORS):
        filename = "actors" + filename[len(_ACTORS) :]
    else:
        parts = Path(filename).parts
        for anchor in ("site-packages", "lib"):
            if anchor in parts:
                filename = "/".join(parts[len(parts) - parts[::-1].index(anchor) :])
                break
    return f"{filename}:{code.co_qualname}"


def _seed_trio_scheduler() -> None:
    # Trio reverses each batch of runnable tasks at random (to shake out
    # ordering assumptions), which changes the count of its own ``list.reverse``
    # calls from run to run. Reseeding its generator (private, hence getattr)
    # before each run makes those, and the order of tasks, repeat exactly.
    rng = getattr(sys.modules.get("trio._core._run"), "_r", None)
    if rng is not None:
        rng.seed(0)


async def _counted(body: Callable[[], Awaitable[None]]) -> Counts:
    counts: Counts = Counter()
    _seed_trio_scheduler()
    gc.collect()
    gc.disable()
    sys.setprofile(_profiler(counts))
    try:
        await body()
    finally:
        sys.setprofile(None)
        gc.enable()
    return counts


async def _measure() -> dict[str, list[Counts]]:
    tally = Tally()
    runs: dict[str, list[Counts]] = {"tell": [], "ask": [], "ping_pong": []}
    ping_tally = Tally()
    async with ActorSystem(hibernate_after=HIBERNATE_AFTER) as system:
        ref = system.spawn(Sink, tally, drain=DRAIN)
        pinger = system.spawn(Pinger, ping_tally)

        def tells(n: int) -> Callable[[], Awaitable[None]]:
            async def body() -> None:
                tally.target = tally.handled + n
                done = tally.done = anyio.Event()
                tell = ref.tell
                for i in range(n):
                    tell(i)
                await done.wait()

            return body

        def asks(n: int) -> Callable[[], Awaitable[None]]:
            async def body() -> None:
                ask = ref.ask
                for i in range(n):
                    await ask(i, timeout=ASK_TIMEOUT)

            return body

        def pings(n: int) -> Callable[[], Awaitable[None]]:
            async def body() -> None:
                ping_tally.target = ping_tally.handled + n
                done = ping_tally.done = anyio.Event()
                pinger.tell(0)  # the first of n: the pinger tells it on
                await done.wait()

            return body

        for n in (LARGE, SMALL):  # warm-up
            await _counted(tells(n))
            await _counted(asks(n // 3))
            await _counted(pings(n // 3))
        for _ in range(2):  # twice: the figures must repeat exactly
            runs["tell"] += [await _counted(tells(SMALL)), await _counted(tells(LARGE))]
            runs["ask"] += [
                await _counted(asks(ASK_SMALL)),
                await _counted(asks(ASK_LARGE)),
            ]
            runs["ping_pong"] += [
                await _counted(pings(PING_SMALL)),
                await _counted(pings(PING_LARGE)),
            ]
        ref.stop()
        pinger.stop()
    return runs


def _difference(small: Counts, large: Counts) -> Counts:
    diff: Counts = Counter(large)
    diff.subtract(small)
    return Counter({k: v for k, v in diff.items() if v})


def _figures(diff: Counts, path: str, units: int) -> dict[str, float]:
    figures = {}
    for event in EVENTS:
        total = sum(v for (e, _), v in diff.items() if e == event)
        # Made from code in actors/ (a C call counts where it was called from).
        ours = sum(v for (e, w), v in diff.items() if e == event and w[:7] == "actors/")
        figures[f"{path}.{event}"] = round(total / units, 2)
        figures[f"{path}.{event}.in_actors"] = round(ours / units, 2)
    return figures


def measure(backend: str, breakdown: int = 15) -> dict[str, Any]:
    """Measure one backend; the JSON object the gate compares with budgets.

    ``figures``: calls per message (``tell.*``) and per round trip (``ask.*``),
    in all and in ``actors/`` alone; ``repeat``: the same from the second
    measurement, and ``repeatable`` whether the two agree within
    :data:`TOLERANCE`; ``breakdown``: the functions called most per unit.
    """
    runs = anyio.run(_measure, backend=backend)
    spans = {
        "tell": LARGE - SMALL,
        "ask": ASK_LARGE - ASK_SMALL,
        "ping_pong": PING_LARGE - PING_SMALL,
    }
    out: dict[str, Any] = {"backend": backend, "figures": {}, "repeat": {}}
    out["breakdown"] = {}
    for path, counts in runs.items():
        units = spans[path]
        first = _difference(counts[0], counts[1])
        out["figures"].update(_figures(first, path, units))
        out["repeat"].update(_figures(_difference(counts[2], counts[3]), path, units))
        top = sorted(first.items(), key=lambda kv: -abs(kv[1]))[:breakdown]
        out["breakdown"][path] = [
            f"{v / units:8.3f}  {event:6}  {where}" for (event, where), v in top
        ]
    out["repeatable"] = all(
        abs(out["figures"][k] - out["repeat"][k]) <= TOLERANCE for k in out["figures"]
    )
    out["versions"] = versions()
    return out


if __name__ == "__main__":
    command_line(__doc__, BACKENDS, measure, BUDGETS, "counts")
