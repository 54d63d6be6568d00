"""Shares: what this node holds for each peer's messages to each local actor,
and the credit it gives back (the receiving side of ``_credits``).

A peer may have ``share`` messages outstanding per local actor (see
``_credits``). A ``Share`` counts them here, per (peer incarnation, path as
sent): received, and not yet taken by the actor. A tell goes into the
actor's mailbox at once when it has room; after it, in its FIFO place, a
*mark* (a mailbox signal, uncounted by the quota) stands for the messages
delivered since the previous mark: when the actor reaches the mark it has
taken them, and the share reports them to the peer (a credit envelope, out
of band) once an eighth of the share, or everything outstanding, is taken.
An actor that stops with marks in its mailbox reports them as it
terminates (its messages there are dead letters by then). A message the
actor's mailbox has no room for (a bounded mailbox, full) is *held*: it and
every later one from that peer to that actor wait, in order, for room,
moved in one at a time by a task that waits on the mailbox's quota as
``ref.send`` does, so backpressure reaches the peer's senders instead of
dead letters.

Bounds: per peer and actor, at most ``share`` messages (held ones included);
a message beyond it (a sender that ignores its credit) is a dead letter,
reason ``"over share"``. The receiving node's memory for one slow actor is
thus its mailbox plus ``share`` per sending peer, plus the window of bytes in
flight per peer (``_outbound``); a slow actor never delays the messages
from the same peer to any other actor (frames are acked on arrival, credits
are per actor). Tells from a program that is not a node are delivered as
before (no credit: a full mailbox makes a dead letter).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

from anyio.abc import TaskGroup

from .. import ActorRef, ActorStopped, MailboxFull
from ..extension import RemoteHost
from ..mailbox import MailboxClosed, Signal
from ._local import Local
from ._node import NodeAddress

__all__ = ["ShareStatistics", "Shares"]


class Share:
    """One peer's messages to one local actor, as counted here."""

    __slots__ = (
        "held",
        "markable",
        "outstanding",
        "path",
        "peer",
        "ref",
        "taken",
        "unmarked",
    )

    def __init__(
        self, peer: NodeAddress, path: str, ref: ActorRef[Any], markable: bool
    ) -> None:
        self.peer = peer
        self.path = path
        self.ref = ref
        #: Whether its mailbox takes marks (a plain actor; not a pool).
        self.markable = markable
        #: Messages received and not yet reported to the peer.
        self.outstanding = 0
        #: Messages delivered since the last mark.
        self.unmarked = 0
        #: Messages taken by the actor and not yet reported.
        self.taken = 0
        #: Messages waiting for room in the mailbox (None: none).
        self.held: deque[object] | None = None


class _Mark(Signal):
    """Stands for ``count`` messages of a share in the actor's mailbox,
    after them: reaching it, the actor has taken them."""

    __slots__ = ("count", "share", "shares")

    def __init__(self, shares: Shares, share: Share, count: int) -> None:
        self.shares = shares
        self.share = share
        self.count = count

    def __repr__(self) -> str:
        return f"<credit mark of {self.count} from {self.share.peer}>"

    async def deliver(self, cell: object, receive: object) -> None:
        """The actor reached the mark (the runtime's signal hook)."""
        self.shares.taken(self.share, self.count)

    def undelivered(self, cell: object) -> None:
        """The actor stopped first: its messages were dead letters."""
        self.shares.taken(self.share, self.count)


class ShareStatistics(NamedTuple):
    """Counters of one node's shares, all peers together."""

    #: (peer, actor) pairs with messages outstanding
    shares: int
    #: messages received from peers and not yet taken by their actors
    outstanding: int
    #: of those, messages waiting for room in a full mailbox
    held: int
    #: messages beyond a peer's share (dead letters, reason "over share")
    over_share: int
    #: credit envelopes sent
    grants: int


class Shares:
    """The shares of one node (see the module doc).

    Args:
        host: the system (marks go into mailboxes through it).
        local: finds the actors; makes the dead letters.
        share: the most messages outstanding per peer and actor (at least 1).
        grant: sends a credit envelope ``(peer, path, count)``.
    """

    def __init__(
        self,
        host: RemoteHost,
        local: Local,
        share: int,
        grant: Callable[[NodeAddress, str, int], None],
    ) -> None:
        self._host = host
        self._local = local
        self.share = share
        #: Marks at least every this many messages, and reports as often.
        self.step = max(1, share // 8)
        self._grant = grant
        self._tg: TaskGroup | None = None
        self.records: dict[tuple[NodeAddress, str], Share] = {}
        #: Shares that got messages in the frame being handled.
        self.touched: list[Share] = []
        self.over_share = 0
        self.grants = 0

    def attach(self, tg: TaskGroup) -> None:
        """Movers (of held messages) run in ``tg``."""
        self._tg = tg

    # -- messages in -------------------------------------------------------------

    def deliver(self, path: str, message: object, sender: NodeAddress | None) -> None:
        """Deliver a tell from ``sender`` to the local actor at ``path``
        (see the module doc); what cannot be delivered is a dead letter."""
        if sender is None:
            self._local.deliver(path, message, sender)
            return
        share = self.records.get((sender, path))
        if share is None:
            ref = self._local.find(path)
            if ref is None:
                local = self._local
                local.dead_letter(local.here(path), message, "actor not found", sender)
                self._grant(sender, path, 1)  # its credit, at once
                self.grants += 1
                return
            share = Share(sender, path, ref, self._host.takes_signals(ref))
            self.records[(sender, path)] = share
        if share.outstanding >= self.share:
            self.over_share += 1
            self._local.dead_letter(share.ref, message, "over share", sender)
            return
        share.outstanding += 1
        if share.held is not None:
            share.held.append(message)
            return
        try:
            share.ref.tell(message)
        except MailboxFull:
            self._hold(share, message)
            return
        except ActorStopped:
            self._local.dead_letter(share.ref, message, "actor stopped", sender)
            self._mark(share, share.unmarked + 1)
            return
        share.unmarked = unmarked = share.unmarked + 1
        if unmarked == 1:
            self.touched.append(share)
        elif unmarked >= self.step:
            self._mark(share, unmarked)

    def frame_done(self) -> None:
        """The frame is handled: mark what it delivered."""
        touched = self.touched
        self.touched = []
        for share in touched:
            if share.unmarked:
                self._mark(share, share.unmarked)

    def _mark(self, share: Share, count: int) -> None:
        # Put a mark for ``count`` messages behind them (or report them at
        # once when the mailbox takes no signals or is closed).
        share.unmarked = 0
        if share.markable:
            try:
                self._host.send_signal(share.ref, _Mark(self, share, count))
                return
            except MailboxClosed:
                pass
        self.taken(share, count)

    def taken(self, share: Share, count: int) -> None:
        """``count`` messages of ``share`` were taken by the actor (or ended
        as dead letters): report them when enough are."""
        share.taken = taken = share.taken + count
        if taken >= self.step or taken >= share.outstanding:
            self._report(share)

    def _report(self, share: Share) -> None:
        taken = share.taken
        share.taken = 0
        share.outstanding -= taken
        if not share.outstanding and share.held is None:
            self.records.pop((share.peer, share.path), None)
        if taken:
            self.grants += 1
            self._grant(share.peer, share.path, taken)

    # -- held messages -------------------------------------------------------------

    def _hold(self, share: Share, message: object) -> None:
        if share.unmarked:
            self._mark(share, share.unmarked)
        tg = self._tg
        if tg is None:
            self._local.dead_letter(share.ref, message, "mailbox full", share.peer)
            self.taken(share, 1)
            return
        share.held = deque((message,))
        tg.start_soon(self._move, share)

    async def _move(self, share: Share) -> None:
        """Move the held messages of ``share`` into its actor's mailbox, in
        order, each waiting for room."""
        held = share.held
        assert held is not None
        moved = 0
        try:
            while held:
                message = held[0]
                try:
                    await share.ref.send(message)
                except (ActorStopped, MailboxFull):
                    self._local.dead_letter(
                        share.ref, message, "actor stopped", share.peer
                    )
                    held.popleft()
                    self.taken(share, 1)
                    continue
                held.popleft()
                moved += 1
                if moved >= self.step or not held:
                    self._mark(share, moved)
                    moved = 0
        finally:
            share.held = None
            if moved:
                self._mark(share, moved)
            if held:  # cancelled: the node is stopping
                for message in held:
                    self._local.dead_letter(
                        share.ref, message, "node stopping", share.peer
                    )
                self.taken(share, len(held))
                held.clear()
            elif not share.outstanding:
                self.records.pop((share.peer, share.path), None)

    # -- credit queries --------------------------------------------------------------

    def held_for(self, peer: NodeAddress, path: str) -> int:
        """The answer to a credit query: how many of ``peer``'s messages to
        ``path`` this node holds now (what was taken is reported first)."""
        share = self.records.get((peer, path))
        if share is None:
            return 0
        if share.taken:
            taken = share.taken
            share.taken = 0
            share.outstanding -= taken
            if not share.outstanding and share.held is None:
                self.records.pop((peer, path), None)
        return share.outstanding

    def peer_lost(self, peer: NodeAddress) -> None:
        """``peer`` is gone: its shares are forgotten (its messages stay)."""
        for key in [key for key in self.records if key[0] == peer]:
            del self.records[key]

    def held_from(self, peer: NodeAddress) -> tuple[int, int]:
        """``(outstanding, held)`` messages from ``peer`` now."""
        outstanding = held = 0
        for (address, _), share in self.records.items():
            if address == peer:
                outstanding += share.outstanding
                held += 0 if share.held is None else len(share.held)
        return outstanding, held

    def statistics(self) -> ShareStatistics:
        """The counters now."""
        records = list(self.records.values())
        return ShareStatistics(
            len(records),
            sum(share.outstanding for share in records),
            sum(0 if share.held is None else len(share.held) for share in records),
            self.over_share,
            self.grants,
        )
