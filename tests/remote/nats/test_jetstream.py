"""The JetStream API of the anyio NATS client, against a real ``nats-server
-js``: streams, publishing with acknowledgements (dedup, conditional
appends), direct gets, typed errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from actors.nats import (
    JetStreamError,
    JetStreamNotEnabledError,
    MessageNotFoundError,
    NatsServer,
    NoStreamResponseError,
    StreamConfig,
    StreamNameInUseError,
    StreamNotFoundError,
    WrongLastSequenceError,
    connect,
)
from actors.nats._protocol import new_nuid

pytestmark = pytest.mark.anyio


@pytest.fixture
def name() -> str:
    """A stream name no other test uses."""
    return f"S{new_nuid(10)}"


async def test_a_stream_is_created_inspected_updated_and_deleted(
    jetstream_server: NatsServer, name: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        js = nc.jetstream()
        config = StreamConfig(name, subjects=(f"{name}.>",), duplicate_window=30.0)
        info = await js.add_stream(config)
        assert info.config.name == name
        assert info.config.subjects == (f"{name}.>",)
        assert info.config.storage == "file"
        assert info.config.duplicate_window == 30.0
        assert info.state.messages == 0
        again = await js.add_stream(config)  # the same config: idempotent
        assert again.config == info.config
        with pytest.raises(StreamNameInUseError) as caught:
            await js.add_stream(StreamConfig(name, subjects=(f"{name}.x",)))
        assert caught.value.err_code == 10058
        updated = await js.update_stream(
            StreamConfig(name, subjects=(f"{name}.>",), max_msgs_per_subject=5)
        )
        assert updated.config.max_msgs_per_subject == 5
        await js.publish(f"{name}.a", b"1")
        assert (await js.stream_info(name)).state.messages == 1
        await js.delete_stream(name)
        with pytest.raises(StreamNotFoundError) as missing:
            await js.stream_info(name)
        assert (missing.value.code, missing.value.err_code) == (404, 10059)


async def test_publish_acknowledges_with_the_stream_sequence_and_dedups_by_id(
    jetstream_server: NatsServer, name: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name, subjects=(f"{name}.>",)))
        first = await js.publish(f"{name}.a", b"one", msg_id="id-1")
        assert (first.stream, first.seq, first.duplicate) == (name, 1, False)
        retry = await js.publish(f"{name}.a", b"one again", msg_id="id-1")
        assert (retry.seq, retry.duplicate) == (1, True)
        second = await js.publish(f"{name}.b", b"two", headers={"Trace": "x"})
        assert second.seq == 2
        info = await js.stream_info(name)
        assert info.state.messages == 2
        stored = await js.get_msg(name, 2)
        assert (stored.subject, stored.data, stored.headers) == (
            f"{name}.b",
            b"two",
            {"Trace": "x"},
        )


async def test_a_conditional_publish_on_the_subject_s_last_sequence(
    jetstream_server: NatsServer, name: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name, subjects=(f"{name}.>",)))
        subject = f"{name}.p"
        one = await js.publish(subject, b"1", expected_last_subject_sequence=0)
        await js.publish(f"{name}.other", b"x")  # another subject: no matter
        two = await js.publish(
            subject, b"2", expected_last_subject_sequence=one.seq
        )
        with pytest.raises(WrongLastSequenceError) as caught:
            await js.publish(subject, b"stale", expected_last_subject_sequence=one.seq)
        assert caught.value.err_code == 10071
        assert caught.value.last == two.seq
        with pytest.raises(WrongLastSequenceError):
            await js.publish(subject, b"stale", expected_last_subject_sequence=0)
        with pytest.raises(WrongLastSequenceError):
            await js.publish(subject, b"x", expected_last_sequence=1)
        last = await js.get_msg(name, last_by_subject=subject)
        assert (last.seq, last.data) == (two.seq, b"2")


async def test_direct_gets_of_one_message_and_of_a_subject_s_range(
    jetstream_server: NatsServer, name: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name, subjects=(f"{name}.>",)))
        for n in range(1, 31):
            await js.publish(f"{name}.{'a' if n % 3 else 'b'}", str(n).encode())
        a = [n for n in range(1, 31) if n % 3]
        msgs = await js.get_msgs(name, f"{name}.a", start_seq=1, batch=5)
        assert [int(m.data) for m in msgs] == a[:5]
        assert [m.seq for m in msgs] == a[:5]
        later = await js.get_msgs(name, f"{name}.a", start_seq=msgs[-1].seq + 1)
        assert [int(m.data) for m in later] == a[5:]
        everything = [m async for m in js.subject_msgs(name, f"{name}.a", batch=4)]
        assert [int(m.data) for m in everything] == a
        bounded = [
            m async for m in js.subject_msgs(name, f"{name}.a", start_seq=4, end_seq=11)
        ]
        assert [m.seq for m in bounded] == [4, 5, 7, 8, 10, 11]
        assert await js.get_msgs(name, f"{name}.none") == []
        nxt = await js.get_msg(name, 3, next_by_subject=f"{name}.b")
        assert nxt.seq == 3
        nxt = await js.get_msg(name, 4, next_by_subject=f"{name}.b")
        assert nxt.seq == 6
        last = await js.get_msg(name, last_by_subject=f"{name}.b")
        assert last.seq == 30
        leader = await js.get_msg(name, last_by_subject=f"{name}.b", direct=False)
        assert (leader.seq, leader.data) == (30, b"30")
        lasts = await js.last_msgs(name, [f"{name}.*"])
        assert sorted(m.seq for m in lasts) == [29, 30]
        with pytest.raises(MessageNotFoundError):
            await js.get_msg(name, last_by_subject=f"{name}.none")
        with pytest.raises(MessageNotFoundError):
            await js.get_msg(name, last_by_subject=f"{name}.none", direct=False)


async def test_purging_a_subject_below_a_sequence(
    jetstream_server: NatsServer, name: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name, subjects=(f"{name}.>",)))
        for n in range(6):
            await js.publish(f"{name}.{'a' if n % 2 else 'b'}", b"x")
        purged = await js.purge_stream(name, subject=f"{name}.a", seq=6)
        assert purged == 2  # a at 2 and 4; a at 6 stays
        assert [m.seq for m in await js.get_msgs(name, f"{name}.a")] == [6]
        assert await js.purge_stream(name) == 4
        assert (await js.stream_info(name)).state.messages == 0


async def test_concurrent_publishes_are_acknowledged_each_with_its_own_sequence(
    jetstream_server: NatsServer, name: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name, subjects=(f"{name}.>",)))
        acks: dict[int, int] = {}

        async def one(n: int) -> None:
            ack = await js.publish(f"{name}.x", str(n).encode(), msg_id=f"m{n}")
            acks[n] = ack.seq

        async with anyio.create_task_group() as tg:
            for n in range(200):
                tg.start_soon(one, n)
        assert sorted(acks.values()) == list(range(1, 201))
        stored = [m async for m in js.subject_msgs(name, f"{name}.x")]
        assert {int(m.data): m.seq for m in stored} == acks


async def test_errors_are_typed_with_the_jetstream_error_code(
    jetstream_server: NatsServer, nats_server: NatsServer, name: str
) -> None:
    async with connect(jetstream_server.url) as nc:
        js = nc.jetstream()
        with pytest.raises(NoStreamResponseError):
            await js.publish(f"{name}.nobody", b"x")
        with pytest.raises(StreamNotFoundError):
            await js.get_msg(name, 1)
        with pytest.raises(StreamNotFoundError):
            await js.get_msgs(name, f"{name}.x")
        with pytest.raises(JetStreamError) as caught:
            await js.add_stream(StreamConfig(name, subjects=("$JS.API.>",)))
        assert (caught.value.code, caught.value.err_code) == (500, 10052)
        with pytest.raises(ValueError):
            StreamConfig("bad.name")
        with pytest.raises(ValueError):
            await js.get_msg(name)
    async with connect(nats_server.url) as plain:  # no -js
        with pytest.raises(JetStreamNotEnabledError):
            await plain.jetstream(timeout=2).account_info()


async def test_a_file_stream_survives_a_server_restart_on_its_store_dir(
    nats_server_factory: Callable[..., NatsServer], tmp_path: Path, name: str
) -> None:
    store = tmp_path / "store"
    server = nats_server_factory(store_dir=store)
    assert server.jetstream
    async with connect(server.url) as nc:
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name, subjects=(f"{name}.>",)))
        await js.publish(f"{name}.a", b"kept", msg_id="k1")
    server.stop(kill=True)
    server.start()
    async with connect(server.url) as nc:
        js = nc.jetstream()
        msg = await js.get_msg(name, last_by_subject=f"{name}.a")
        assert msg.data == b"kept"
        # The duplicate window survives the restart too.
        retry = await js.publish(f"{name}.a", b"kept", msg_id="k1")
        assert retry.duplicate
