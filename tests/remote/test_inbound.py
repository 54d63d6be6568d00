"""The inbound side without a server: frames fed to ``Inbound.on_frame`` of a
node whose NATS client is a recorder, one test per envelope kind, frame
numbers (in order, gaps, duplicates), acks and bad input. Fast: no
nats-server, no second node (the peer is a ``Wire`` of its own)."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from actors import Actor, StopReason
from actors.remote import NodeAddress, RefAddress, RemoteRef
from actors.remote._envelopes import (
    AckEnvelope,
    DeathEnvelope,
    FailureEnvelope,
    HeartbeatAckEnvelope,
    LookupReplyEnvelope,
    ReplyEnvelope,
    decode_frame,
)
from actors.remote._inbound import ACK_BYTES
from actors.testing import TestProbe, await_assert

from ._offline import PEER, Ping, offline_node

pytestmark = pytest.mark.anyio


def _one(items: Any) -> None:
    assert len(items) == 1, items


class Echo(Actor):
    def receive(self, message: Any) -> Any:
        return message


async def test_a_tell_from_a_peer_reaches_the_local_actor() -> None:
    async with offline_node() as (system, node):
        probe: TestProbe[Any] = TestProbe(system, name="p")
        node.feed(node.peer.tell("/user/p", Ping(1)), node.peer.tell("p", Ping(2)))
        await probe.expect_message(Ping(1))
        node.parts.local.register("p", probe.ref)
        node.feed(node.peer.tell("p", Ping(3)))
        await probe.expect_message(Ping(3))
        # The tell to the unregistered name "p" was a dead letter, per peer.
        assert node.parts.local.dead_letters_by_peer == {("peer", "actor not found"): 1}


async def test_an_ask_from_a_peer_is_answered_to_its_node_with_its_id() -> None:
    async with offline_node() as (system, node):
        system.spawn(Echo, name="echo")
        node.feed(node.peer.ask("/user/echo", 7, Ping(5)))

        def answered() -> None:
            replies = node.client.envelopes(ReplyEnvelope)
            _one(replies)
            reply = replies[0]
            assert reply.ask_id == 7
            assert node.parts.wire.codec.decode(reply.tag, reply.body) == Ping(5)

        await await_assert(answered)
        subject, _, _ = node.client.published[-1]
        assert subject == node.parts.subjects.inbox_of(PEER)


async def test_an_ask_from_a_program_is_answered_on_its_reply_subject() -> None:
    async with offline_node() as (system, node):
        system.spawn(Echo, name="echo")
        frame = node.stranger.frame([node.stranger.ask("/user/echo", 1, 42)])
        node.raw(frame, reply="_INBOX.me.1")
        await await_assert(lambda: _one(node.client.published))
        subject, payload, _ = node.client.published[0]
        assert subject == "_INBOX.me.1"
        [reply] = decode_frame(payload, 1 << 20).envelopes
        assert isinstance(reply, ReplyEnvelope) and reply.ask_id == 1


async def test_an_ask_of_a_missing_actor_fails_with_actor_stopped() -> None:
    async with offline_node() as (_, node):
        node.feed(node.peer.ask("/user/nobody", 3, 1))
        [failure] = node.client.envelopes(FailureEnvelope)
        error = node.parts.wire.codec.decode(failure.tag, failure.body)
        assert failure.ask_id == 3 and type(error).__name__ == "ActorStopped"


async def test_a_lookup_is_answered_found_or_not() -> None:
    async with offline_node() as (system, node):
        system.spawn(Echo, name="echo")
        node.feed(node.peer.lookup(1, "/user/echo"), node.peer.lookup(2, "/user/x"))
        replies = node.client.envelopes(LookupReplyEnvelope)
        assert [(r.ask_id, r.found) for r in replies] == [(1, True), (2, False)]


async def test_a_stop_from_a_peer_stops_the_local_actor() -> None:
    async with offline_node() as (system, node):
        echo = system.spawn(Echo, name="echo")
        node.feed(node.peer.stop("/user/echo"))
        with anyio.fail_after(5):
            assert isinstance(await echo.join(), StopReason)


async def test_a_watch_from_a_peer_is_answered_with_a_death_when_the_actor_ends() -> (
    None
):
    async with offline_node() as (system, node):
        echo = system.spawn(Echo, name="echo")
        node.feed(node.peer.watch("/user/echo"), node.peer.watch("/user/nobody"))

        def deaths(*paths: str) -> None:
            sent = node.client.envelopes(DeathEnvelope)
            assert [d.path for d in sent] == list(paths)

        await await_assert(lambda: deaths("/user/nobody"))
        echo.stop()
        await echo.join()
        await await_assert(lambda: deaths("/user/nobody", "/user/echo"))


async def test_a_death_ends_the_local_watch_of_the_remote_actor() -> None:
    async with offline_node() as (_, node):
        ref = RemoteRef[Any](
            node.parts._owner, RefAddress(PEER.node, PEER.incarnation, "/user/x")
        )
        reasons: list[object] = []

        async def join() -> None:
            reasons.append(await node.parts.watch.join(ref))

        async with anyio.create_task_group() as tg:
            tg.start_soon(join)
            await await_assert(lambda: _one(node.parts.watch.watchers))
            node.feed(node.peer.death("/user/x", StopReason.NORMAL))
        assert reasons == [StopReason.NORMAL]
        assert node.parts.watch.watchers == {}
        assert node.parts.monitor.depended == {}


async def test_a_reply_is_matched_to_its_ask_and_a_late_one_is_counted() -> None:
    async with offline_node() as (_, node):
        asks = node.parts.asks
        ref = RemoteRef[Any](
            node.parts._owner, RefAddress(PEER.node, PEER.incarnation, "/user/e")
        )
        got: list[Any] = []

        async def ask() -> None:
            got.append(await asks.ask(ref, Ping(1), 5.0))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await await_assert(lambda: _one(asks.pending))
            [ask_id] = asks.pending
            node.feed(node.peer.reply(ask_id, "pong"))
        assert got == ["pong"]
        node.feed(node.peer.reply(ask_id, "again"))  # its ask has ended
        assert asks.late_replies == 1


async def test_a_reply_from_another_node_is_bad_input_and_not_taken() -> None:
    async with offline_node() as (_, node):
        asks = node.parts.asks
        other = NodeAddress("other", "fedcba9876543210")
        ref = RemoteRef[Any](
            node.parts._owner, RefAddress(other.node, other.incarnation, "/user/e")
        )
        with anyio.move_on_after(0.2):
            async with anyio.create_task_group() as tg:
                tg.start_soon(asks.ask, ref, 1, 5.0)
                await await_assert(lambda: _one(asks.pending))
                [ask_id] = asks.pending
                node.feed(node.peer.reply(ask_id, "forged"))
                assert asks.pending[ask_id].state == 0  # still waiting
                tg.cancel_scope.cancel()
        assert node.bad == {"answer from another node": 1}


async def test_frame_numbers_count_gaps_and_ignore_numbers_seen_before() -> None:
    async with offline_node() as (_, node):
        tell = node.peer.tell("/user/nobody", 1)
        node.feed(tell, seq=1)
        node.feed(tell, seq=2)
        node.feed(tell, seq=5)  # 3 and 4 never came
        node.feed(tell, seq=4)  # out of order: older than the last
        node.feed(tell, seq=5)  # a duplicate
        peer = node.parts.peers.peers[PEER]
        assert peer.received is not None
        assert (peer.received.seq, peer.received.frames) == (5, 3)
        assert node.parts.peers.lost_frames == {PEER: 2}
        # Both dropped before their envelopes were handled, as replays.
        assert node.bad == {"replayed frame": 2}
        assert node.parts.local.dead_letters_by_peer == {("peer", "actor not found"): 3}


async def test_a_peer_is_acked_every_ack_bytes_and_with_each_heartbeat() -> None:
    async with offline_node() as (_, node):
        body = "x" * 4096
        frames = 0
        while not node.client.envelopes(AckEnvelope):
            node.feed(node.peer.tell("/user/nobody", body))
            frames += 1
            assert frames * 4096 <= ACK_BYTES + 8192
        [ack] = node.client.envelopes(AckEnvelope)
        assert ack.seq == frames
        node.urgent(node.peer.heartbeat(9))
        [answer] = node.client.envelopes(HeartbeatAckEnvelope)
        assert answer.seq == 9
        # With the heartbeat's answer, an ack of the last frame again (an ack
        # lost on the way must not leave the peer's window full).
        acks = node.client.envelopes(AckEnvelope)
        assert [a.seq for a in acks] == [frames, frames]
        # Out of band: published at once, numbered on the out-of-band lane
        # (1, 2, 3, ... in publishing order: credits handed back for the
        # dead-lettered tells go out of band too).
        lane = node.parts.subjects.return_for(PEER) + ".o"
        numbers = [
            int(reply.removeprefix(lane))
            for _, _, reply in node.client.published
            if reply is not None and reply.startswith(lane)
        ]
        assert numbers == list(range(1, len(numbers) + 1))
        assert len(numbers) >= 3


async def test_an_ack_from_a_peer_opens_the_window_of_its_buffer() -> None:
    async with offline_node() as (_, node):
        outbound = node.parts.peers.outbound(PEER)
        assert outbound is not None
        outbound.try_put(node.parts.wire.tell("/user/x", 1))
        await await_assert(lambda: _one([None] * outbound.statistics().frames))
        assert outbound.statistics().in_flight > 0
        node.feed(node.peer.ack(1))
        assert outbound.statistics().in_flight == 0


async def test_bad_frames_and_bodies_are_counted_per_cause_and_dropped() -> None:
    async with offline_node() as (system, node):
        probe: TestProbe[Any] = TestProbe(system, name="p")
        node.raw(b"\x93\x01", reply="r")  # truncated
        node.raw(msgspec.msgpack.encode([2, None, []]))  # another version
        undecodable = msgspec.msgpack.encode([0, "/user/p", "ping", "not a Ping"])
        node.feed(undecodable)
        node.feed(node.peer.lookup_reply(1, True))  # only answers a request
        assert node.bad == {
            "malformed frame": 1,
            "unknown version": 1,
            "undecodable message": 1,
            "unexpected envelope": 1,
        }
        await probe.expect_no_message(within=0.05)


async def test_frames_are_dropped_while_the_node_does_not_accept_them() -> None:
    async with offline_node() as (system, node):
        probe: TestProbe[Any] = TestProbe(system, name="p")
        node.parts.inbound.accepting = False
        node.feed(node.peer.tell("/user/p", Ping(1)))
        await probe.expect_no_message(within=0.05)
        assert node.bad == {}
