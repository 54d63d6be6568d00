"""What an outbound buffer publishes with: the part of the NATS client's
API it uses (``actors.nats.Client``, or a recorder in tests)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Protocol

__all__ = ["Publisher"]


class Publisher(Protocol):
    """What an outbound buffer publishes with: the NATS client's API."""

    @property
    def max_payload(self) -> int:
        """The server's ``max_payload`` in bytes (it may change on reconnect)."""
        ...

    @property
    def idle(self) -> bool:
        """Nothing queued in the client and no burst of commands under way
        (``actors.nats.Client.idle``)."""
        ...

    def publish(
        self,
        subject: str,
        payload: bytes = ...,
        *,
        reply: str | None = ...,
        headers: dict[str, str] | None = ...,
    ) -> Awaitable[None]:
        """Queue a NATS message, waiting while the client's buffer is full."""
        ...

    def publish_nowait(
        self,
        subject: str,
        payload: bytes = ...,
        *,
        reply: str | None = ...,
        headers: dict[str, str] | None = ...,
    ) -> None:
        """Queue a NATS message without waiting (raises when it is full)."""
        ...
