"""The peer table's bounds without a server: at most ``max_peers`` peers,
gone incarnations forgotten after ``gone_ttl``, quiet peers retired after
``idle_timeout`` with their frame numbers kept (a replay is still refused,
a new buffer numbers on)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from actors.nats import Msg
from actors.remote import NodeAddress, NodeUnreachable
from actors.remote._wire import Wire
from actors.testing import TestProbe

from ._offline import PEER, Ping, offline_node

pytestmark = pytest.mark.anyio


async def test_a_gone_incarnation_is_refused_until_its_time_is_over() -> None:
    async with offline_node(gone_ttl=30.0) as (system, node):
        probe: TestProbe[Any] = TestProbe(system, name="p")
        node.feed(node.peer.tell("/user/p", Ping(1)))
        await probe.expect_message(Ping(1))
        peers = node.parts.peers
        peers.lose(PEER, NodeUnreachable("declared down"))
        node.feed(node.peer.tell("/user/p", Ping(2)))
        assert node.bad == {"from a gone node": 1}
        peers.prune(anyio.current_time() + 31.0)
        assert PEER not in peers.gone
        node.feed(node.peer.tell("/user/p", Ping(3)))
        await probe.expect_message(Ping(3))


async def test_a_quiet_peer_is_retired_and_keeps_its_frame_numbers() -> None:
    async with offline_node(idle_timeout=10.0) as (system, node):
        probe: TestProbe[Any] = TestProbe(system, name="p")
        node.feed(node.peer.tell("/user/p", Ping(1)), seq=1)
        node.urgent(node.peer.heartbeat(1))  # answered: a buffer to PEER
        await probe.expect_message(Ping(1))
        peers = node.parts.peers
        outbound = peers.outbounds[PEER]
        sent = outbound.numbers
        before = len(node.client.published)
        now = anyio.current_time()
        peers.prune(now)  # the round that sees it quiet
        peers.prune(now + 5.0)
        assert PEER in peers.peers  # not yet
        peers.prune(now + 11.0)
        assert PEER not in peers.peers and PEER in peers.retired
        assert outbound.closed
        # A replay of its frame 1 is still refused; frame 2 is taken.
        node.feed(node.peer.tell("/user/p", Ping(1)), seq=1)
        assert node.bad == {"replayed frame": 1}
        node.feed(node.peer.tell("/user/p", Ping(2)), seq=2)
        await probe.expect_message(Ping(2))
        # Its new buffer numbers on from the old one's numbers (it sends our
        # share, the credit for Ping(2), and a heartbeat is answered with a
        # heartbeat ack and an ack; how many frames those take follows the
        # scheduling): every frame since goes on from the old last number.
        node.urgent(node.peer.heartbeat(2))
        numbers = [
            int(reply.rpartition(".o")[2])
            for _, _, reply in node.client.published[before:]
            if reply is not None
        ]
        assert len(numbers) >= 3, numbers  # the share, the heartbeat ack, the ack
        assert numbers == list(range(sent[1] + 1, sent[1] + 1 + len(numbers)))
        assert peers.outbounds[PEER].numbers[1] == numbers[-1]


async def test_a_full_peer_table_refuses_new_peers_and_keeps_working_ones() -> None:
    async with offline_node(max_peers=2) as (system, node):
        probe: TestProbe[Any] = TestProbe(system, name="p")
        inbox = node.parts.subjects.inbox
        me = node.parts.address
        for i in range(3):
            fake = NodeAddress(f"n{i}", f"{i:016x}")
            frame = Wire(node.parts.wire.codec, fake).frame(
                [node.peer.tell("/user/p", Ping(i))]
            )
            reply = f"x.nr.{me.node}.{me.incarnation}.1"
            node.parts.inbound.on_frame(Msg(inbox, 1, reply, frame))
        await probe.expect_message(Ping(0))
        await probe.expect_message(Ping(1))
        await probe.expect_no_message(within=0.05)
        assert node.bad == {"peer table full": 1}
        assert len(node.parts.peers.peers) == 2
