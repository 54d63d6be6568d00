"""Call-count gates on the remote send path (counted, never timed): encoding a
tell and buffering it for its peer costs a fixed, small number of calls, and
so does the whole ``RemoteRef.tell`` / ``send`` of a node whose telemetry is
off (the hook points cost no call)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

import anyio
import msgspec
import pytest

from actors.remote import RefAddress, RemoteRef
from actors.remote._codec import Codec
from actors.remote._node import NodeAddress
from actors.remote._outbound import Outbound
from actors.remote._wire import Wire

from ._offline import PEER, offline_node
from ._offline import Ping as OfflinePing

#: Python calls per message: Wire.tell, Outbound.try_put, Mailbox.try_send.
PYTHON_CALLS = 3
#: C calls per message: dict.get, the encoder, len, and the mailbox's own.
C_CALL_BUDGET = 8


class Ping(msgspec.Struct, array_like=True):
    n: int


class Client:
    max_payload = 1024 * 1024


def count(n: int) -> Counter[str]:
    codec = Codec()
    codec.register(Ping, "ping")
    wire = Wire(codec, NodeAddress.new("a"))
    out = Outbound(NodeAddress.new("b"), wire, Client(), subject="s", capacity=n)  # type: ignore[arg-type]
    messages = [Ping(i) for i in range(n)]
    tell = wire.tell
    try_put = out.try_put
    counts: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            counts[f"call {frame.f_code.co_qualname}"] += 1
            counts["call"] += 1
        elif event == "c_call":
            counts["c_call"] += 1

    sys.setprofile(profile)
    try:
        for message in messages:
            try_put(tell("/user/x", message))
    finally:
        sys.setprofile(None)
    return counts


def test_a_tell_is_encoded_and_buffered_in_three_python_calls() -> None:
    small, large = count(100), count(1100)
    per_message = {key: (large[key] - small[key]) / 1000 for key in ("call", "c_call")}
    detail = sorted(
        (key, (large[key] - small[key]) / 1000)
        for key in large
        if key.startswith("call ")
    )
    assert per_message["call"] <= PYTHON_CALLS, detail
    assert per_message["c_call"] <= C_CALL_BUDGET, per_message


#: Python calls per remote tell, RemoteRef.tell to the buffer: RemoteRef.tell,
#: Remote.tell, Wire.tell, Credits.tell (the target's share), Outbound.try_put,
#: Mailbox.try_send.
TELL_CALLS = 6
#: Per remote send with a credit and room in the buffer: RemoteRef.send,
#: Remote.send, Wire.tell, Credits.send, Outbound.put, Mailbox.send and its
#: try_send.
SEND_CALLS = 7


def _calls_into(counts: Counter[str]) -> Callable[[FrameType, str, Any], None]:
    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            counts["call"] += 1
            counts[f"call {frame.f_code.co_qualname}"] += 1

    return profile


@pytest.mark.anyio
async def test_a_remote_tell_and_send_cost_the_plain_calls_with_telemetry_off() -> (
    None
):
    async with offline_node(capacity=10_000) as (_, node):
        ref = RemoteRef[Any](
            node.parts._owner, RefAddress(PEER.node, PEER.incarnation, "/user/x")
        )
        ref.tell(OfflinePing(0))  # the peer's buffer and writer exist
        figures = {}
        for kind in ("tell", "send"):
            runs = []
            for n in (100, 1100):
                counts: Counter[str] = Counter()
                sys.setprofile(_calls_into(counts))
                try:
                    for i in range(n):
                        if kind == "tell":
                            ref.tell(OfflinePing(i))
                        else:
                            await ref.send(OfflinePing(i))
                finally:
                    sys.setprofile(None)
                runs.append(counts)
                await anyio.lowlevel.checkpoint()  # the writer takes them
            small, large = runs
            figures[kind] = (large["call"] - small["call"]) / 1000
            detail = sorted(
                (key, (large[key] - small[key]) / 1000)
                for key in large
                if key.startswith("call ")
            )
            limit = TELL_CALLS if kind == "tell" else SEND_CALLS
            assert figures[kind] <= limit, (kind, detail)
