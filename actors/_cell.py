"""The actor cell: one actor's mailbox, task, incarnations and lifecycle.

An ``ActorRef`` is a thin handle on a cell. The cell's task (started in the
system's task group) runs incarnation after incarnation of the actor: it builds an
instance with the factory, runs ``on_start`` (or ``on_restart``), then drains the
mailbox in batches until a control command (a supervisor's directive, a stop)
interrupts it, and finally terminates: children first, ``on_stop``, dead letters,
``Terminated`` to watchers.

Control commands travel beside the mailbox, not in it, so a stop or a restart is
never stuck behind a backlog: the loop checks them before every message.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import inspect
import logging
import math
from collections import deque
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import anyio

from ._envelope import Ask
from ._errors import ActorStopped, StrayCancellation, describe
from ._signals import WAKE, Terminated, Wake
from ._supervision import check_strategy_attribute
from .mailbox import EndOfMailbox, Mailbox, MailboxClosed, Signal

if TYPE_CHECKING:
    from ._actor import Actor
    from ._ref import ActorRef
    from ._supervision import RestartType
    from ._system import ActorSystem

__all__ = ["NOTHING", "Cell", "StopReason", "call_handler", "current_cell"]

logger = logging.getLogger("actors")

#: The cell whose task is running (set once per actor task).
current_cell: ContextVar[Cell | None] = ContextVar("actors_current_cell", default=None)


class StopReason(enum.Enum):
    """How an actor ended, when it did not fail."""

    #: It was stopped (``ref.stop()``, ``context.stop()``).
    NORMAL = "normal"
    #: Its parent stopped it (the parent stopped, or restarted, or its strategy
    #: said so).
    PARENT = "stopped by its parent"
    #: Its system shut down.
    SYSTEM = "stopped by the system"

    def __repr__(self) -> str:
        return f"StopReason.{self.name}"


# Cell states.
STARTING, RUNNING, SUSPENDED, STOPPING, TERMINATED = range(5)


class _Nothing:
    """The type of :data:`NOTHING`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOTHING"


#: "No item": what the loop holds when it is not handling one. Never None,
#: which is a legal message.
NOTHING: Any = _Nothing()

#: Classes of values a handler returns that are known not to be awaitable, so
#: the message loop tells a plain reply from a coroutine (an ``async def``
#: receive behind a sync decorator) with a set lookup, no call. Filled as
#: results come (bounded: a program that makes classes without end stops
#: caching, it does not grow this set).
_PLAIN: set[type] = {type(None), bool, int, float, str, bytes, tuple, list, dict}
_PLAIN_MAX = 4096


def awaitable_class(cls: type) -> bool:
    """Whether results of class ``cls`` are awaited (as the lifecycle hooks'
    are); caches the classes that are not."""
    if hasattr(cls, "__await__"):
        return True
    if len(_PLAIN) < _PLAIN_MAX:
        _PLAIN.add(cls)
    return False


async def call_handler(handler: Callable[[Any], Any], message: object) -> Any:
    """Call a sync or async handler (``receive``, ``on_terminated``) and return
    its result; an awaitable result is awaited (an ``async def`` wrapped by a
    plain decorator returns its coroutine)."""
    result = handler(message)
    if result.__class__ not in _PLAIN and awaitable_class(result.__class__):
        result = await result
    return result


def being_cancelled() -> bool:
    """Whether the current task is being cancelled: an enclosing cancel scope
    was cancelled (anyio's, Trio's) or, on asyncio, ``Task.cancel()`` was
    called. False means a cancellation exception raised now is stray: it came
    from something the task awaited that another task cancelled."""
    if anyio.current_effective_deadline() == -math.inf:
        return True
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no asyncio loop in this thread: Trio
        return False
    return task is not None and task.cancelling() > 0


def stray_failure(exc: BaseException) -> StrayCancellation | None:
    """The failure to report for ``exc`` if it is a stray cancellation, else
    None (a real teardown, or not a cancellation at all)."""
    if not isinstance(exc, anyio.get_cancelled_exc_class()) or being_cancelled():
        return None
    failure = StrayCancellation(
        f"a handler raised {type(exc).__name__} but its actor was not being "
        "cancelled (it awaited something another task cancelled)"
    )
    failure.__cause__ = exc
    return failure


def add_note_once(exc: BaseException, note: str) -> None:
    """Add ``note`` to a user's exception unless it is there already; never
    fails (a frozen dataclass exception refuses new attributes)."""
    try:
        notes = getattr(exc, "__notes__", None)
        if isinstance(notes, list) and note in notes:
            return
        exc.add_note(note)
    except Exception:
        pass


class _Restart(Exception):
    """Unwinds the message loop into a restart (a supervisor's command)."""

    def __init__(
        self,
        cause: BaseException | None,
        done: anyio.Event | None = None,
        delay: float = 0.0,
    ):
        self.cause = cause
        self.done = done  # set once the new incarnation has started (or failed)
        self.delay = delay  # backoff seconds, waited after the old incarnation ends


class _Stop(Exception):
    """Unwinds the message loop into termination."""


def _log_extra(cell: Cell, event: str) -> dict[str, str]:
    """``extra`` of the lifecycle log records: ``record.actor_path`` and
    ``record.actor_event`` ("failure", "restart", "directive", "escalation",
    "stop"), so handlers can filter on them."""
    return {"actor_path": cell.path, "actor_event": event}


async def call_hook(hook: Callable[..., Any], *args: Any) -> None:
    """Call a sync or async lifecycle hook; a stray cancellation it raises
    becomes a :exc:`~actors.StrayCancellation` failure."""
    try:
        result = hook(*args)
        if inspect.isawaitable(result):
            await result
    except anyio.get_cancelled_exc_class() as exc:
        failure = stray_failure(exc)
        if failure is None:
            raise
        raise failure from exc


class Cell:
    """Runtime state of one actor (see the module docstring)."""

    def __init__(
        self,
        system: ActorSystem,
        parent: Cell | None,
        name: str,
        factory: Callable[..., Actor],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        capacity: int | None,
        drain: int,
        restart_type: RestartType,
        mailbox: Any = None,
    ) -> None:
        from ._actor import ActorContext
        from ._ref import ActorRef

        self.system = system
        self.parent = parent
        self.name = name
        self.path: str = f"{parent.path}/{name}" if parent is not None else f"/{name}"
        self.factory = factory
        self.args = args
        self.kwargs = kwargs
        # A pool's shared-queue workers bring their own mailbox (see _pool.py).
        self.mailbox: Mailbox[Any] = Mailbox(capacity) if mailbox is None else mailbox
        self.drain = drain
        self.restart_type = restart_type
        telemetry = system.telemetry
        # Chosen once: a traced system's refs carry trace contexts, so the
        # plain ActorRef.tell stays free of any telemetry check.
        self.ref: ActorRef[Any] = (
            ActorRef(self) if telemetry is None else telemetry.make_ref(self)
        )
        self.children: dict[str, Cell] = {}  # in start order
        self.instance: Actor | None = None
        self.incarnation = 0
        self.state = STARTING
        self.control: deque[tuple[Any, ...]] = deque()
        self.control_event: anyio.Event | None = None
        self.wake_pending = False
        self.stop_requested = False
        self.stop_reason: object = StopReason.NORMAL
        self.reason: object = None  # set on termination
        self.terminated = anyio.Event()
        self.watchers: set[Cell] = set()  # cells watching this one
        self.watching: set[Cell] = set()  # cells this one watches
        self.carry: list[Any] = []  # items taken from the mailbox, not yet handled
        self.current: Any = NOTHING  # the ask being handled
        self.timers: Any = None  # a TimerScheduler, made on first use
        self.supervision: Any = None  # a RestartIntensity, made on first failure
        self.started_ok = False
        self.last_restart = 0.0
        self.backoff_attempt = 0
        self.context = ActorContext(self)

    def __repr__(self) -> str:
        return f"<Cell {self.path}>"

    # -- requests from other tasks -------------------------------------------

    def command(self, *cmd: Any) -> None:
        """Queue a control command and make sure the actor's task sees it."""
        self.control.append(cmd)
        self.kick()

    def kick(self) -> None:
        event = self.control_event
        if event is not None:
            event.set()
        elif not self.wake_pending and not self.mailbox.closed:
            self.wake_pending = True
            self.mailbox.send_signal(WAKE)

    def request_stop(self, reason: object = StopReason.NORMAL) -> None:
        """Stop after the current message; queued messages become dead letters."""
        if self.stop_requested or self.state >= STOPPING:
            return
        if (
            reason is StopReason.NORMAL
            and self.restart_type == "permanent"
            and self.parent is not None
            and current_cell.get() is self
        ):
            # Erlang's permanent child: even a normal exit is restarted, so it
            # goes to the supervisor like a failure instead of ending the actor.
            if ("exit",) not in self.control:  # stopping twice exits once
                self.command("exit")
            return
        self.stop_requested = True
        self.stop_reason = reason
        self.mailbox.close()  # later tells raise; wakes an idle actor
        self.kick()

    # -- the actor's task -----------------------------------------------------

    async def run(self) -> None:
        """The actor's task: incarnations until it terminates."""
        current_cell.set(self)
        cause: BaseException | None = None
        restarting = False
        done: anyio.Event | None = None
        delay = 0.0
        system = self.system
        try:
            while True:
                try:
                    if delay:  # backoff: the old incarnation has ended already
                        await self._backoff(delay)
                        delay = 0.0
                    if self.stop_requested:  # also: a stop during backoff wins
                        raise _Stop
                    await self._start(cause, restarting, done)
                    done = None
                    self.state = RUNNING
                    telemetry = system.telemetry
                    if telemetry is None:
                        await self._loop()
                    else:  # chosen per incarnation: _loop stays untouched
                        await telemetry.run_loop(self)
                except _Restart as restart:
                    if done is not None:  # a start it was waiting for failed
                        done.set()
                    cause, restarting, done = restart.cause, True, restart.done
                    delay = restart.delay
                    await self._stop_incarnation()
                    continue
                except _Stop:
                    break
        except anyio.get_cancelled_exc_class() as exc:
            failure = stray_failure(exc)
            if failure is None:  # torn down: the system is cancelling us
                with system._shield():
                    await self._terminate(cancelled=True)
                raise
            # A stray cancellation outside any handler (a runtime path that
            # awaited something cancelled): a crash, never a silent teardown.
            self._crashed(failure)
        except BaseException as exc:
            self._crashed(exc)
        finally:
            # A supervisor waiting for the start of this incarnation (one-for-
            # all / rest-for-one) must never wait for one that will not come.
            if done is not None:
                done.set()
        with system._shield():
            await self._terminate(cancelled=False)

    def _crashed(self, exc: BaseException) -> None:
        """Something no supervisor handles ended the actor's task: a bug in
        the runtime, or ``SystemExit`` / ``KeyboardInterrupt`` raised by a
        handler. Shut the system down so it surfaces from ``async with``
        instead of leaving askers and joiners waiting forever."""
        if isinstance(exc, (SystemExit, KeyboardInterrupt)):
            logger.info(
                "actor %s raised %s: shutting the system down",
                self.path,
                type(exc).__name__,
                extra=_log_extra(self, "stop"),
            )
        elif isinstance(exc, Exception):  # handlers' exceptions never get here
            logger.error(
                "actor %s crashed in the runtime",
                self.path,
                exc_info=(type(exc), exc, exc.__traceback__),
            )
        else:  # a BaseException that is not an Exception: not supervised
            logger.error(
                "actor %s raised %s, which is not an Exception: shutting the "
                "system down",
                self.path,
                type(exc).__name__,
                exc_info=(type(exc), exc, exc.__traceback__),
                extra=_log_extra(self, "stop"),
            )
        self.system._record_failure(exc)
        self.system._shutdown_on_crash()

    async def _start(
        self, cause: BaseException | None, restarting: bool, done: anyio.Event | None
    ) -> None:
        """Build an instance and run its start hook; a failure is supervised.

        ``done`` (from a one-for-all / rest-for-one restart) is set once the
        hook has finished or failed, so the supervisor starts siblings in order.
        """
        from ._actor import Actor

        self.incarnation += 1
        self.started_ok = False
        self.state = STARTING
        self.instance = None  # the failed one is gone, whatever the factory does
        if restarting:
            logger.info(
                "actor %s restarts (incarnation %d) after %s",
                self.path,
                self.incarnation,
                describe(cause) if cause is not None else "a normal exit",
                extra=_log_extra(self, "restart"),
            )
        try:
            instance = self.factory(*self.args, **self.kwargs)
            if not isinstance(instance, Actor):
                raise TypeError(
                    f"the factory of {self.path} returned an instance of "
                    f"{type(instance).__qualname__}, not an Actor"
                )
            check_strategy_attribute(instance, self.path)
            instance.context = self.context
            self.instance = instance
            if restarting:
                await call_hook(instance.on_restart, cause)
            else:
                await call_hook(instance.on_start)
        except Exception as exc:
            if done is not None:
                done.set()
            # The supervisor never resumes an instance that did not start (it
            # restarts it instead), so this returns only by raising.
            await self._failed(exc, NOTHING)
            raise _Restart(exc) from None  # unreachable unless that changes
        self.started_ok = True
        if done is not None:
            done.set()

    async def _loop(self) -> None:
        """Handle messages until a control command or a stop interrupts."""
        mailbox = self.mailbox
        drain = self.drain
        control = self.control
        instance = self.instance
        assert instance is not None
        receive = instance.receive
        is_async = inspect.iscoroutinefunction(receive)
        system = self.system
        backend = system.backend
        plain = _PLAIN
        while True:
            if self.carry:
                batch, self.carry = self.carry, []
            else:
                try:
                    batch = await mailbox.receive_batch(drain)
                except EndOfMailbox:
                    raise _Stop from None
            index = 0
            item: Any = NOTHING
            try:
                for item in batch:
                    if control or self.stop_requested:
                        self.carry = batch[index:]
                        pending, item = item, NOTHING  # not being handled yet
                        await self._handle_control()
                        self.carry = []
                        item = pending
                    index += 1
                    if type(item) is Ask:
                        self.current = item
                        if is_async:
                            result = await receive(item.message)
                        else:
                            result = receive(item.message)
                            # A coroutine from a sync wrapper of an async def:
                            # a set lookup decides, no call (see _PLAIN).
                            if result.__class__ not in plain and awaitable_class(
                                result.__class__
                            ):
                                result = await result
                        self.current = NOTHING
                        if not item.reply(result, backend):
                            system.dead_letter(self, item.message, "ask abandoned")
                    elif isinstance(item, Signal):
                        await self._signal(item, receive)
                    elif is_async:
                        await receive(item)
                    else:
                        result = receive(item)
                        if result.__class__ not in plain and awaitable_class(
                            result.__class__
                        ):
                            await result
            except (_Restart, _Stop):
                raise
            except Exception as exc:
                self.current = NOTHING
                self.carry = batch[index:]
                await self._failed(exc, item)
                # Resumed: go on with the rest of the batch.
            except BaseException as exc:
                failure = stray_failure(exc)
                if failure is not None:  # not a teardown: the handler failed
                    self.current = NOTHING
                    self.carry = batch[index:]
                    await self._failed(failure, item)
                    continue
                # Cancelled (the system is being torn down), or SystemExit:
                # keep what this batch has not finished, the item being handled
                # included, so that _terminate counts them as dead letters.
                # ``item`` is NOTHING while control commands run, before the
                # pending item began.
                self.carry = batch[index - 1 if item is not NOTHING else index :]
                raise

    async def _signal(self, item: Signal, receive: Any) -> None:
        if type(item) is Wake:
            self.wake_pending = False
            return
        if type(item) is Terminated:
            watched = item.ref._cell
            if watched not in self.watching:
                return  # unwatched after it was queued: never delivered
            self.watching.discard(watched)
            instance = self.instance
            hook = getattr(instance, "on_terminated", None)
            if hook is not None:
                await call_hook(hook, item)
            else:
                await call_handler(receive, item)
            return
        deliver = getattr(item, "deliver", None)
        if deliver is not None:  # timer firings and other runtime signals
            await deliver(self, receive)
            return
        self.system.dead_letter(self, item, "unknown signal")

    # -- control ----------------------------------------------------------------

    async def _handle_control(self) -> None:
        """Run queued control commands; may raise _Restart or _Stop."""
        while True:
            if self.stop_requested:
                raise _Stop
            if not self.control:
                return
            await self._run_command(self.control.popleft())

    async def _run_command(self, cmd: tuple[Any, ...]) -> bool:
        """Run one command. Returns True when it resolves a waiting failure."""
        kind = cmd[0]
        if kind == "restart":  # (restart, cause, delay seconds)
            _, cause, delay = cmd
            raise _Restart(cause, None, delay)
        if kind == "resume":
            return True
        if kind == "suspend":  # (suspend, done): first half of an all/rest restart
            try:
                await self._stop_incarnation()
            finally:  # the supervisor waits for it, whatever happens here
                cmd[1].set()
            await self._wait_for_start()
        elif kind == "exit":  # a permanent child stopped itself: supervised
            await self._failed(None, NOTHING)
        elif kind == "child_failed":  # (child_failed, child, exc, incarnation)
            from ._supervisor import handle_child_failure

            await handle_child_failure(self, cmd[1], cmd[2], cmd[3])
        return False

    async def _wait_for_start(self) -> None:
        """Suspended by the supervisor: wait for its start command (or a stop)."""
        while True:
            while not self.control:
                if self.stop_requested:
                    raise _Stop
                await self._wait_control()
            cmd = self.control.popleft()
            if cmd[0] == "start":  # (start, cause, done)
                raise _Restart(cmd[1], cmd[2])
            if cmd[0] not in ("child_failed", "resume", "exit"):
                await self._run_command(cmd)

    async def _wait_control(self) -> None:
        event = self.control_event = anyio.Event()
        try:
            if not self.control and not self.stop_requested:
                await event.wait()
        finally:
            self.control_event = None

    async def _backoff(self, delay: float) -> None:
        """Wait ``delay`` seconds; only a stop request ends the wait early.

        Other commands arriving meanwhile stay queued for the next incarnation:
        each one sets the event and we wait again (``_wait_control`` would
        return at once while the queue is not empty, and spin).
        """
        with anyio.move_on_after(delay):
            while not self.stop_requested:
                event = self.control_event = anyio.Event()
                try:
                    await event.wait()
                finally:
                    self.control_event = None

    async def _failed(self, exc: Exception | None, item: Any) -> None:
        """The instance failed (or a permanent child exited, ``exc`` None):
        settle the item (:data:`NOTHING` when there is none), report to the
        parent, and obey its directive."""
        system = self.system
        if exc is not None:
            logger.warning(
                "actor %s failed: %s",
                self.path,
                describe(exc),
                exc_info=(type(exc), exc, exc.__traceback__),
                extra=_log_extra(self, "failure"),
            )
            system._count_failure(self, exc)
            if type(item) is Ask:
                # The asker re-raises this same object: its traceback holds the
                # actor-side frames, and the note names where it came from
                # (once, however often the object is raised).
                add_note_once(
                    exc, f"raised by actor {self.path} while handling an ask"
                )
                item.fail(exc, system.backend)
                system.dead_letter(self, item.message, "handler failed")
            elif item is not NOTHING and not isinstance(item, Signal):
                system.dead_letter(self, item, "handler failed")
        parent = self.parent
        if parent is None:  # the guardian itself failed: the system fails
            if exc is not None:
                system._record_failure(exc)
            raise _Stop
        self.state = SUSPENDED
        parent.command("child_failed", self, exc, self.incarnation)
        # Our own children's failures (and a pending permanent exit) wait until
        # we are resumed: handled now, while SUSPENDED, they would be dropped as
        # stale and the child left suspended forever. A restart or a stop ends
        # those children anyway.
        deferred: list[tuple[Any, ...]] = []
        while True:
            while not self.control:
                if self.stop_requested:
                    raise _Stop
                await self._wait_control()
            cmd = self.control.popleft()
            if cmd[0] == "child_failed" or cmd[0] == "exit":
                deferred.append(cmd)
            elif await self._run_command(cmd):
                self.state = RUNNING
                self.control.extendleft(reversed(deferred))
                return

    # -- ending ---------------------------------------------------------------------

    async def _stop_children(self, reason: object) -> None:
        """Stop every child, later-started first, waiting for each."""
        for child in reversed(list(self.children.values())):
            child.request_stop(reason)
            await child.terminated.wait()

    async def _stop_incarnation(self) -> None:
        """End the current instance before a restart: children, timers, on_stop."""
        # A system shutdown reaches every actor as SYSTEM (what join() reports),
        # not as PARENT just because it travels down the tree.
        system_stop = self.stop_requested and self.stop_reason is StopReason.SYSTEM
        await self._stop_children(
            StopReason.SYSTEM if system_stop else StopReason.PARENT
        )
        # The next incarnation supervises new children with a fresh restart
        # history (Erlang: a restarted supervisor starts with none), or it would
        # give up again at its first child failure after an escalation.
        self.supervision = None
        if self.timers is not None:
            self.timers.cancel_all()
        instance = self.instance
        if instance is not None and self.started_ok:
            try:
                await call_hook(instance.on_stop)
            except Exception as exc:  # reported, but the actor still stops
                logger.error(
                    "actor %s: on_stop failed: %s",
                    self.path,
                    describe(exc),
                    exc_info=(type(exc), exc, exc.__traceback__),
                    extra=_log_extra(self, "failure"),
                )
                self.system._count_failure(self, exc)
        self.started_ok = False

    async def _terminate(self, cancelled: bool) -> None:
        self.state = STOPPING
        self.stop_requested = True
        self.mailbox.close()
        reason = self.stop_reason
        if not cancelled:
            try:
                await self._stop_incarnation()
            except anyio.get_cancelled_exc_class():
                # The system's shutdown_timeout ran out (or it was cancelled
                # from outside): what is left of the stop is skipped.
                cancelled = True
        if cancelled:
            for child in list(self.children.values()):
                child.request_stop(StopReason.SYSTEM)
            if self.timers is not None:
                self.timers.cancel_all()
        self.instance = None
        system = self.system
        backend = system.backend
        current = self.current
        leftovers = [*self.carry, *self.mailbox.drain()]
        if current is not NOTHING:
            leftovers.insert(0, current)
        if system.telemetry is not None:  # take off the trace envelopes
            leftovers = system.telemetry.unwrap(leftovers)
        self.current = NOTHING
        self.carry = []
        stopped = ActorStopped(f"{self.path} stopped before replying")
        for item in leftovers:
            if isinstance(item, Signal):
                continue
            if type(item) is Ask:
                if not item.done:
                    item.fail(stopped, backend)
                    system.dead_letter(self, item.message, "actor stopped")
            else:
                system.dead_letter(self, item, "actor stopped")
        # A supervisor may be waiting for this actor to suspend or start.
        for cmd in self.control:
            if cmd[0] == "suspend":
                cmd[1].set()
            elif cmd[0] == "start":
                cmd[2].set()
        self.control.clear()
        self.state = TERMINATED
        self.reason = reason
        parent = self.parent
        if parent is not None and parent.children.get(self.name) is self:
            del parent.children[self.name]
        for watched in self.watching:
            watched.watchers.discard(self)
        self.watching.clear()
        terminated = Terminated(self.ref, reason)
        for watcher in self.watchers:
            with contextlib.suppress(MailboxClosed):
                watcher.mailbox.send_signal(terminated)
        self.watchers.clear()
        logger.info(
            "actor %s stopped: %r", self.path, reason, extra=_log_extra(self, "stop")
        )
        system._on_terminated(self)
        self.terminated.set()
