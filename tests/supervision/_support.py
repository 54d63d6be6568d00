"""Helpers shared by the supervision and watch tests: a journal the actors write
to and the tests wait on (never on the clock), and actors with injected faults."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from actors import Actor, ActorRef, Terminated

#: Seconds a test may wait for the runtime before it is declared hung.
TIMEOUT = 10.0


def trio_mock_clock() -> Any:
    """An ``anyio_backend`` param for Trio on a MockClock that jumps ahead
    whenever every task is blocked: timing tests run in no wall-clock time."""
    import trio.testing

    return pytest.param(
        ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)}),
        id="trio-mockclock",
    )


class Boom(Exception):
    """The injected failure."""


class Journal:
    """What the actors did, in order. Tests wait for an entry to appear instead
    of sleeping: every ``add`` wakes the waiters."""

    def __init__(self) -> None:
        self.entries: list[tuple[Any, ...]] = []
        self._changed: anyio.Event | None = None

    def add(self, *entry: Any) -> None:
        self.entries.append(entry)
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def wait_for(
        self,
        predicate: Callable[[list[tuple[Any, ...]]], bool],
        timeout: float = TIMEOUT,
    ) -> None:
        """Return once ``predicate(entries)`` holds (AssertionError after
        ``timeout`` seconds)."""
        try:
            with anyio.fail_after(timeout):
                while not predicate(self.entries):
                    if self._changed is None:
                        self._changed = anyio.Event()
                    await self._changed.wait()
        except TimeoutError:
            raise AssertionError(f"never happened; journal: {self.entries}") from None

    async def wait_count(self, *entry: Any, count: int = 1) -> None:
        """Return once ``entry`` (a prefix of entries) was added ``count`` times."""
        await self.wait_for(lambda entries: self.count(*entry) >= count)

    def count(self, *entry: Any) -> int:
        n = len(entry)
        return sum(1 for e in self.entries if e[:n] == entry)

    def of(self, who: str) -> list[tuple[Any, ...]]:
        """The entries of one actor, without its name."""
        return [e[1:] for e in self.entries if e[0] == who]

    def hooks(self, who: str | None = None) -> list[tuple[str, str]]:
        """(actor, hook) for every lifecycle hook call, in order."""
        names = ("on_start", "on_stop", "on_restart")
        return [
            (e[0], e[1])
            for e in self.entries
            if e[1] in names and (who is None or e[0] == who)
        ]


class Worker(Actor):
    """Journals every hook and message; fails where ``faults`` says.

    ``faults`` maps a hook name (``on_start``, ``on_restart``, ``on_stop``) to how
    many more calls of it fail; it is shared by every incarnation. Messages:
    ``"fail"`` raises :class:`Boom`, ``("raise", exc)`` raises ``exc``, ``"get"``
    replies with how many messages this instance handled before it, ``"stop"``
    stops the actor itself, ``"stop and fail"`` does and then fails; anything
    else is journaled and counted.
    """

    def __init__(
        self, journal: Journal, who: str, faults: dict[str, int] | None = None
    ) -> None:
        self.journal = journal
        self.who = who
        self.faults = faults if faults is not None else {}
        self.handled = 0

    def _fault(self, hook: str) -> None:
        left = self.faults.get(hook, 0)
        if left:
            self.faults[hook] = left - 1
            raise Boom(f"{self.who}.{hook}")

    def on_start(self) -> None:
        self.journal.add(self.who, "on_start")
        self._fault("on_start")

    def on_restart(self, exc: BaseException | None) -> None:
        self.journal.add(self.who, "on_restart", exc)
        self._fault("on_restart")

    def on_stop(self) -> None:
        self.journal.add(self.who, "on_stop")
        self._fault("on_stop")

    def receive(self, message: Any) -> Any:
        self.journal.add(self.who, "receive", message)
        if message == "fail":
            raise Boom(f"{self.who} failed on purpose")
        if isinstance(message, tuple) and message[0] == "raise":
            raise message[1]
        if message == "get":
            return self.handled
        if message == "stop":
            self.context.stop()
        if message == "stop and fail":
            self.context.stop()
            raise Boom(f"{self.who} failed while stopping")
        self.handled += 1
        return None


class Supervisor(Actor):
    """Spawns ``children`` (name -> (factory, args, restart type)) in order on
    every start and journals the ``Terminated`` of those it watches."""

    supervisor_strategy: Any = None

    def __init__(
        self,
        journal: Journal,
        who: str,
        children: dict[str, tuple[Any, tuple[Any, ...], str]],
        strategy: Any = None,
        watch: bool = False,
    ) -> None:
        self.journal = journal
        self.who = who
        self.children = children
        self.watch = watch
        if strategy is not None:
            self.supervisor_strategy = strategy
        self.refs: dict[str, ActorRef[Any]] = {}

    def on_start(self) -> None:
        self.journal.add(self.who, "on_start")
        for name, (factory, args, restart) in self.children.items():
            ref = self.context.spawn(factory, *args, name=name, restart=restart)  # type: ignore[arg-type]
            self.refs[name] = ref
            self.journal.add(self.who, "spawned", name, ref)
            if self.watch:
                self.context.watch(ref)

    def on_stop(self) -> None:
        self.journal.add(self.who, "on_stop")

    def on_terminated(self, terminated: Terminated) -> None:
        self.journal.add(self.who, "terminated", terminated.ref.name, terminated.reason)

    def receive(self, message: Any) -> Any:
        if message == "children":
            return dict(self.refs)
        if message == "fail":
            raise Boom(f"{self.who} failed on purpose")
        return None


def worker(
    journal: Journal, who: str, restart: str = "transient", **faults: int
) -> tuple[Any, tuple[Any, ...], str]:
    """A child spec for :class:`Supervisor`."""
    return (Worker, (journal, who, dict(faults)), restart)
