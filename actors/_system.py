"""``ActorSystem``: the ``async with`` scope that owns every actor task.

The class is made of parts named for concepts, as Akka's actor cell is
(``akka/actor/dungeon/``): this module holds its construction, options,
spawning and statistics; ``_system_scope`` its entering, stopping and leaving
(the graceful stop, its bound, cancellation, what surfaces); ``_system_names``
finding actors by path and name. What its actors share lives in
``_runtime``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, TypeVarTuple

import anyio

from ._actor import Actor
from ._clock import Clock
from ._dead_letters import DeadLetter, DeadLetters
from ._errors import ClusterNotStarted, SystemNotRunning
from ._hibernation import DEFAULT_HIBERNATE_AFTER
from ._log import FailureLogging, check_log_failures
from ._pool_spawn import spawn_pool
from ._runtime import Runtime
from ._spawn_options import SpawnOptions
from ._strategies import OneForOne, RestartType, SupervisorStrategy
from ._system_names import ActorNames
from ._system_scope import SystemScope
from ._telemetry import Telemetry
from ._threads import FromThread
from ._timers import TimerScheduler
from ._validation import (
    check_count,
    check_duration,
    check_limit,
    check_seconds_type,
)
from .channel.lowlevel import Backend
from .extension import R, RemoteExtension

if TYPE_CHECKING:
    from ._cell import Cell
    from ._pool import PoolRef, Routing
    from ._ref import ActorRef

    # For the type of ``cluster`` only: the runtime never imports sharding.
    from .sharding import Cluster

__all__ = ["DEFAULT_DRAIN", "ActorSystem", "DeadLetter", "DeadLetters"]

logger = logging.getLogger("actors")

M = TypeVar("M")
Ts = TypeVarTuple("Ts")

#: Items an actor takes from its mailbox per wake: a busy actor handles at
#: most this many between two checkpoints (the others wait at most that
#: long; Erlang's slice is 4,000 reductions). A checkpoint is a trip through
#: the event loop (a few microseconds on asyncio, its selector's poll
#: included): at 256 it is a few nanoseconds of each queued message's cost,
#: where 64 made it about a tenth (see benchmarks/README.md).
DEFAULT_DRAIN = 256


class ActorSystem(SystemScope, ActorNames, Generic[R]):
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
        strategy: how the guardian supervises top-level actors. The default
            restarts a failed top-level actor, at most 3 times within 5
            seconds for each one: its restart intensity is counted per child
            (as Akka classic's guardian), so unrelated top-level actors that
            fail now and then never add up to a shutdown; one that fails a
            fourth time within 5 seconds shuts the system down. A strategy
            given here counts the restarts of all the top-level actors
            together, as an Erlang/OTP supervisor does (``OneForOne()``
            given explicitly included).
        drain: default for how many queued items an actor takes per wake.
        dead_letters_kept: how many recent dead letters ``dead_letters.recent``
            keeps (every one is counted and published to the subscribers of
            ``dead_letters``, see [``DeadLetters``][actors.DeadLetters]).
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
        telemetry: an [``Telemetry``][actors.Telemetry] to trace and measure messages
            (default: off, no telemetry work at all).
        log_failures: how actors' failures are logged when their
            supervisor's strategy does not say (its ``log_failures``): True
            (the default: one WARNING record per failure, with its
            traceback), False (none; failures are still counted and
            supervised), or a [``FailureLogging``][actors.FailureLogging] (level,
            traceback).
        remote: an extension joining the system to others, e.g.
            ``actors.remote.Remote()`` (any ``actors.extension.RemoteExtension``):
            started when the system is entered, before the first actor (an
            error starting it propagates from ``async with``), and stopped
            after the actors when it is left. None (the default): local only.
        clock: the clock of the system's timers, ask timeouts, restart
            intensity and backoff (a [``Clock``][actors.testing.Clock], such as
            ``actors.testing.ManualClock()``, whose time moves only when a
            test advances it). None (the default): the event loop's clock
            (on Trio that may be a ``trio.testing.MockClock``). An ask that
            first waits for mailbox room, ``shutdown_timeout`` and thread
            entry's timeouts stay on the event loop's clock.
        journal: the event journal of the system's durable actors (an
            ``actors.persistence.Journal``, such as
            ``actors.persistence.SqliteJournal(path)``), for those that name
            none of their own. The system only holds it for them: it neither
            opens nor closes it (``async with`` the journal around the
            system). None (the default): no system journal.
        snapshot_store: where those actors keep their snapshots (an
            ``actors.persistence.SnapshotStore``). None (the default): the
            journal, when it stores snapshots too (the SQLite and memory
            journals do).
        hibernate_after: seconds an actor that has had mail stays idle (its
            mailbox empty, no handler running) before it gives up its task,
            as OTP's ``hibernate_after``: it then holds no task, as an actor
            that never had mail, and the next message, stop or command
            starts it again with the same instance and state (a task start:
            tens of microseconds). It hibernates after between this and
            twice this long (one tick per system, on ``clock`` when given).
            Default 1 second. None: an actor keeps its task until it stops
            once it has had mail.

    Raises:
        TypeError: ``strategy`` is not a SupervisorStrategy; ``drain`` or
            ``dead_letters_kept`` is not an integer; ``shutdown_timeout`` is
            not a number; ``telemetry`` is neither None nor a Telemetry;
            ``log_failures`` is neither a bool nor a FailureLogging;
            ``clock`` is neither None nor a Clock; ``hibernate_after`` is
            neither None nor a number.
        ValueError: ``drain`` < 1, ``dead_letters_kept`` < 0,
            ``shutdown_timeout`` < 0; ``hibernate_after`` not > 0 and finite.
    """

    def __init__(
        self,
        *,
        strategy: SupervisorStrategy | None = None,
        drain: int = DEFAULT_DRAIN,
        dead_letters_kept: int = 100,
        shutdown_timeout: float | None = None,
        telemetry: Telemetry | None = None,
        remote: R | None = None,
        log_failures: bool | FailureLogging = True,
        clock: Clock | None = None,
        journal: object = None,
        snapshot_store: object = None,
        hibernate_after: float | None = DEFAULT_HIBERNATE_AFTER,
    ) -> None:
        per_child = strategy is None
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
            raise TypeError(f"telemetry must be a Telemetry or None, not {telemetry!r}")
        if remote is not None and not isinstance(remote, RemoteExtension):
            raise TypeError(
                f"remote must be a RemoteExtension (e.g. actors.remote.Remote()) "
                f"or None, not {remote!r}"
            )
        failure_logging = check_log_failures(log_failures)
        if clock is not None and not isinstance(clock, Clock):
            raise TypeError(
                f"clock must be an actors.testing.Clock (e.g. ManualClock()) or "
                f"None, not {clock!r}"
            )
        if hibernate_after is not None:
            hibernate_after = check_duration("hibernate_after", hibernate_after)
        self.shutdown_timeout = shutdown_timeout
        self._remote = remote
        # Held for actors.persistence (the runtime never uses them).
        self._journal = journal
        self._snapshot_store = snapshot_store
        #: The cluster membership an extension runs on this system
        #: (``actors.extension.attach_cluster``), or None.
        self._cluster: Any = None
        #: The body of the async with (see stop()), and the task running it.
        self._body: anyio.CancelScope | None = None
        self._host: int | None = None
        #: The host task waits in wait_exited(): its body is not cancelled.
        self._host_waiting = False
        self._stop_called = False
        self._runtime = Runtime(
            self,
            strategy,
            drain,
            DeadLetters(dead_letters_kept),
            telemetry,
            TimerScheduler,
            spawn_pool,
        )
        self._runtime.remote = remote
        self._runtime.guardian_per_child = per_child
        self._runtime.log_failures = failure_logging
        self._runtime.clock = clock
        self._runtime.hibernate_after = hibernate_after

    # -- what it is and how it is doing ----------------------------------------

    @property
    def strategy(self) -> SupervisorStrategy:
        """How the guardian supervises top-level actors."""
        return self._runtime.strategy

    @property
    def drain(self) -> int:
        """How many queued items an actor takes per wake, by default."""
        return self._runtime.drain

    @property
    def telemetry(self) -> Telemetry | None:
        """The system's telemetry (None: off)."""
        return self._runtime.telemetry

    @property
    def dead_letters(self) -> DeadLetters:
        """Messages that could not be delivered or handled (see
        [``DeadLetters``][actors.DeadLetters])."""
        return self._runtime.dead_letters

    @property
    def remote(self) -> R:
        """The ``remote`` extension given, typed as given (``ActorSystem(remote=
        Remote())`` is an ``ActorSystem[Remote]``: ``system.remote.url``), or None."""
        return self._remote  # type: ignore[return-value]

    @property
    def cluster(self) -> Cluster:
        """This node's cluster membership (Akka's ``Cluster(system)``): the
        [``Cluster``][actors.sharding.Cluster] of the
        [``Sharding``][actors.sharding.Sharding] running on this system, with
        its ``members`` and ``subscribe`` for membership events.

        Raises:
            ClusterNotStarted: no cluster membership runs on this system
                (none was entered, or it has left).
        """
        cluster = self._cluster
        if cluster is None:
            raise ClusterNotStarted(
                "this actor system runs no cluster membership: enter "
                "actors.sharding.Sharding(system, entities, store=...) on it "
                "(async with); system.cluster is its membership until it leaves"
            )
        return cluster  # type: ignore[no-any-return]

    @property
    def journal(self) -> Any:
        """The ``journal`` given (an ``actors.persistence.Journal``), or None."""
        return self._journal

    @property
    def snapshot_store(self) -> Any:
        """The ``snapshot_store`` given, or None (``actors.persistence``
        then uses the journal's own snapshots, when it has them)."""
        return self._snapshot_store

    @property
    def clock(self) -> Clock | None:
        """The system's own clock (``ActorSystem(clock=...)``), or None: the
        event loop's."""
        return self._runtime.clock

    @property
    def backend(self) -> Backend | None:
        """The event loop's backend, once entered."""
        return self._runtime.backend

    @property
    def running(self) -> bool:
        """Whether the system is entered and not yet exited."""
        return self._runtime.running

    @property
    def failures(self) -> int:
        """Actor failures so far (exceptions from handlers and hooks)."""
        return self._runtime.failures

    @property
    def restarts(self) -> int:
        """Restarts ordered by supervisors so far."""
        return self._runtime.restarts

    @property
    def escalations(self) -> int:
        """Escalations by supervisors so far."""
        return self._runtime.escalations

    # -- spawning ---------------------------------------------------------

    def spawn(
        self,
        factory: Callable[[*Ts], Actor[M]],
        *args: *Ts,
        name: str | None = None,
        capacity: int | None = None,
        drain: int | None = None,
        restart: RestartType = "transient",
    ) -> ActorRef[M]:
        """Spawn a top-level actor (a child of the guardian) and return its ref
        at once.

        The factory (an [``Actor``][actors.Actor] subclass, or any callable returning an
        Actor) is called with ``*args`` here, before ``spawn`` returns, with
        the new actor as the current one (as in its own task); a factory
        that raises makes ``spawn`` raise that
        exception, and the actor is never started (nor restarted). Every
        restart calls it again, in the actor's own task, under supervision.
        ``on_start`` runs in the actor's task, after ``spawn`` returned.

        Typed: ``spawn(Counter, 5)`` checks ``5`` against ``Counter``'s
        constructor and returns an ``ActorRef[CounterMsg]`` for a
        ``Counter(Actor[CounterMsg])``. The factory's keyword arguments go in
        a ``functools.partial(Counter, step=2)`` or a lambda (the options
        below are ``spawn``'s own keywords, as ``anyio``'s ``start_soon``
        keeps ``name``).

        Args:
            factory: makes the actor instance.
            args: the factory's positional arguments.
            name: unique among its siblings; default: made from the class name.
            capacity: the mailbox quota (None: unbounded).
            drain: items taken per wake (default: the system's ``drain``).
            restart: ``"transient"`` (default: restarted after a failure, a stop
                is final), ``"permanent"`` (also restarted when it stops
                itself), ``"temporary"`` (never restarted), as Erlang child
                specs.

        Raises:
            TypeError: ``factory`` is not callable, or is a class that is not an
                Actor subclass, or returned something that is not an Actor;
                ``capacity``/``drain`` is not an integer.
            ValueError: the name is taken or malformed, ``capacity`` < 1,
                ``drain`` < 1, or ``restart`` is unknown.
            SystemNotRunning: the system is not running.
            Exception: whatever the factory raised.
        """
        options = SpawnOptions.of(name, capacity, drain, restart)
        guardian = self._guardian()
        return self._runtime.spawn(guardian, factory, args, {}, options)

    def _guardian(self) -> Cell:
        """The guardian, to spawn under.

        Raises:
            SystemNotRunning: the system is not running, or is stopping.
        """
        guardian = self._runtime.guardian
        if guardian is None or not self._runtime.running:
            raise SystemNotRunning("the actor system is not running (use async with)")
        if not guardian.alive:
            raise SystemNotRunning("the actor system is stopping")
        return guardian

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
        """Spawn a pool of ``size`` workers behind one ref (see
        [``PoolRef``][actors.PoolRef]), each made by ``factory(*args)``, typed as
        [``spawn``][actors.ActorSystem.spawn] is.

        The first workers are made here, before ``spawn_pool`` returns: a
        factory that raises makes ``spawn_pool`` raise that exception, and
        the pool ends at once with it as its reason (its name is free again,
        the workers made before it stop). Workers made again later (a
        worker's restart, the pool's own) are made in their own tasks, under
        the pool's supervision.

        Args:
            factory: makes each worker, as for [``spawn``][actors.ActorSystem.spawn].
            size: how many workers (>= 1).
            *args: the factory's positional arguments.
            name: the pool's name, as for [``spawn``][actors.ActorSystem.spawn].
            capacity: each worker's mailbox for ``round_robin``, the shared
                queue for ``shared_queue`` (as for
                [``spawn``][actors.ActorSystem.spawn]).
            drain: as for [``spawn``][actors.ActorSystem.spawn], for each worker.
            routing: ``"round_robin"`` or ``"shared_queue"``.
            strategy: how the pool supervises its workers (default
                ``OneForOne(max_restarts=10, within=1.0)``: a failed worker
                is restarted; more than 10 restarts within a second fail the
                pool, and its parent decides).

        Raises:
            TypeError, ValueError: a bad ``factory``, ``size``, ``routing``,
                ``capacity``, ``drain`` or ``strategy``, or a taken name.
            SystemNotRunning: the system is not running (or is stopping).
            Exception: whatever the factory raised.
        """
        guardian = self._guardian()
        return spawn_pool(
            guardian,
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

    # -- thread entry -------------------------------------------------------

    @property
    def from_thread(self) -> FromThread:
        """Blocking ``tell`` / ``ask`` for code in other threads (see
        [``FromThread``][actors.FromThread])."""
        from_thread = self._runtime.from_thread
        if from_thread is None:
            from_thread = FromThread(self._runtime)
        return from_thread

    def __repr__(self) -> str:
        state = "running" if self.running else "not running"
        return f"<ActorSystem {state}>"
