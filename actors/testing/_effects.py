"""What an actor did through its context, as the
[``BehaviorTestKit``][actors.testing.BehaviorTestKit] records it: one frozen
dataclass per kind of effect (Akka's ``Effect``), compared by value."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from .._ref import ActorRef

__all__ = [
    "AskStarted",
    "Effect",
    "ReceiveTimeoutSet",
    "Spawned",
    "SpawnedPool",
    "Stopped",
    "TimerCancelled",
    "TimerStarted",
    "Unwatched",
    "Watched",
    "WorkStarted",
]


class Effect:
    """Base class of what an actor did through its context, besides tells."""

    __slots__ = ()


@dataclass(frozen=True)
class Spawned(Effect):
    """``context.spawn(factory, *args, name=..., **kwargs)``; ``ref`` is the
    child's inbox ref (``kit.child_inbox(name)``)."""

    factory: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    name: str
    ref: ActorRef[Any] = field(compare=False)


@dataclass(frozen=True)
class SpawnedPool(Effect):
    """``context.spawn_pool(factory, size, *args, ...)``."""

    factory: Callable[..., Any]
    size: int
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    name: str
    ref: ActorRef[Any] = field(compare=False)


@dataclass(frozen=True)
class Stopped(Effect):
    """``context.stop(ref)``; ``ref`` None: the actor stopped itself."""

    ref: ActorRef[Any] | None = None


@dataclass(frozen=True)
class Watched(Effect):
    """``context.watch(ref)``."""

    ref: ActorRef[Any]


@dataclass(frozen=True)
class Unwatched(Effect):
    """``context.unwatch(ref)``."""

    ref: ActorRef[Any]


@dataclass(frozen=True)
class TimerStarted(Effect):
    """A timer started: ``interval`` None for a single timer (fires once
    after ``delay`` seconds), else periodic (first after ``delay``)."""

    key: Hashable
    message: object
    delay: float
    interval: float | None = None


@dataclass(frozen=True)
class ReceiveTimeoutSet(Effect):
    """``context.set_receive_timeout(timeout)`` (None: cancelled)."""

    timeout: float | None


@dataclass(frozen=True)
class WorkStarted(Effect):
    """``context.run(work, then=...)``: the work is not run (a coroutine
    object is closed); run ``then``'s message with ``kit.run`` to test what
    follows."""

    work: object = field(compare=False)
    then: Callable[..., Any] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class AskStarted(Effect):
    """``context.ask(target, message, timeout, then=...)``: the message is in
    the target's inbox too (when it is a TestInbox ref); nothing is awaited."""

    target: ActorRef[Any]
    message: object
    timeout: float = 5.0
    then: Callable[..., Any] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TimerCancelled(Effect):
    """``context.timers.cancel(key)`` of an active timer (``cancel_all``
    records one per timer)."""

    key: Hashable
