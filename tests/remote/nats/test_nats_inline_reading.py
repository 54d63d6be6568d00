"""Reading inline on asyncio: what the server sends is parsed and delivered
in the transport's ``data_received`` (``actors.nats._direct.inline_reader``),
not in the reader task. These tests pin what that must not change: callbacks
may use anyio there, also in a program started by ``asyncio.run``, and
messages keep their order across the chunks the socket delivers."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from actors.nats import Msg, NatsServer, connect


def test_a_callback_may_use_anyio_in_a_program_started_by_asyncio_run(
    nats_server: NatsServer, subject: str
) -> None:
    # Outside a task, anyio finds its backend through sniffio's context
    # variable only: anyio.run sets it, asyncio.run does not.
    times: list[float] = []
    errors: list[Exception] = []

    async def main() -> None:
        done = asyncio.Event()

        def on_msg(msg: Msg) -> None:
            times.append(anyio.current_time())
            done.set()

        async with connect(nats_server.url, error_callback=errors.append) as nc:
            await nc.subscribe(subject, callback=on_msg)
            await nc.flush()
            await nc.publish(subject, b"x")
            await asyncio.wait_for(done.wait(), 5)

    asyncio.run(main())
    assert errors == []
    assert len(times) == 1


@pytest.mark.anyio
async def test_many_messages_in_many_chunks_arrive_complete_and_in_order(
    nats_server: NatsServer, subject: str
) -> None:
    # 2,000 messages of 1 KiB: the socket delivers them in many chunks, some
    # splitting a message; every one arrives once, in order.
    count = 2_000
    received: list[int] = []
    done = anyio.Event()

    def on_msg(msg: Msg) -> None:
        received.append(int(msg.data[:8]))
        if len(received) == count:
            done.set()

    async with connect(nats_server.url) as pub, connect(nats_server.url) as sub:
        await sub.subscribe(subject, callback=on_msg)
        await sub.flush()
        for n in range(count):
            await pub.publish(subject, b"%08d" % n + b"x" * 1016)
        with anyio.fail_after(10):
            await done.wait()
    assert received == list(range(count))
