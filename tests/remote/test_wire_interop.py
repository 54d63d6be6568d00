"""docs/remote-wire-format.md is enough for a nats-py program: its example,
run against a minimal node made of the wire building blocks, asks and tells
(asyncio only: nats-py runs on asyncio)."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from actors.nats import NatsServer, connect
from actors.remote._codec import Codec
from actors.remote._envelopes import AskEnvelope, TellEnvelope, decode_frame
from actors.remote._errors import DecodeError
from actors.remote._node import NodeAddress
from actors.remote._subjects import Subjects
from actors.remote._wire import Wire

nats = pytest.importorskip("nats")

pytestmark = pytest.mark.anyio


async def test_a_nats_py_program_asks_and_tells_as_the_document_says(
    anyio_backend: Any, nats_server: NatsServer
) -> None:
    if anyio_backend[0] != "asyncio":
        pytest.skip("nats-py runs on asyncio only")
    node = NodeAddress.new("web")
    subjects = Subjects("shop", node)
    codec = Codec()
    wire = Wire(codec, node)
    told: list[object] = []
    got_tell = anyio.Event()

    def greeter(message: object) -> str:
        if message == "":
            raise ValueError("no name")
        return f"Hello, {message}"

    async with connect(nats_server.url) as nc, anyio.create_task_group() as tg:
        sub = await nc.subscribe(subjects.name, queue=subjects.queue)
        await nc.flush()

        async def serve() -> None:
            # What the runtime integration will do, reduced to one actor.
            async for msg in sub:
                try:
                    frame = decode_frame(msg.data, nc.max_payload)
                except DecodeError:
                    continue
                for envelope in frame.envelopes:
                    assert envelope.path == "/user/greeter"  # type: ignore[union-attr]
                    if isinstance(envelope, TellEnvelope):
                        told.append(codec.decode(envelope.tag, envelope.body))
                        got_tell.set()
                    elif isinstance(envelope, AskEnvelope):
                        assert frame.sender is None and msg.reply is not None
                        message = codec.decode(envelope.tag, envelope.body)
                        try:
                            answer = wire.reply(envelope.ask_id, greeter(message))
                        except Exception as exc:
                            answer = wire.failure(envelope.ask_id, exc)
                        await nc.publish(msg.reply, wire.frame([answer]))

        tg.start_soon(serve)
        peer = await nats.connect(nats_server.url)
        try:
            # The document's example, verbatim but for the assertions.
            ask = [1, "/user/greeter", 1, "str", "Ada"]
            frame = msgspec.msgpack.encode([1, None, [ask]])
            msg = await peer.request("actors.shop.web", frame, timeout=5)
            version, sender, envelopes = msgspec.msgpack.decode(msg.data)
            kind, ask_id, tag, body = envelopes[0]
            assert (version, sender) == (1, [node.node, node.incarnation])
            assert (kind, ask_id, tag, body) == (2, 1, "str", "Hello, Ada")

            ask = [1, "/user/greeter", 2, "str", ""]
            frame = msgspec.msgpack.encode([1, None, [ask]])
            msg = await peer.request("actors.shop.web", frame, timeout=5)
            _, _, envelopes = msgspec.msgpack.decode(msg.data)
            kind, ask_id, tag, body = envelopes[0]
            assert (kind, ask_id, tag) == (3, 2, "builtins.ValueError")
            args, traceback_text = body
            assert args == ["no name"] and "ValueError: no name" in traceback_text

            await peer.publish(
                "actors.shop.web",
                msgspec.msgpack.encode(
                    [1, None, [[0, "/user/greeter", "str", "Grace"]]]
                ),
            )
            await peer.flush()
            with anyio.fail_after(5):
                await got_tell.wait()
            assert told == ["Grace"]
        finally:
            await peer.close()
        tg.cancel_scope.cancel()
