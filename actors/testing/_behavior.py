"""``BehaviorTestKit``: one message at a time through an actor instance,
without an event loop or a system, and the effects it had (Akka's
BehaviorTestKit).

The actor sees a stand-in context (``self.context``) that records instead of
doing: spawning gives a [``TestInbox``][actors.testing.TestInbox] ref per child,
watching, stopping and timers become [``Effect``][actors.testing.Effect]
records, and tells to refs the test handed in (``TestInbox.ref``) land in those
inboxes. An ``async def`` handler runs to completion synchronously as long as it
never waits; one that waits (on a reply, a sleep, a checkpoint) cannot be run
here, and the kit says so.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, TypeVar

import anyio

from .._actor import UNHANDLED, Actor
from .._behaviour import current_behaviour
from .._context import ActorContext, check_ask, check_ref
from .._dead_letters import DeadLetter
from .._envelope import own_traceback
from .._errors import ActorStopped
from .._incarnation import construct
from .._lifecycle import StopReason, current_cell
from .._pipe import check_job
from .._pool_spawn import check_pool
from .._ref import ActorRef
from .._replies import ErrorReply
from .._runtime import check_factory
from .._spawn_options import SpawnOptions, factory_name
from .._system_signals import Terminated
from .._timers import check_key
from .._validation import check_duration
from ._effects import (
    AskStarted,
    Effect,
    ReceiveTimeoutSet,
    Spawned,
    SpawnedPool,
    Stopped,
    TimerCancelled,
    TimerStarted,
    Unwatched,
    Watched,
    WorkStarted,
)
from ._inbox import InboxRef, TestInbox

__all__ = [
    "AskStarted",
    "BehaviorTestKit",
    "Effect",
    "ReceiveTimeoutSet",
    "Spawned",
    "SpawnedPool",
    "Stopped",
    "TestInbox",
    "TimerCancelled",
    "TimerStarted",
    "Unwatched",
    "Watched",
    "WorkStarted",
]

T = TypeVar("T")
A = TypeVar("A", bound=Actor)


# -- the stand-in context ------------------------------------------------------


class _Timers:
    """The kit's ``context.timers``: records, never fires (``kit.fire``)."""

    def __init__(self, kit: BehaviorTestKit[Any]) -> None:
        self._kit = kit
        self._active: dict[Hashable, TimerStarted] = {}

    def start_single(self, key: Hashable, message: object, delay: float) -> None:
        delay = check_duration("delay", delay, zero=True)
        self._start(TimerStarted(key, message, delay, None))

    def start_periodic(
        self,
        key: Hashable,
        message: object,
        interval: float,
        *,
        initial_delay: float | None = None,
    ) -> None:
        interval = check_duration("interval", interval)
        first = (
            interval
            if initial_delay is None
            else check_duration("initial_delay", initial_delay, zero=True)
        )
        self._start(TimerStarted(key, message, first, interval))

    def _start(self, effect: TimerStarted) -> None:
        check_key(effect.key)
        if self._kit._stop_requested:
            return  # a stopping actor starts no timer (the runtime's rule)
        self._active[effect.key] = effect
        self._kit._effects.append(effect)

    def cancel(self, key: Hashable) -> None:
        if self._active.pop(key, None) is not None:
            self._kit._effects.append(TimerCancelled(key))

    def cancel_all(self) -> None:
        for key in list(self._active):
            self.cancel(key)

    def is_active(self, key: Hashable) -> bool:
        return key in self._active

    def __len__(self) -> int:
        return len(self._active)


class _FakeRuntime:
    """What ``Actor.receive``'s default reaches for: the dead letters."""

    def __init__(self, kit: BehaviorTestKit[Any]) -> None:
        self._kit = kit

    def dead_letter(self, cell: Any, message: object, reason: str) -> None:
        self._kit.dead_letters.append(DeadLetter(self._kit.self_ref, message, reason))


class _FakeCell:
    """What the runtime's helpers reach for on an instance's cell: the dead
    letters, the context (``self.context`` in ``__init__``), the control
    queue (``become`` asks the loop to bind the handler again: the kit binds
    it at each run anyway). It is the current cell while the kit runs the
    actor's code, so the runtime's own checks (``become`` from the actor's
    own task only, ...) apply as they do in a system."""

    __slots__ = ("args", "context", "control", "factory", "kwargs", "path", "runtime")

    def __init__(self, kit: BehaviorTestKit[Any]) -> None:
        self.runtime = _FakeRuntime(kit)
        self.control: list[Any] = []
        self.path = kit.path
        self.context: Any = None
        #: What the runtime's construct builds the instance with.
        self.factory: Callable[..., Any] = Actor
        self.args: tuple[Any, ...] = ()
        self.kwargs: dict[str, Any] = {}

    @property
    def handling(self) -> Any:
        """What ``stash()`` reads first: the kit has no message loop to hand
        a stashed message back."""
        raise RuntimeError(
            f"stash() needs the runtime's message loop, which hands stashed "
            f"messages back: {_USE_ASYNC}"
        )

    def kick(self) -> None:
        """Unstashing asks the loop to look at its queue: there is none."""


class _KitContext(ActorContext):
    """The context an actor sees in a BehaviorTestKit: records effects."""

    __slots__ = ("_kit",)

    def __init__(self, kit: BehaviorTestKit[Any]) -> None:
        cell = _FakeCell(kit)
        super().__init__(cell)  # type: ignore[arg-type]
        cell.context = self
        self._kit = kit

    @property
    def self_ref(self) -> ActorRef[Any]:
        return self._kit.self_ref

    @property
    def parent(self) -> ActorRef[Any]:
        return self._kit.parent_inbox.ref

    @property
    def system(self) -> Any:
        raise RuntimeError(
            "a BehaviorTestKit has no ActorSystem: test code that needs one "
            "with the async kit (the actor_system fixture, TestProbe)"
        )

    @property
    def children(self) -> list[ActorRef[Any]]:
        return [inbox.ref for inbox in self._kit._children.values()]

    @property
    def name(self) -> str:
        return self._kit.name

    @property
    def path(self) -> str:
        return self._kit.path

    def spawn(  # type: ignore[override]
        self,
        factory: Callable[..., Any],
        *args: Any,
        name: str | None = None,
        capacity: int | None = None,
        drain: int | None = None,
        restart: str = "transient",
        **kwargs: Any,
    ) -> ActorRef[Any]:
        # The runtime's checks, in its order: the options, the factory, the
        # name, then whether this actor may still spawn.
        SpawnOptions(name, capacity, drain, restart)  # type: ignore[arg-type]
        check_factory(factory)
        inbox = self._kit._new_child(factory, name)
        self._kit._effects.append(
            Spawned(factory, args, kwargs, inbox.ref.name, inbox.ref)
        )
        return inbox.ref

    def spawn_pool(  # type: ignore[override]
        self,
        factory: Callable[..., Any],
        size: int,
        *args: Any,
        routing: str = "round_robin",
        name: str | None = None,
        capacity: int | None = None,
        drain: int | None = None,
        strategy: Any = None,
        **kwargs: Any,
    ) -> Any:
        check_pool(factory, size, routing, capacity, strategy)
        SpawnOptions(name, None, drain)
        inbox = self._kit._new_child(factory, name, pool=True)
        self._kit._effects.append(
            SpawnedPool(factory, size, args, kwargs, inbox.ref.name, inbox.ref)
        )
        return inbox.ref

    def stop(self, ref: ActorRef[Any] | None = None) -> None:
        kit = self._kit
        if ref is not None:
            check_ref(ref, "stop", " or nothing")
        if ref is None or ref == kit.self_ref:
            if not kit.stopped and not kit._stopping:
                kit._stopping = True  # on_stop runs after the current message
                kit._effects.append(Stopped(None))
            return
        if ref not in self.children:
            raise ValueError(
                f"{ref.path} is not a child of {kit.path}: stop it with ref.stop()"
            )
        kit._children.pop(ref.name)
        kit._effects.append(Stopped(ref))

    def watch(self, ref: ActorRef[Any]) -> None:
        check_ref(ref, "watch")
        self._kit._effects.append(Watched(ref))

    def unwatch(self, ref: ActorRef[Any]) -> None:
        check_ref(ref, "unwatch")
        self._kit._effects.append(Unwatched(ref))

    @property
    def timers(self) -> Any:
        return self._kit._timers

    def child(self, name: str) -> ActorRef[Any] | None:
        if type(name) is not str:
            raise TypeError(f"child() takes a name (str), not {name!r}")
        inbox = self._kit._children.get(name)
        return None if inbox is None else inbox.ref

    def run(self, work: Any, *, then: Callable[..., Any] | None = None) -> None:
        check_job(work, then)  # the runtime's rule (an async then is refused)
        if inspect.iscoroutine(work):
            work.close()  # never run here: not left un-awaited either
        self._kit._check_running("start work")
        self._kit._effects.append(WorkStarted(work, then))

    def ask(
        self,
        target: ActorRef[Any],
        message: object,
        timeout: float = 5.0,
        *,
        then: Callable[..., Any] | None = None,
    ) -> None:
        check_ask(target, message, timeout)
        check_job(target.ask, then)
        self._kit._check_running("start work")
        if isinstance(target, InboxRef):
            target._cell.inbox._put(message)
        self._kit._effects.append(AskStarted(target, message, timeout, then))

    def set_receive_timeout(self, timeout: float | None) -> None:
        if timeout is not None:
            timeout = check_duration("timeout", timeout)
        self._kit._receive_timeout = timeout
        self._kit._effects.append(ReceiveTimeoutSet(timeout))

    @property
    def receive_timeout(self) -> float | None:
        return self._kit._receive_timeout


# -- the kit ------------------------------------------------------------------------


_USE_ASYNC = (
    "a BehaviorTestKit runs handlers without an event loop, so only those "
    "that never wait; test this actor with the async kit (the actor_system "
    "fixture, TestProbe)"
)


def _no_event_loop_errors() -> tuple[type[BaseException], ...]:
    # What asking "which event loop runs me?" raises outside one: anyio's
    # error, and sniffio's where it is installed (it is optional).
    try:
        import sniffio
    except ImportError:
        return (anyio.NoEventLoopError,)
    return (anyio.NoEventLoopError, sniffio.AsyncLibraryNotFoundError)


def _run_sync(result: Any, what: str) -> Any:
    """``result``, or what the awaitable ``result`` returns if it completes
    without waiting.

    Raises:
        RuntimeError: it waited for something (it is closed).
    """
    if not inspect.isawaitable(result):
        return result
    step = result.__await__()
    try:
        yielded = step.send(None)
    except StopIteration as done:
        return done.value
    except _no_event_loop_errors() as exc:
        # It asked which event loop runs it (anyio.sleep, a lock...): none.
        raise RuntimeError(f"{what} needs an event loop: {_USE_ASYNC}") from exc
    step.close()
    raise RuntimeError(f"{what} waited for something ({yielded!r}): {_USE_ASYNC}")


class BehaviorTestKit(Generic[A]):
    """Runs messages through one actor instance synchronously, without an
    event loop or a system, and records what it did.

    ``BehaviorTestKit(Counter, 0)`` makes the instance (``Counter(0)``), gives
    it a stand-in ``context`` and runs its ``on_start``. Then::

        assert kit.run(Get()) == 0        # the reply: receive's return value
        kit.run(Spawn("w"))
        assert kit.expect_effect(Spawned).name == "w"
        kit.child_inbox("w").expect_message(Hello())

    What the actor does through its context is recorded: children it spawns
    (each gets a [``TestInbox``][actors.testing.TestInbox]:
    ``kit.child_inbox(name)``), watches, timers, stops, as
    [``Effect``][actors.testing.Effect] objects in
    [``effects``][actors.testing.BehaviorTestKit.effects]; tells to the refs of
    inboxes the test made land in those inboxes; tells to ``context.self_ref``
    in ``self_inbox``, to ``context.parent`` in ``parent_inbox``; dead letters
    (``super().receive``) in ``dead_letters``. Timers never fire by themselves:
    [``fire_timer``][actors.testing.BehaviorTestKit.fire_timer] runs one's
    message.

    The kit agrees with the runtime: every call the actor makes goes through
    the runtime's own checks (an ``async def`` ``then`` raises TypeError, a
    bad timer, spawn option or ask timeout raises as it would in a system,
    ``become`` from outside the actor's code raises RuntimeError), an
    ``ErrorReply`` raises its exception from ``run`` as from an ask, and
    ``self.context.stop()`` runs ``on_stop`` after the message, as a system
    does. What it cannot do says so: ``stash()`` (it needs the message loop)
    raises a RuntimeError naming the async kit. It builds no children (each
    is an inbox) and does not supervise (a handler's exception propagates
    from ``run``; nothing restarts).

    Args:
        factory: the actor class (or a callable making the instance).
        *args: its positional arguments.
        **kwargs: its keyword arguments.
        name: the actor's name (its path is ``/user/<name>``).

    Raises:
        TypeError: ``factory`` did not make an Actor (the runtime's checks
            and messages).
        RuntimeError: ``on_start`` waited for something (see
            [``run``][actors.testing.BehaviorTestKit.run]).
    """

    __test__ = False

    def __init__(
        self,
        factory: Callable[..., A],
        *args: Any,
        name: str = "testee",
        **kwargs: Any,
    ) -> None:
        self.name = name
        self.path = f"/user/{name}"
        self._effects: list[Effect] = []
        self._children: dict[str, TestInbox[Any]] = {}
        self._counter = 0
        self._timers = _Timers(self)
        #: Whether the actor has stopped (``context.stop()``, then its
        #: ``on_stop`` ran after the message that asked for it).
        self.stopped = False
        self._stopping = False
        #: Tells to the actor's own ref.
        self.self_inbox: TestInbox[Any] = TestInbox(name, path=self.path)
        #: Tells to ``context.parent``.
        self.parent_inbox: TestInbox[Any] = TestInbox("parent", path="/user")
        #: Every reply ``run`` returned, oldest first (an ``ErrorReply`` too).
        self.replies: list[Any] = []
        #: Messages the actor did not handle (``super().receive``).
        self.dead_letters: list[DeadLetter] = []
        self._receive_timeout: float | None = None
        self.context = _KitContext(self)
        cell = self.context._cell
        cell.factory, cell.args, cell.kwargs = factory, args, kwargs
        # As the runtime builds an instance (its own construct: the same
        # checks, self.context in __init__, the kit's cell as the current one).
        instance: Any = construct(cell)
        #: The actor instance under test.
        self.instance: A = instance
        with self._own_task():
            _run_sync(instance.on_start(), f"{type(instance).__qualname__}.on_start")

    @contextlib.contextmanager
    def _own_task(self) -> Iterator[None]:
        """Run the actor's code as its own task would: with its cell as the
        current one (what the runtime's checks look at)."""
        token = current_cell.set(self.context._cell)
        try:
            yield
        finally:
            current_cell.reset(token)

    def _check_running(self, what: str) -> None:
        """As the runtime: a stopping actor cannot spawn or start work.

        Raises:
            ActorStopped: it stopped itself (in this message or before).
        """
        if self._stop_requested:
            raise ActorStopped(f"{self.path} is stopping: it cannot {what}")

    @property
    def _stop_requested(self) -> bool:
        """Stopped, or stopping after the current message."""
        return self.stopped or self._stopping

    @property
    def self_ref(self) -> ActorRef[Any]:
        """The actor's own ref (tells land in ``self_inbox``)."""
        return self.self_inbox.ref

    def run(self, message: Any) -> Any:
        """Hand ``message`` to ``receive`` and return its result: the reply an
        asker would get (the runtime's ``UNHANDLED`` marker when the actor did
        not handle it: [``handled``][actors.testing.BehaviorTestKit.handled] says so).

        As for an asker, an [``ErrorReply``][actors.ErrorReply] raises its
        exception, and so does a handler's failure (the kit does not
        supervise: nothing restarts). A
        [``Terminated``][actors.Terminated] goes to ``on_terminated`` if the
        actor defines it, as the runtime does. When the handler stopped its
        actor (``self.context.stop()``), ``on_stop`` runs after it, as in a
        system (its timers are cancelled, its children's inboxes stopped).

        Raises:
            ActorStopped: the actor has stopped, as an ask to it would.
            RuntimeError: ``receive`` is async and waited for something (use
                the async kit).
            Exception: whatever ``receive`` raised, or the ``ErrorReply``'s
                exception.
        """
        if self.stopped:
            raise ActorStopped(f"{self.path} has stopped")
        instance = self.instance
        kind = type(instance).__qualname__
        handler = current_behaviour(instance)  # receive, or what become set
        if isinstance(message, Terminated):
            handler = getattr(instance, "on_terminated", handler)
        try:
            with self._own_task():
                result = _run_sync(handler(message), f"{kind}.receive({message!r})")
        finally:
            if self._stopping:
                self._stop()
        self.replies.append(result)
        if result.__class__ is ErrorReply:
            error = result.error
            raise error.with_traceback(own_traceback(error.__traceback__))
        return result

    def _stop(self) -> None:
        """The actor stopped itself: what the runtime does after the message
        (children stopped, timers cancelled, then ``on_stop``)."""
        self._stopping = False
        self.stopped = True
        for inbox in self._children.values():
            inbox.stopped = True
        self._timers._active.clear()
        self._receive_timeout = None
        instance = self.instance
        with self._own_task():
            _run_sync(instance.on_stop(), f"{type(instance).__qualname__}.on_stop")

    def terminated(
        self, ref: ActorRef[Any], reason: StopReason | BaseException = StopReason.NORMAL
    ) -> Any:
        """Deliver ``Terminated(ref, reason)`` as the runtime would to a
        watcher; returns what the handler returned."""
        return self.run(Terminated(ref, reason))

    def fire_timer(self, key: Hashable) -> Any:
        """Run the message of the active timer ``key`` as its firing would (a
        single timer ends with it).

        Raises:
            KeyError: no timer with that key is active.
        """
        effect = self._timers._active.get(key)
        if effect is None:
            active = list(self._timers._active)
            raise KeyError(f"no active timer {key!r} (active: {active})")
        if effect.interval is None:
            del self._timers._active[key]
        return self.run(effect.message)

    @property
    def handled(self) -> bool:
        """Whether the last [``run``][actors.testing.BehaviorTestKit.run]
        handled its message (did not return ``UNHANDLED``)."""
        return not self.replies or self.replies[-1] is not UNHANDLED

    # -- effects ------------------------------------------------------------------

    @property
    def effects(self) -> list[Effect]:
        """The effects recorded and not retrieved yet, oldest first."""
        return list(self._effects)

    def retrieve_effects(self) -> list[Effect]:
        """Take every recorded effect, oldest first."""
        out, self._effects = self._effects, []
        return out

    def expect_effect(self, expected: Any) -> Any:
        """Take the oldest effect and check it: an effect type (an instance
        of it), or an effect (equal: ``Watched(ref)``, ``TimerStarted("t",
        Tick(), 1.0)``...).

        Returns:
            The effect.

        Raises:
            AssertionError: no effect, or the oldest does not match (listing
                every effect recorded).
        """
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        if not self._effects:
            raise AssertionError(f"{self.path}: expected {expected!r}, but no effect")
        effect = self._effects[0]
        ok = (
            isinstance(effect, expected)
            if isinstance(expected, type)
            else effect == expected
        )
        if not ok:
            listed = "\n".join(f"    {e!r}" for e in self._effects)
            raise AssertionError(
                f"{self.path}: expected {expected!r}, but the effects are "
                f"(oldest first):\n{listed}"
            )
        del self._effects[0]
        return effect

    def expect_no_effect(self) -> None:
        """Raises AssertionError if any effect was recorded and not taken."""
        if self._effects:
            raise AssertionError(
                f"{self.path}: expected no effect, got {self._effects!r}"
            )

    # -- children -----------------------------------------------------------------

    def _new_child(
        self, factory: Callable[..., Any], name: str | None, pool: bool = False
    ) -> TestInbox[Any]:
        if name is None:  # the runtime's default names
            self._counter += 1
            base = factory_name(factory)
            name = f"pool-{base}-{self._counter}" if pool else f"{base}-{self._counter}"
        if name in self._children:
            raise ValueError(f"{self.path} already has a child named {name!r}")
        self._check_running("spawn children")
        inbox: TestInbox[Any] = TestInbox(name, path=f"{self.path}/{name}")
        self._children[name] = inbox
        return inbox

    def child_inbox(self, name: str) -> TestInbox[Any]:
        """The inbox of the child spawned with ``name`` (its tells land there).

        Raises:
            KeyError: no live child has that name.
        """
        try:
            return self._children[name]
        except KeyError:
            raise KeyError(
                f"{self.path} has no child {name!r} (children: {list(self._children)})"
            ) from None

    def __repr__(self) -> str:
        return (
            f"<BehaviorTestKit {self.path}: {type(self.instance).__qualname__}, "
            f"{len(self._effects)} effects>"
        )
