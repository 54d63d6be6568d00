"""A node without a server, for fast tests: ``offline_node()`` enters a
system whose ``Remote``'s NATS client is a ``Recorder`` (it never connects),
and gives its parts with helpers that feed it frames from a peer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
from anyio.abc import TaskStatus

from actors import ActorSystem
from actors.nats import Msg
from actors.remote import NodeAddress, Remote
from actors.remote._envelopes import decode_frame
from actors.remote._parts import Parts
from actors.remote._wire import Wire

PEER = NodeAddress("peer", "0123456789abcdef")


class Ping(msgspec.Struct, array_like=True):
    n: int


class Recorder:
    """A NATS client that records what is published (never connected)."""

    max_payload = 1024 * 1024
    idle = True

    def __init__(self) -> None:
        self.published: list[tuple[str, bytes, str | None]] = []

    def publish_nowait(
        self,
        subject: str,
        payload: bytes = b"",
        *,
        reply: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.published.append((subject, payload, reply))

    async def publish(
        self,
        subject: str,
        payload: bytes = b"",
        *,
        reply: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.publish_nowait(subject, payload, reply=reply, headers=headers)

    def envelopes(self, kind: type | None = None) -> list[Any]:
        """Every envelope published, in order (of ``kind`` only)."""
        found = [
            envelope
            for _, payload, _ in self.published
            for envelope in decode_frame(payload, self.max_payload).envelopes
        ]
        return [e for e in found if kind is None or type(e) is kind]


class Node:
    """A node's parts, connected to a ``Recorder``; ``feed`` hands it frames
    from ``PEER`` (numbered, as a node's writer numbers them)."""

    def __init__(self, parts: Parts, client: Recorder) -> None:
        self.parts = parts
        self.client = client
        self.peer = Wire(parts.wire.codec, PEER)
        self.stranger = Wire(parts.wire.codec, None)
        self.seq = 0
        self.oob = 0

    def numbered(self, seq: int) -> str:
        address = self.parts.address
        return f"x.nr.{address.node}.{address.incarnation}.{seq}"

    def feed(self, *envelopes: bytes, seq: int | None = None) -> None:
        """A frame from ``PEER`` (numbered ``seq``, default: the next)."""
        if seq is None:
            self.seq += 1
            seq = self.seq
        frame = self.peer.frame(list(envelopes))
        self.parts.inbound.on_frame(
            Msg(self.parts.subjects.inbox, 1, self.numbered(seq), frame)
        )

    def urgent(self, *envelopes: bytes) -> None:
        """An out-of-band frame from ``PEER`` (heartbeats, acks: numbered on
        their own lane, ``o<n>``)."""
        self.oob += 1
        frame = self.peer.frame(list(envelopes))
        reply = self.numbered(0)[:-1] + f"o{self.oob}"
        self.parts.inbound.on_frame(Msg(self.parts.subjects.inbox, 1, reply, frame))

    def raw(self, data: bytes, reply: str | None = None) -> None:
        self.parts.inbound.on_frame(Msg(self.parts.subjects.inbox, 1, reply, data))

    @property
    def bad(self) -> dict[str, int]:
        return self.parts.inbound.bad_input


class OfflineRemote(Remote):
    """A node whose NATS client is a ``Recorder``: it never connects."""

    async def _run(self, *, task_status: TaskStatus[None]) -> None:
        parts = self._parts
        assert parts is not None
        self.recorder = Recorder()
        try:
            async with anyio.create_task_group() as tg:
                parts.connected(self.recorder, tg)  # type: ignore[arg-type]
                task_status.started()
                await self._stopping.wait()
                tg.cancel_scope.cancel()
        finally:
            parts.stopped()
            self._done.set()


@asynccontextmanager
async def offline_node(**options: Any) -> AsyncIterator[tuple[ActorSystem, Node]]:
    """A system with an offline node ``here`` (``options``: more ``Remote``
    keyword arguments), and the node's parts."""
    remote = OfflineRemote("nats://127.0.0.1:1", system="t", node="here", **options)
    remote.register_type(Ping, "ping")
    async with ActorSystem(remote=remote) as system:
        assert remote._parts is not None
        yield system, Node(remote._parts, remote.recorder)
