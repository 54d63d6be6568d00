"""What a ``TestProbe``'s test expects: the expectations that take its
messages (``expect_message``, ``expect_no_message``, ``expect_terminated``,
``fish_for_message``, ``receive_messages``), ``within`` blocks and
``await_assert`` (Akka's TestKit expectations).

A base class of [``TestProbe``][actors.testing.TestProbe] (see ``_probe``,
which holds the probe's actor, its arrivals, answering and watching): an
expectation takes from the front of the probe's queue, in arrival order, and
a failure lists what was received around the message it failed on.
"""

from __future__ import annotations

import inspect
import reprlib
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio

from .._context import check_ref
from .._system_signals import Terminated
from .._validation import check_duration
from ..mailbox import Mailbox
from ._blocked import wait_all_blocked
from ._timefactor import DEFAULT_TIMEOUT, NO_MESSAGE_TIMEOUT, dilated

if TYPE_CHECKING:
    from .._cell import Cell
    from .._envelope import Ask
    from .._ref import ActorRef

__all__ = ["SHOWN", "Expectations", "Received", "await_assert"]

T = TypeVar("T")

#: How many received messages a failed expectation lists, at most, on each
#: side of the one it failed on.
SHOWN = 20

_repr = reprlib.Repr()
_repr.maxstring = 120
_repr.maxother = 120
_repr.maxlevel = 3


def _show(value: object) -> str:
    try:
        return _repr.repr(value)
    except Exception:  # a broken __repr__ must not hide the failure
        return f"<{type(value).__qualname__} object (repr failed)>"


def _describe(expected: object) -> tuple[Callable[[Any], bool], str]:
    """A match function for an expectation, and its description."""
    if isinstance(expected, type):
        return (lambda m: isinstance(m, expected)), (
            f"a message of type {expected.__qualname__}"
        )
    if callable(expected):
        name = getattr(expected, "__qualname__", None) or _show(expected)
        return expected, f"a message for which {name} is true"
    return (lambda m: m == expected), f"a message equal to {_show(expected)}"


class Received:
    """One message the probe received (``ask``: its reply slot, if asked)."""

    __slots__ = ("ask", "message")

    def __init__(self, message: object, ask: Ask | None) -> None:
        self.message = message
        self.ask = ask


class _Within:
    """``probe.within(...)``: a block with a time budget (``with`` or
    ``async with``)."""

    def __init__(self, probe: Expectations[Any], low: float, high: float) -> None:
        self._probe = probe
        self._low = low
        self._high = high
        self._start = 0.0

    def __enter__(self) -> _Within:
        self._start = anyio.current_time()
        self._probe._deadlines.append(self._start + self._high)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        self._probe._deadlines.pop()
        if exc_type is not None:
            return
        took = anyio.current_time() - self._start
        if took < self._low:
            raise AssertionError(
                f"the block took {took:.3f} s, less than its minimum of {self._low} s"
            )
        if took > self._high:
            raise AssertionError(
                f"the block took {took:.3f} s, more than its maximum of {self._high} s"
            )

    async def __aenter__(self) -> _Within:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        self.__exit__(exc_type, exc, tb)

    @property
    def remaining(self) -> float:
        """Seconds left before the block's maximum."""
        return max(0.0, self._start + self._high - anyio.current_time())


class Expectations(Generic[T]):
    """The expectations of a [``TestProbe``][actors.testing.TestProbe] (see
    the module doc)."""

    # The probe's state, set by TestProbe.__init__.
    ref: ActorRef[T]
    _cell: Cell
    _queue: deque[Received]
    _taken: deque[Received]
    _taken_count: int
    _changed: anyio.Event | None
    _last_ask: Ask | None
    _deadlines: list[float]
    _default_timeout: float
    _mailbox: Mailbox[Any]

    @property
    def path(self) -> str:
        """The probe's path, e.g. ``"/user/probe-1"``."""
        return self.ref.path

    # -- taking messages -----------------------------------------------------

    def _deadline(self, timeout: float | None) -> tuple[float, float]:
        """(deadline, timeout) on the event loop's clock.

        Raises:
            TypeError, ValueError: ``timeout`` is not a number of seconds
                >= 0 and finite (the runtime's ``check_duration``; 0: only
                what is queued already).
        """
        now = anyio.current_time()
        if timeout is not None:
            check_duration("timeout", timeout, zero=True)
            return now + timeout, timeout
        if self._deadlines:
            deadline = self._deadlines[-1]
            return deadline, max(0.0, deadline - now)
        timeout = dilated(self._default_timeout)
        return now + timeout, timeout

    async def _next(self, deadline: float) -> Received | None:
        """The next message, or None if none came before ``deadline``."""
        queue = self._queue
        while not queue:
            remaining = deadline - anyio.current_time()
            if remaining <= 0 or self._mailbox.closed:  # stopped: none will come
                return None
            changed = self._changed
            if changed is None:
                changed = self._changed = anyio.Event()
            with anyio.move_on_after(remaining):
                await changed.wait()
        item = queue.popleft()
        self._taken.append(item)
        self._taken_count += 1
        if item.ask is not None:
            self._last_ask = item.ask
        return item

    def _failure(
        self,
        what: str,
        failed_on: Received | None = None,
        extra: str = "",
    ) -> AssertionError:
        """An AssertionError saying what was expected and listing what came."""
        lines = [f"{self.path}: {what}"]
        if self._mailbox.closed:
            lines.append("The probe has stopped: it receives nothing any more.")
        if extra:
            lines.append(extra)
        taken = list(self._taken)
        queued = list(self._queue)
        if not taken and not queued:
            lines.append("The probe has received no message.")
            return AssertionError("\n".join(lines))
        lines.append("Messages the probe received, oldest first:")
        earlier = self._taken_count - len(taken)
        if earlier > 0:
            lines.append(f"    ... {earlier} earlier")
        for item in taken:
            asked = " (asked)" if item.ask is not None else ""
            if item is failed_on:
                lines.append(f"  > {_show(item.message)}{asked}   <- this one")
            else:
                lines.append(
                    f"    {_show(item.message)}{asked}   (taken by an earlier "
                    f"expectation)"
                )
        for item in queued[:SHOWN]:
            asked = " (asked)" if item.ask is not None else ""
            lines.append(f"    {_show(item.message)}{asked}   (not taken yet)")
        if len(queued) > SHOWN:
            lines.append(f"    ... {len(queued) - SHOWN} more not taken yet")
        return AssertionError("\n".join(lines))

    async def expect_message(
        self, expected: Any = None, *, timeout: float | None = None
    ) -> T:
        """Take the next message and check it.

        Args:
            expected: what it must be: a type (an instance of it), a callable
                (a predicate: it must return true; an ``AssertionError`` it
                raises counts as false and is shown), or a value (equal to it);
                None (the default): any message. To expect ``None`` itself or a
                callable value, pass a predicate (``lambda m: m is None``).
            timeout: seconds to wait for it (default: see the class).

        Returns:
            The message.

        Raises:
            AssertionError: no message came in time, or the next one does not
                match (it is taken all the same).
            TypeError, ValueError: ``timeout`` is not a number of seconds
                >= 0 and finite.
        """
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        deadline, timeout = self._deadline(timeout)
        if expected is None:
            match: Callable[[Any], bool] = lambda _: True  # noqa: E731
            wanted = "a message"
        else:
            match, wanted = _describe(expected)
        item = await self._next(deadline)
        if item is None:
            raise self._failure(f"expected {wanted}, but none came within {timeout} s")
        problem = ""
        try:
            ok = bool(match(item.message))
        except AssertionError as exc:
            ok, problem = False, f"The predicate raised: {exc!r}"
        if not ok:
            raise self._failure(
                f"expected {wanted}, but got {_show(item.message)}", item, problem
            )
        return item.message  # type: ignore[return-value]

    async def expect_no_message(self, within: float | None = None) -> None:
        """Check that no message arrives for ``within`` seconds.

        Args:
            within: seconds to watch (default 0.1 s times the time factor). 0:
                no waiting on the clock: once every other task is blocked
                ([``wait_all_blocked``][actors.testing.wait_all_blocked]),
                nothing may be queued.

        Raises:
            AssertionError: a message came (it is taken).
            TypeError, ValueError: ``within`` is not a number of seconds
                >= 0 and finite.
        """
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        if within is None:
            within = dilated(NO_MESSAGE_TIMEOUT)
        check_duration("within", within, zero=True)
        if within == 0:
            await wait_all_blocked()
            deadline = anyio.current_time()
        else:
            deadline = anyio.current_time() + within
        item = await self._next(deadline)
        if item is not None:
            raise self._failure(
                f"expected no message within {within} s, but got {_show(item.message)}",
                item,
            )

    async def expect_terminated(
        self, ref: ActorRef[Any], *, timeout: float | None = None
    ) -> Terminated:
        """Take the next message: it must be ``ref``'s
        [``Terminated``][actors.Terminated] (the probe watches it:
        [``watch``][actors.testing.TestProbe.watch]).

        Returns:
            The ``Terminated`` (its ``reason`` says how ``ref`` ended).

        Raises:
            AssertionError: nothing came in time, or something else came.
            RuntimeError: the probe does not watch ``ref`` and has no
                ``Terminated`` of it queued: no timeout would help (at once).
            TypeError: ``ref`` is not an ActorRef.
        """
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        check_ref(ref, "expect_terminated")
        if not self._watches(ref) and not any(
            isinstance(item.message, Terminated) and item.message.ref == ref
            for item in self._queue
        ):
            raise RuntimeError(
                f"{self.path} does not watch {ref.path}: its Terminated would "
                f"never come; call probe.watch(ref) first"
            )
        message = await self.expect_message(_TerminatedOf(ref), timeout=timeout)
        assert isinstance(message, Terminated)
        return message

    async def fish_for_message(
        self, fn: Callable[[T], bool], *, timeout: float | None = None
    ) -> T:
        """Take messages until ``fn(message)`` is true; skip the others.

        Returns:
            The message ``fn`` accepted.

        Raises:
            AssertionError: none was accepted within the timeout (all the
                messages skipped are listed).
        """
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        deadline, timeout = self._deadline(timeout)
        name = getattr(fn, "__qualname__", None) or _show(fn)
        skipped = 0
        while True:
            item = await self._next(deadline)
            if item is None:
                raise self._failure(
                    f"fished for a message for which {name} is true, but none "
                    f"came within {timeout} s ({skipped} skipped)"
                )
            if fn(item.message):  # type: ignore[arg-type]
                return item.message  # type: ignore[return-value]
            skipped += 1

    async def receive_messages(
        self, n: int, *, timeout: float | None = None
    ) -> list[T]:
        """Take the next ``n`` messages, whatever they are.

        Args:
            n: how many (>= 0).
            timeout: seconds for all of them (default: see the class).

        Raises:
            AssertionError: fewer than ``n`` came in time.
            ValueError: ``n`` is negative.
        """
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"n must be an int, not {n!r}")
        if n < 0:
            raise ValueError(f"n must be >= 0, not {n}")
        deadline, timeout = self._deadline(timeout)
        out: list[T] = []
        for _ in range(n):
            item = await self._next(deadline)
            if item is None:
                raise self._failure(
                    f"expected {n} messages, but only {len(out)} came within "
                    f"{timeout} s"
                )
            out.append(item.message)  # type: ignore[arg-type]
        return out

    def _watches(self, ref: ActorRef[Any]) -> bool:
        """Whether the probe watches ``ref`` (its Terminated not taken by
        the probe's actor yet)."""
        extras = self._cell.extras
        if extras is None:
            return False
        target = ref._cell
        return (ref if target is None else target) in extras.watching

    def within(self, low: float, high: float | None = None) -> _Within:
        """A block that must take at most ``high`` seconds (and at least
        ``low``): ``async with probe.within(1.0):`` or ``within(0.5, 1.0)``.
        Expectations inside without a timeout get the block's remaining time.

        Args:
            low: the minimum in seconds; with one argument, the maximum (and
                the minimum is 0).
            high: the maximum in seconds.

        Raises:
            AssertionError: (on leaving) the block took too short or too long.
            TypeError: a bound is not a number of seconds.
            ValueError: a bound is negative, NaN or infinite, or the minimum
                is over the maximum.
        """
        if high is None:
            low, high = 0.0, low
        check_duration("min", low, zero=True)
        check_duration("max", high, zero=True)
        if not low <= high:
            raise ValueError(
                f"within() needs 0 <= min <= max seconds, got {low!r}, {high!r}"
            )
        return _Within(self, low, high)

    async def await_assert(
        self,
        fn: Callable[[], object],
        *,
        timeout: float | None = None,
        interval: float = 0.01,
    ) -> None:
        """[``await_assert``][actors.testing.await_assert] with the probe's
        timeouts (the remaining time of a
        [``within``][actors.testing.TestProbe.within] block, else the
        default)."""
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        _, timeout = self._deadline(timeout)
        await await_assert(fn, timeout=timeout, interval=interval)


class _TerminatedOf:
    """A predicate: the ``Terminated`` of one ref."""

    def __init__(self, ref: ActorRef[Any]) -> None:
        self.ref = ref
        self.__qualname__ = f"Terminated({ref.path})"

    def __call__(self, message: object) -> bool:
        return isinstance(message, Terminated) and message.ref == self.ref


async def await_assert(
    fn: Callable[[], object],
    *,
    timeout: float | None = None,
    interval: float = 0.01,
) -> None:
    """Call ``fn`` until it stops raising ``AssertionError`` (Akka's
    ``awaitAssert``): for conditions no message announces.

    ``fn`` may be sync or async. Between attempts the test waits until every
    other task is blocked, then ``interval`` seconds if that was not enough.

    Args:
        fn: the assertion.
        timeout: seconds to keep trying (default 3 s times the time factor).
        interval: seconds between attempts (> 0).

    Raises:
        AssertionError: ``fn``'s last one, once the timeout has passed (with
            a note saying how long it was tried).
        TypeError, ValueError: ``timeout`` is not a number of seconds >= 0
            and finite, or ``interval`` not one > 0.
    """
    __tracebackhide__ = True  # pytest: a failure starts at the test's line
    check_duration("interval", interval)
    if timeout is None:
        timeout = dilated(DEFAULT_TIMEOUT)
    check_duration("timeout", timeout, zero=True)
    deadline = anyio.current_time() + timeout
    blocked_once = False
    while True:
        try:
            result = fn()
            if inspect.isawaitable(result):
                await result
            return
        except AssertionError as exc:
            if anyio.current_time() >= deadline:
                exc.add_note(f"(await_assert: still failing after {timeout} s)")
                raise
        if not blocked_once:
            blocked_once = True
            await wait_all_blocked()
        else:
            await anyio.sleep(max(0.0, min(interval, deadline - anyio.current_time())))
