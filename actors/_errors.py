"""The runtime's errors. Users catch them by name; each says when it is raised."""

from __future__ import annotations

from .mailbox import MailboxClosed, MailboxFull

__all__ = [
    "ActorNotFound",
    "ActorStopped",
    "AskSelfError",
    "AskTimeout",
    "ClusterNotStarted",
    "MailboxClosed",
    "MailboxFull",
    "StashOverflow",
    "StrayCancellation",
    "SystemNotRunning",
    "UnhandledMessage",
    "describe",
]


class ActorStopped(Exception):
    """The actor is not running, so the request cannot be served.

    Raised by ``send`` and ``ask`` on a stopped actor (a remote one too:
    the node it ran on answers so), and to every ``ask`` still queued or in
    flight when its actor stops (no ask hangs). A ``tell``
    to a stopped actor is a dead letter instead (Erlang's ``!``, Akka's
    ``tell``).
    """


class SystemNotRunning(ActorStopped):
    """The actor's system has exited (or was never entered): raised by every
    call that needs a running system, including calls from other threads."""


class ActorNotFound(LookupError):
    """No live actor at that path (or under that registered name): raised by
    ``system.lookup(path)`` and by ``system.remote.lookup(node, path)`` when
    the node answers that no such actor lives there (an ``ask`` of a remote
    ref whose actor is no longer there raises ``ActorStopped``, as a local
    ``ask`` of a stopped actor does). One class for local
    and remote lookups, so ``except actors.ActorNotFound`` catches both
    (``actors.remote.ActorNotFound`` is the same class)."""


class ClusterNotStarted(RuntimeError):
    """``system.cluster`` was read on a system that runs no cluster
    membership: it starts when an ``actors.sharding.Sharding`` on the system
    is entered, and ends when that ``Sharding`` leaves."""


class AskTimeout(TimeoutError):
    """No reply arrived within the ``ask``'s timeout (seconds). The request may
    still be handled later; its reply then counts as a dead letter."""


class AskSelfError(RuntimeError):
    """An actor asked itself from its own handler, which could never be answered
    (the actor handles one message at a time). The actor keeps running."""


class UnhandledMessage(Exception):
    """Raised to an asker whose message the actor did not handle: it has no
    ``receive`` of its own, or its ``receive`` passed the message on to
    ``Actor.receive`` (``return super().receive(message)``). The message is
    also counted as a dead letter ("unhandled"); the actor does not fail."""


class StrayCancellation(RuntimeError):
    """A handler or hook raised a cancellation exception while its actor was not
    being cancelled: it awaited something another task had cancelled (a
    cancelled future, a task it did not own), so the cancellation was not meant
    for the actor. The runtime treats it as that handler's failure, supervised
    like any other exception; the stray exception is its ``__cause__``.
    """


class StashOverflow(RuntimeError):
    """Raised by ``self.stash()`` when the actor's stash already holds
    ``stash_capacity`` messages (a class attribute, 1000 by default). It is
    raised in the handler, so it is that handler's failure, supervised like
    any other; the message it tried to stash is not stashed."""


def describe(exc: BaseException) -> str:
    """``repr(exc)`` for log records and error texts, never raising: a user's
    exception is user data, and its ``__repr__`` may fail."""
    try:
        return repr(exc)
    except Exception:
        return f"<{type(exc).__qualname__} (its repr() failed)>"
