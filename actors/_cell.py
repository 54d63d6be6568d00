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

import contextlib
import enum
import inspect
import logging
from collections import deque
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import anyio

from ._envelope import Ask
from ._errors import ActorStopped
from ._signals import WAKE, Terminated, Wake
from .mailbox import EndOfMailbox, Mailbox, MailboxClosed, Signal

if TYPE_CHECKING:
    from ._actor import Actor
    from ._ref import ActorRef
    from ._supervision import RestartType
    from ._system import ActorSystem

__all__ = ["Cell", "StopReason", "current_cell"]

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
    """Call a sync or async lifecycle hook."""
    result = hook(*args)
    if inspect.isawaitable(result):
        await result


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
        self.current: Any = None  # the item being handled
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
        try:
            while True:
                try:
                    if delay:  # backoff: the old incarnation has ended already
                        await self._backoff(delay)
                        delay = 0.0
                    if self.stop_requested:  # also: a stop during backoff wins
                        raise _Stop
                    await self._start(cause, restarting, done)
                    self.state = RUNNING
                    telemetry = self.system.telemetry
                    if telemetry is None:
                        await self._loop()
                    else:  # chosen per incarnation: _loop stays untouched
                        await telemetry.run_loop(self)
                except _Restart as restart:
                    cause, restarting, done = restart.cause, True, restart.done
                    delay = restart.delay
                    await self._stop_incarnation()
                    continue
                except _Stop:
                    break
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._terminate(cancelled=True)
            raise
        except BaseException as exc:  # a bug in the runtime: never lose it
            logger.exception("actor %s crashed in the runtime", self.path)
            # Shut the system down so the crash surfaces from `async with`
            # instead of leaving askers and joiners waiting forever.
            self.system._record_failure(exc)
            self.system._shutdown_on_crash()
            with anyio.CancelScope(shield=True):
                await self._terminate(cancelled=False)
            return
        with anyio.CancelScope(shield=True):
            await self._terminate(cancelled=False)

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
                "actor %s restarts (incarnation %d) after %r",
                self.path,
                self.incarnation,
                cause,
                extra=_log_extra(self, "restart"),
            )
        try:
            instance = self.factory(*self.args, **self.kwargs)
            if not isinstance(instance, Actor):
                raise TypeError(
                    f"the factory of {self.path} returned {instance!r}, not an Actor"
                )
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
            await self._failed(exc, None)
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
        while True:
            if self.carry:
                batch, self.carry = self.carry, []
            else:
                try:
                    batch = await mailbox.receive_batch(drain)
                except EndOfMailbox:
                    raise _Stop from None
            index = 0
            item: Any = None
            try:
                for item in batch:
                    if control or self.stop_requested:
                        self.carry = batch[index:]
                        pending, item = item, None  # not being handled yet
                        await self._handle_control()
                        self.carry = []
                        item = pending
                    index += 1
                    if type(item) is Ask:
                        self.current = item
                        result = receive(item.message)
                        if is_async:
                            result = await result
                        self.current = None
                        if not item.reply(result, backend):
                            system.dead_letter(self, item.message, "ask abandoned")
                    elif isinstance(item, Signal):
                        await self._signal(item, receive, is_async)
                    elif is_async:
                        await receive(item)
                    else:
                        receive(item)
            except (_Restart, _Stop):
                raise
            except Exception as exc:
                self.current = None
                self.carry = batch[index:]
                await self._failed(exc, item)
                # Resumed: go on with the rest of the batch.
            except BaseException:
                # Cancelled (the system is being torn down): keep what this
                # batch has not finished, the item being handled included, so
                # that _terminate counts them as dead letters. ``item`` is None
                # while control commands run, before the pending item began.
                self.carry = batch[index - 1 if item is not None else index :]
                raise

    async def _signal(self, item: Signal, receive: Any, is_async: bool) -> None:
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
            elif is_async:
                await receive(item)
            else:
                receive(item)
            return
        deliver = getattr(item, "deliver", None)
        if deliver is not None:  # timer firings and other runtime signals
            await deliver(self, receive, is_async)
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
            await self._stop_incarnation()
            cmd[1].set()
            await self._wait_for_start()
        elif kind == "exit":  # a permanent child stopped itself: supervised
            await self._failed(None, None)
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
        settle the item, report to the parent, and obey its directive."""
        system = self.system
        if exc is not None:
            logger.warning(
                "actor %s failed: %r",
                self.path,
                exc,
                exc_info=(type(exc), exc, exc.__traceback__),
                extra=_log_extra(self, "failure"),
            )
            system._count_failure(self, exc)
            if type(item) is Ask:
                # The asker re-raises this same object: its traceback holds the
                # actor-side frames, and the note names where it came from.
                exc.add_note(f"raised by actor {self.path} while handling an ask")
                item.fail(exc, system.backend)
                system.dead_letter(self, item.message, "handler failed")
            elif item is not None and not isinstance(item, Signal):
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
                    "actor %s: on_stop failed: %r",
                    self.path,
                    exc,
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
                cancelled = True
        else:
            for child in list(self.children.values()):
                child.request_stop(StopReason.SYSTEM)
            if self.timers is not None:
                self.timers.cancel_all()
        self.instance = None
        system = self.system
        backend = system.backend
        leftovers = [self.current, *self.carry, *self.mailbox.drain()]
        if system.telemetry is not None:  # take off the trace envelopes
            leftovers = system.telemetry.unwrap(leftovers)
        self.current = None
        self.carry = []
        stopped = ActorStopped(f"{self.path} stopped before replying")
        for item in leftovers:
            if item is None or isinstance(item, Signal):
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
