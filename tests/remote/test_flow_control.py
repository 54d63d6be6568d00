"""Bytes in flight between nodes are bounded (numbered frames, acks, a window
per peer), and what is lost anyway is counted: a frame NATS returns is known
envelope by envelope, a gap in a peer's frame numbers is a lost frame."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from actors import ActorSystem, DeadLetter, MailboxFull
from actors.nats import Msg, NatsServer, connect
from actors.nats._protocol import new_nuid
from actors.remote import NodeAddress, NodeUnreachable, RefAddress, Remote, RemoteRef
from actors.remote._envelopes import AckEnvelope, TellEnvelope, decode_frame
from actors.remote._outbound import MIN_WINDOW

pytestmark = pytest.mark.anyio


async def test_a_peer_that_acks_nothing_gets_at_most_a_window_then_tell_is_refused(
    nats_server: NatsServer,
) -> None:
    # A raw client listens on a fake node's inbox and never acks: the sender
    # publishes a window's worth, then its buffer fills and tell refuses.
    system = "f" + new_nuid(10)
    peer = NodeAddress.new("slow")
    received: list[int] = []

    def count(msg: Msg) -> None:
        if msg.reply is None or not msg.reply.rpartition(".")[2].startswith("o"):
            received.append(len(msg.data))  # (not the out-of-band share)

    payload = b"x" * 1024
    async with (
        connect(nats_server.url) as raw,
        ActorSystem(
            remote=Remote(
                nats_server.url, system=system, node="a", capacity=64, window=MIN_WINDOW
            )
        ) as a,
    ):
        await raw.subscribe(f"actors.{system}.slow.{peer.incarnation}", callback=count)
        await raw.flush()
        ref = RemoteRef[Any](a.remote, RefAddress(peer.node, peer.incarnation, "/x"))
        ref.tell(payload)
        sent = 1
        outbound = a.remote._parts.peers.outbounds[peer]
        # Tell until the buffer is full with the window full too (the writer
        # runs at the checkpoints).
        with anyio.fail_after(10):
            while True:
                try:
                    ref.tell(payload)
                    sent += 1
                except MailboxFull:
                    if outbound.statistics().in_flight >= MIN_WINDOW:
                        break
                    await anyio.lowlevel.checkpoint()
        for _ in range(10):  # the writer, still waiting, takes nothing more
            await anyio.lowlevel.checkpoint()
        with pytest.raises(MailboxFull):
            ref.tell(payload)
        stats = outbound.statistics()
        # At most one frame over the window is in flight, and the rest waits.
        assert stats.in_flight >= MIN_WINDOW
        assert stats.in_flight < MIN_WINDOW + 1024 * 1024
        assert stats.queued == 64
        await a.remote._client.flush()  # type: ignore[union-attr]
        await raw.flush()
        assert sum(received) == stats.bytes < sent * len(payload) + 4096
        # An ack opens the window: the writer goes on.
        outbound.acked(stats.frames)
        with anyio.fail_after(5):
            while outbound.statistics().queued:
                await anyio.lowlevel.checkpoint()


async def test_a_send_waits_while_the_window_is_full_and_goes_on_after_an_ack(
    nats_server: NatsServer,
) -> None:
    system = "f" + new_nuid(10)
    peer = NodeAddress.new("slow")
    async with (
        connect(nats_server.url) as raw,
        ActorSystem(
            remote=Remote(
                nats_server.url, system=system, node="a", capacity=8, window=MIN_WINDOW
            )
        ) as a,
    ):
        await raw.subscribe(f"actors.{system}.slow.{peer.incarnation}")
        await raw.flush()
        ref = RemoteRef[Any](a.remote, RefAddress(peer.node, peer.incarnation, "/x"))
        blocked = anyio.Event()
        done = anyio.Event()

        async def sender() -> None:
            for _ in range(MIN_WINDOW // 1024 + 64):
                with anyio.move_on_after(0) as scope:
                    await ref.send(b"x" * 1024)
                if scope.cancelled_caught:
                    blocked.set()
                    await ref.send(b"x" * 1024)
            done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(sender)
            with anyio.fail_after(5):
                await blocked.wait()
            assert not done.is_set()
            outbound = a.remote._parts.peers.outbounds[peer]
            # Acks (as the peer would send them) open the window each time.
            with anyio.fail_after(5):
                while not done.is_set():
                    outbound.acked(outbound.statistics().frames)
                    await anyio.lowlevel.checkpoint()


async def test_two_nodes_ack_each_other_so_a_long_stream_never_stalls(
    nats_server: NatsServer,
) -> None:
    from tests.remote.test_remote_actors import Collector

    system = "f" + new_nuid(10)
    done = anyio.Event()
    count = 2_000
    async with (
        ActorSystem(
            remote=Remote(nats_server.url, system=system, node="b", window=MIN_WINDOW)
        ) as b,
        ActorSystem(
            remote=Remote(nats_server.url, system=system, node="a", window=MIN_WINDOW)
        ) as a,
    ):
        b.spawn(Collector, count, done, name="c")
        ref = await a.remote.lookup("b", "/user/c")
        payload = b"y" * 1024  # 2 MiB in all: eight windows
        with anyio.fail_after(30):
            for _ in range(count):
                await ref.send(payload)
            await done.wait()
        stats = a.remote._parts.peers.outbounds[ref.node].statistics()
        assert stats.in_flight <= MIN_WINDOW + 1024 * 1024
        assert a.remote.lost_frames == {} and b.remote.lost_frames == {}


async def test_a_frame_nobody_listens_for_dead_letters_its_tells_and_fails_its_asks(
    nats_server: NatsServer,
) -> None:
    system = "f" + new_nuid(10)
    gone = NodeAddress.new("gone")
    letters: list[DeadLetter] = []
    got = anyio.Event()

    def seen(letter: DeadLetter) -> None:
        letters.append(letter)
        if len(letters) == 3:
            got.set()

    async with ActorSystem(
        remote=Remote(nats_server.url, system=system, node="a")
    ) as a:
        ref = RemoteRef[Any](a.remote, RefAddress(gone.node, gone.incarnation, "/x"))
        with a.dead_letters.subscribe(seen):
            for n in range(3):
                ref.tell(n)
            with anyio.fail_after(5):
                await got.wait()
            with anyio.fail_after(5), pytest.raises(NodeUnreachable):
                await ref.ask("anyone?", timeout=60)
        assert [(x.message, x.reason) for x in letters] == [
            (n, "node unreachable") for n in range(3)
        ]
        assert a.remote.asks_in_flight == 0
        outbound = a.remote._parts.peers.outbounds[gone]
        assert outbound.statistics().returned >= 1
        assert outbound.statistics().in_flight == 0


async def test_a_gap_in_a_peers_frame_numbers_is_counted_as_lost_frames(
    nats_server: NatsServer,
) -> None:
    # A raw client plays a node: it sends numbered frames 1, 2 and 5 (3 and
    # 4 "lost"), then a heartbeat; the node acks frame 5.
    system = "f" + new_nuid(10)
    fake = NodeAddress.new("fake")
    acks: list[int] = []
    acked = anyio.Event()

    def on_frame(msg: Msg) -> None:
        for envelope in decode_frame(msg.data, 1 << 20).envelopes:
            if type(envelope) is AckEnvelope:
                acks.append(envelope.seq)
                acked.set()

    async with (
        connect(nats_server.url) as raw,
        ActorSystem(remote=Remote(nats_server.url, system=system, node="a")) as a,
    ):
        await raw.subscribe(
            f"actors.{system}.fake.{fake.incarnation}", callback=on_frame
        )
        await raw.flush()
        inbox = f"actors.{system}.a.{a.remote.node.incarnation}"
        encode = msgspec.msgpack.encode
        sender = [fake.node, fake.incarnation]
        for seq in (1, 2, 5):
            tell = [0, "/user/nobody", "int", seq]
            # As a node numbers them: <its inbox>.nr.<a>.<a's incarnation>.<n>
            reply = (
                f"actors.{system}.fake.{fake.incarnation}.nr.a."
                f"{a.remote.node.incarnation}.{seq}"
            )
            await raw.publish(inbox, encode([1, sender, [tell]]), reply=reply)
        # A heartbeat, numbered on the out-of-band lane ("o<n>").
        await raw.publish(inbox, encode([1, sender, [[7, 1]]]), reply=reply[:-1] + "o1")
        with anyio.fail_after(5):
            await acked.wait()
        assert acks == [5]
        assert a.remote.lost_frames == {fake: 2}
        assert TellEnvelope  # the tells were dead letters on a (no such actor)


async def test_a_window_left_full_by_missing_acks_asks_for_one_and_goes_on(
    nats_server: NatsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The receiver acks only with its heartbeat answers (as if every other
    # ack were lost): a writer whose window stays full asks for an ack (a
    # heartbeat) and goes on, so a long stream still arrives whole.
    from actors.remote import _inbound, _window
    from tests.remote.test_remote_actors import Collector

    monkeypatch.setattr(_inbound, "ACK_BYTES", 1 << 62)
    monkeypatch.setattr(_window, "ACK_TIMEOUT", 0.05)
    system = "f" + new_nuid(10)
    done = anyio.Event()
    count = 1_000
    async with (
        ActorSystem(
            remote=Remote(nats_server.url, system=system, node="b", window=MIN_WINDOW)
        ) as b,
        ActorSystem(
            remote=Remote(nats_server.url, system=system, node="a", window=MIN_WINDOW)
        ) as a,
    ):
        b.spawn(Collector, count, done, name="c")
        ref = await a.remote.lookup("b", "/user/c")
        with anyio.fail_after(20):
            for _ in range(count):
                await ref.send(b"z" * 1024)  # 1,000 KiB: about four windows
            await done.wait()
