"""Actor classes that misbehave, hosted by the nodes of the scale-out
attack tests (``--module tests.scaleout._hostile``)."""

from __future__ import annotations

from typing import Any

import anyio

from actors import Actor


class Survivor(Actor):
    """A well-behaved actor: replies with what it gets."""

    def receive(self, message: Any) -> Any:
        return message


class FailsToConstruct(Actor):
    """Its constructor raises (a RuntimeError, not a TypeError/ValueError)."""

    def __init__(self, *args: Any) -> None:
        raise RuntimeError(f"cannot construct with {args!r}")

    def receive(self, message: Any) -> Any:
        return message


#: Set by a test: FailsToStart sets ``event`` once it has started ``count``
#: times (tests in one process only).
STARTS: dict[str, Any] = {"count": 0, "wanted": 0, "event": None}


class FailsToStart(Actor):
    """Its on_start raises, every time (counted in STARTS)."""

    def on_start(self) -> None:
        STARTS["count"] += 1
        if STARTS["count"] >= STARTS["wanted"] and STARTS["event"] is not None:
            STARTS["event"].set()
        raise RuntimeError("cannot start")

    def receive(self, message: Any) -> Any:
        return message


class Sleeper(Actor):
    """Sleeps ``message`` seconds, then replies with it."""

    async def receive(self, message: float) -> float:
        await anyio.sleep(message)
        return message
