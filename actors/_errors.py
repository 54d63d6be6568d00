"""The runtime's errors. Users catch them by name; each says when it is raised."""

from __future__ import annotations

from .mailbox import MailboxClosed, MailboxFull

__all__ = [
    "ActorStopped",
    "AskSelfError",
    "AskTimeout",
    "MailboxClosed",
    "MailboxFull",
    "SystemNotRunning",
]


class ActorStopped(Exception):
    """The actor is not running, so the request cannot be served.

    Raised by ``tell``, ``send`` and ``ask`` on a stopped actor, and to every
    ``ask`` still queued or in flight when its actor stops (no ask hangs).
    """


class SystemNotRunning(ActorStopped):
    """The actor's system has exited (or was never entered): raised by every
    call that needs a running system, including calls from other threads."""


class AskTimeout(TimeoutError):
    """No reply arrived within the ``ask``'s timeout (seconds). The request may
    still be handled later; its reply then counts as a dead letter."""


class AskSelfError(RuntimeError):
    """An actor asked itself from its own handler, which could never be answered
    (the actor handles one message at a time). The actor keeps running."""
