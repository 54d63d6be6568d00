"""Count the Python calls of reliable delivery to a consumer actor, per message.

Run in a fresh interpreter (the gate in ``test_delivery_call_counts.py``
does, and so can you): ``python tests/gates/measure_delivery_calls.py
BACKEND [--breakdown N]`` prints one JSON object with the figures for
``asyncio`` or ``trio``; ``--write-budgets`` measures both and rewrites
``delivery_budgets.json`` (see ``README.md`` in this directory).

The path (``reliable``): in one system, a ``ProducerController`` sends with
``await producer.send(i)`` to a ``ConsumerController`` in front of a
consumer actor whose sync ``receive`` counts the ``Delivery`` and returns;
window 256. Everything is in the figure: the producer's numbering and
batches, the controller's checks and its hand-over of each batch to the
consumer (the lane: one signal per batch), the consumer's loop, the
confirmations and the demand (a ``Request`` per half window) back to the
producer, and the event loop's scheduling between the three. The profiler
runs from the first send until the test task wakes from an event the
consumer sets at the last message; per message is the difference of a
:data:`SMALL` and a :data:`LARGE` run over the difference in messages.

Deterministic: no I/O, timers that would fire by the clock are pushed past
the run (the producer's resend tick, and the controller's flush of a
confirmation under half a window, which only reports what the next half
window reports anyway), garbage collection off while counting, Trio's
scheduler reseeded, warm-up runs first; each figure is measured twice and
the calls in actors/ must agree (Trio's scheduler, in the totals, polls
its loop more often on a loaded machine).
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

# The sibling modules (a script's own directory is first on sys.path).
from gate_budgets import command_line, versions
from measure_calls import TOLERANCE, Counts, _counted, _difference, _figures

import actors.delivery._consumer as consumer_module
from actors import Actor, ActorSystem
from actors.delivery import ConsumerController, Delivery, ProducerController

WINDOW = 256  #: the consumer's demand (messages in flight per producer)
SMALL, LARGE = 4 * WINDOW, 12 * WINDOW  #: messages per run
#: Seconds: longer than any measurement, so no timer fires within one.
NEVER = 600.0
BACKENDS = ("asyncio", "trio")
BUDGETS = __import__("pathlib").Path(__file__).with_name("delivery_budgets.json")


class Tally:
    def __init__(self) -> None:
        self.handled = 0
        self.target = 0
        self.done: anyio.Event | None = None


class Counting(Actor[Delivery[int]]):
    """A sync receive: counts, sets the event at the target, returns None."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def receive(self, delivery: Delivery[int]) -> None:
        tally = self.tally
        tally.handled += 1
        if tally.handled == tally.target and tally.done is not None:
            tally.done.set()


async def _measure() -> list[Counts]:
    # The flush of a confirmation under half a window waits this long (see
    # the module's documentation): never within a run.
    consumer_module._FLUSH_DELAY = NEVER  # type: ignore[misc]
    tally = Tally()
    runs: list[Counts] = []
    # No idle tick within a run either (hibernation, see measure_calls.py).
    async with ActorSystem(hibernate_after=NEVER) as system:
        consumer = system.spawn(Counting, tally)
        controller = ConsumerController.spawn(system, consumer, window=WINDOW)
        producer = await ProducerController.start(
            system, "gate", consumer=controller.ref, resend_interval=NEVER
        )

        def sends(n: int) -> Any:
            async def body() -> None:
                tally.target = tally.handled + n
                done = tally.done = anyio.Event()
                send = producer.send
                for i in range(n):
                    await send(i)
                await done.wait()
                # Every confirmation reported and taken before the next run
                # (grants come per batch: a run must not end with one on its
                # way, nor start the next with a different alignment).
                controller.ref.tell(consumer_module._FLUSH)
                await producer.wait_confirmed()

            return body

        for n in (LARGE, SMALL):  # warm-up
            await _counted(sends(n))
        for _ in range(2):  # twice: the figures must repeat
            runs += [await _counted(sends(SMALL)), await _counted(sends(LARGE))]
        producer.stop()
    return runs


def measure(backend: str, breakdown: int = 15) -> dict[str, Any]:
    """Measure one backend: ``figures`` (``reliable.call``,
    ``reliable.c_call``, and their ``.in_actors`` shares), ``repeat``,
    ``repeatable`` and ``breakdown`` as ``measure_calls.measure``."""
    runs = anyio.run(_measure, backend=backend)
    units = LARGE - SMALL
    first = _difference(runs[0], runs[1])
    out: dict[str, Any] = {
        "backend": backend,
        "figures": _figures(first, "reliable", units),
        "repeat": _figures(_difference(runs[2], runs[3]), "reliable", units),
    }
    top = sorted(first.items(), key=lambda kv: -abs(kv[1]))[:breakdown]
    out["breakdown"] = {
        "reliable": [
            f"{v / units:8.3f}  {event:6}  {where}" for (event, where), v in top
        ]
    }
    # The calls in actors/ must repeat; Trio's scheduler (Python, in the
    # total) polls the loop more often on a loaded machine (as the remote
    # gate found): its share is in the budgets, not in this check.
    out["repeatable"] = all(
        abs(out["figures"][k] - out["repeat"][k]) <= TOLERANCE
        for k in out["figures"]
        if k.endswith(".in_actors")
    )
    out["versions"] = versions()
    return out


if __name__ == "__main__":
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 2000))
    command_line(__doc__, BACKENDS, measure, BUDGETS, "counts")
