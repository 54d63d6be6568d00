"""The share handshake: each node advertises its share (``Remote(share=...)``)
to a peer when it first sends to it, and a sender counts its tells to that
peer's actors against the receiver's share, not its own. An advertised
share outside 1..MAX_SHARE is refused and counted; it changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import pytest

from actors import ActorSystem, MailboxFull
from actors.nats import NatsServer
from actors.nats._protocol import new_nuid
from actors.remote import NodeAddress, PeerStatistics, Remote
from actors.remote._credits import MAX_SHARE
from actors.remote._envelopes import ShareEnvelope

from ._offline import PEER, offline_node
from .test_backpressure import Gate, offline_ref, until

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def two_nodes(
    server: NatsServer, b_share: int, a_share: int
) -> AsyncIterator[tuple[ActorSystem, ActorSystem]]:
    """Nodes ``b`` and ``a`` of a cluster of their own, with these shares."""
    system = "sh" + new_nuid(8)
    async with AsyncExitStack() as stack:
        b, a = [
            await stack.enter_async_context(
                ActorSystem(
                    remote=Remote(server.url, system=system, node=name, share=share)
                )
            )
            for name, share in (("b", b_share), ("a", a_share))
        ]
        yield b, a


def stats(system: ActorSystem, peer: NodeAddress) -> PeerStatistics:
    return system.remote.statistics().peers[peer]


@pytest.mark.parametrize(("receiver", "sender"), [(8, 64), (64, 8)])
async def test_a_sender_counts_against_the_share_its_receiver_advertised(
    nats_server: NatsServer, receiver: int, sender: int
) -> None:
    reached, opened = anyio.Event(), anyio.Event()
    async with two_nodes(nats_server, receiver, sender) as (b, a):
        gate = b.spawn(Gate, reached, opened, name="gate")
        ref = await a.remote.lookup("b", "/user/gate")
        # The lookup waited for b's share; b heard a's.
        assert stats(a, b.remote.node).share_advertised == receiver
        assert stats(b, a.remote.node).share_advertised == sender
        for i in range(receiver):
            ref.tell(i)
        with pytest.raises(MailboxFull, match=f"{receiver} messages"):
            ref.tell(receiver)
        await reached.wait()
        await until(lambda: stats(b, a.remote.node).share_outstanding == receiver)
        opened.set()
        with anyio.fail_after(20):
            while len(items := await gate.ask("get")) < receiver:
                await anyio.lowlevel.checkpoint()
        assert items == list(range(receiver))
        # Nothing beyond b's share reached b: no "over share" dead letters.
        assert b.dead_letters.count == 0
        assert b.remote.bad_input == {} and a.remote.bad_input == {}


async def test_a_share_heard_later_admits_the_senders_waiting_for_credit() -> None:
    async with offline_node(share=2) as (_, node):
        ref = offline_ref(node)
        ref.tell(0)
        ref.tell(1)
        credits = node.parts.peers.credits[PEER]
        sent: list[int] = []

        async def send(n: int) -> None:
            await ref.send(n)
            sent.append(n)

        async with anyio.create_task_group() as tg:
            for n in (2, 3):
                tg.start_soon(send, n)
            await until(lambda: credits.statistics().waiting == 2)
            node.urgent(node.peer.share(4, False))
            await until(lambda: sent == [2, 3])
        assert credits.share == 4
        with pytest.raises(MailboxFull, match="4 messages"):
            ref.tell(4)


async def test_a_node_answers_a_share_that_asks_for_its_own_once() -> None:
    async with offline_node(share=32) as (_, node):
        node.urgent(node.peer.share(16, True))
        answers = node.client.envelopes(ShareEnvelope)
        assert answers == [ShareEnvelope(32, False)]
        # An answer (ask false) is not answered again.
        node.urgent(node.peer.share(16, False))
        assert node.client.envelopes(ShareEnvelope) == answers
        assert node.parts.peers.credits[PEER].share == 16
        assert node.bad == {}


@pytest.mark.parametrize("share", [0, MAX_SHARE + 1, 2**63 - 1])
async def test_a_share_out_of_bounds_is_refused_and_counted(share: int) -> None:
    async with offline_node(share=8) as (_, node):
        ref = offline_ref(node)
        ref.tell(0)  # the buffer, its credits and our share exist
        sent = node.client.envelopes(ShareEnvelope)
        node.urgent(node.peer.share(share, True))
        assert node.bad == {"bad share": 1}
        peers = node.parts.peers
        assert peers.credits[PEER].share == 8
        assert peers.peers[PEER].share is None
        assert node.client.envelopes(ShareEnvelope) == sent  # not answered


async def test_a_negative_share_is_a_malformed_frame() -> None:
    async with offline_node(share=8) as (_, node):
        node.urgent(node.peer.share(-1, True))
        assert node.bad == {"malformed frame": 1}
        assert node.parts.peers.peers.get(PEER) is None
