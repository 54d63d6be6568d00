"""One connection to one server: the server list entry, and the handshake
(INFO, the TLS upgrade, CONNECT, PING/PONG) that makes a connection usable."""

from __future__ import annotations

import json
import ssl
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import anyio
from anyio.abc import ByteStream
from anyio.streams.tls import TLSStream

from ._auth import Credentials
from ._errors import (
    AuthorizationError,
    NatsError,
    PermissionsViolation,
    ProtocolError,
    ServerError,
    StaleConnectionError,
)
from ._protocol import OK, PING, PONG, ErrLine, Op, Parser, ServerInfo

if TYPE_CHECKING:
    from ._session import _Ping

__all__ = ["Connection", "Server", "error_for", "open_connection", "parse_server"]

DEFAULT_PORT = 4222
READ_SIZE = 64 * 1024


@dataclass(slots=True)
class Server:
    """A server of the client's list."""

    host: str
    port: int
    tls: bool = False
    user: str | None = None
    password: str | None = None
    token: str | None = None
    discovered: bool = False  #: learnt from a server's ``connect_urls``

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'tls' if self.tls else 'nats'}://{host}:{self.port}"


def parse_server(url: str, *, discovered: bool = False) -> Server:
    """Parse ``nats://[user:pass@|token@]host[:port]`` (``tls://`` too, or a bare
    ``host[:port]``).

    Raises:
        TypeError: ``url`` is not a ``str``.
        ValueError: the scheme is not ``nats`` or ``tls``, or the port is invalid.
    """
    if not isinstance(url, str):
        raise TypeError(
            f"servers: a server URL must be a str, not {type(url).__name__}"
        )
    raw = url if "://" in url else f"nats://{url}"
    try:
        parts = urlsplit(raw)
        port = parts.port or DEFAULT_PORT
    except ValueError as exc:
        raise ValueError(f"servers: invalid server URL {url!r}: {exc}") from None
    if parts.scheme not in ("nats", "tls"):
        raise ValueError(f"servers: unsupported scheme in {url!r} (nats:// or tls://)")
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else None
    token = None
    if user is not None and password is None:
        token, user = user, None
    return Server(
        host=parts.hostname or "127.0.0.1",
        port=port,
        tls=parts.scheme == "tls",
        user=user,
        password=password,
        token=token,
        discovered=discovered,
    )


class Connection:
    """A connected, handshaken stream and its per-connection state."""

    __slots__ = (
        "error",
        "info",
        "leftover",
        "parser",
        "pings_outstanding",
        "pongs",
        "replay",
        "server",
        "stream",
    )

    def __init__(
        self,
        stream: ByteStream,
        parser: Parser,
        info: ServerInfo,
        server: Server,
        leftover: list[Op],
    ) -> None:
        self.stream = stream
        self.parser = parser
        self.info = info
        self.server = server
        self.leftover = leftover  #: operations read after the handshake's PONG
        self.pongs: deque[_Ping] = deque()  #: PINGs written, awaiting PONGs
        self.pings_outstanding = 0
        self.replay = b""  #: SUB/UNSUB lines to write before anything else
        self.error: BaseException | None = None


def error_for(text: str) -> NatsError:
    """The error for a server's ``-ERR`` text."""
    lowered = text.lower()
    if "permissions violation" in lowered:
        return PermissionsViolation(text)
    if "authorization" in lowered or "authentication" in lowered:
        return AuthorizationError(text)
    if "stale connection" in lowered:
        return StaleConnectionError(text)
    return ServerError(text)


async def _read(stream: ByteStream, parser: Parser) -> list[Op]:
    try:
        data = await stream.receive(READ_SIZE)
    except anyio.EndOfStream:
        raise ProtocolError(
            "the server closed the connection during the handshake"
        ) from None
    return parser.parse(data)


async def open_connection(
    server: Server,
    *,
    options: dict[str, Any],
    credentials: Credentials,
    tls: ssl.SSLContext | None,
    tls_hostname: str | None,
    timeout: float,
) -> Connection:
    """Connect to ``server`` and run the handshake, within ``timeout`` seconds.

    Raises:
        OSError: the TCP connection or the TLS handshake failed.
        TimeoutError: the handshake did not finish within ``timeout``.
        ProtocolError: the server's bytes are not the NATS protocol.
        AuthorizationError: the server refused the credentials.
        ServerError: the server sent another ``-ERR`` during the handshake.
    """
    with anyio.fail_after(timeout):
        stream: ByteStream = await anyio.connect_tcp(server.host, server.port)
        try:
            parser = Parser()
            ops: list[Op] = []
            while not ops:
                ops = await _read(stream, parser)
            info = ops.pop(0)
            if type(info) is not ServerInfo:
                raise ProtocolError(f"expected INFO from the server, got {info!r}")
            if server.tls or tls is not None or info.get("tls_required"):
                context = tls if tls is not None else ssl.create_default_context()
                stream = await TLSStream.wrap(
                    stream,
                    hostname=tls_hostname or server.host,
                    ssl_context=context,
                    standard_compatible=False,
                )
            fields = dict(options)
            fields["tls_required"] = isinstance(stream, TLSStream)
            fields.update(credentials.connect_fields(info.get("nonce")))
            # A server URL's own user:password@ or token@ wins for that server.
            own = Credentials(
                user=server.user, password=server.password, token=server.token
            )
            fields.update(own.connect_fields(None))
            await stream.send(
                b"CONNECT " + json.dumps(fields).encode() + b"\r\nPING\r\n"
            )
            while True:
                for index, op in enumerate(ops):
                    if op is PONG:
                        return Connection(
                            stream, parser, info, server, ops[index + 1 :]
                        )
                    if type(op) is ErrLine:
                        raise error_for(op)
                    if op is PING:
                        await stream.send(b"PONG\r\n")
                    elif type(op) is ServerInfo:
                        info = op
                    elif op is not OK:
                        raise ProtocolError(f"unexpected {op!r} during the handshake")
                ops = await _read(stream, parser)
        except BaseException:
            await anyio.aclose_forcefully(stream)
            raise
