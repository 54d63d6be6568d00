"""The actor rows written with Pykka: thread-based actors (``ThreadingActor``).

Pykka never touches the event loop, so a Pykka sample is the same on every
backend. :class:`OncePerRound` runs it for real once per round, on the first
backend the row visits, and reports that same sample on the other backends of
the round (the implementation is labelled ``pykka (threads)``); each backend's
table still divides its own ``ours`` sample by a Pykka sample of the same round.

The workloads, as a Pykka user writes them:

* ``queued``: a gate message parks the actor, every message is told, the gate
  opens.
* ``flood``: producer threads tell one actor. Pykka mailboxes have no capacity,
  so the bounded row's producers take a ``threading.BoundedSemaphore`` slot per
  message, which the actor gives back once it has handled it.
* ``fan_out``: the root tells W actors in turn (Pykka has no shared-queue pool,
  so the shared-queue rows use the same round-robin code).
* ``ping_pong``: each pinger is told its ponger and they tell each other.
* ``ask``: the root's ``ref.ask(i)``, blocking, in turn.

Each actor counts what it handled (one increment and one comparison per
message, as every other implementation) and sets its own ``threading.Event``
when it has its share, so no counter is shared between threads.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import sniffio

from .._clock import now
from .._registry import Sample, SampleFn
from ._actor_tasks import shares

__all__ = [
    "OncePerRound",
    "pykka_ask",
    "pykka_fan_out",
    "pykka_flood",
    "pykka_ping_pong",
    "pykka_queued",
]

#: The Pykka implementation's name in the tables.
NAME = "pykka (threads)"


def _loop_flavour() -> str:
    """The backend running this sample: asyncio, uvloop or trio."""
    library = sniffio.current_async_library()
    if library == "asyncio":
        loop = type(asyncio.get_running_loop())
        return "uvloop" if loop.__module__.startswith("uvloop") else "asyncio"
    return library


class OncePerRound:
    """A thread-based sample run once per round and reused on the other backends.

    The harness visits a row's backends one after another in every round (and in
    the warm-up), always in the same order. The sample runs for real on the
    first backend it sees (and whenever a count has no result yet); on the
    others it returns the result of that run.
    """

    def __init__(self, run: Callable[[int], Sample]) -> None:
        self._run = run
        self._first: str | None = None
        self._last: dict[int, Sample] = {}

    async def __call__(self, count: int) -> Sample:
        flavour = _loop_flavour()
        if self._first is None:
            self._first = flavour
        if flavour == self._first or count not in self._last:
            self._last[count] = self._run(count)
        return self._last[count]


class Share:
    """What one Pykka actor handled; ``done`` once it has ``expected``. Only
    that actor's thread writes it; the root reads it after ``done``."""

    __slots__ = ("count", "done", "expected")

    def __init__(self, expected: int) -> None:
        self.count = 0
        self.expected = expected
        self.done = threading.Event()


def _counter_class() -> type[Any]:
    import pykka

    class Counter(pykka.ThreadingActor):
        """Counts its messages on its share and replies with the message. A
        ``threading.Event`` message parks it until the event is set; a
        semaphore given at start is released per message (backpressure)."""

        def __init__(
            self, share: Share, slots: threading.BoundedSemaphore | None = None
        ) -> None:
            super().__init__()
            self.share = share
            self.slots = slots

        def on_receive(self, message: Any) -> Any:
            if isinstance(message, threading.Event):
                message.wait()
                return None
            share = self.share
            share.count += 1
            if share.count == share.expected:
                share.done.set()
            if self.slots is not None:
                self.slots.release()
            return message

    return Counter


def _stop_all() -> None:
    import pykka

    pykka.ActorRegistry.stop_all()


def _queued(count: int) -> Sample:
    share = Share(count)
    ref = _counter_class().start(share)
    gate = threading.Event()
    ref.tell(gate)
    start = now()
    tell = ref.tell
    for i in range(count):
        tell(i)
    gate.set()
    share.done.wait()
    elapsed = now() - start
    _stop_all()
    return Sample(elapsed, share.count)


def _flood(producers: int, capacity: int | None) -> Callable[[int], Sample]:
    def run(count: int) -> Sample:
        share = Share(count)
        slots = None if capacity is None else threading.BoundedSemaphore(capacity)

        def produce(ref: Any, part: int) -> None:
            tell = ref.tell
            if slots is None:
                for i in range(part):
                    tell(i)
            else:
                acquire = slots.acquire
                for i in range(part):
                    acquire()
                    tell(i)

        start = now()
        ref = _counter_class().start(share, slots)
        threads = [
            threading.Thread(target=produce, args=(ref, part))
            for part in shares(count, producers)
        ]
        for thread in threads:
            thread.start()
        share.done.wait()
        elapsed = now() - start
        for thread in threads:
            thread.join()
        _stop_all()
        return Sample(elapsed, share.count)

    return run


def _fan_out(workers: int) -> Callable[[int], Sample]:
    def run(count: int) -> Sample:
        counter = _counter_class()
        parts = [Share(part) for part in shares(count, workers)]
        start = now()
        tells = [counter.start(part).tell for part in parts]
        for i in range(count):
            tells[i % workers](i)
        for part in parts:
            part.done.wait()
        elapsed = now() - start
        _stop_all()
        return Sample(elapsed, sum(part.count for part in parts))

    return run


def _ping_pong_classes() -> tuple[type[Any], type[Any]]:
    import pykka

    class Ponger(pykka.ThreadingActor):
        def __init__(self, peer: Any) -> None:
            super().__init__()
            self.peer = peer

        def on_receive(self, message: Any) -> None:
            self.peer.tell(message)

    class Pinger(pykka.ThreadingActor):
        """Told its ponger, serves the first ping; counts every pong on its
        share and pings again until it has had them all."""

        def __init__(self, share: Share) -> None:
            super().__init__()
            self.share = share
            self.peer: Any = None

        def on_receive(self, message: Any) -> None:
            if isinstance(message, pykka.ActorRef):
                self.peer = message
                message.tell(0)
                return
            share = self.share
            share.count += 1
            if share.count == share.expected:
                share.done.set()
            else:
                self.peer.tell(message)

    return Pinger, Ponger


def _ping_pong(pairs: int) -> Callable[[int], Sample]:
    def run(count: int) -> Sample:
        pinger_class, ponger_class = _ping_pong_classes()
        parts = [Share(rounds) for rounds in shares(count, pairs)]
        start = now()
        for part in parts:
            pinger = pinger_class.start(part)
            pinger.tell(ponger_class.start(pinger))
        for part in parts:
            part.done.wait()
        elapsed = now() - start
        _stop_all()
        return Sample(elapsed, sum(part.count for part in parts))

    return run


def _ask(count: int) -> Sample:
    ref = _counter_class().start(Share(count))
    received = 0
    start = now()
    ask = ref.ask
    for i in range(count):
        if ask(i) == i:
            received += 1
    elapsed = now() - start
    _stop_all()
    return Sample(elapsed, received)


pykka_queued: SampleFn = OncePerRound(_queued)
pykka_ask: SampleFn = OncePerRound(_ask)


def pykka_flood(producers: int, capacity: int | None) -> SampleFn:
    return OncePerRound(_flood(producers, capacity))


def pykka_fan_out(workers: int) -> SampleFn:
    return OncePerRound(_fan_out(workers))


def pykka_ping_pong(pairs: int) -> SampleFn:
    return OncePerRound(_ping_pong(pairs))
