"""A timer started while the system stops or exits does nothing, as a stopping
actor's timer does (``start_single``'s promise): every actor is stopping then
(issue 22: the fault campaign saw ``SystemNotRunning`` fail a handler that
ran during the exit, with ``shutdown_timeout=0``)."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from actors import Actor, ActorSystem

pytestmark = pytest.mark.anyio


class StartsTimersLate(Actor):
    """Its handler waits, shielded from the teardown, until the system no
    longer runs, then starts timers and sets a receive timeout, recording
    what those calls raised (nothing, they must do nothing)."""

    def __init__(self, seen: list[Any], entered: anyio.Event) -> None:
        self.seen = seen
        self.entered = entered

    async def receive(self, message: Any) -> None:
        system = self.context.system
        self.entered.set()
        guardian = self.context.parent
        with anyio.CancelScope(shield=True):
            if message == "teardown":
                while system.running:
                    await anyio.lowlevel.checkpoint()
            else:  # system.stop(): the guardian is stopping
                while guardian.is_alive:
                    await anyio.lowlevel.checkpoint()
            timers = self.context.timers
            try:
                timers.start_single("once", "tick", 0.0)
                timers.start_periodic("every", "tick", 0.001)
                self.context.set_receive_timeout(0.001)
            except Exception as exc:
                self.seen.append(exc)
            else:
                self.seen.append(len(timers))


class HoldsItsChild(Actor):
    """Spawns a StartsTimersLate child; on "go" tells it "teardown" and
    waits, shielded, until the child is done: until then the teardown cannot
    reach the child (its stop is requested when this parent terminates)."""

    def __init__(self, seen: list[Any], entered: anyio.Event) -> None:
        self.seen = seen
        self.child = self.context.spawn(StartsTimersLate, seen, entered)

    async def receive(self, message: Any) -> None:
        self.child.tell("teardown")
        with anyio.CancelScope(shield=True):
            while not self.seen:
                await anyio.lowlevel.checkpoint()


async def test_a_timer_started_during_the_teardown_does_nothing() -> None:
    # shutdown_timeout=0: the actors are cancelled at once; a handler that
    # still runs (here: shielded), in an actor whose stop has not been
    # requested yet, sees the system no longer running.
    seen: list[Any] = []
    entered = anyio.Event()
    async with ActorSystem(shutdown_timeout=0) as system:
        system.spawn(HoldsItsChild, seen, entered).tell("go")
        await entered.wait()
    assert seen == [0]  # no error, no timer
    assert system.failures == 0


async def test_a_timer_started_while_the_system_stops_does_nothing() -> None:
    seen: list[Any] = []
    entered = anyio.Event()
    async with ActorSystem() as system:
        ref = system.spawn(StartsTimersLate, seen, entered)
        ref.tell("stopping")
        await entered.wait()
        system.stop()
        await system.wait_exited()
    assert seen == [0]
    assert system.failures == 0
