"""The envelope of an ``ask``: the message and the slot its reply goes into.

Told messages travel bare (no wrapper on the tell path); only asks are wrapped.

Nothing is lost between the actor and the asker. Exactly one side counts a
reply nobody takes as a dead letter with the reason ``"ask abandoned"``:

* the actor, when the asker had already left (timed out, cancelled) before the
  reply came: ``Ask.reply`` returns False;
* the asker, when the reply was handed over (``Ask.reply`` returned True)
  and the asker still leaves without it: on asyncio, a native
  ``Task.cancel()`` that lands between the hand-over and the asker's
  resumption (the cancellation wins, the reply cannot be returned).
  ``abandon`` counts it. (A ``system.from_thread.ask`` whose thread gave
  up before the reply came back to it is counted by ``_threads.py``.)

A failure handed to an asker that leaves is not counted again: the failed
message is already a dead letter (``"handler failed"``, ``"actor stopped"``).
An ``ErrorReply`` is an answer, not a failure (nothing else counts it): it is
counted as a reply is (state ``ERROR_REPLIED``).
"""

from __future__ import annotations

from contextvars import ContextVar
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from .channel.lowlevel import EMPTY, Backend, Slot, ki_protected

if TYPE_CHECKING:
    from ._cell import Cell

__all__ = [
    "ERROR_REPLIED",
    "EXPIRED",
    "FAILED",
    "PENDING",
    "REPLIED",
    "Ask",
    "abandon",
    "error_replied",
    "own_traceback",
]

#: Returned by ``Ask.wait`` when its timeout expired (a reply can be None,
#: and a handler can raise TimeoutError itself, so neither can mean "expired").
EXPIRED: Any = object()

#: An ask's states (``Ask.state``): no outcome yet, replied, failed, answered
#: with an ``ErrorReply`` (raised like a failure, counted like a reply).
PENDING: Final = EMPTY
REPLIED: Final = 1
FAILED: Final = 2
ERROR_REPLIED: Final = 3

#: In an asker's task: the ask whose ``ErrorReply`` it raised last (set only
#: then, by ``outcome_or_raise``). ``system.from_thread.ask`` reads it to tell
#: an answer its thread gave up on (a dead letter it must count) from a
#: handler's failure (a dead letter already).
error_replied: ContextVar[Ask | None] = ContextVar("actors_error_replied", default=None)


class Ask(Slot):
    """One ask in flight: filled once by the actor, awaited once by the asker
    (a ``Slot``: its wake and its late answers are the slot's).

    The envelope is itself what the asker parks on (one object per ask).
    ``recipient`` is the cell it was asked of (a pool's, for a pool): a reply
    that is lost after its hand-over is a dead letter to it.
    """

    # prev, next, deadline: its place among the asks awaiting a timeout
    # (see _deadlines.py); set only there. context, enqueued: the asker's
    # trace context and when it asked, in a traced system (set only there,
    # read only by its instrumented receive).
    # on_done (the slot's): None, or set on an ask nobody parks on (a remote
    # node's, see RemoteHost.ask_nowait): called with the envelope once it
    # is filled. The local path pays one slot store and one load for it.
    __slots__ = (
        "context",
        "deadline",
        "enqueued",
        "message",
        "next",
        "prev",
        "recipient",
        "traceback",
    )

    prev: Ask | None
    next: Ask | None
    deadline: float
    context: Any
    enqueued: float

    def __init__(self, message: object, recipient: Cell) -> None:
        # The slot's fields set here (no super().__init__(): a call saved
        # per ask).
        self.handle = None
        self.message = message
        self.recipient = recipient
        self.state = PENDING
        self.outcome = None  # the reply, or the exception to raise
        self.waiting = False  # the asker is parked on this envelope
        self.abandoned = False  # the asker timed out or was cancelled
        self.on_done = None

    @ki_protected
    def reply(self, value: object, backend: Backend | None) -> bool:
        """Deliver the reply.

        Returns:
            True when it was handed over (from then on the asker accounts for
            it); False when nobody waits for it any more: the caller counts
            it as a dead letter.
        """
        # Slot.fill written out: the hot path of every ask.
        if self.state != PENDING:
            return False
        self.state = REPLIED
        self.outcome = value
        if not self.waiting and self.on_done is None:
            # The usual case (the asker yields before it parks, and finds the
            # reply then), and a call saved: _wake()'s not-parked branch.
            return not self.abandoned
        return self._wake(backend)

    def fail(self, exc: BaseException, backend: Backend | None) -> bool:
        """Deliver an exception to the asker; False if nobody waits any more."""
        return self.fill(FAILED, exc, backend)

    def error_reply(self, exc: Exception, backend: Backend | None) -> bool:
        """Deliver an ``ErrorReply``'s exception: raised by the asker as a
        failure, but an answer nothing else counts (no handler failed), so an
        asker that leaves after the hand-over counts it (see ``abandon``).
        False if nobody waits any more (the caller counts it)."""
        if self.state != PENDING:
            return False
        # The traceback it is raised with, whatever earlier asks added.
        self.traceback = own_traceback(exc.__traceback__)
        return self.fill(ERROR_REPLIED, exc, backend)

    async def wait(self, backend: Backend) -> Any:
        """Wait for the outcome, without a time limit (for one, see
        ``AskDeadlines.wait``).

        Returns:
            The reply.

        Raises:
            Exception: the handler's exception.
        """
        await self.park(backend)
        return self.outcome_or_raise()

    def lost(self) -> None:
        """The asker left after the outcome was handed over: a reply (or an
        ``ErrorReply``) is a dead letter ``"ask abandoned"`` to the ask's
        recipient. A failure is not counted again: the failed message is a
        dead letter already."""
        if self.state in (REPLIED, ERROR_REPLIED):
            recipient = self.recipient
            recipient.runtime.dead_letter(recipient, self.message, "ask abandoned")

    def outcome_or_raise(self) -> Any:
        """The reply, or raise the handler's exception."""
        state = self.state
        if state == REPLIED:
            return self.outcome
        if state == ERROR_REPLIED:
            error_replied.set(self)
            # An answer, often one shared exception object: each raise starts
            # from its own traceback, or every ask would add its frames to it
            # (and keep them alive).
            raise self.outcome.with_traceback(self.traceback)
        raise self.outcome


def own_traceback(tb: TracebackType | None) -> TracebackType | None:
    """An exception's traceback without what the runtime's raises of it at
    askers added (an ``ErrorReply``'s exception is raised at each asker; the
    entries of those raises, and of the askers' frames around them, come
    before ours in its chain): the part after the innermost such raise."""
    own = tb
    code = Ask.outcome_or_raise.__code__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            own = tb.tb_next
        tb = tb.tb_next
    return own


def abandon(ask: Ask) -> None:
    """The asker leaves without the outcome (timed out, cancelled, or its
    thread gave up).

    A reply still to come is then a dead letter the actor counts (its
    ``Ask.reply`` returns False). A reply already handed over is counted
    here, once, as a dead letter ``"ask abandoned"`` to the ask's recipient
    (``Ask.lost``): the asker's cancellation wins, the reply cannot be
    returned.
    """
    if ask.leave():
        ask.lost()
