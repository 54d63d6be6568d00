"""``system.from_thread``: blocking tell, send, ask and spawn for other threads.

Code in a thread that is not the system's event loop thread (a web framework's
worker threads, a GUI, a blocking library's callbacks) cannot touch a mailbox:
mailboxes are not thread-safe. Each call here hands a small request to the
event loop through the loop's own thread-safe entry (asyncio's
``loop.call_soon_threadsafe``, Trio's ``TrioToken.run_sync_soon``, reached
through the token ``anyio.lowlevel.current_token()`` captured when the system
was entered), then blocks on a lock until the loop has settled it.

No call can hang on a dead system: a call first registers itself, and when the
system exits every registered call still waiting fails with
[``SystemNotRunning``][actors.SystemNotRunning]; later calls raise it at once.

Its size: one class, ``FromThread``, whose public methods are documented
in full (most of the lines).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple, overload

import anyio

from ._envelope import error_replied
from ._errors import ActorStopped, AskTimeout, SystemNotRunning
from ._pool import PoolRef
from ._ref import ActorRef, ReplyTypeMismatch
from ._request import Request
from ._spawn_options import SpawnOptions
from ._validation import check_timeout

if TYPE_CHECKING:
    from ._actor import Actor
    from ._runtime import Runtime
    from ._strategies import RestartType

__all__ = ["FromThread"]

M = TypeVar("M")
Ts = TypeVarTuple("Ts")
R = TypeVar("R")
T = TypeVar("T")

#: Serialises the creation of a system's one FromThread across threads.
_create_lock = threading.Lock()


class _Call:
    """One blocking call: settled once (by the loop, by the system's exit, or
    by its own thread when an ask times out), waited for by its thread."""

    __slots__ = ("done", "failed", "outcome", "settled", "started")

    def __init__(self) -> None:
        # A lock held from birth is the cheapest one-shot event in CPython.
        self.done = threading.Lock()
        self.done.acquire()
        self.settled = False
        self.failed = False
        self.outcome: Any = None
        self.started = time.monotonic()


class FromThread:
    """Blocking entry points for code running in other threads:
    ``system.from_thread``.

    Every method blocks the calling thread until the system's event loop has
    carried the request out, and raises what the async counterpart raises. It
    works with any backend (asyncio, uvloop, Trio) and from any number of
    threads; the calls of one thread take effect in the order they were made.

    Each call is one hop to the event loop and back (plus, for ``ask`` and
    ``send``, a short-lived task in the system's task group). A thread blocked
    here cannot be cancelled; ``ask`` and ``send`` take a timeout in seconds.

    Every method raises [``SystemNotRunning``][actors.SystemNotRunning] (an
    [``ActorStopped``][actors.ActorStopped]) when the system was never entered, has
    exited, or exits while the call waits: no call hangs on a dead system.
    Never call these from the event loop's own thread: the loop would wait for
    itself, so that raises ``RuntimeError`` at once; in async code use the
    [``ActorRef``][actors.ActorRef] methods directly.

    Example::

        def handle_request(body: bytes) -> bytes:  # in a web server's thread
            return system.from_thread.ask(parser, Parse(body), timeout=2.0)
    """

    __slots__ = ("_closed", "_lock", "_pending", "_runtime")

    _runtime: Runtime
    _lock: threading.Lock
    _pending: set[_Call]
    _closed: bool

    def __new__(cls, runtime: Runtime) -> FromThread:
        # One per system even when threads race to make it: the system's exit
        # closes only the one it holds, and every call must be closed.
        with _create_lock:
            existing = runtime.from_thread
            if existing is not None:
                return existing
            made = super().__new__(cls)
            made._runtime = runtime
            made._lock = threading.Lock()
            made._pending = set()
            made._closed = False
            runtime.from_thread = made
            return made

    def __repr__(self) -> str:
        return f"<FromThread of {self._runtime.system!r}>"

    # -- the API ---------------------------------------------------------------

    def tell(self, ref: ActorRef[Any], message: object) -> None:
        """Enqueue a message, as ``ref.tell(message)`` does in async code.

        Blocks only until the event loop has taken the message (it never waits
        for mailbox room), so errors reach the caller and the tells of one
        thread arrive in the order they were made. To an actor that has
        stopped it is a dead letter, as ``ref.tell``.

        Raises:
            MailboxFull: the actor's mailbox is at its capacity.
            SystemNotRunning: the system is not running (see the class).
            TypeError: ``ref`` is not an ActorRef or a PoolRef.
            RuntimeError: called from the event loop's thread.
        """
        self._call_sync(_check_ref(ref).tell, message)

    def send(self, ref: ActorRef[Any], message: object, timeout: float = 5.0) -> None:
        """Enqueue a message, waiting while the mailbox is full (backpressure),
        as ``await ref.send(message)`` does.

        Args:
            timeout: seconds to wait for mailbox room (> 0), counted from when
                the event loop takes the request.

        Raises:
            TimeoutError: still no room after ``timeout`` seconds; nothing was
                enqueued.
            ActorStopped: the actor has stopped, or stopped while we waited.
            SystemNotRunning: the system is not running (see the class).
            ValueError, TypeError: ``timeout`` is not a positive number.
            RuntimeError: called from the event loop's thread.
        """
        check_timeout(timeout)
        self._call_async(_send, _check_ref(ref), message, timeout)

    @overload
    def ask(
        self, ref: ActorRef[Any], message: Request[R], timeout: float = 5.0
    ) -> R: ...

    @overload  # a Request asked where another reply type is expected
    def ask(
        self, ref: ActorRef[Any], message: Request[Any], timeout: float = 5.0
    ) -> ReplyTypeMismatch: ...

    @overload
    def ask(self, ref: ActorRef[Any], message: object, timeout: float = 5.0) -> Any: ...

    def ask(self, ref: ActorRef[Any], message: Any, timeout: float = 5.0) -> Any:
        """Send a message and block until the reply (``receive``'s return value),
        as ``await ref.ask(message, timeout)`` does.

        Args:
            ref: the actor to ask.
            message: the request; a [``Request``][actors.Request] subclass types the
                reply.
            timeout: seconds (> 0) this call may block in all, counted from the
                call: the trip to the event loop, waiting for mailbox room, and
                waiting for the reply.

        Returns:
            The reply.

        Raises:
            AskTimeout: no reply within ``timeout`` seconds (a TimeoutError).
                The request may still be handled later; its reply then counts
                as a dead letter (reason ``"ask abandoned"``).
            ActorStopped: the actor stopped before replying.
            SystemNotRunning: the system is not running (see the class).
            ValueError, TypeError: ``timeout`` is not a positive number.
            RuntimeError: called from the event loop's thread.
            Exception: whatever the handler raised.
        """
        check_timeout(timeout)
        return self._call_async(
            _ask, _check_ref(ref), message, timeout, timeout=timeout
        )

    def spawn(
        self,
        factory: Callable[[*Ts], Actor[M]],
        *args: *Ts,
        name: str | None = None,
        capacity: int | None = None,
        drain: int | None = None,
        restart: RestartType = "transient",
    ) -> ActorRef[M]:
        """Spawn a top-level actor, as
        [``ActorSystem.spawn``][actors.ActorSystem.spawn] does, and return its
        ref (use it with this object's methods).

        Raises:
            TypeError, ValueError: as
                [``ActorSystem.spawn``][actors.ActorSystem.spawn] (the options
                are checked in the calling thread).
            SystemNotRunning: the system is not running (see the class).
            RuntimeError: called from the event loop's thread.
            Exception: whatever the factory raised (it is called in the
                event loop, before this returns).
        """
        options = SpawnOptions.of(name, capacity, drain, restart)
        runtime = self._runtime

        def spawn() -> ActorRef[M]:
            guardian = runtime.guardian
            if guardian is None:
                raise SystemNotRunning("the actor system is not running")
            ref: ActorRef[M] = runtime.spawn(guardian, factory, args, {}, options)
            return ref

        return self._call_sync(spawn)

    def stop(self, ref: ActorRef[Any]) -> None:
        """Ask an actor to stop after the message it is handling, as
        ``ref.stop()`` does; returns without waiting for it to finish.

        Raises:
            SystemNotRunning: the system is not running (see the class).
            TypeError: ``ref`` is not an ActorRef or a PoolRef.
            RuntimeError: called from the event loop's thread.
        """
        self._call_sync(_check_ref(ref).stop)

    # -- machinery ---------------------------------------------------------------

    def _call_sync(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` in the event loop and return its result here."""
        call = self._register()
        self._schedule(call, self._run_sync, call, fn, args)
        call.done.acquire()
        result: T = self._outcome(call)
        return result

    def _call_async(
        self,
        fn: Callable[..., Awaitable[T]],
        *args: Any,
        timeout: float | None = None,
    ) -> T:
        """Run ``await fn(call, *args)`` in a task of the system's task group
        and return its result here; ``timeout``: give up after that long."""
        call = self._register()
        self._schedule(call, self._start_task, call, fn, args)
        if timeout is None:
            call.done.acquire()
        elif not call.done.acquire(timeout=timeout):
            # The loop did not answer in time (it may be blocked): give up,
            # unless it settled the call meanwhile.
            if self._settle(call, None, failed=False, abandon=True):
                ref = args[0]
                raise AskTimeout(f"{ref.path} did not reply within {timeout} s")
            call.done.acquire()
        result: T = self._outcome(call)
        return result

    def _register(self) -> _Call:
        runtime = self._runtime
        token = runtime.loop_token
        if token is None:
            raise SystemNotRunning("the actor system is not running (use async with)")
        if in_loop_thread(token):
            raise RuntimeError(
                "system.from_thread is for other threads: called from the event "
                "loop's own thread it would wait for itself (in async code use "
                "the ActorRef methods, e.g. await ref.ask(...))"
            )
        call = _Call()
        with self._lock:
            if self._closed or not runtime.running:
                raise SystemNotRunning("the actor system has exited")
            self._pending.add(call)
        return call

    def _schedule(self, call: _Call, callback: Callable[..., None], *args: Any) -> None:
        token = self._runtime.loop_token
        assert token is not None
        if not call_soon_in_loop(token, callback, *args):
            self._settle(call, _exited(), failed=True)

    def _outcome(self, call: _Call) -> Any:
        if call.failed:
            raise call.outcome
        return call.outcome

    def _settle(
        self, call: _Call, outcome: object, *, failed: bool, abandon: bool = False
    ) -> bool:
        """Settle a call once; False if it was already settled."""
        with self._lock:
            if call.settled:
                return False
            call.settled = True
            self._pending.discard(call)
        if not abandon:  # an abandoning thread is not waiting any more
            call.outcome = outcome
            call.failed = failed
            call.done.release()
        return True

    # In the event loop's thread: callbacks never raise (on Trio that would
    # crash the run), they settle the call instead.

    def _run_sync(self, call: _Call, fn: Callable[..., object], args: Any) -> None:
        if call.settled:
            return
        try:
            value = fn(*args)
        except BaseException as exc:  # a factory's KeyboardInterrupt too
            self._settle(call, exc, failed=True)
        else:
            self._settle(call, value, failed=False)

    def _start_task(
        self, call: _Call, fn: Callable[..., Awaitable[object]], args: Any
    ) -> None:
        if call.settled:
            return
        tg = self._runtime.tg
        try:
            assert tg is not None
            tg.start_soon(self._run_task, call, fn, args, name="actors.from_thread")
        except Exception:  # the task group has closed
            self._settle(call, _exited(), failed=True)

    async def _run_task(
        self, call: _Call, fn: Callable[..., Awaitable[object]], args: Any
    ) -> None:
        if call.settled:
            return
        try:
            value = await fn(call, *args)
        except Exception as exc:
            # A failure nobody takes is a dead letter already (the handler's
            # exception, a stopped actor) or nothing at all (a timeout); an
            # ErrorReply is an answer: one the thread gave up on is a dead
            # letter, as a reply is.
            if (
                not self._settle(call, exc, failed=True)
                and fn is _ask
                and error_replied.get() is not None
            ):
                ref, message = args[0], args[1]
                cell = ref._cell
                cell.runtime.dead_letter(cell, message, "ask abandoned")
        else:
            if not self._settle(call, value, failed=False) and fn is _ask:
                # The thread gave up (its timeout) before the reply came back:
                # the reply is a dead letter, as AskTimeout promises.
                ref, message = args[0], args[1]
                cell = ref._cell
                cell.runtime.dead_letter(cell, message, "ask abandoned")
        finally:  # cancelled: the system is being torn down
            if not call.settled:
                self._settle(call, _exited(), failed=True)

    def _close(self) -> None:
        """The system is exiting (called in its event loop's thread): fail
        every call still waiting, and every later one."""
        with self._lock:
            self._closed = True
            pending = list(self._pending)
        for call in pending:
            self._settle(call, _exited(), failed=True)


async def _ask(call: _Call, ref: ActorRef[Any], message: object, timeout: float) -> Any:
    # The thread's timeout counts from its call: take off the trip here.
    remaining = timeout - (time.monotonic() - call.started)
    error_replied.set(None)  # set by the ask if it raises an ErrorReply's error
    try:
        if remaining <= 0:
            raise AskTimeout
        return await ref.ask(message, remaining)
    except AskTimeout:
        raise AskTimeout(f"{ref.path} did not reply within {timeout} s") from None
    except ActorStopped as exc:
        if isinstance(exc, SystemNotRunning) or not _exiting(ref):
            raise
        # Stopped by the system's exit: what the class promises is this.
        raise _exited() from exc


async def _send(
    call: _Call, ref: ActorRef[Any], message: object, timeout: float
) -> None:
    with anyio.move_on_after(timeout):
        try:
            await ref.send(message)
        except ActorStopped as exc:
            if isinstance(exc, SystemNotRunning) or not _exiting(ref):
                raise
            raise _exited() from exc
        return
    raise TimeoutError(f"{ref.path}: no mailbox room within {timeout} s")


def _exiting(ref: Any) -> bool:
    """Whether ``ref``'s system is leaving its ``async with``."""
    return bool(ref._cell.runtime.exiting)


def _check_ref(ref: Any) -> Any:
    """The ``ref`` argument of a call: an actor's or a pool's ref.

    Raises:
        TypeError: it is neither.
    """
    if not isinstance(ref, ActorRef | PoolRef):
        raise TypeError(f"ref must be an ActorRef or a PoolRef, not {ref!r}")
    return ref


def _exited() -> SystemNotRunning:
    return SystemNotRunning("the actor system exited before the call completed")


def call_soon_in_loop(
    token: anyio.lowlevel.EventLoopToken, callback: Callable[..., None], *args: Any
) -> bool:
    """Have the event loop of ``token`` call ``callback(*args)`` soon, from
    any thread; False if that loop has finished (nothing was scheduled)."""
    try:
        # anyio's thread-safe "call soon" of the token's loop (asyncio's
        # call_soon_threadsafe, Trio's TrioToken.run_sync_soon), which
        # also marks the callback's context with the async library.
        token.backend_class.run_sync_soon(callback, args, token.native_token)
    except RuntimeError:  # the loop has finished (anyio.RunFinishedError)
        return False
    return True


def in_loop_thread(token: anyio.lowlevel.EventLoopToken) -> bool:
    """Whether the calling thread runs the event loop of ``token``."""
    try:
        current = anyio.lowlevel.current_token()
    except Exception:  # no event loop in this thread (the usual case)
        return False
    return current.native_token is token.native_token
