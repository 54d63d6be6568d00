"""``ActorRef``: the handle through which everything talks to an actor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, final, overload

import anyio

from ._envelope import EXPIRED, PENDING, REPLIED, Ask, abandon
from ._errors import ActorStopped, AskSelfError, AskTimeout, SystemNotRunning
from ._lifecycle import ExitReason, StopReason, current_cell
from ._request import Request
from ._validation import check_timeout
from .channel.lowlevel import ki_protected
from .mailbox import SIGNAL_CLASSES, MailboxClosed, MailboxFull, Signal

if TYPE_CHECKING:
    from ._cell import Cell
    from ._deadlines import AskDeadlines

__all__ = [
    "ActorRef",
    "RefStatistics",
    "ReplyTypeMismatch",
    "prepare_ask",
    "signal_error",
    "told_stopped",
]

M = TypeVar("M", contravariant=True)
R = TypeVar("R")


@final
class ReplyTypeMismatch:
    """Never made: the type ``ask`` has for mypy when a [``Request``][actors.Request]
    is asked where a different reply type is expected (``x: str = await
    ref.ask(Get())`` with ``Get(Request[int])``), so the mismatch is an error
    naming this class instead of passing as ``Any``."""

    __slots__ = ()

    def __init__(self) -> None:
        raise TypeError("ReplyTypeMismatch only exists for type checkers")


@dataclass(frozen=True, slots=True)
class RefStatistics:
    """A snapshot of what waits for an actor (``ref.statistics()``), for
    dashboards and adaptive senders. It may be stale as soon as it is taken.

    Attributes:
        queued_messages: messages (asks included) queued and not handled
            yet: in the mailbox, or taken by the actor's message loop in the
            batch it is handling and not given to a handler yet (the message
            being handled is not counted).
        queued_signals: runtime signals queued (``Terminated``, timer
            firings, piped results), outside the quota.
        capacity: the mailbox's quota (None: unbounded).
        waiting_senders: tasks parked in ``send`` or ``ask`` for room.
    """

    queued_messages: int
    queued_signals: int
    capacity: int | None
    waiting_senders: int


def signal_error(message: object) -> TypeError:
    """The error for a runtime signal given to ``tell``, ``send`` or ``ask``."""
    return TypeError(
        f"{type(message).__name__} is a runtime signal: only the runtime "
        "delivers signals, actors cannot be told, sent or asked one"
    )


def told_stopped(cell: Cell, message: object) -> SystemNotRunning | None:
    """A tell found ``cell``'s mailbox closed (the actor stopped, or is
    stopping): one home for the rule of every local ref (the actor's, the
    pool's, traced or not). A dead letter while its system runs; once the
    system has exited, the error to raise (every call of a ref that outlived
    its system raises it)."""
    runtime = cell.runtime
    if runtime.exited:
        return SystemNotRunning(f"the system of {cell.path} has exited")
    telemetry = runtime.telemetry
    if telemetry is not None:  # a traced tell's envelope: the user's message
        message = telemetry._unwrap_one(message)
    runtime.dead_letter(cell, message, "actor stopped")
    return None


def prepare_ask(
    target: Cell, message: object, timeout: float, pool: bool = False
) -> AskDeadlines:
    """The checks every ask makes before its envelope is queued (the actor's,
    the pool's, traced or not): one home for them.

    Returns:
        The system's ask deadlines, to wait for the reply with.

    Raises:
        TypeError, ValueError: ``timeout`` is not a number > 0.
        TypeError: ``message`` is a runtime signal (the envelope would smuggle
            it past the mailbox's check, and ``receive`` would get a forged
            ``Terminated``).
        AskSelfError: the asker is the target (``pool``: one of its workers):
            it would never get the reply.
        SystemNotRunning: the target's system is not running.
    """
    # A positive float (the default 5.0 and most timeouts) is valid as it
    # is: the full check (types, NaN) only for anything else.
    if timeout.__class__ is not float or not timeout > 0:
        check_timeout(timeout)
    if isinstance(message, Signal):
        raise signal_error(message)
    asker = current_cell.get()
    if asker is not None and (asker.parent if pool else asker) is target:
        if pool:
            raise AskSelfError(f"{asker.path} asked its own pool from its handler")
        raise AskSelfError(
            f"{target.path} asked itself from its own handler: it would never "
            "get the reply (use tell, or call the method directly)"
        )
    deadlines = target.runtime.deadlines
    if deadlines is None:
        raise SystemNotRunning(f"the system of {target.path} is not running")
    return deadlines


class ActorRef(Generic[M]):
    """A handle on one actor: tell, send, ask, stop, join.

    Refs compare equal when they name the same actor (incarnations included: a
    restart keeps the ref), hash accordingly, and outlive their actor: a
    ``tell`` is then a dead letter, ``send`` and ``ask`` raise
    [``ActorStopped``][actors.ActorStopped], and once the system has exited
    every call raises [``SystemNotRunning``][actors.SystemNotRunning]. Use
    them from the system's event loop; from other threads use
    ``system.from_thread``.
    """

    __slots__ = ("_cell",)

    def __init__(self, cell: Cell) -> None:
        self._cell = cell

    def tell(self, message: M) -> None:
        """Enqueue a message and return at once (never waits, never yields).

        To an actor that has stopped (or is stopping) the message is a dead
        letter, reason ``"actor stopped"`` (counted in
        ``system.dead_letters``, seen by its subscribers), not an exception:
        as Erlang's ``!`` and Akka's ``tell``, so an ``on_stop`` or a handler
        telling a peer that stopped first does not fail, and a local ref
        behaves as a remote one, whose tell cannot know its target is gone.
        ``send`` and ``ask`` still raise ``ActorStopped``.

        Raises:
            TypeError: ``message`` is a runtime signal object.
            MailboxFull: the actor's mailbox is at its capacity.
            SystemNotRunning: the actor's system has exited (the ref outlived
                its ``async with`` block).
        """
        mailbox = self._cell.mailbox
        # The common case written out: an open mailbox without a quota that
        # no consumer waits on takes a message with one append to its direct
        # queue (Mailbox.direct), no call of the mailbox's; a signal, a
        # quota, a closed mailbox or a consumer to wake go through try_send.
        direct = mailbox.direct
        if direct is not None and type(message) not in SIGNAL_CLASSES:
            direct.append(message)
            return
        try:
            mailbox.try_send(message)
        except MailboxClosed:
            error = told_stopped(self._cell, message)
            if error is not None:
                raise error from None
        except TypeError:  # the mailbox refuses signals
            raise signal_error(message) from None

    async def send(self, message: M) -> None:
        """Enqueue a message, waiting while the mailbox is full (backpressure).

        Returns without yielding when there is room. Waiting senders are served
        first come, first served; a send cancelled while waiting enqueues
        nothing. One race is left on asyncio: a native ``Task.cancel()`` that
        lands after the message moved in but before the sender resumed leaves
        the message enqueued (it is handled once) and still raises
        ``CancelledError``: do not resend it. (anyio cancel scopes and Trio
        never cancel a sender that was already served.)

        Raises:
            TypeError: ``message`` is a runtime signal object.
            ActorStopped: the actor has stopped, or stopped while we waited.
            MailboxFull: an actor sent to its own full mailbox from its own
                handler: it would wait forever, since only it can make room
                (as ``ask`` refuses an actor asking itself).
        """
        cell = self._cell
        mailbox = cell.mailbox
        try:
            mailbox.try_send(message)
            return
        except MailboxFull:
            if current_cell.get() is cell:
                raise MailboxFull(
                    f"{cell.path} sent to its own full mailbox from its own "
                    "handler: it would wait forever (only it makes room)"
                ) from None
        except MailboxClosed:
            raise self._stopped() from None
        except TypeError:
            raise signal_error(message) from None
        try:
            await mailbox.send(message)
        except MailboxClosed:
            raise self._stopped() from None

    @overload
    async def ask(self, message: Request[R], timeout: float = 5.0) -> R: ...

    # Reached only when the expected type does not fit the Request's reply
    # type (mypy tries the first overload with the expected type): an error
    # naming ReplyTypeMismatch instead of the Any of the last overload.
    @overload
    async def ask(
        self, message: Request[Any], timeout: float = 5.0
    ) -> ReplyTypeMismatch: ...

    @overload
    async def ask(self, message: M, timeout: float = 5.0) -> Any: ...

    # Ctrl-C on Trio comes at a checkpoint, never between queueing the
    # envelope and the yield that follows (a reply then handed to nobody
    # would be lost without a dead letter): see channel/_waiters.py.
    @ki_protected
    async def ask(self, message: Any, timeout: float = 5.0) -> Any:
        """Send a message and wait for the reply (``receive``'s return value).

        Waits for mailbox room like [``send``][actors.ActorRef.send]; the
        timeout covers both.

        Args:
            message: the request; a [``Request``][actors.Request] subclass types the
                reply.
            timeout: seconds to wait for the reply (> 0).

        Returns:
            The reply.

        Raises:
            AskTimeout: no reply within ``timeout`` seconds (a TimeoutError).
            ActorStopped: the actor stopped before replying.
            AskSelfError: an actor asked itself from its own handler.
            ValueError, TypeError: ``timeout`` is not a positive number.
            Exception: whatever the handler raised, re-raised here with the
                actor-side traceback attached.
        """
        cell = self._cell
        deadlines = prepare_ask(cell, message, timeout)
        envelope = Ask(message, cell)
        mailbox = cell.mailbox
        try:
            mailbox.try_send(envelope)
        except MailboxFull:
            # Wait for room and the reply under one deadline.
            with anyio.move_on_after(timeout):
                try:
                    await mailbox.send(envelope)
                except MailboxClosed:
                    raise self._stopped() from None
                except BaseException:
                    # A native cancel can land after the envelope moved in:
                    # its reply is then a dead letter, never lost silently.
                    abandon(envelope)
                    raise
                return await envelope.wait(deadlines.backend)
            raise AskTimeout(f"{cell.path} did not reply within {timeout} s") from None
        except MailboxClosed:
            raise self._stopped() from None
        # The usual case: queued at once. AskDeadlines.wait() written out (a
        # coroutine frame saved per ask): yield before parking, so a ready
        # actor's reply is found without a wait handle or a linked deadline;
        # if the ask must park, one timer per timeout value, not a timer or a
        # cancel scope per ask (see _deadlines.py).
        deadline = deadlines.now() + timeout
        try:
            await deadlines.checkpoint()
            if envelope.state == PENDING and deadlines.recheck:
                await deadlines.checkpoint()  # Trio: see Backend.recheck
        except BaseException:
            abandon(envelope)  # a reply handed over meanwhile is counted
            raise
        state = envelope.state
        if state == REPLIED:
            return envelope.outcome
        if state != PENDING:
            return envelope.outcome_or_raise()
        reply = await deadlines.park(envelope, timeout, deadline)
        if reply is EXPIRED:
            raise AskTimeout(f"{cell.path} did not reply within {timeout} s")
        return reply

    def stop(self) -> None:
        """Ask the actor to stop after the message it is handling.

        What is still queued becomes dead letters, and pending asks fail with
        [``ActorStopped``][actors.ActorStopped]. Returns at once;
        ``await join()`` to wait. Stopping a stopped actor does nothing. The
        guardian's ref (``/user``, a top-level actor's ``context.parent``) stops
        the whole system, as [``ActorSystem.stop``][actors.ActorSystem.stop]
        does.
        """
        cell = self._cell
        if cell.parent is None:  # the guardian: nothing runs without it
            cell.runtime.system.stop()
            return
        cell.request_stop(StopReason.NORMAL)

    async def join(self) -> ExitReason:
        """Wait until the actor has terminated.

        Returns:
            How it ended ([``ExitReason``][actors.ExitReason]): a
            [``StopReason``][actors.StopReason], or the exception that stopped it.
        """
        await self._cell.terminated.wait()
        return self._cell.reason

    @property
    def is_alive(self) -> bool:
        """Whether the actor has not begun stopping yet."""
        return self._cell.alive

    def statistics(self) -> RefStatistics:
        """A snapshot of the actor's mailbox (see
        [``RefStatistics``][actors.RefStatistics]); a stopped actor's mailbox is
        empty. Cheap: no allocation but the snapshot, no waiting.

        Raises:
            TypeError: the ref is another node's actor (its mailbox is not
                here to look at).
        """
        cell = self._cell
        if cell is None:
            raise TypeError(
                f"statistics() needs the actor's mailbox, and {self!r} is an "
                "actor of another node"
            )
        stats = cell.mailbox.statistics()
        return RefStatistics(
            stats.queued_messages + cell.in_hand(),
            stats.queued_signals,
            stats.capacity,
            stats.waiting_senders,
        )

    @property
    def name(self) -> str:
        """The actor's name, unique among its siblings."""
        return self._cell.name

    @property
    def path(self) -> str:
        """The actor's path, for example ``"/user/parent/child"``."""
        return self._cell.path

    def _stopped(self) -> ActorStopped:
        cell = self._cell
        if not cell.runtime.running:
            return SystemNotRunning(f"the system of {cell.path} has exited")
        return ActorStopped(f"{cell.path} has stopped")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActorRef) and other._cell is self._cell

    def __hash__(self) -> int:
        return id(self._cell)

    def __repr__(self) -> str:
        cell = self._cell
        state = "alive" if self.is_alive else "stopped"
        return f"<ActorRef {cell.path} {state}>"
