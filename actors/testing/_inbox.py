"""``TestInbox``: a ref that collects what is told to it, for the
[``BehaviorTestKit``][actors.testing.BehaviorTestKit] (Akka's TestInbox): the
kit's spawned children are inboxes, and refs a test hands to the actor under
test record its tells there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from .._lifecycle import StopReason
from .._ref import ActorRef

__all__ = ["InboxRef", "TestInbox"]

T = TypeVar("T")


# -- inboxes ----------------------------------------------------------------------


class _InboxCell:
    """What an inbox ref stands on: a name, a path, the inbox (identity makes
    ref equality)."""

    __slots__ = ("inbox", "name", "path")

    def __init__(self, inbox: TestInbox[Any], name: str, path: str) -> None:
        self.inbox = inbox
        self.name = name
        self.path = path


class InboxRef(ActorRef[T]):
    """A ref whose messages land in a [``TestInbox``][actors.testing.TestInbox]."""

    __slots__ = ()

    _cell: Any

    def tell(self, message: T) -> None:
        self._cell.inbox._put(message)

    async def send(self, message: T) -> None:
        self._cell.inbox._put(message)

    async def ask(self, message: Any, timeout: float = 5.0) -> Any:
        return self._cell.inbox._ask(message)

    def stop(self) -> None:
        self._cell.inbox.stopped = True

    async def join(self) -> StopReason | BaseException:
        raise RuntimeError(
            f"{self.path} is a TestInbox ref: nothing terminates in a "
            "BehaviorTestKit (use the async kit: actor_system, TestProbe)"
        )

    @property
    def is_alive(self) -> bool:
        return not self._cell.inbox.stopped

    @property
    def name(self) -> str:
        return str(self._cell.name)

    @property
    def path(self) -> str:
        return str(self._cell.path)

    def __repr__(self) -> str:
        return f"<TestInbox ref {self.path}>"


class TestInbox(Generic[T]):
    """Where tells to its ``ref`` land, for a synchronous test.

    Args:
        name: a name for the ref (its path is ``/inbox/<name>``).
        reply: for asks of the ref: a function of the message that returns
            the reply (without it, an ask raises RuntimeError).
    """

    __test__ = False

    def __init__(
        self,
        name: str = "inbox",
        *,
        reply: Callable[[Any], Any] | None = None,
        path: str | None = None,
    ) -> None:
        #: The messages told, sent or asked to ``ref``, not taken yet.
        self.messages: list[T] = []
        #: Whether ``ref.stop()`` was called.
        self.stopped = False
        self._reply = reply
        #: The ref to hand to the actor under test.
        self.ref: ActorRef[T] = InboxRef(
            _InboxCell(self, name, path or f"/inbox/{name}")  # type: ignore[arg-type]
        )

    def _put(self, message: T) -> None:
        self.messages.append(message)

    def _ask(self, message: T) -> Any:
        self.messages.append(message)
        if self._reply is None:
            raise RuntimeError(
                f"{self.ref.path} was asked {message!r}: give its TestInbox a "
                "reply= function to answer asks"
            )
        return self._reply(message)

    def receive_all(self) -> list[T]:
        """Take every message, oldest first."""
        out, self.messages = self.messages, []
        return out

    def expect_message(self, expected: Any) -> T:
        """Take the oldest message and check it: a type (an instance of it), a
        predicate, or a value (equal).

        Raises:
            AssertionError: no message, or the oldest does not match.
        """
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        if not self.messages:
            raise AssertionError(
                f"{self.ref.path}: expected a message, but none was sent"
            )
        message = self.messages.pop(0)
        if isinstance(expected, type):
            ok, wanted = isinstance(message, expected), expected.__qualname__
        elif callable(expected):
            ok, wanted = bool(expected(message)), "a message the predicate accepts"
        else:
            ok, wanted = message == expected, repr(expected)
        if not ok:
            left = f"; still queued: {self.messages!r}" if self.messages else ""
            raise AssertionError(
                f"{self.ref.path}: expected {wanted}, got {message!r}{left}"
            )
        return message

    def expect_no_message(self) -> None:
        """Raises AssertionError if any message is queued."""
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        if self.messages:
            raise AssertionError(
                f"{self.ref.path}: expected no message, got {self.messages!r}"
            )

    def __len__(self) -> int:
        return len(self.messages)

    def __repr__(self) -> str:
        return f"<TestInbox {self.ref.path}: {len(self.messages)} messages>"
