"""``ActorSystem``: the ``async with`` scope that owns every actor task."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from anyio.abc import TaskGroup

from ._actor import Actor
from ._actor_task import run_actor
from ._cell import Cell
from ._context import ActorContext
from ._dead_letters import DeadLetter, DeadLetters
from ._deadlines import AskDeadlines, ask_deadlines
from ._errors import ActorStopped, SystemNotRunning
from ._lifecycle import StopReason
from ._ref import ActorRef
from ._strategies import (
    RESTART_TYPES,
    OneForOne,
    RestartType,
    SupervisorStrategy,
    check_strategy_attribute,
)
from ._telemetry import Telemetry
from ._validation import check_count, check_limit, check_name, check_seconds_type
from .channel._waiters import Backend, current_backend

if TYPE_CHECKING:
    from ._pool import PoolRef, Routing
    from ._threads import FromThread
    from ._timers import TimerService

__all__ = ["DEFAULT_DRAIN", "ActorSystem", "DeadLetter", "DeadLetters"]

logger = logging.getLogger("actors")

A = TypeVar("A", bound=Actor)

#: Items an actor takes from its mailbox per wake (see benchmarks/README.md).
DEFAULT_DRAIN = 64


class _Guardian(Actor):
    """The parent of top-level actors (path ``/user``)."""


class ActorSystem:
    """The scope that owns every actor: ``async with ActorSystem() as system``.

    All actor tasks run in one anyio task group. Leaving the block stops every
    actor (children before parents, later-started before earlier-started) and
    waits for their ``on_stop``. A failure nobody handled (the guardian's
    strategy escalated or its restart intensity was exceeded) shuts the system
    down, cancels the block's body, and surfaces from the ``async with`` as the
    original exception.

    Supervision is observable on the ``actors`` logger: one record per failure
    (WARNING), restart, supervisor decision and stop (INFO) and escalation
    (ERROR), each naming the actor's path, with the attributes
    ``record.actor_path`` and ``record.actor_event`` (``"failure"``,
    ``"restart"``, ``"directive"``, ``"escalation"``, ``"stop"``) for filters.
    ``failures``, ``restarts`` and ``escalations`` count them.

    Args:
        strategy: how the guardian supervises top-level actors (default
            ``OneForOne()``: restart, at most 3 restarts within 5 seconds).
        drain: default for how many queued items an actor takes per wake.
        dead_letters_kept: how many recent dead letters ``dead_letters.recent``
            keeps (every one is counted and published to the subscribers of
            ``dead_letters``, see :class:`~actors.DeadLetters`).
        shutdown_timeout: seconds a graceful stop may take when the block is
            left; then the actors' tasks are cancelled (their queued messages
            still become dead letters and pending asks fail, but ``on_stop``
            hooks that have not run are skipped). None (the default): a normal
            exit waits as long as the actors take, as a task group waits for
            its tasks; an exit by exception waits at most 5 seconds. A
            cancellation of the block (an enclosing cancel scope, or on
            asyncio ``Task.cancel()``, ``asyncio.timeout``, ``wait_for``)
            cancels the actors at once, hooks included, and so does a
            cancellation that arrives while the block waits for the stop.
        telemetry: an :class:`~actors.Telemetry` to trace and measure messages
            (default: off, no telemetry work at all).

    Raises:
        TypeError: ``strategy`` is not a SupervisorStrategy; ``drain`` or
            ``dead_letters_kept`` is not an integer; ``shutdown_timeout`` is
            not a number; ``telemetry`` is neither None nor a Telemetry.
        ValueError: ``drain`` < 1, ``dead_letters_kept`` < 0,
            ``shutdown_timeout`` < 0.
    """

    def __init__(
        self,
        *,
        strategy: SupervisorStrategy | None = None,
        drain: int = DEFAULT_DRAIN,
        dead_letters_kept: int = 100,
        shutdown_timeout: float | None = None,
        telemetry: Telemetry | None = None,
    ) -> None:
        if strategy is None:
            strategy = OneForOne()
        if not isinstance(strategy, SupervisorStrategy):
            raise TypeError(f"strategy must be a SupervisorStrategy, not {strategy!r}")
        check_limit(drain, "drain")
        check_count(dead_letters_kept, "dead_letters_kept")
        if shutdown_timeout is not None:
            check_seconds_type("shutdown_timeout", shutdown_timeout)
            if not shutdown_timeout >= 0:
                raise ValueError(
                    f"shutdown_timeout must be >= 0 seconds, got {shutdown_timeout!r}"
                )
        if telemetry is not None and not isinstance(telemetry, Telemetry):
            raise TypeError(
                f"telemetry must be a Telemetry or None, not {telemetry!r}"
            )
        self.strategy = strategy
        self.drain = drain
        self.shutdown_timeout = shutdown_timeout
        self.telemetry = telemetry
        self.dead_letters = DeadLetters(dead_letters_kept)
        self.backend: Backend | None = None
        self.running = False
        self.failures = 0
        self.restarts = 0
        self.escalations = 0
        self._failure: BaseException | None = None
        self._tg: TaskGroup | None = None
        self._guardian: Cell | None = None
        self._names = 0
        self._from_thread: FromThread | None = None
        self._deadlines: AskDeadlines | None = None  # ask timeouts
        self._loop_token: anyio.lowlevel.EventLoopToken | None = None  # from_thread
        self._timer_service: TimerService | None = None  # made by the first timer
        #: The cancel scopes shielding actors' graceful stops; cancelled, with
        #: every later one, once the stop must end (``_cancel_actors``).
        self._shields: set[anyio.CancelScope] = set()
        self._cancelling = False

    # -- scope ------------------------------------------------------------

    async def __aenter__(self) -> ActorSystem:
        if self.running or self._tg is not None:
            raise RuntimeError("an ActorSystem can be entered only once")
        # Everything that can fail happens before the task group is entered:
        # a task group entered by hand and then abandoned corrupts Trio's
        # cancel scope stack.
        self.backend = current_backend()
        self._deadlines = ask_deadlines(self, self.backend)
        self._loop_token = anyio.lowlevel.current_token()
        guardian = self._make_cell(
            None, "user", _Guardian, (), {}, None, self.drain, "permanent", None
        )
        tg = anyio.create_task_group()
        await tg.__aenter__()
        try:
            self._tg = tg
            self._guardian = guardian
            self.running = True
            tg.start_soon(self._run_guardian, name="/user")
        except BaseException:
            self.running = False
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)  # nothing started: returns
            raise
        return self

    async def _run_guardian(self) -> None:
        assert self._guardian is not None
        await run_actor(self._guardian)
        failure = self._failure
        if failure is not None:
            if not isinstance(failure, Exception):
                # SystemExit, KeyboardInterrupt: raised in a task, asyncio
                # would tear them out of the event loop itself. Cancel the
                # body instead; __aexit__ raises it in the host task.
                assert self._tg is not None
                self._tg.cancel_scope.cancel()
                return
            # Cancels the body of the async with, and every task left.
            raise failure

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        guardian = self._guardian
        tg = self._tg
        assert guardian is not None and tg is not None
        try:
            guardian.request_stop(StopReason.SYSTEM)
            timeout = self.shutdown_timeout
            cancelled = anyio.get_cancelled_exc_class()
            if exc_type is not None and issubclass(exc_type, cancelled):
                self._cancel_actors()  # cancelled from outside: at once
            else:
                try:
                    if exc_type is None and timeout is None:
                        await guardian.terminated.wait()
                    else:
                        if timeout is None:
                            timeout = 5.0
                        with anyio.CancelScope(shield=exc_type is not None):
                            with anyio.move_on_after(timeout):
                                await guardian.terminated.wait()
                        if not guardian.terminated.is_set():
                            logger.warning(
                                "actor system: graceful stop took over %s s: "
                                "cancelling the actors",
                                timeout,
                            )
                            self._cancel_actors()
                except cancelled:  # cancelled while waiting: end it at once
                    self._cancel_actors()
                    raise
        finally:
            self.running = False
            if self._from_thread is not None:
                self._from_thread._close()
            if self._deadlines is not None:
                self._deadlines.close()  # ends the Trio deadline task
            try:
                await tg.__aexit__(exc_type, exc, tb)
            except BaseExceptionGroup as group:
                raise self._surface(group) from None
            finally:  # dead letter streams end after the teardown's letters
                self.dead_letters._close()
        if self._failure is not None:
            raise self._failure
        return False

    def _cancel_actors(self) -> None:
        """End the stop now: cancel every actor task, their stop hooks
        included (queued messages still become dead letters, pending asks
        still fail)."""
        self._cancelling = True
        tg = self._tg
        if tg is not None:
            tg.cancel_scope.cancel()
        for scope in list(self._shields):
            scope.cancel()

    @contextlib.contextmanager
    def _shield(self) -> Iterator[anyio.CancelScope]:
        """A shield for an actor's graceful stop: the system's cancellation
        does not interrupt it, ``_cancel_actors`` does."""
        scope = anyio.CancelScope(shield=True)
        if self._cancelling:
            scope.cancel()
        self._shields.add(scope)
        try:
            with scope:
                yield scope
        finally:
            self._shields.discard(scope)

    def _surface(self, group: BaseExceptionGroup[BaseException]) -> BaseException:
        """The one exception to raise from ``async with`` for a task group's."""
        if self._failure is not None:
            return self._failure
        leaves = _leaves(group)
        cancelled = anyio.get_cancelled_exc_class()
        others = [e for e in leaves if not isinstance(e, cancelled)]
        if len(others) == 1:
            return others[0]
        return group

    # -- spawning ---------------------------------------------------------

    def spawn(
        self,
        factory: Callable[..., A],
        *args: Any,
        name: str | None = None,
        capacity: int | None = None,
        drain: int | None = None,
        restart: RestartType = "transient",
        **kwargs: Any,
    ) -> ActorRef[Any]:
        """Spawn a top-level actor (a child of the guardian) and return its ref
        at once.

        The factory (an :class:`Actor` subclass, or any callable returning an
        Actor) is called with ``*args, **kwargs`` inside the actor's own task,
        and again on every restart.

        Args:
            factory: makes the actor instance.
            name: unique among its siblings; default: made from the class name.
            capacity: the mailbox quota (None: unbounded).
            drain: items taken per wake (default: the system's ``drain``).
            restart: ``"transient"`` (default: restarted after a failure, a stop
                is final), ``"permanent"`` (also restarted when it stops
                itself), ``"temporary"`` (never restarted), as Erlang child
                specs.

        Raises:
            TypeError: ``factory`` is not callable, or is a class that is not an
                Actor subclass; ``capacity``/``drain`` is not an integer.
            ValueError: the name is taken or malformed, ``capacity`` < 1,
                ``drain`` < 1, or ``restart`` is unknown.
            SystemNotRunning: the system is not running.
        """
        if self._guardian is None:
            raise SystemNotRunning("the actor system is not running (use async with)")
        return self._spawn(
            self._guardian, factory, args, kwargs, name, capacity, drain, restart
        )

    def spawn_pool(
        self,
        factory: Callable[..., A],
        size: int,
        *args: Any,
        routing: Routing = "round_robin",
        name: str | None = None,
        capacity: int | None = None,
        drain: int | None = None,
        **kwargs: Any,
    ) -> PoolRef[Any]:
        """Spawn a pool of ``size`` workers behind one ref (see
        :class:`~actors.PoolRef`)."""
        from ._pool import spawn_pool

        if self._guardian is None:
            raise SystemNotRunning("the actor system is not running (use async with)")
        return spawn_pool(
            self._guardian, factory, size, args, kwargs, routing, name, capacity, drain
        )

    def _spawn(
        self,
        parent: Cell,
        factory: Callable[..., Actor],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        name: str | None,
        capacity: int | None,
        drain: int | None,
        restart: RestartType,
        mailbox: Any = None,
    ) -> ActorRef[Any]:
        if not self.running or self._tg is None:
            raise SystemNotRunning("the actor system is not running")
        if not callable(factory):
            raise TypeError(f"factory must be callable, not {factory!r}")
        if isinstance(factory, type):
            if not issubclass(factory, Actor):
                raise TypeError(f"{factory.__name__} is not an Actor subclass")
            check_strategy_attribute(factory, factory.__qualname__)
        if restart not in RESTART_TYPES:
            raise ValueError(
                f"restart must be one of {', '.join(RESTART_TYPES)}, not {restart!r}"
            )
        if drain is None:
            drain = self.drain
        else:
            check_limit(drain, "drain")
        if name is None:
            self._names += 1
            base = getattr(factory, "__name__", "actor").lower()
            name = f"{base}-{self._names}"
        else:
            check_name(name)
        if name in parent.children:
            raise ValueError(f"{parent.path} already has a child named {name!r}")
        if not parent.alive:
            raise ActorStopped(f"{parent.path} is stopping: it cannot spawn children")
        cell = self._make_cell(
            parent, name, factory, args, kwargs, capacity, drain, restart, mailbox
        )
        parent.children[name] = cell
        self._tg.start_soon(run_actor, cell, name=cell.path)
        return cell.ref

    def _make_cell(
        self,
        parent: Cell | None,
        name: str,
        factory: Callable[..., Actor],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        capacity: int | None,
        drain: int,
        restart: RestartType,
        mailbox: Any,
    ) -> Cell:
        telemetry = self.telemetry
        # Chosen once: a traced system's refs carry trace contexts, so the
        # plain ActorRef.tell stays free of any telemetry check.
        return Cell(
            self,
            parent,
            name,
            factory,
            args,
            kwargs,
            capacity,
            drain,
            restart,
            mailbox,
            ActorRef if telemetry is None else telemetry.make_ref,
            ActorContext,
        )

    # -- thread entry -------------------------------------------------------

    @property
    def from_thread(self) -> FromThread:
        """Blocking ``tell`` / ``ask`` for code in other threads (see
        :class:`~actors.FromThread`)."""
        if self._from_thread is None:
            from ._threads import FromThread

            self._from_thread = FromThread(self)
        return self._from_thread

    # -- bookkeeping ----------------------------------------------------------

    def dead_letter(self, cell: Cell, message: object, reason: str) -> None:
        """Count a message that could not be delivered or handled, log it,
        record it in telemetry, and hand it to the dead letters' subscribers."""
        logger.debug("dead letter to %s (%s): %r", cell.path, reason, message)
        telemetry = self.telemetry
        if telemetry is not None:
            telemetry.dead_letter(cell, message, reason)
        self.dead_letters.publish(DeadLetter(cell.ref, message, reason))

    def _record_failure(self, exc: BaseException) -> None:
        if self._failure is None:
            self._failure = exc

    def _shutdown_on_crash(self) -> None:
        """A runtime bug crashed an actor: stop everything; the recorded
        exception then surfaces from the ``async with``."""
        guardian = self._guardian
        if guardian is not None:
            guardian.request_stop(StopReason.SYSTEM)

    def _count_failure(self, cell: Cell, exc: BaseException) -> None:
        self.failures += 1
        if self.telemetry is not None:
            self.telemetry.failure(cell, exc)

    def _count_restart(self, cell: Cell) -> None:
        self.restarts += 1
        if self.telemetry is not None:
            self.telemetry.restart(cell)

    def _count_escalation(self, cell: Cell) -> None:
        self.escalations += 1
        if self.telemetry is not None:
            self.telemetry.escalation(cell)

    def _on_terminated(self, cell: Cell) -> None:
        if self.telemetry is not None:
            self.telemetry.stopped(cell)

    def __repr__(self) -> str:
        state = "running" if self.running else "not running"
        return f"<ActorSystem {state}>"


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(_leaves(exc))
        else:
            out.append(exc)
    return out
