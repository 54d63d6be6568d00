"""``ActorSystem``: the ``async with`` scope that owns every actor task.

Its size: the public face in one class, whose entering and leaving (the
graceful stop, its bound, cancellation, the remote extension) are documented in
full; what its actors share lives in ``_runtime``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, TypeVarTuple

import anyio

from ._actor import Actor
from ._actor_task import run_actor
from ._clock import Clock
from ._dead_letters import DeadLetter, DeadLetters
from ._deadlines import ask_deadlines
from ._errors import SystemNotRunning
from ._extension import RemoteExtension, RemoteHost
from ._lifecycle import StopReason, current_cell
from ._log import FailureLogging, check_log_failures
from ._pool_spawn import spawn_pool
from ._registry import Registry, lookup
from ._runtime import Runtime
from ._spawn_options import SpawnOptions
from ._strategies import OneForOne, RestartType, SupervisorStrategy
from ._telemetry import Telemetry
from ._threads import FromThread, call_soon_in_loop, in_loop_thread
from ._timers import TimerScheduler
from ._validation import check_count, check_limit, check_seconds_type
from .channel._waiters import Backend, current_backend

if TYPE_CHECKING:
    from ._cell import Cell
    from ._pool import PoolRef, Routing
    from ._ref import ActorRef

__all__ = ["DEFAULT_DRAIN", "ActorSystem", "DeadLetter", "DeadLetters"]

logger = logging.getLogger("actors")

M = TypeVar("M")
Ts = TypeVarTuple("Ts")

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
            ``actors.remote.Remote()`` (any
            [``RemoteExtension``][actors.RemoteExtension]): started when the
            system is entered, before the first actor (an error starting it
            propagates from ``async with``), and stopped after the actors when
            it is left. None (the default): local only.
        clock: the clock of the system's timers, ask timeouts, restart
            intensity and backoff (a [``Clock``][actors.testing.Clock], such as
            ``actors.testing.ManualClock()``, whose time moves only when a
            test advances it). None (the default): the event loop's clock
            (on Trio that may be a ``trio.testing.MockClock``). An ask that
            first waits for mailbox room, ``shutdown_timeout`` and thread
            entry's timeouts stay on the event loop's clock.

    Raises:
        TypeError: ``strategy`` is not a SupervisorStrategy; ``drain`` or
            ``dead_letters_kept`` is not an integer; ``shutdown_timeout`` is
            not a number; ``telemetry`` is neither None nor a Telemetry;
            ``log_failures`` is neither a bool nor a FailureLogging;
            ``clock`` is neither None nor a Clock.
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
        remote: RemoteExtension | None = None,
        log_failures: bool | FailureLogging = True,
        clock: Clock | None = None,
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
            raise TypeError(
                f"telemetry must be a Telemetry or None, not {telemetry!r}"
            )
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
        self.shutdown_timeout = shutdown_timeout
        self._remote = remote
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
    def remote(self) -> Any:
        """The ``remote`` extension given (e.g. an ``actors.remote.Remote``:
        ``system.remote.url``, ``system.remote.lookup(...)``), or None."""
        return self._remote

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

    # -- stopping ---------------------------------------------------------

    def stop(self) -> None:
        """Stop the system (Akka's ``terminate``): every actor stops, children
        before parents, as when the ``async with`` block is left; returns at
        once. Callable from an actor's handler, from any task of the
        system's event loop, or from another thread (the stop is then handed
        to the event loop, and starts there soon after this returns).

        Once every actor has stopped, the block ends as a normal exit: a
        body waiting in [``wait_exited``][actors.ActorSystem.wait_exited]
        returns from it; a body doing anything else is cancelled (the
        cancellation ends at the block, which exits without an exception).
        Put what must run after the stop after the ``async with`` block.
        ``spawn`` and ``spawn_pool`` (the system's, and
        ``from_thread.spawn``) raise
        [``SystemNotRunning``][actors.SystemNotRunning] from the stop on; an
        actor's own ``context.spawn`` works until that actor is asked to
        stop, and its children stop with it. Stopping twice, or a system that
        is not running, does nothing. The graceful stop takes as long as the
        actors' ``on_stop`` take (``shutdown_timeout`` bounds the block's
        exit, not this stop).
        """
        runtime = self._runtime
        if runtime.guardian is None or not runtime.running:
            return
        token = runtime.loop_token
        if token is not None and not in_loop_thread(token):
            # Another thread: the actors' state is the event loop's own.
            call_soon_in_loop(token, self._stop)
            return
        self._stop()

    def _stop(self) -> None:
        """``stop()``, in the event loop's thread."""
        runtime = self._runtime
        guardian = runtime.guardian
        if guardian is None or not runtime.running:
            return
        self._stop_called = True
        guardian.request_stop(StopReason.SYSTEM)

    async def wait_exited(self) -> None:
        """Wait until every actor of the system has stopped: after
        [``stop``][actors.ActorSystem.stop], after a failure nobody handled, or
        as the block is left. Returns at once if that happened already. The body
        of the ``async with`` (the task that entered the block) waiting here is
        not cancelled by [``stop``][actors.ActorSystem.stop]: this returns, and
        the block exits normally.

        Raises:
            SystemNotRunning: the system was never entered.
            RuntimeError: called from an actor of the system (its own stop
                would wait for it: use ``stop()`` alone, or watch).
        """
        guardian = self._runtime.guardian
        if guardian is None:
            raise SystemNotRunning("the actor system was never entered")
        cell = current_cell.get()
        if cell is not None and cell.runtime is self._runtime:
            raise RuntimeError(
                f"{cell.path} waits for its own system to exit: it would wait "
                "forever (its stop waits for its handler)"
            )
        if guardian.terminated.is_set():
            return
        host = self._host is not None and anyio.get_current_task().id == self._host
        if host:
            self._host_waiting = True
        try:
            await guardian.terminated.wait()
        finally:
            if host:
                self._host_waiting = False

    # -- finding actors ---------------------------------------------------

    def lookup(self, path: str) -> ActorRef[Any]:
        """The ref of the actor at ``path``, e.g. ``"/user/parent/child"`` (a
        pool's path gives the pool's ref, ``".../worker-0"`` one of its
        workers). An actor that is stopping is still found until it has
        terminated.

        Raises:
            TypeError: ``path`` is not a str.
            ValueError: ``path`` does not begin with ``/``, or has an empty,
                ``.`` or ``..`` segment (``"/user/a/"``, ``"/user//a"``).
            ActorNotFound: no actor lives at ``path`` (never did, or has
                terminated).
            SystemNotRunning: the system is not running.
        """
        runtime = self._runtime
        if not runtime.running:
            raise SystemNotRunning("the actor system is not running")
        return lookup(runtime, path)

    def register(self, name: str, ref: ActorRef[Any]) -> None:
        """Give a local actor (or pool) a name that
        [``whereis``][actors.ActorSystem.whereis] finds (Erlang/OTP's
        ``register``). The registration ends when the actor terminates (before
        its ``join()`` returns), or with
        [``unregister``][actors.ActorSystem.unregister]. A name names one actor
        and an actor has one name at most; registering the same actor under its
        own name again does nothing.

        Raises:
            TypeError: ``name`` is not a str, or ``ref`` is not a ref to an
                actor of this system.
            ValueError: ``name`` is empty, or taken by another actor (the
                error names it), or ``ref`` has another name already.
            ActorStopped: the actor has stopped (or is stopping).
            SystemNotRunning: the system is not running.
        """
        runtime = self._runtime
        if not runtime.running:
            raise SystemNotRunning("the actor system is not running")
        registry = runtime.registry
        if registry is None:
            registry = runtime.registry = Registry()
        registry.register(runtime, name, ref)

    def whereis(self, name: str) -> ActorRef[Any] | None:
        """The ref registered under ``name`` (a pool's ref for a pool), or
        None (Erlang/OTP's ``whereis``).

        Raises:
            TypeError: ``name`` is not a str.
        """
        registry = self._runtime.registry
        if registry is None:
            if type(name) is not str:
                raise TypeError(f"name must be a str, not {name!r}")
            return None
        return registry.whereis(name)

    def unregister(self, name: str) -> None:
        """Forget ``name`` (the actor goes on); an unknown name does nothing.

        Raises:
            TypeError: ``name`` is not a str.
        """
        registry = self._runtime.registry
        if registry is None:
            if type(name) is not str:
                raise TypeError(f"name must be a str, not {name!r}")
            return
        registry.unregister(name)

    @property
    def registered(self) -> dict[str, ActorRef[Any]]:
        """A copy of the registered names and their refs."""
        registry = self._runtime.registry
        return {} if registry is None else registry.names()

    # -- scope ------------------------------------------------------------

    async def __aenter__(self) -> ActorSystem:
        runtime = self._runtime
        if runtime.running or runtime.tg is not None:
            raise RuntimeError("an ActorSystem can be entered only once")
        # Everything that can fail happens before the task group is entered:
        # a task group entered by hand and then abandoned corrupts Trio's
        # cancel scope stack.
        backend = runtime.backend = current_backend()
        runtime.deadlines = ask_deadlines(runtime, backend)
        runtime.loop_token = anyio.lowlevel.current_token()
        guardian = runtime.make_cell(
            None, "user", _Guardian, (), {}, None, runtime.drain, "permanent", None
        )
        tg = anyio.create_task_group()
        await tg.__aenter__()
        try:
            runtime.tg = tg
            runtime.guardian = guardian
            runtime.running = True
            if self._remote is not None:
                # Before the first actor: nothing to undo but the task group.
                await self._remote.start(RemoteHost(runtime))
            runtime.unstarted.add(guardian)
            tg.start_soon(self._run_guardian, name="/user")
            # The body's own scope, inside the task group's: what system.stop()
            # cancels once the actors have stopped (never raises).
            self._host = anyio.get_current_task().id
            body = self._body = anyio.CancelScope()
            body.__enter__()
        except BaseException:
            runtime.running = False
            if runtime.deadlines is not None:
                runtime.deadlines.close()
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)  # nothing started: returns
            raise
        return self

    async def _run_guardian(self) -> None:
        runtime = self._runtime
        assert runtime.guardian is not None
        await run_actor(runtime.guardian)
        # Every actor has stopped. A body still running is ended (its own
        # scope, so the cancellation ends at the block): a failure nobody
        # handled then surfaces from __aexit__, system.stop() ends the block
        # as a normal exit. Nothing here raises, and nothing cancels the
        # task group: a cancellation the body did not ask for never leaks.
        body = self._body
        if body is None or self._host_waiting:
            return  # the block is being left already, or waits in wait_exited
        if runtime.failure is not None or self._stop_called:
            body.cancel()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        """Stop every actor, then end the task group; see the class for what
        surfaces. The rule, on every path: a failure nobody handled surfaces as
        itself; otherwise the body's own exception propagates untouched; a
        cancellation propagates only if a scope outside the block was
        cancelled (the runtime's own, ``system.stop()``'s, a failure's or
        ``shutdown_timeout``'s, ends here)."""
        runtime = self._runtime
        guardian = runtime.guardian
        tg = runtime.tg
        assert guardian is not None and tg is not None
        cancelled = anyio.get_cancelled_exc_class()
        # What leaves the block so far: the body's exception, unless its own
        # scope (cancelled by system.stop() or a failure) took it.
        leaving = exc
        body = self._body
        if body is not None:
            self._body = None
            try:
                if body.__exit__(exc_type, exc, tb):
                    leaving = None  # the body was ended by us: a normal exit
            except BaseException as new:  # a group, without our cancellation
                leaving = new
        # What the task group is handed: what leaves, or a cancellation that
        # reached the graceful stop (the task group's own scope swallows it
        # when it is ours, as cancel_actors's; an outer scope's propagates).
        pending = leaving
        runtime.exiting = True
        guardian.request_stop(StopReason.SYSTEM)
        if isinstance(pending, cancelled):
            runtime.cancel_actors()  # cancelled from outside: at once
        else:
            try:
                await self._graceful_stop(pending is not None)
            except cancelled as new:  # cancelled while waiting: end it at once
                runtime.cancel_actors()
                pending = new
        raised: BaseException | None = None
        try:
            await self._teardown()
            try:
                swallowed = await tg.__aexit__(
                    type(pending) if pending is not None else None,
                    pending,
                    pending.__traceback__ if pending is not None else None,
                )
            except BaseExceptionGroup as group:
                raised = self._surface(group)
            except BaseException as new:
                raised = new
            else:
                if swallowed:  # our own cancellation ended here
                    pending = None
        finally:
            runtime.exited = True
            runtime.finish_unstarted()
            # Dead letter streams end after the teardown's letters.
            self.dead_letters._close()
        failure = runtime.failure
        if failure is not None:
            if failure is exc:
                return False  # the body raised it itself: as it is
            _raise_as_itself(failure)
        if raised is None:
            if pending is not None and pending is not exc:
                _raise_as_itself(pending)
            # The body's exception (or an outer cancellation) goes on as it is.
            return pending is None and exc is not None
        if raised is exc:
            return False
        if (
            isinstance(raised, cancelled)
            and exc is not None
            and not isinstance(exc, cancelled)
        ):
            return False  # the body's own error beats an outer cancellation
        _raise_as_itself(raised)

    async def _graceful_stop(self, failing: bool) -> None:
        """Wait for every actor's stop: as long as they take for a normal
        exit without ``shutdown_timeout``, else within it (5 seconds for an
        exit by exception, shielded from the cancellation of the body);
        then cancel what is left.

        Raises:
            Cancelled: the block was cancelled while it waited.
        """
        runtime = self._runtime
        guardian = runtime.guardian
        assert guardian is not None
        timeout = self.shutdown_timeout
        if not failing and timeout is None:
            await guardian.terminated.wait()
            return
        if timeout is None:
            timeout = 5.0
        with anyio.CancelScope(shield=failing):
            with anyio.move_on_after(timeout):
                await guardian.terminated.wait()
        if not guardian.terminated.is_set():
            logger.warning(
                "actor system: graceful stop took over %s s: cancelling the actors",
                timeout,
            )
            runtime.cancel_actors()

    async def _teardown(self) -> None:
        """After the actors: thread entry, the remote extension, the ask
        deadlines (shielded: it always runs to its end)."""
        runtime = self._runtime
        runtime.running = False
        if runtime.from_thread is not None:
            runtime.from_thread._close()
        if self._remote is not None:
            # After the actors; its tasks end before the task group does.
            with anyio.CancelScope(shield=True):
                try:
                    await self._remote.stop()
                except Exception:
                    logger.exception("actor system: stopping %r failed", self._remote)
        if runtime.deadlines is not None:
            runtime.deadlines.close()  # ends the Trio deadline task

    def _surface(self, group: BaseExceptionGroup[BaseException]) -> BaseException:
        """The one exception to raise from ``async with`` for a task group's."""
        failure = self._runtime.failure
        if failure is not None:
            return failure
        leaves = _leaves(group)
        cancelled = anyio.get_cancelled_exc_class()
        others = [e for e in leaves if not isinstance(e, cancelled)]
        if len(others) == 1:
            return others[0]
        return group

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
        options = SpawnOptions(name, capacity, drain, restart)
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


def _raise_as_itself(exc: BaseException) -> NoReturn:
    """Raise ``exc`` from ``__aexit__`` keeping its own ``__context__``:
    raised here, Python would chain it to whatever the block is leaving with
    (often the runtime's own cancellation of the body)."""
    context, suppress = exc.__context__, exc.__suppress_context__
    try:
        raise exc
    finally:
        exc.__context__, exc.__suppress_context__ = context, suppress


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out.extend(_leaves(exc))
        else:
            out.append(exc)
    return out
