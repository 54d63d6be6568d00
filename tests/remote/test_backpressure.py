"""Backpressure reaches the remote actor: each node may have ``share`` tells
outstanding per remote actor (sent, not yet taken by it), so a remote
``send`` waits and a remote ``tell`` raises ``MailboxFull`` while a slow actor
holds them; the receiving node holds at most the share per peer for it (a
bounded mailbox's overflow included), other actors on that node are not
held up, and every message is delivered, refused at the sender or counted
as a dead letter. Synchronised on events and counters, never on time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest

from actors import Actor, ActorSystem, MailboxFull
from actors.nats import NatsServer
from actors.nats._protocol import new_nuid
from actors.remote import NodeAddress, PeerStatistics, RefAddress, Remote, RemoteRef
from actors.remote._credits import CREDIT_TIMEOUT, MAX_SHARE
from actors.remote._envelopes import CreditEnvelope, TellEnvelope

from ._offline import PEER, offline_node

pytestmark = pytest.mark.anyio

SHARE = 64


class Gate(Actor):
    """Takes its first message, then waits for ``opened`` before it handles
    it and the rest; keeps what it got, in order."""

    def __init__(self, reached: anyio.Event, opened: anyio.Event) -> None:
        self.reached = reached
        self.opened = opened
        self.items: list[Any] = []

    async def receive(self, message: Any) -> Any:
        if message == "get":
            return self.items
        self.reached.set()
        await self.opened.wait()
        self.items.append(message)
        return None


class Counter(Actor):
    """Counts what it is told; sets ``done`` at ``expected``."""

    def __init__(self, expected: int, done: anyio.Event) -> None:
        self.expected = expected
        self.done = done
        self.count = 0

    def receive(self, message: Any) -> None:
        self.count += 1
        if self.count == self.expected:
            self.done.set()


async def until(predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    """Run the loop until ``predicate()`` holds (frames move meanwhile)."""
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.lowlevel.checkpoint()


@asynccontextmanager
async def nodes(
    server: NatsServer, *names: str, **options: Any
) -> AsyncIterator[list[ActorSystem]]:
    """Systems with nodes ``names`` of a cluster of their own (entered in
    order, left in reverse); ``options``: more ``Remote`` arguments."""
    system = "bp" + new_nuid(8)
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(
                ActorSystem(
                    remote=Remote(server.url, system=system, node=name, **options)
                )
            )
            for name in names
        ]


def peer_stats(system: ActorSystem, peer: NodeAddress) -> PeerStatistics:
    """The counters of ``peer`` at ``system`` (zeros before they exist)."""
    stats = system.remote.statistics().peers.get(peer)
    return PeerStatistics(*[0] * 10) if stats is None else stats


async def test_a_send_to_a_slow_remote_actor_waits_once_its_share_is_outstanding(
    nats_server: NatsServer,
) -> None:
    reached, opened, finished = anyio.Event(), anyio.Event(), anyio.Event()
    total = 5 * SHARE
    sent = 0
    async with nodes(nats_server, "b", "a", share=SHARE) as (b, a):
        gate = b.spawn(Gate, reached, opened, name="gate")
        ref = await a.remote.lookup("b", "/user/gate")

        async def sender() -> None:
            nonlocal sent
            for i in range(total):
                await ref.send(i)
                sent += 1
            finished.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(sender)
            await reached.wait()
            await until(lambda: peer_stats(a, b.remote.node).credit_waiting == 1)
            # The sender waits with exactly its share outstanding: sent, held
            # by b (in the gate's mailbox or its hands), not yet taken.
            assert sent == SHARE
            assert not finished.is_set()
            await until(lambda: peer_stats(b, a.remote.node).share_outstanding == SHARE)
            # (The actor took a batch from its mailbox: not handled yet.)
            assert gate.statistics().queued_messages < SHARE
            assert peer_stats(a, b.remote.node).credit_outstanding == SHARE
            opened.set()
            with anyio.fail_after(20):
                await finished.wait()
        with anyio.fail_after(20):
            while len(items := await gate.ask("get")) < total:
                await anyio.lowlevel.checkpoint()
        assert items == list(range(total))  # in order, nothing lost
        assert b.dead_letters.count == 0


async def test_a_tell_to_a_slow_remote_actor_raises_mailbox_full_past_its_share(
    nats_server: NatsServer,
) -> None:
    reached, opened = anyio.Event(), anyio.Event()
    async with nodes(nats_server, "b", "a", share=SHARE) as (b, a):
        gate = b.spawn(Gate, reached, opened, name="gate")
        ref = await a.remote.lookup("b", "/user/gate")
        for i in range(SHARE):
            ref.tell(i)
        with pytest.raises(MailboxFull, match="share"):
            ref.tell(SHARE)
        await reached.wait()
        # Nothing comes back while the gate holds them: still refused.
        await until(lambda: peer_stats(b, a.remote.node).share_outstanding == SHARE)
        with pytest.raises(MailboxFull):
            ref.tell(SHARE)
        assert peer_stats(a, b.remote.node).credit_refused == 2
        opened.set()
        # Once taken, the credits come back: the next tells go through.
        await until(lambda: peer_stats(a, b.remote.node).credit_outstanding == 0)
        ref.tell(SHARE)
        with anyio.fail_after(20):
            while len(items := await gate.ask("get")) < SHARE + 1:
                await anyio.lowlevel.checkpoint()
        assert items == list(range(SHARE + 1))
        assert b.dead_letters.count == 0


async def test_the_receiving_node_holds_at_most_a_share_per_peer_for_a_slow_actor(
    nats_server: NatsServer,
) -> None:
    # Two senders flood one slow actor with sends: each waits with its share
    # outstanding, and the slow actor's node holds no more than the two
    # shares, counted in its statistics (its mailbox, unbounded, included).
    reached, opened = anyio.Event(), anyio.Event()
    async with nodes(nats_server, "b", "a", "c", share=SHARE) as (b, a, c):
        gate = b.spawn(Gate, reached, opened, name="gate")
        refs = [await s.remote.lookup("b", "/user/gate") for s in (a, c)]
        count = 10 * SHARE

        async def flood(ref: Any) -> None:
            for i in range(count):
                await ref.send(i)

        async with anyio.create_task_group() as tg:
            for ref in refs:
                tg.start_soon(flood, ref)
            for sender in (a, c):
                await until(
                    lambda s=sender: peer_stats(s, b.remote.node).credit_waiting == 1
                )
            for sender in (a, c):
                await until(
                    lambda s=sender: (
                        peer_stats(b, s.remote.node).share_outstanding == SHARE
                    )
                )
            assert gate.statistics().queued_messages <= 2 * SHARE
            # Let the frames in flight land: still no more than the shares.
            for _ in range(100):
                await anyio.lowlevel.checkpoint()
            assert gate.statistics().queued_messages <= 2 * SHARE
            opened.set()
        with anyio.fail_after(30):
            while len(await gate.ask("get")) < 2 * count:
                await anyio.lowlevel.checkpoint()
        assert b.dead_letters.count == 0


async def test_a_full_bounded_mailbox_holds_remote_tells_instead_of_dead_letters(
    nats_server: NatsServer,
) -> None:
    # The gate's mailbox holds 4: what the share lets through beyond that
    # waits on b, in order, for room (and the sender waits for credit).
    reached, opened = anyio.Event(), anyio.Event()
    total = 4 * SHARE
    async with nodes(nats_server, "b", "a", share=SHARE) as (b, a):
        gate = b.spawn(Gate, reached, opened, name="gate", capacity=4)
        ref = await a.remote.lookup("b", "/user/gate")
        done = anyio.Event()

        async def sender() -> None:
            for i in range(total):
                await ref.send(i)
            done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(sender)
            await reached.wait()
            await until(lambda: peer_stats(a, b.remote.node).credit_waiting == 1)
            stats = peer_stats(b, a.remote.node)
            assert stats.share_outstanding == SHARE
            # Four in the mailbox, at most four more taken by the actor (its
            # batch, the first in hand), the rest held by b. Its statistics
            # count the batch's rest as queued too.
            mailbox = gate._cell.mailbox
            await until(lambda: mailbox.statistics().queued_messages == 4)
            assert 4 <= gate.statistics().queued_messages <= 7
            assert SHARE - 8 <= peer_stats(b, a.remote.node).share_held < SHARE - 4
            assert b.dead_letters.count == 0
            opened.set()
            with anyio.fail_after(20):
                await done.wait()
        with anyio.fail_after(20):
            while len(items := await gate.ask("get")) < total:
                await anyio.lowlevel.checkpoint()
        assert items == list(range(total))
        assert b.dead_letters.count == 0


async def test_a_slow_actor_does_not_hold_up_tells_to_another_actor_of_its_node(
    nats_server: NatsServer,
) -> None:
    reached, opened, done = anyio.Event(), anyio.Event(), anyio.Event()
    fast_count = 20 * SHARE
    async with nodes(nats_server, "b", "a", share=SHARE) as (b, a):
        b.spawn(Gate, reached, opened, name="gate")
        b.spawn(Counter, fast_count, done, name="fast")
        gate = await a.remote.lookup("b", "/user/gate")
        fast = await a.remote.lookup("b", "/user/fast")
        async with anyio.create_task_group() as tg:

            async def flood() -> None:
                for i in range(10 * SHARE):
                    await gate.send(i)

            tg.start_soon(flood)
            await until(lambda: peer_stats(a, b.remote.node).credit_waiting == 1)
            # The same peer, another actor: every send goes through while the
            # slow one's sender waits.
            with anyio.fail_after(20):
                for i in range(fast_count):
                    await fast.send(i)
                await done.wait()
            assert not opened.is_set()
            assert peer_stats(a, b.remote.node).credit_waiting == 1
            opened.set()


async def test_an_actor_that_stops_with_tells_outstanding_gives_their_credits_back(
    nats_server: NatsServer,
) -> None:
    # Nothing lost silently: what the stopped actor held are dead letters on
    # its node, its credits come back, and later sends are dead letters too.
    reached, opened = anyio.Event(), anyio.Event()
    total = 3 * SHARE
    async with nodes(nats_server, "b", "a", share=SHARE) as (b, a):
        gate = b.spawn(Gate, reached, opened, name="gate")
        ref = await a.remote.lookup("b", "/user/gate")
        done = anyio.Event()

        async def sender() -> None:
            for i in range(total):
                await ref.send(i)
            done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(sender)
            await until(lambda: peer_stats(a, b.remote.node).credit_waiting == 1)
            gate.stop()  # its handler is cancelled with one message in hand
            with anyio.fail_after(20):
                await done.wait()
        await until(lambda: b.dead_letters.count == total)
        await until(lambda: peer_stats(a, b.remote.node).credit_outstanding == 0)
        assert peer_stats(b, a.remote.node).share_outstanding == 0


async def test_a_lane_whose_credits_leaked_recovers_by_a_credit_query(
    nats_server: NatsServer,
) -> None:
    # As if a frame with the lane's tells was lost on the wire: the sender
    # counts SHARE outstanding that the receiver never got. After
    # CREDIT_TIMEOUT without a grant it asks, and goes on.
    done = anyio.Event()
    async with nodes(nats_server, "b", "a", share=SHARE) as (b, a):
        b.spawn(Counter, 10, done, name="fast")
        ref = await a.remote.lookup("b", "/user/fast")
        credits = a.remote._parts.peers.credits_of(ref.node)
        assert credits is not None
        ref.tell(0)
        await until(lambda: credits.statistics().outstanding == 0)
        credits.lanes["/user/fast"].outstanding = SHARE  # leaked
        with pytest.raises(MailboxFull):
            ref.tell(1)
        with anyio.fail_after(CREDIT_TIMEOUT * 10):
            for i in range(1, 10):
                await ref.send(i)
            await done.wait()
        assert credits.statistics().queries >= 1


async def test_tells_beyond_a_peers_share_are_dead_letters_on_the_receiving_node() -> (
    None
):
    # A peer that ignores its credit (or has a larger share configured)
    # gets no more than the share into the actor: the rest are counted.
    reached, opened = anyio.Event(), anyio.Event()
    async with offline_node(share=8) as (system, node):
        gate = system.spawn(Gate, reached, opened, name="gate")
        node.feed(*(node.peer.tell("/user/gate", i) for i in range(20)))
        await reached.wait()
        assert node.parts.shares.statistics().outstanding == 8
        assert node.parts.shares.statistics().over_share == 12
        assert system.remote.dead_letters_by_peer == {(PEER.node, "over share"): 12}
        opened.set()
        with anyio.fail_after(10):
            while len(await gate.ask("get")) < 8:
                await anyio.lowlevel.checkpoint()
        # Taken: the credit goes back to the peer (an out-of-band envelope).
        await until(lambda: bool(node.client.envelopes(CreditEnvelope)))
        grants = node.client.envelopes(CreditEnvelope)
        assert sum(g.count for g in grants) == 8
        assert {g.path for g in grants} == {"/user/gate"}


def offline_ref(node: Any, path: str = "/user/x") -> RemoteRef[Any]:
    """A ref from the offline node to ``path`` on ``PEER``."""
    return RemoteRef[Any](
        node.parts._owner, RefAddress(PEER.node, PEER.incarnation, path)
    )


@pytest.mark.parametrize("share", [0, -1, MAX_SHARE + 1])
def test_a_share_out_of_range_is_refused_naming_it(share: int) -> None:
    with pytest.raises(ValueError, match="share"):
        Remote(share=share)
    with pytest.raises(TypeError, match="share"):
        Remote(share=1.5)  # type: ignore[arg-type]


async def test_senders_waiting_for_credit_are_served_first_come_first_served() -> None:
    async with offline_node(share=2) as (_, node):
        ref = offline_ref(node)
        ref.tell(0)
        ref.tell(1)
        credits = node.parts.peers.credits[PEER]
        order: list[int] = []

        async def send(n: int) -> None:
            await ref.send(n)
            order.append(n)

        async with anyio.create_task_group() as tg:
            for n in (2, 3, 4):
                tg.start_soon(send, n)
                await until(lambda n=n: credits.statistics().waiting == n - 1)
            # A tell does not barge past them.
            with pytest.raises(MailboxFull):
                ref.tell(5)
            node.urgent(node.peer.credit("/user/x", 1))
            await until(lambda: order == [2])
            node.urgent(node.peer.credit("/user/x", 1))
            await until(lambda: order == [2, 3])
            node.urgent(node.peer.credit("/user/x", 1))
            await until(lambda: order == [2, 3, 4])
        assert credits.statistics().outstanding == 2


async def test_a_send_cancelled_while_waiting_for_credit_takes_none() -> None:
    async with offline_node(share=1) as (_, node):
        ref = offline_ref(node)
        ref.tell(0)
        credits = node.parts.peers.credits[PEER]
        with anyio.CancelScope() as scope:

            async def cancel_when_waiting() -> None:
                await until(lambda: credits.statistics().waiting == 1)
                scope.cancel()

            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_when_waiting)
                await ref.send(1)
        assert scope.cancelled_caught
        stats = credits.statistics()
        assert (stats.waiting, stats.outstanding) == (0, 1)
        published = node.client.envelopes(TellEnvelope)
        assert len(published) <= 1  # only the tell, never the cancelled send
        node.urgent(node.peer.credit("/user/x", 1))
        ref.tell(2)  # the credit came back: one more goes


async def test_a_credit_for_nothing_outstanding_is_ignored_and_counted() -> None:
    async with offline_node(share=4) as (_, node):
        ref = offline_ref(node)
        ref.tell(0)
        credits = node.parts.peers.credits[PEER]
        node.urgent(node.peer.credit("/user/x", 3))  # one was outstanding
        node.urgent(node.peer.credit("/user/nobody", 5))
        stats = credits.statistics()
        assert (stats.outstanding, stats.excess) == (0, 7)
        for n in range(4):  # still no more than the share
            ref.tell(n)
        with pytest.raises(MailboxFull):
            ref.tell(4)
