"""The JetStream journal's stored layout with nats-py as the independent
peer (asyncio only: nats-py runs on asyncio): events our journal writes are
read by nats-py's JetStream (a direct get and an ordered consumer) and
decoded from the documented layout by code written here, not the journal's;
events nats-py publishes in that layout are read and continued by our
journal; snapshots are plain key-value entries nats-py reads."""

from __future__ import annotations

import secrets
import struct
from collections.abc import AsyncIterator
from typing import Any

import pytest

from actors.nats import NatsServer
from actors.persistence import JetStreamJournal, StoredEvent, StoredSnapshot
from actors.persistence.testing.tck import events

nats = pytest.importorskip("nats")

pytestmark = pytest.mark.anyio


@pytest.fixture
async def peer(anyio_backend: Any, jetstream_server: NatsServer) -> AsyncIterator[Any]:
    if anyio_backend[0] != "asyncio":
        pytest.skip("nats-py runs on asyncio only")
    client = await nats.connect(jetstream_server.url)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def journal(jetstream_server: NatsServer) -> AsyncIterator[JetStreamJournal]:
    async with JetStreamJournal(
        jetstream_server.url, stream=f"I{secrets.token_hex(6)}"
    ) as journal:
        yield journal


def _decode(data: bytes) -> list[tuple[str, str, float, bytes]]:
    """(manifest, writer, timestamp, payload) per event, from the layout the
    how-to documents."""
    found = []
    position = 0
    while position < len(data):
        m, w, timestamp, p = struct.unpack_from(">HBdI", data, position)
        position += struct.calcsize(">HBdI")
        manifest = data[position : position + m].decode()
        writer = data[position + m : position + m + w].decode()
        payload = data[position + m + w : position + m + w + p]
        position += m + w + p
        found.append((manifest, writer, timestamp, payload))
    return found


def _encode(batch: list[StoredEvent]) -> bytes:
    parts = []
    for event in batch:
        manifest, writer = event.manifest.encode(), event.writer.encode()
        parts.append(
            struct.pack(">HBdI", len(manifest), len(writer), event.timestamp,
                        len(event.payload))
        )
        parts += [manifest, writer, event.payload]
    return b"".join(parts)


async def test_events_we_append_are_read_by_nats_py(
    journal: JetStreamJournal, peer: Any
) -> None:
    written = events("acct.ü 1", 1, 5, writer="w1")
    await journal.append("acct.ü 1", written[:2], 0)
    await journal.append("acct.ü 1", written[2:], 2)
    subject = f"journal.{journal.stream}.e.acct=2E=C3=BC=201"
    js = peer.jetstream()
    last = await js.get_last_msg(journal.stream, subject)
    assert (last.headers["Actors-First"], last.headers["Actors-Last"]) == ("3", "5")
    assert last.headers["Nats-Msg-Id"].endswith(":3")
    sub = await js.subscribe(subject, ordered_consumer=True)
    decoded: list[tuple[int, str, str, float, bytes]] = []
    for _ in range(2):
        msg = await sub.next_msg(timeout=5)
        first = int(msg.headers["Actors-First"])
        for offset, event in enumerate(_decode(msg.data)):
            decoded.append((first + offset, *event))
    await sub.unsubscribe()
    assert decoded == [
        (e.sequence_nr, e.manifest, e.writer, e.timestamp, e.payload) for e in written
    ]


async def test_events_nats_py_appends_are_read_and_continued_by_our_journal(
    journal: JetStreamJournal, peer: Any
) -> None:
    js = peer.jetstream()
    subject = f"journal.{journal.stream}.e.ledger-7"
    theirs = events("ledger-7", 1, 3, writer="py")
    ack = await js.publish(
        subject,
        _encode(theirs),
        headers={
            "Actors-First": "1",
            "Actors-Last": "3",
            "Nats-Msg-Id": "ledger-7:py:1",
            "Nats-Expected-Last-Subject-Sequence": "0",
        },
    )
    assert await journal.read_events("ledger-7", 1) == theirs
    assert await journal.highest_sequence_nr("ledger-7") == 3
    ours = events("ledger-7", 4, 1, writer="us")
    await journal.append("ledger-7", ours, 3)
    assert await journal.read_events("ledger-7", 2) == theirs[1:] + ours
    # nats-py's conditional publish on the stale position is refused.
    with pytest.raises(nats.js.errors.APIError) as caught:
        await js.publish(
            subject,
            _encode(events("ledger-7", 4, 1, writer="py")),
            headers={
                "Actors-First": "4",
                "Actors-Last": "4",
                "Nats-Expected-Last-Subject-Sequence": str(ack.seq),
            },
        )
    assert caught.value.err_code == 10071


async def test_snapshots_are_key_value_entries_nats_py_reads(
    journal: JetStreamJournal, peer: Any
) -> None:
    await journal.save_snapshot(StoredSnapshot("acct-1", 64, "s@1", b"state", 9.5))
    kv = await peer.jetstream().key_value(f"{journal.stream}_SNAPSHOTS")
    entry = await kv.get("acct-1.64")
    m, timestamp = struct.unpack_from(">Hd", entry.value)
    start = struct.calcsize(">Hd")
    assert entry.value[start : start + m] == b"s@1"
    assert timestamp == 9.5
    assert entry.value[start + m :] == b"state"
