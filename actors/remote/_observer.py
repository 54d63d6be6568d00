"""The remote layer's hook points, for an observer such as its telemetry.

The plain code calls these at the few places where a traced node does more:
an outgoing tell, send or ask, an inbound frame, an inbound tell or ask. With
no observer (``Remote``'s telemetry off) each place costs one ``is None``
test and runs the plain code; with one, the observer does its part around
it (as OpenTelemetry's instrumentations wrap an instrumented call), without
replacing any method or reading any private attribute.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ._node import NodeAddress
from ._ref import RemoteRef

__all__ = ["AskCall", "Observer", "Receipt"]

#: An outgoing ask: ``(ref, message, timeout, headers)`` -> its reply.
AskCall = Callable[
    [RemoteRef[Any], object, float, "dict[str, str] | None"], Awaitable[Any]
]


class Receipt(Protocol):
    """The observer's side of one inbound tell or ask, from ``receive``."""

    @property
    def context(self) -> object:
        """The context the local actor's handling joins (for a traced
        system: the OpenTelemetry context of the receive span)."""

    def detach(self) -> None:
        """The inbound handler returned (an ask may still be served)."""

    def end(self, error: BaseException | None) -> None:
        """The envelope was handled (an ask: answered), with ``error`` if it
        failed."""


class Observer(Protocol):
    """The hook points (see the module doc)."""

    def headers(self) -> dict[str, str] | None:
        """The NATS headers the frame of a tell or send from the current
        context carries (None: none)."""

    async def ask(
        self, call: AskCall, ref: RemoteRef[Any], message: object, timeout: float
    ) -> Any:
        """Run an outgoing ask, ``await call(ref, message, timeout, headers)``,
        and return (or raise) what it does."""

    def frame(self, headers: dict[str, str] | None) -> object:
        """An inbound frame with these NATS headers: the parent context of
        its envelopes (passed to ``receive``)."""

    def receive(
        self, parent: object, kind: str, path: str, sender: NodeAddress | None
    ) -> Receipt:
        """An inbound tell or ask (``kind``) for the local actor at ``path``
        begins to be handled, in ``parent`` (from ``frame``)."""
