"""``DeadLetterLog``: every dead letter of a test, with its reason."""

from __future__ import annotations

import reprlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .._dead_letters import DeadLetter, DeadLetterSubscription

if TYPE_CHECKING:
    from .._system import ActorSystem

__all__ = ["DeadLetterLog"]

_repr = reprlib.Repr()
_repr.maxstring = 120
_repr.maxother = 120


class DeadLetterLog:
    """Records the dead letters of the systems it is attached to, in order
    (the ``dead_letters`` fixture: attached to ``actor_system``).

    ``letters`` holds each [``DeadLetter``][actors.DeadLetter] (``recipient``,
    ``message``, ``reason``). It is a sequence: ``len(log)``, ``log[0]``,
    iteration.
    """

    __test__ = False

    def __init__(self) -> None:
        #: Every dead letter recorded, oldest first.
        self.letters: list[DeadLetter] = []
        self._subscriptions: list[DeadLetterSubscription] = []

    def attach(self, system: ActorSystem) -> None:
        """Record the dead letters of ``system`` from now on."""
        self._subscriptions.append(system.dead_letters.subscribe(self.letters.append))

    def close(self) -> None:
        """Record no more (the fixture does it after the test)."""
        for subscription in self._subscriptions:
            subscription.unsubscribe()
        self._subscriptions.clear()

    def with_reason(self, reason: str) -> list[DeadLetter]:
        """The letters counted for ``reason`` (``"actor stopped"``,
        ``"unhandled"``, ``"handler failed"``, ``"ask abandoned"``, ...)."""
        return [letter for letter in self.letters if letter.reason == reason]

    def messages(self) -> list[object]:
        """The messages of the letters, oldest first."""
        return [letter.message for letter in self.letters]

    def clear(self) -> None:
        """Forget the letters recorded so far."""
        self.letters.clear()

    def assert_none(self) -> None:
        """Check that no dead letter was recorded.

        Raises:
            AssertionError: some were; each is listed with its recipient and
                reason.
        """
        __tracebackhide__ = True  # pytest: a failure starts at the test's line
        if self.letters:
            lines = [f"{len(self.letters)} dead letter(s):"]
            lines += [
                f"    {_repr.repr(letter.message)} to {letter.recipient.path}: "
                f"{letter.reason}"
                for letter in self.letters
            ]
            raise AssertionError("\n".join(lines))

    def __len__(self) -> int:
        return len(self.letters)

    def __iter__(self) -> Iterator[DeadLetter]:
        return iter(self.letters)

    def __getitem__(self, index: int) -> DeadLetter:
        return self.letters[index]

    def __repr__(self) -> str:
        return f"<DeadLetterLog: {len(self.letters)} letters>"
