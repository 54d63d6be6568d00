"""Publishing: a message encoded as ``PUB`` or ``HPUB`` (with a header block)
and queued for the writer task, with the outbound buffer's backpressure, and
``flush`` (a PING behind what is queued, answered by the server's PONG).

Checks happen at the call, before anything is queued: a bad subject, reply
or header is a ``TypeError`` / ``ValueError``, a message over the server's
``max_payload`` a ``MaxPayloadError``; nothing is sent then.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import anyio

from ._arguments import positive
from ._errors import ConnectionClosedError, MaxPayloadError, OutboundBufferFullError
from ._protocol import check_subject, encode_headers
from ._reconnect import Reconnection
from ._session import PING_LINE, _Ping

__all__ = ["Publisher"]

_whitespace = re.compile(r"\s").search


class Publisher(Reconnection):
    """The publishing half of ``Client`` (see the module docstring)."""

    @property
    def idle(self) -> bool:
        """Nothing is queued for the server and no burst of commands is under
        way: a command published now starts a new step of the conversation
        (it is written at once by its caller when the connection allows it).
        After such a write the client stays busy until data comes in from the
        server or its writer has written everything queued since."""
        return not self._pending_bytes and not self._burst

    def _encode(
        self,
        subject: str,
        payload: bytes,
        reply: str | None,
        headers: Mapping[str, str] | None,
    ) -> bytes:
        if self._closed:
            raise ConnectionClosedError("the client is closed") from self._failure
        if type(subject) is not str or not subject or _whitespace(subject):
            check_subject(subject)  # raises, naming the argument
        if type(payload) is not bytes:
            if isinstance(payload, str) or not isinstance(
                payload, bytearray | memoryview
            ):
                raise TypeError(f"payload must be bytes, not {type(payload).__name__}")
            payload = bytes(payload)
        if reply is not None and (
            type(reply) is not str or not reply or _whitespace(reply)
        ):
            check_subject(reply, "reply")  # raises, naming the argument
        if headers:
            header = encode_headers(headers)
            total = len(header) + len(payload)
            if total > self._max_payload:
                raise MaxPayloadError(
                    f"message of {total} bytes (headers included) is over the "
                    f"server's max_payload of {self._max_payload} bytes"
                )
            if reply is None:
                line = b"HPUB %s %d %d\r\n" % (subject.encode(), len(header), total)
            else:
                line = b"HPUB %s %s %d %d\r\n" % (
                    subject.encode(),
                    reply.encode(),
                    len(header),
                    total,
                )
            return b"".join((line, header, payload, b"\r\n"))
        size = len(payload)
        if size > self._max_payload:
            raise MaxPayloadError(
                f"payload of {size} bytes is over the server's max_payload of "
                f"{self._max_payload} bytes"
            )
        if reply is None:
            return b"PUB %s %d\r\n%s\r\n" % (subject.encode(), size, payload)
        return b"PUB %s %s %d\r\n%s\r\n" % (
            subject.encode(),
            reply.encode(),
            size,
            payload,
        )

    def publish_nowait(
        self,
        subject: str,
        payload: bytes = b"",
        *,
        reply: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Queue a message for the writer task; never waits.

        Args:
            subject: the subject (no wildcards, no whitespace).
            payload: the payload (``bytes``, ``bytearray`` or ``memoryview``).
            reply: a reply subject for the receiver, or ``None``.
            headers: headers (str keys and values), or ``None``.

        Raises:
            TypeError: ``subject``, ``reply``, ``payload`` or ``headers`` has the
                wrong type.
            ValueError: ``subject`` or ``reply`` is empty or has whitespace; a
                header key or value is invalid.
            MaxPayloadError: headers and payload are over the server's
                ``max_payload`` (a ``ValueError``); nothing is sent.
            OutboundBufferFullError: ``max_pending_bytes`` of commands are
                queued already.
            ConnectionClosedError: the client is closed.
        """
        data = self._encode(subject, payload, reply, headers)
        pending = self._pending_bytes
        if pending and pending + len(data) > self._max_pending:
            raise OutboundBufferFullError(
                f"{pending} bytes are queued for the server already "
                f"(max_pending_bytes={self._max_pending})"
                + ("" if self._conn is not None else " and the client is disconnected")
            )
        self._enqueue(data)

    async def publish(
        self,
        subject: str,
        payload: bytes = b"",
        *,
        reply: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Queue a message for the writer task, waiting while the outbound
        buffer is full and the client connected (backpressure).

        Not a checkpoint when the buffer has room (a burst of publishes is
        written in few writes). Cancelling a waiting call sends nothing.

        Args: as ``publish_nowait``.

        Raises:
            OutboundBufferFullError: the buffer is full and the client is
                disconnected (or becomes so while this call waits).
            Exception: everything ``publish_nowait`` raises for bad arguments.
        """
        data = self._encode(subject, payload, reply, headers)
        size = len(data)
        while self._pending_bytes and self._pending_bytes + size > self._max_pending:
            if self._conn is None:
                raise OutboundBufferFullError(
                    f"the client is disconnected and {self._pending_bytes} bytes are "
                    f"queued already (max_pending_bytes={self._max_pending})"
                )
            if self._space is None:
                self._space = anyio.Event()
            await self._space.wait()
            if self._closed:
                raise ConnectionClosedError("the client is closed") from self._failure
        self._enqueue(data)

    async def flush(self, timeout: float = 10.0) -> None:
        """Wait until the server has processed everything queued before this call
        (a PING/PONG round trip behind the queued commands).

        Raises:
            TimeoutError: no PONG within ``timeout`` seconds.
            DisconnectedError: the connection broke after the PING was written.
            ConnectionClosedError: the client is or becomes closed.
        """
        positive("timeout", timeout)
        if self._closed:
            raise ConnectionClosedError("the client is closed") from self._failure
        marker = _Ping(anyio.Event())
        self._pending_bytes += len(PING_LINE)
        self._writer_parked = False
        self._out_tx.send_nowait(marker)
        assert marker.event is not None
        with anyio.fail_after(timeout):
            await marker.event.wait()
        if marker.error is not None:
            raise marker.error
