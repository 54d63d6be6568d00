"""An actor for the leaving-node tests, hosted by node processes."""

from __future__ import annotations

from typing import Any

import anyio

from actors import Actor


class Announcer(Actor[Any]):
    """``(ref, seconds)``: tells ``ref`` "started", then sleeps ``seconds``
    and replies with them (the test knows the ask is being handled)."""

    async def receive(self, message: Any) -> Any:
        ref, seconds = message
        ref.tell("started")
        await anyio.sleep(seconds)
        return seconds
