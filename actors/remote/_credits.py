"""Credits: the sender's share of each remote actor's mailbox.

A node may have at most ``share`` messages (tells and sends) to one remote
actor *outstanding*: sent and not yet taken by that actor (or ended as a
dead letter) on its node, as the receiving node reports with credit
envelopes (see ``_shares``, the receiving side, and the wire-format page).
The accounting is per peer node incarnation and per target path, in a
``Lane``; the lanes of one peer are a ``Credits``, which also holds that
peer's outbound buffer (the senders reach both with one dict lookup).

``tell`` takes a credit or raises ``MailboxFull`` (the share is used up);
``send`` takes one or waits for one, first come first served among the
senders waiting on that lane (a credit handed back goes to the oldest, as
a mailbox's quota does). The share counted against is the receiver's (it
advertises it when the two first talk, see ``_peers``); until it is heard,
the sender's own. A lane out of credit that has heard nothing from
the receiver for ``CREDIT_TIMEOUT`` seconds asks it how many messages it
really holds (a credit query, in FIFO order behind the messages sent
before it): frames lost on the wire (a broker restart) or a lost credit
envelope would otherwise leak credits for good.

This is demand, as Reactive Streams' ``request(n)`` and Akka's
ProducerController: the receiver grants, the sender never runs ahead.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import NamedTuple

import anyio

from ..mailbox import MailboxFull
from ._errors import NodeUnreachable

__all__ = [
    "CREDIT_TIMEOUT",
    "DEFAULT_SHARE",
    "MAX_SHARE",
    "CreditStatistics",
    "Credits",
    "Lane",
]

#: Messages one node may have outstanding to one remote actor, by default.
DEFAULT_SHARE = 4096
#: Seconds a lane out of credit waits for a grant before it queries.
CREDIT_TIMEOUT = 1.0
#: Lanes with nothing outstanding kept for reuse, at most (the rest pruned).
IDLE_LANES = 256
#: The largest share accepted (a credit envelope carries at most 2^31).
MAX_SHARE = 1 << 20


class _Waiter:
    """A ``send`` waiting for a credit on one lane."""

    __slots__ = ("event", "granted")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.granted = False


class Lane:
    """The credit of one target actor (a path on the peer)."""

    __slots__ = ("granted_at", "outstanding", "query", "since_query", "waiters")

    def __init__(self) -> None:
        #: Messages sent to the target and not yet reported taken.
        self.outstanding = 0
        #: Senders waiting for a credit, oldest first.
        self.waiters: deque[_Waiter] = deque()
        #: When the receiver last reported on this lane (``current_time``).
        self.granted_at = 0.0
        #: The number of the credit query in flight (0: none).
        self.query = 0
        #: Messages sent since that query was sent.
        self.since_query = 0


class CreditStatistics(NamedTuple):
    """Counters of one peer's credits."""

    #: targets with messages outstanding
    lanes: int
    #: messages outstanding to all of them
    outstanding: int
    #: senders waiting for a credit
    waiting: int
    #: tells refused because a target's share was used up
    refused: int
    #: credit queries sent (a lane heard nothing for CREDIT_TIMEOUT seconds)
    queries: int
    #: credits reported that no message was outstanding for (ignored)
    excess: int


class Credits:
    """The lanes to one peer node, and its outbound buffer (see the module
    doc).

    Args:
        share: the most messages outstanding per target (at least 1).
        try_put, put: the outbound buffer's ``try_put`` and ``put``.
        query: sends a credit query ``(path, number)`` in FIFO order.
    """

    __slots__ = (
        "_closed",
        "_put",
        "_query",
        "_try_put",
        "excess",
        "lanes",
        "queries",
        "refused",
        "share",
    )

    def __init__(
        self,
        share: int,
        try_put: Callable[[bytes, dict[str, str] | None], None],
        put: Callable[[bytes, dict[str, str] | None], Awaitable[None]],
        query: Callable[[str, int], None],
    ) -> None:
        self.share = share
        self._try_put = try_put
        self._put = put
        self._query = query
        self._closed: BaseException | None = None
        self.lanes: dict[str, Lane] = {}
        self.refused = 0
        self.queries = 0
        self.excess = 0

    def _lane(self, path: str) -> Lane:
        lanes = self.lanes
        if len(lanes) >= IDLE_LANES:
            for idle in [p for p, lane in lanes.items() if not lane.outstanding]:
                if not lanes[idle].waiters:
                    del lanes[idle]
        lane = lanes[path] = Lane()
        lane.granted_at = anyio.current_time()
        return lane

    # -- the senders ---------------------------------------------------------

    def tell(self, path: str, envelope: bytes, headers: dict[str, str] | None) -> None:
        """Take a credit for ``path`` and buffer ``envelope``; never waits.

        Raises:
            MailboxFull: the share of ``path`` is used up (or senders wait
                for it), or the outbound buffer is full.
            FrameTooLarge, NodeUnreachable: as ``Outbound.try_put``.
        """
        lane = self.lanes.get(path) or self._lane(path)
        if lane.outstanding >= self.share or lane.waiters:
            self._refuse(path, lane)
        lane.outstanding += 1
        try:
            self._try_put(envelope, headers)
        except BaseException:
            lane.outstanding -= 1
            raise
        if lane.query:
            lane.since_query += 1

    async def send(
        self, path: str, envelope: bytes, headers: dict[str, str] | None
    ) -> None:
        """Take a credit for ``path``, waiting for one (FIFO), and buffer
        ``envelope``, waiting for room. Not a checkpoint when a credit and
        room are there. Cancelled, it buffers nothing and takes no credit.

        Raises:
            FrameTooLarge: as ``Outbound.put``.
            NodeUnreachable: the peer's buffer closed (or closed meanwhile).
        """
        lane = self.lanes.get(path) or self._lane(path)
        if lane.outstanding >= self.share or lane.waiters:
            await self._wait(path, lane)
        else:
            lane.outstanding += 1
        try:
            await self._put(envelope, headers)
        except BaseException:
            self._give_back(lane)
            raise
        if lane.query:
            lane.since_query += 1

    def _refuse(self, path: str, lane: Lane) -> None:
        self.refused += 1
        if self._closed is None:
            self._maybe_query(path, lane)
        raise MailboxFull(
            f"the share of {path} ({self.share} messages outstanding) is used up"
        )

    def _maybe_query(self, path: str, lane: Lane) -> None:
        if anyio.current_time() - lane.granted_at >= CREDIT_TIMEOUT:
            self.queries += 1
            lane.query = self.queries
            lane.since_query = 0
            lane.granted_at = anyio.current_time()
            try:
                self._query(path, lane.query)
            except Exception:
                lane.query = 0  # the buffer is closed: no answer will come

    async def _wait(self, path: str, lane: Lane) -> None:
        if self._closed is not None:
            raise _closed_error(self._closed)
        waiter = _Waiter()
        lane.waiters.append(waiter)
        try:
            while not waiter.granted:
                with anyio.move_on_after(CREDIT_TIMEOUT):
                    await waiter.event.wait()
                if self._closed is not None:
                    raise _closed_error(self._closed)
                if not waiter.granted:
                    self._maybe_query(path, lane)
        except BaseException:
            if waiter.granted:
                self._give_back(lane)
            else:
                lane.waiters.remove(waiter)
            raise

    def _give_back(self, lane: Lane) -> None:
        if lane.outstanding:
            lane.outstanding -= 1
        self._admit(lane)

    def _admit(self, lane: Lane) -> None:
        # Hand free credits to the oldest waiting senders.
        waiters = lane.waiters
        while waiters and lane.outstanding < self.share:
            waiter = waiters.popleft()
            waiter.granted = True
            lane.outstanding += 1
            waiter.event.set()

    # -- the receiver's reports ------------------------------------------------

    def granted(self, path: str, count: int) -> None:
        """The receiver reports ``count`` more messages to ``path`` taken."""
        lane = self.lanes.get(path)
        if lane is None or not lane.outstanding:
            self.excess += count
            return
        if count > lane.outstanding:
            self.excess += count - lane.outstanding
            count = lane.outstanding
        lane.outstanding -= count
        lane.granted_at = anyio.current_time()
        self._admit(lane)

    def state(self, path: str, query: int, held: int) -> None:
        """The answer to credit query ``query``: the receiver holds ``held``
        of the messages to ``path`` sent before it (the others were taken,
        or lost on the wire)."""
        lane = self.lanes.get(path)
        if lane is None or lane.query != query:
            return  # an answer to an older query: a newer one is in flight
        lane.query = 0
        lane.outstanding = min(held, self.share) + lane.since_query
        lane.granted_at = anyio.current_time()
        self._admit(lane)

    def reshare(self, share: int) -> None:
        """The receiver advertised its share (``ShareEnvelope``): count
        against ``share`` from now on (1 to ``MAX_SHARE``, checked by the
        caller). A larger share admits waiting senders at once; with a
        smaller one, lanes over it take no new credit until enough is
        reported taken."""
        self.share = share
        for lane in self.lanes.values():
            if lane.waiters:
                self._admit(lane)

    def close(self, error: BaseException) -> None:
        """The peer's buffer closed: waiting senders get ``NodeUnreachable``."""
        if self._closed is not None:
            return
        self._closed = error
        for lane in self.lanes.values():
            for waiter in lane.waiters:
                waiter.event.set()

    @property
    def idle(self) -> bool:
        """Nothing outstanding to any target and no sender waiting: the
        peer may be retired without losing count of its share."""
        return not any(
            lane.outstanding or lane.waiters for lane in self.lanes.values()
        )

    def statistics(self) -> CreditStatistics:
        """The counters now."""
        lanes = [lane for lane in self.lanes.values() if lane.outstanding]
        return CreditStatistics(
            len(lanes),
            sum(lane.outstanding for lane in lanes),
            sum(len(lane.waiters) for lane in self.lanes.values()),
            self.refused,
            self.queries,
            self.excess,
        )


def _closed_error(error: BaseException) -> NodeUnreachable:
    if isinstance(error, NodeUnreachable):
        return error
    unreachable = NodeUnreachable(f"the outbound buffer is closed: {error}")
    unreachable.__cause__ = error
    return unreachable
