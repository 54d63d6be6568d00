"""A region's links to its peers on other nodes, on a stand-in remote layer:
each peer's messages are handed over in the order they were queued, a run
of fast-path messages as one envelope; a peer out of credit holds up its own
queue only (its drain waits for room and loses nothing), and what cannot be
sent at all is dropped and counted."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from actors import MailboxFull
from actors.remote import NodeUnreachable
from actors.remote._codec import Codec
from actors.sharding._link import (
    HIGH,
    MAX_BATCH,
    Links,
    WireTell,
    WireTells,
)

pytestmark = pytest.mark.anyio


class Remote:
    """The remote layer as a link sees it: ``tell`` refuses the peers in
    ``full`` (MailboxFull), ``send`` waits for ``room`` then takes it."""

    def __init__(self) -> None:
        self.codec = Codec()
        self.sent: dict[str, list[Any]] = {}
        self.full: set[str] = set()
        self.gone: set[str] = set()
        self.room = anyio.Event()

    def tell(self, peer: Any, message: object) -> None:
        if peer in self.gone:
            raise NodeUnreachable(peer)
        if peer in self.full:
            raise MailboxFull(peer)
        self.sent.setdefault(peer, []).append(message)

    async def send(self, peer: Any, message: object) -> None:
        await self.room.wait()
        self.full.discard(peer)
        self.sent.setdefault(peer, []).append(message)


def _values(remote: Remote, peer: str) -> list[Any]:
    out: list[Any] = []
    for envelope in remote.sent.get(peer, []):
        if type(envelope) is WireTells:
            out += [msgspec.msgpack.decode(item.body) for item in envelope.items]
        else:
            out.append(envelope)
    return out


async def test_a_stuck_peer_holds_up_only_its_own_queue_and_loses_nothing() -> None:
    remote = Remote()
    handed: list[object] = []
    dropped: list[tuple[object, str]] = []
    links = Links(remote, handed.append, lambda m, r: dropped.append((m, r)))  # type: ignore[arg-type]
    slow, fast = links.link("slow"), links.link("fast")  # type: ignore[arg-type]
    remote.full.add("slow")
    async with anyio.create_task_group() as tg:
        tg.start_soon(links.run)
        for i in range(3 * MAX_BATCH):
            slow.tell("k", i)
            fast.tell("k", i)
        slow.put("a region message")  # behind the tells, in order
        await anyio.wait_all_tasks_blocked()
        assert _values(remote, "fast") == list(range(3 * MAX_BATCH))
        # The first to an idle link went at once; the burst behind it waited
        # for the link's task and went in full envelopes.
        sizes = [len(e.items) for e in remote.sent["fast"]]
        assert sizes == [1, MAX_BATCH, MAX_BATCH, MAX_BATCH - 1]
        assert "slow" not in remote.sent and len(slow.queue) == 3 * MAX_BATCH + 1
        remote.room.set()  # room again: its drain goes on, in order
        await links.drained()
        assert _values(remote, "slow") == [*range(3 * MAX_BATCH), "a region message"]
        assert len(handed) == 6 * MAX_BATCH  # all that were queued
        tg.cancel_scope.cancel()
    assert dropped == []


async def test_a_full_queue_refuses_a_tell_and_a_send_waits_for_room() -> None:
    remote = Remote()
    links = Links(remote, lambda m: None, lambda m, r: None)
    link = links.link("p")  # type: ignore[arg-type]
    remote.full.add("p")
    for i in range(HIGH):
        link.tell("k", i)
    assert link.full()
    with pytest.raises(MailboxFull):
        link.tell("k", "one too many")
    async with anyio.create_task_group() as tg:
        tg.start_soon(links.run)
        waited = anyio.Event()

        async def sender() -> None:
            await link.room()
            link.tell("k", "after the room")
            waited.set()

        tg.start_soon(sender)
        await anyio.wait_all_tasks_blocked()
        assert not waited.is_set()
        remote.room.set()
        await waited.wait()
        await links.drained()
        assert _values(remote, "p") == [*range(HIGH), "after the room"]
        tg.cancel_scope.cancel()


async def test_what_cannot_be_sent_is_dropped_and_counted() -> None:
    remote = Remote()
    dropped: list[tuple[object, str]] = []
    links = Links(remote, lambda m: None, lambda m, r: dropped.append((m, r)))  # type: ignore[arg-type]
    link = links.link("p")  # type: ignore[arg-type]
    remote.gone.add("p")
    link.put("a region message")
    link.tell("k", 1)  # behind it in the queue
    async with anyio.create_task_group() as tg:
        tg.start_soon(links.run)
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    assert [type(m) for m, _ in dropped] == [str, WireTell]
    assert link.closed
    link.put("later")  # a closed link counts what it is given
    assert len(dropped) == 3
    assert links.link("p") is not link  # a new link for the next incarnation
