"""Actors and helpers shared by the timer tests: they wait on events, never sleep."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel

from actors import Actor, ActorRef, ActorSystem
from actors._timers import TIMER_TASK_NAME, TimerService


class Alarm(Actor):
    """Sets an event when its own single timer fires: ``tell((delay, event))``.

    Every timer of a system fires in deadline order from one heap, so once an
    alarm started after another actor's timer with a delay at least as long
    has gone off, that other timer has fired too: its firing is in the other
    actor's mailbox. That is how the tests know a firing is queued without
    sleeping.
    """

    def receive(self, message: Any) -> None:
        if isinstance(message, tuple):
            delay, event = message
            self.context.timers.start_single("alarm", event, delay)
        else:
            message.set()


async def after(alarm: ActorRef[Any], delay: float) -> None:
    """Wait until a timer started now with ``delay`` seconds has fired."""
    fired = anyio.Event()
    alarm.tell((delay, fired))
    await fired.wait()


def service(system: ActorSystem) -> TimerService:
    """The system's timer service (made by its first timer)."""
    assert system._runtime.timer_service is not None
    return system._runtime.timer_service


def timer_tasks() -> int:
    """How many timer tasks are running now, on any system."""
    return sum(task.name == TIMER_TASK_NAME for task in anyio.get_running_tasks())


async def until_no_timer_task() -> None:
    """Step the loop (checkpoints only) until no timer task is left."""
    for _ in range(1_000):
        if not timer_tasks():
            return
        await anyio.lowlevel.checkpoint()
    raise AssertionError("the timer task never ended")
