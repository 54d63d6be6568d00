"""A call-count gate on the remote send path (counted, never timed): encoding a
tell and buffering it for its peer costs a fixed, small number of calls."""

from __future__ import annotations

import sys
from collections import Counter
from types import FrameType
from typing import Any

import msgspec

from actors.remote._codec import Codec
from actors.remote._node import NodeAddress
from actors.remote._outbound import Outbound
from actors.remote._wire import Wire

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
