"""The runtime of one actor system: what its actors share.

[``ActorSystem``][actors.ActorSystem] is the public face; every cell holds this object
(``cell.runtime``) instead: the backend, the task group the actor tasks run
in, the bookkeeping (dead letters, failure counts, the failure that ends the
system), spawning, and the shields of graceful stops. The features above the
core (timers, pools, ask deadlines, thread entry) keep their per-system state
in the slots at the end, and the facade hands the core what it needs of them
(``make_timers``, ``spawn_pool``), so the core never imports a feature.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import anyio

from ._actor import Actor
from ._actor_task import run_actor
from ._cell import Cell
from ._children import request_stop_of_children
from ._context import ActorContext
from ._dead_letters import DeadLetter, DeadLetters
from ._errors import ActorStopped, SystemNotRunning
from ._incarnation import construct
from ._lifecycle import StopReason
from ._log import DEFAULT_FAILURE_LOGGING, FailureLogging, log_extra, logger
from ._pipe import cancel_tasks
from ._ref import ActorRef
from ._spawn_options import SpawnOptions, factory_name
from ._strategies import RestartType, check_strategy_attribute
from ._termination import finish

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from ._clock import Clock
    from ._deadlines import AskDeadlines
    from ._hibernation import Hibernation
    from ._pool import PoolRef
    from ._registry import Registry
    from ._strategies import SupervisorStrategy
    from ._system import ActorSystem
    from ._telemetry import Telemetry
    from ._threads import FromThread
    from ._timers import TimerScheduler, TimerService
    from .channel.lowlevel import Backend, TaskSpawner
    from .extension import RemoteExtension

__all__ = ["Runtime", "check_factory"]


def check_factory(factory: object) -> None:
    """A ``spawn``'s (or ``spawn_pool``'s) factory: one home for the rule, the
    runtime's and the BehaviorTestKit's.

    Raises:
        TypeError: it is not callable, or is a class that is not an Actor
            subclass (or has a wrong ``supervisor_strategy``).
    """
    if not callable(factory):
        raise TypeError(f"factory must be callable, not {factory!r}")
    if isinstance(factory, type):
        if not issubclass(factory, Actor):
            raise TypeError(f"{factory.__name__} is not an Actor subclass")
        check_strategy_attribute(factory, factory.__qualname__)


class Runtime:
    """What the actors of one system share (see the module docstring)."""

    __slots__ = (
        "backend",
        "cancelling",
        "clock",
        "dead_letters",
        "deadlines",
        "drain",
        "escalations",
        "exited",
        "exiting",
        "failure",
        "failures",
        "from_thread",
        "guardian",
        "guardian_per_child",
        "hibernate_after",
        "hibernation",
        "log_failures",
        "loop_token",
        "make_timers",
        "names",
        "registry",
        "remote",
        "restarts",
        "running",
        "shields",
        "spawn_pool",
        "spawner",
        "strategy",
        "system",
        "telemetry",
        "tg",
        "timer_service",
        "unstarted",
    )

    def __init__(
        self,
        system: ActorSystem,
        strategy: SupervisorStrategy,
        drain: int,
        dead_letters: DeadLetters,
        telemetry: Telemetry | None,
        make_timers: Callable[[Cell], TimerScheduler],
        spawn_pool: Callable[..., PoolRef[Any]],
    ) -> None:
        #: The public face (what ``context.system`` returns).
        self.system = system
        #: How the guardian supervises top-level actors.
        self.strategy = strategy
        #: The guardian's strategy is the default one: its restart intensity
        #: counts each top-level actor on its own (Akka's guardian), not all
        #: of them together (a strategy the user gives: OTP's).
        self.guardian_per_child = False
        #: Default items per wake.
        self.drain = drain
        self.dead_letters = dead_letters
        self.telemetry = telemetry
        #: The actors' keyed timers and pools, from the features layer.
        self.make_timers = make_timers
        self.spawn_pool = spawn_pool
        self.backend: Backend | None = None
        self.running = False
        #: Leaving its ``async with``: what stops now stops because of it.
        self.exiting = False
        #: Its ``async with`` has ended: every task of the system is over.
        self.exited = False
        self.tg: TaskGroup | None = None
        #: Starts the actors' tasks with the loop's own primitive, inside
        #: the task group (``channel.lowlevel.TaskSpawner``).
        self.spawner: TaskSpawner | None = None
        self.guardian: Cell | None = None
        self.failures = 0
        self.restarts = 0
        self.escalations = 0
        #: The failure nobody handled: it surfaces from ``async with``.
        self.failure: BaseException | None = None
        #: Counter behind the default names of actors and pools.
        self.names = 0
        #: The cancel scopes shielding actors' graceful stops; cancelled, with
        #: every later one, once the stop must end (``cancel_actors``).
        self.shields: set[anyio.CancelScope] = set()
        self.cancelling = False
        #: Ask timeouts sharing loop timers (asyncio).
        self.deadlines: AskDeadlines | None = None
        #: The loop's token, for thread entry.
        self.loop_token: anyio.lowlevel.EventLoopToken | None = None
        #: Made by the first timer.
        self.timer_service: TimerService | None = None
        #: Made by the first use of ``system.from_thread``.
        self.from_thread: FromThread | None = None
        #: How failures are logged when the supervisor's strategy does not
        #: say (None: not at all).
        self.log_failures: FailureLogging | None = DEFAULT_FAILURE_LOGGING
        #: Registered names (``system.register``), made on first use.
        self.registry: Registry | None = None
        #: The clock of timers, ask deadlines and backoff; None: the event
        #: loop's own (``ActorSystem(clock=...)``).
        self.clock: Clock | None = None
        #: The remote extension (``ActorSystem(remote=...)``), or None.
        self.remote: RemoteExtension | None = None
        #: Seconds an actor that has had mail stays idle before it gives up
        #: its task (None: never); the tick that does it, made on entry.
        self.hibernate_after: float | None = None
        self.hibernation: Hibernation | None = None
        #: Cells whose task has not run yet: a task cancelled before its first
        #: step never runs (asyncio), so the exit settles them itself.
        self.unstarted: set[Cell] = set()

    # -- spawning -----------------------------------------------------------------

    def spawn(
        self,
        parent: Cell,
        factory: Callable[..., Actor],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        options: SpawnOptions,
        mailbox: Any = None,
        construct_now: bool = True,
        start: bool = True,
    ) -> ActorRef[Any]:
        """Spawn a child of ``parent`` and start its task; see
        [``ActorSystem.spawn``][actors.ActorSystem.spawn] for the arguments and
        errors (``options`` are checked when they are made).

        The first instance is made here, in the caller, with the new cell as
        the current one: a factory that fails raises from here, and the cell
        ends at once with that exception as its reason, never restarted.
        ``construct_now=False`` leaves it to the actor's task instead (a pool
        replacing its workers after its own restart: their failures go to
        the pool's supervisor, as a restart's do). ``start=False`` leaves
        the cell unstarted: the caller then calls ``start``, or
        ``never_started`` if what it still had to do failed (a pool
        making its first workers).
        """
        if not self.running or self.tg is None:
            raise SystemNotRunning("the actor system is not running")
        check_factory(factory)
        name = options.name
        if name is None:
            name = self.default_name(parent, factory_name(factory))
        if name in parent.children:
            raise ValueError(f"{parent.path} already has a child named {name!r}")
        if not parent.alive:
            if parent is self.guardian:  # system.stop(), or the block's exit
                raise SystemNotRunning("the actor system is stopping")
            raise ActorStopped(f"{parent.path} is stopping: it cannot spawn children")
        drain = options.drain if options.drain is not None else self.drain
        cell = self.make_cell(
            parent,
            name,
            factory,
            args,
            kwargs,
            options.capacity,
            drain,
            options.restart,
            mailbox,
        )
        parent.children[name] = cell
        if construct_now:
            try:
                cell.instance = construct(cell)
            except BaseException as exc:
                self.never_started(cell, exc)
                raise
        if start:
            self.start(cell)
        return cell.ref

    def never_started(self, cell: Cell, exc: BaseException) -> None:
        """``cell``'s first instance could not be made: it ends now, with
        ``exc`` as its reason (what its ref's ``join()`` and any watcher
        see), and what its ``__init__`` started ends with it."""
        cell.stop_reason = exc
        request_stop_of_children(cell, StopReason.PARENT)
        cancel_tasks(cell)  # background work it started never runs
        extras = cell.extras
        if extras is not None and extras.timers is not None:
            extras.timers.cancel_all()
        finish(cell)

    def start(self, cell: Cell) -> None:
        """Start ``cell``'s task in the system's task group (its spawner)."""
        assert self.spawner is not None
        self.unstarted.add(cell)
        self.spawner.start(run_actor, cell, None)

    def finish_unstarted(self) -> None:
        """After the task group has ended: terminate the cells whose task never
        ran (their queued messages become dead letters, their asks fail)."""
        while self.unstarted:
            cell = self.unstarted.pop()
            if not cell.ended:
                cell.stop_reason = StopReason.SYSTEM
                finish(cell)

    def default_name(self, parent: Cell, base: str) -> str:
        """``<base>-<n>``, free among ``parent``'s children (a name given by
        hand may look like a default one)."""
        while True:
            self.names += 1
            name = f"{base}-{self.names}"
            if name not in parent.children:
                return name

    def make_cell(
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
        """A new cell (not started)."""
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
            ActorRef if telemetry is None else telemetry._make_ref,
            ActorContext,
        )

    # -- ending -------------------------------------------------------------------

    def cancel_actors(self) -> None:
        """End the stop now: cancel every actor task, their stop hooks
        included (queued messages still become dead letters, pending asks
        still fail)."""
        self.cancelling = True
        tg = self.tg
        if tg is not None:
            tg.cancel_scope.cancel()
        if self.spawner is not None:
            self.spawner.cancel()
        for scope in list(self.shields):
            scope.cancel()

    @contextlib.contextmanager
    def shield(self) -> Iterator[anyio.CancelScope]:
        """A shield for an actor's graceful stop: the system's cancellation
        does not interrupt it, ``cancel_actors`` does."""
        scope = anyio.CancelScope(shield=True)
        if self.cancelling:
            scope.cancel()
        self.shields.add(scope)
        try:
            with scope:
                yield scope
        finally:
            self.shields.discard(scope)

    def record_failure(self, exc: BaseException) -> None:
        """Keep the first failure nobody handled: it ends the system."""
        if self.failure is None:
            self.failure = exc

    def crash(self, cell: Cell, exc: BaseException) -> None:
        """Something no supervisor handles ended ``cell``'s task, or a task
        working for it (``SystemExit`` or ``KeyboardInterrupt``, a
        ``BaseException`` that is not an ``Exception``, a bug in the
        runtime): shut the system down so ``exc`` surfaces from the ``async
        with``, instead of leaving askers and joiners waiting (or, on asyncio,
        being torn out of the event loop past the block's exit)."""
        if isinstance(exc, SystemExit | KeyboardInterrupt):
            logger.info(
                "actor %s raised %s: shutting the system down",
                cell.path,
                type(exc).__name__,
                extra=log_extra(cell, "stop"),
            )
        elif isinstance(exc, Exception):  # handlers' exceptions never get here
            logger.error(
                "actor %s crashed in the runtime",
                cell.path,
                exc_info=(type(exc), exc, exc.__traceback__),
            )
        else:  # a BaseException that is not an Exception: not supervised
            logger.error(
                "actor %s raised %s, which is not an Exception: shutting the "
                "system down",
                cell.path,
                type(exc).__name__,
                exc_info=(type(exc), exc, exc.__traceback__),
                extra=log_extra(cell, "stop"),
            )
        self.record_failure(exc)
        if isinstance(exc, SystemExit | KeyboardInterrupt):
            # The program is asked to end: cancel everything at once (the
            # body of the async with included), so it surfaces without
            # waiting for the other actors' graceful stop.
            self.cancel_actors()
        else:
            self.shutdown_on_crash()

    def shutdown_on_crash(self) -> None:
        """Something no supervisor handles ended an actor: stop everything;
        the recorded exception then surfaces from the ``async with``."""
        guardian = self.guardian
        if guardian is not None:
            guardian.request_stop(StopReason.SYSTEM)

    # -- bookkeeping --------------------------------------------------------------

    def dead_letter(self, cell: Cell, message: object, reason: str) -> None:
        """Count a message that could not be delivered or handled, log it,
        record it in telemetry, and hand it to the dead letters' subscribers."""
        logger.debug("dead letter to %s (%s): %r", cell.path, reason, message)
        telemetry = self.telemetry
        if telemetry is not None:
            telemetry._dead_letter(cell, message, reason)
        self.dead_letters.publish(DeadLetter(cell.ref, message, reason))

    def count_failure(self, cell: Cell, exc: BaseException) -> None:
        """An actor failed (a handler or a hook raised)."""
        self.failures += 1
        if self.telemetry is not None:
            self.telemetry._failure(cell, exc)

    def count_restart(self, cell: Cell) -> None:
        """A supervisor restarts ``cell``."""
        self.restarts += 1
        if self.telemetry is not None:
            self.telemetry._restart(cell)

    def count_escalation(self, cell: Cell) -> None:
        """``cell`` escalates its child's failure."""
        self.escalations += 1
        if self.telemetry is not None:
            self.telemetry._escalation(cell)

    def on_terminated(self, cell: Cell) -> None:
        """``cell`` terminated."""
        if self.telemetry is not None:
            self.telemetry._stopped(cell)
