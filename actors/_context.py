"""``ActorContext``: what an actor knows about its place in the system
(``self.context``)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple

from ._actor import instance_of
from ._death_watch import unwatch as unwatch_cell
from ._death_watch import unwatch_remote, watch_remote
from ._death_watch import watch as watch_cell
from ._errors import ActorStopped
from ._lifecycle import StopReason
from ._pipe import Result, check_job
from ._pipe import start as start_job
from ._receive_timeout import set_receive_timeout
from ._ref import ActorRef, signal_error
from ._spawn_options import SpawnOptions
from ._strategies import RestartType
from ._validation import check_timeout
from .mailbox import Signal

if TYPE_CHECKING:
    from ._actor import Actor
    from ._cell import Cell
    from ._pool import PoolRef, Routing
    from ._strategies import SupervisorStrategy
    from ._system import ActorSystem
    from ._timers import TimerScheduler

__all__ = ["ActorContext", "check_ask", "check_ref"]

M = TypeVar("M")
Ts = TypeVarTuple("Ts")
T = TypeVar("T")


def check_ref(ref: object, call: str, alternative: str = "") -> None:
    """A ref argument of a context call (``watch``, ``unwatch``, ``stop``,
    ``ask``): one home for the rule, the runtime's context and the
    BehaviorTestKit's.

    Raises:
        TypeError: ``ref`` is not an ActorRef (``alternative`` says what
            else the call takes).
    """
    if not isinstance(ref, ActorRef):
        raise TypeError(
            f"{call}() takes an ActorRef{alternative}, not {type(ref).__name__}"
        )


def check_ask(target: object, message: object, timeout: float) -> None:
    """The arguments of ``context.ask`` (see ``check_ref``).

    Raises:
        TypeError: ``target`` is not an ActorRef, ``message`` is a runtime
            signal, or ``timeout`` is not a number.
        ValueError: ``timeout`` is not > 0.
    """
    check_ref(target, "ask")
    if isinstance(message, Signal):
        raise signal_error(message)
    check_timeout(timeout)


class ActorContext:
    """What an actor knows about its place in the system (``self.context``)."""

    __slots__ = ("_cell",)

    def __init__(self, cell: Cell) -> None:
        self._cell = cell

    @property
    def self_ref(self) -> ActorRef[Any]:
        """This actor's own ref."""
        return self._cell.ref

    @property
    def parent(self) -> ActorRef[Any]:
        """The parent's ref (the guardian's for top-level actors)."""
        parent = self._cell.parent
        return parent.ref if parent is not None else self._cell.ref

    @property
    def system(self) -> ActorSystem:
        """The system this actor runs in."""
        return self._cell.runtime.system

    @property
    def children(self) -> list[ActorRef[Any]]:
        """Refs of the live children, in start order."""
        return [child.ref for child in self._cell.children.values()]

    @property
    def name(self) -> str:
        """This actor's name."""
        return self._cell.name

    @property
    def path(self) -> str:
        """This actor's path, for example ``"/user/parent/child"``."""
        return self._cell.path

    def spawn(
        self,
        factory: Callable[[*Ts], Actor[M]],
        *args: *Ts,
        name: str | None = None,
        capacity: int | None = None,
        drain: int | None = None,
        restart: RestartType = "transient",
    ) -> ActorRef[M]:
        """Spawn a child of this actor; same arguments, typing and errors as
        [``ActorSystem.spawn``][actors.ActorSystem.spawn] (a factory that raises
        makes this raise)."""
        options = SpawnOptions.of(name, capacity, drain, restart)
        return self._cell.runtime.spawn(self._cell, factory, args, {}, options)

    def spawn_pool(
        self,
        factory: Callable[[*Ts], Actor[M]],
        size: int,
        *args: *Ts,
        routing: Routing = "round_robin",
        name: str | None = None,
        capacity: int | None = None,
        drain: int | None = None,
        strategy: SupervisorStrategy | None = None,
    ) -> PoolRef[M]:
        """Spawn a pool of workers as a child; see
        [``ActorSystem.spawn_pool``][actors.ActorSystem.spawn_pool]."""
        pool: PoolRef[M] = self._cell.runtime.spawn_pool(
            self._cell,
            factory,
            size,
            args,
            {},
            routing,
            name,
            capacity,
            drain,
            strategy,
        )
        return pool

    def child(self, name: str) -> ActorRef[Any] | None:
        """The ref of this actor's child called ``name`` (a pool's ref for a
        pool), or None when it has none by that name. A child that is
        stopping is still found until it has terminated (its name is taken
        until then), as in [``children``][actors.ActorContext.children].

        Raises:
            TypeError: ``name`` is not a str.
        """
        if type(name) is not str:
            raise TypeError(f"child() takes a name (str), not {name!r}")
        child = self._cell.children.get(name)
        return None if child is None else child.ref

    def stop(self, ref: ActorRef[Any] | None = None) -> None:
        """Stop this actor (no argument) or one of its children (a pool it
        spawned included), after the message being handled.

        Raises:
            TypeError: ``ref`` is neither None nor an ActorRef.
            ValueError: ``ref`` is neither this actor nor one of its children.
        """
        cell = self._cell
        if ref is not None:
            check_ref(ref, "stop", " or nothing")
        if ref is None or ref._cell is cell:
            cell.request_stop(StopReason.NORMAL)
            return
        target = ref._cell
        if target is None or target.parent is not cell:  # None: a remote ref
            raise ValueError(
                f"{ref.path} is not a child of {cell.path}: stop it with ref.stop()"
            )
        target.request_stop(StopReason.PARENT)

    def watch(self, ref: ActorRef[Any]) -> None:
        """Watch another actor: when it terminates this actor receives exactly one
        [``Terminated``][actors.Terminated] (at once if it is already dead). Watching
        twice still delivers once.

        A ref to another node's actor (``actors.remote.RemoteRef``) gets its
        ``Terminated`` when that actor stops (its reason transported) or when
        its node is declared down (reason ``actors.remote.NodeDown``).

        Raises:
            TypeError: ``ref`` is not an ActorRef.
        """
        check_ref(ref, "watch")
        target = ref._cell
        if target is None:  # another node's actor
            watch_remote(self._cell, ref)
        else:
            watch_cell(self._cell, target)

    def unwatch(self, ref: ActorRef[Any]) -> None:
        """Stop watching: no ``Terminated`` for ``ref`` reaches this actor after
        this call, even one already queued. Unwatching an actor that is not
        watched does nothing.

        Raises:
            TypeError: ``ref`` is not an ActorRef.
        """
        check_ref(ref, "unwatch")
        target = ref._cell
        if target is None:  # another node's actor
            unwatch_remote(self._cell, ref)
        else:
            unwatch_cell(self._cell, target)

    @property
    def timers(self) -> TimerScheduler:
        """This actor's keyed timers (see
        [``TimerScheduler``][actors.TimerScheduler])."""
        extras = self._cell.ensure_extras()
        timers = extras.timers
        if timers is None:
            timers = extras.timers = self._cell.runtime.make_timers(self._cell)
        return timers

    # -- work in the background ----------------------------------------------

    def run(
        self,
        work: Callable[[], Awaitable[T]] | Awaitable[T],
        *,
        then: Callable[[Result[T]], object] | None = None,
    ) -> None:
        """Run ``work`` in the background and get its outcome as a message
        (Akka's ``pipeTo``); returns at once, and the actor goes on handling
        messages meanwhile.

        ``work`` is an async function called with no arguments (use a lambda
        or ``functools.partial`` for arguments) or an awaitable (a coroutine
        object). It runs in its own task, owned by this incarnation of the
        actor: a restart or a stop of the actor cancels it, and waits for it
        to end before ``on_stop`` (it never outlives the incarnation).

        When it ends, its outcome, a [``Result``][actors.Result] (``result.ok``:
        it returned ``result.value``; else it raised ``result.error``), comes
        back through the mailbox as a signal: outside the quota (a full
        mailbox never refuses it) and in order with the messages. When it
        reaches the front, ``then(result)`` is called in the actor's own task
        (so it may read and change the actor's state), and what it returns
        (None included: it is a message like any other) is handed to
        ``receive``; without ``then``, ``receive`` gets the
        [``Result``][actors.Result] itself. An exception raised by ``then`` or
        by ``receive`` is a failure of the actor, as for any message (a
        ``then`` that returns a coroutine raises TypeError there: it must be
        a sync function).

        Nothing is lost silently: an outcome that finds the actor stopped, or
        a restarted actor (the incarnation that asked for it has ended, so
        has the instance ``then`` may belong to), is counted as a dead
        letter; work cancelled by the end of its incarnation has no outcome.

        Args:
            work: an async function of no arguments, or an awaitable.
            then: a sync function from the [``Result``][actors.Result] to the
                message ``receive`` gets (None: the result itself).

        Raises:
            TypeError: ``work`` is neither awaitable nor callable, or
                ``then`` is neither None nor a sync function.
            ActorStopped: this actor is stopping (its background work has
                been cancelled already).
        """
        check_job(work, then)
        self._start(work, then)

    def ask(
        self,
        target: ActorRef[Any],
        message: object,
        timeout: float = 5.0,
        *,
        then: Callable[[Result[Any]], object] | None = None,
    ) -> None:
        """Ask ``target`` without waiting for the reply (Akka's
        ``context.ask`` with a reply adapter): returns at once; the reply
        comes back as a message while the actor goes on handling others (and
        supervising its children).

        The same as ``self.context.run(lambda: target.ask(message, timeout),
        then=then)`` (see [``run``][actors.ActorContext.run]): ``then`` gets a
        [``Result``][actors.Result] holding the reply, or the error
        ``target.ask`` raised ([``AskTimeout``][actors.AskTimeout] after ``timeout``
        seconds, [``ActorStopped``][actors.ActorStopped], the handler's own exception);
        what ``then`` returns is what ``receive`` gets. ``target`` may be a
        local actor, a pool, an actor of another node
        (``actors.remote.RemoteRef``), or this actor itself.

        Args:
            target: the ref to ask.
            message: the request (its reply is what the result holds).
            timeout: seconds to wait for the reply (> 0).
            then: a sync function from the [``Result``][actors.Result] to the
                message ``receive`` gets (None: the result itself).

        Raises:
            TypeError: ``target`` is not an ActorRef, ``message`` is a
                runtime signal, ``then`` is neither None nor a sync function,
                or ``timeout`` is not a number.
            ValueError: ``timeout`` is not > 0.
            ActorStopped: this actor is stopping.
        """
        check_ask(target, message, timeout)

        def work() -> Awaitable[Any]:
            return target.ask(message, timeout)

        check_job(work, then)
        self._start(work, then)

    def _start(
        self,
        work: Callable[[], Awaitable[Any]] | Awaitable[Any],
        then: Callable[[Result[Any]], object] | None,
    ) -> None:
        """Start checked work, unless this actor is stopping."""
        cell = self._cell
        if not cell.alive or not cell.runtime.running:
            if inspect.iscoroutine(work):
                work.close()  # refused: never left un-awaited
            raise ActorStopped(f"{cell.path} is stopping: it cannot start work")
        start_job(cell, work, then)

    def set_receive_timeout(self, timeout: float | None) -> None:
        """Receive a [``ReceiveTimeout``][actors.ReceiveTimeout] when no message
        came for ``timeout`` seconds (Akka's ``setReceiveTimeout``); None
        cancels it.

        Every message told, sent or asked resets it (the idle time counts
        from the end of the last handler); runtime signals do not (timer
        firings, ``Terminated``, the ``ReceiveTimeout`` itself). After it
        fires it is armed again for another ``timeout`` seconds. A restart
        starts without one; a stop cancels it. It goes to the current
        behaviour (see ``Actor.become``). It runs on the system's timers:
        never early, at most about a millisecond late (so, as a timer, none
        is armed while the actor or its system stops). While it is set, each
        message costs a little more (a clock reading); without one, nothing.

        Raises:
            TypeError: ``timeout`` is neither a number nor None.
            ValueError: ``timeout`` is not > 0 and finite.
            RuntimeError: called before the instance exists (the factory has
                not been called yet).
        """
        cell = self._cell
        instance = instance_of(cell)
        if instance is None:
            raise RuntimeError(
                f"{cell.path} has no instance yet: set the receive timeout from "
                "__init__, a hook or a handler"
            )
        set_receive_timeout(cell, instance, timeout)

    @property
    def receive_timeout(self) -> float | None:
        """The receive timeout in seconds, or None."""
        instance = instance_of(self._cell)
        state = None if instance is None else instance._actors_state
        return None if state is None else state.timeout
