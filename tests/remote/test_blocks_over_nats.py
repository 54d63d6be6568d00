"""The building blocks together over a real server, as the runtime will use
them: two nodes exchange tells, heartbeats and acks through outbound buffers
and frames; a node that goes silent is declared down, and frames to it come
back as no-responders naming it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup

from actors.nats import Client, Msg, NatsServer, connect
from actors.remote._codec import Codec
from actors.remote._envelopes import (
    HeartbeatAckEnvelope,
    HeartbeatEnvelope,
    TellEnvelope,
    decode_frame,
)
from actors.remote._errors import NodeDown
from actors.remote._heartbeat import HeartbeatMonitor
from actors.remote._node import NodeAddress
from actors.remote._outbound import Outbound
from actors.remote._subjects import Subjects
from actors.remote._wire import Wire
from actors.testing.remote import FAST_HEARTBEAT_INTERVAL, fast_detector

pytestmark = pytest.mark.anyio


class MiniNode:
    """A node reduced to the building blocks: no actors, a journal of tells."""

    def __init__(self, nc: Client, name: str, tg: TaskGroup) -> None:
        self.nc = nc
        self.tg = tg
        self.address = NodeAddress.new(name)
        self.subjects = Subjects("blocks", self.address)
        self.codec = Codec()
        self.wire = Wire(self.codec, self.address)
        self.outbounds: dict[NodeAddress, Outbound] = {}
        self.told: list[object] = []
        self.acks = 0
        self.acked = anyio.Event()
        self.down: list[NodeDown] = []
        self.went_down = anyio.Event()
        self.unreachable: list[NodeAddress] = []
        self.got_unreachable = anyio.Event()
        self.monitor = HeartbeatMonitor(
            lambda peer, seq: self.outbound(peer).put_system(self.wire.heartbeat(seq)),
            self.on_down,
            interval=FAST_HEARTBEAT_INTERVAL,
            detector=fast_detector,
        )
        self.serving = anyio.CancelScope()

    def on_down(self, event: NodeDown) -> None:
        self.down.append(event)
        outbound = self.outbounds.pop(event.node, None)
        if outbound is not None:
            outbound.abort(event)
        self.went_down.set()

    def outbound(self, peer: NodeAddress) -> Outbound:
        out = self.outbounds.get(peer)
        if out is None:
            out = self.outbounds[peer] = Outbound(
                peer,
                self.wire,
                self.nc,
                subject=self.subjects.inbox_of(peer),
                reply=self.subjects.return_for(peer),
            )
            self.tg.start_soon(out.run)
        return out

    def on_return(self, msg: Msg) -> None:
        peer = self.subjects.peer_of_return(msg.subject)
        if msg.status == 503 and peer is not None:
            self.unreachable.append(peer)
            self.got_unreachable.set()

    def on_frame(self, msg: Msg) -> None:
        frame = decode_frame(msg.data, self.nc.max_payload)
        sender = frame.sender
        assert sender is not None
        for envelope in frame.envelopes:
            if isinstance(envelope, TellEnvelope):
                self.told.append(self.codec.decode(envelope.tag, envelope.body))
            elif isinstance(envelope, HeartbeatEnvelope):
                self.outbound(sender).put_system(self.wire.heartbeat_ack(envelope.seq))
            elif isinstance(envelope, HeartbeatAckEnvelope):
                self.monitor.acked(sender)
                self.acks += 1
                if self.acks >= 5:
                    self.acked.set()

    async def serve(self, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        with self.serving:
            inbox = await self.nc.subscribe(self.subjects.inbox, callback=self.on_frame)
            returns = await self.nc.subscribe(
                self.subjects.returns, callback=self.on_return
            )
            await self.nc.flush()
            task_status.started()
            try:
                await self.monitor.run()
            finally:
                with anyio.CancelScope(shield=True):
                    await inbox.unsubscribe()
                    await returns.unsubscribe()
                    await self.nc.flush()


async def test_two_nodes_tell_in_order_then_a_silent_one_is_declared_down(
    nats_server: NatsServer,
) -> None:
    async with (
        connect(nats_server.url) as nc_a,
        connect(nats_server.url) as nc_b,
        anyio.create_task_group() as tg,
    ):
        a, b = MiniNode(nc_a, "a", tg), MiniNode(nc_b, "b", tg)
        await tg.start(a.serve)
        await tg.start(b.serve)
        for n in range(1000):
            a.outbound(b.address).try_put(a.wire.tell("/user/x", n))
        a.monitor.monitor(b.address)
        with anyio.fail_after(10):
            await a.acked.wait()  # b answers a's heartbeats
        assert b.told == list(range(1000))  # FIFO, and before the acks
        assert a.down == []

        b.serving.cancel()  # b stops answering (as after kill -9)
        with anyio.fail_after(10):
            await a.went_down.wait()
        assert [event.node for event in a.down] == [b.address]

        # Its inbox has no subscriber now: the heartbeats sent meanwhile came
        # back as no-responders naming it, and so does a frame sent now.
        assert a.unreachable and set(a.unreachable) == {b.address}
        a.unreachable.clear()
        a.got_unreachable = anyio.Event()
        a.outbound(b.address).try_put(a.wire.tell("/user/x", "late"))
        with anyio.fail_after(10):
            await a.got_unreachable.wait()
        assert set(a.unreachable) == {b.address}
        tg.cancel_scope.cancel()
