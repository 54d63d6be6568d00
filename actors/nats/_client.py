"""The client: an anyio-native NATS core-protocol client that owns its tasks.

Its public API (subscribe, request, close, drain, the client's state and
counters, and ``jetstream()``) on top of publishing (``_publishing``) and the
connection machinery (``_reconnect``, ``_session``). All of it runs on
asyncio, uvloop and Trio through anyio, on one code path.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any, NamedTuple

import anyio

from ..channel.lowlevel import current_backend
from ._arguments import integer, positive
from ._auth import Credentials, read_creds_file
from ._connection import parse_server
from ._errors import (
    ConnectionClosedError,
    NatsError,
    NoRespondersError,
    RequestTimeoutError,
)
from ._jetstream import JetStream
from ._protocol import Msg, check_subject, new_nuid
from ._publishing import Publisher
from ._session import _FAILED, _Reply
from ._subscription import Subscription

__all__ = ["Client", "ClientStatistics", "connect"]

LANG = "python-anyio-actors"
VERSION = "0.1.0"


class ClientStatistics(NamedTuple):
    """Counters of a ``Client``."""

    #: messages the reader delivered to subscriptions (or dropped for them)
    messages_received: int
    #: bytes written to the server
    bytes_written: int
    #: socket writes (each writes every command queued when the writer woke)
    writes: int
    #: successful reconnections
    reconnects: int
    #: bytes of commands queued and not yet written
    pending_bytes: int
    #: messages dropped because a subscription's buffer was full
    dropped: int
    #: replies that came after their request had given up
    late_replies: int


def tls_context(
    ca_file: str | os.PathLike[str] | None,
    cert_file: str | os.PathLike[str] | None,
    key_file: str | os.PathLike[str] | None,
) -> ssl.SSLContext | None:
    """The TLS context of the ``tls_*_file`` options (None: none given):
    the default context (server certificates verified, hostname checked)
    trusting ``ca_file`` when given, presenting ``cert_file`` (and its key)
    when given.

    Raises:
        ValueError: ``key_file`` without ``cert_file``.
        OSError / ssl.SSLError: a file cannot be read or is not PEM.
    """
    if ca_file is None and cert_file is None and key_file is None:
        return None
    if key_file is not None and cert_file is None:
        raise ValueError("tls_key_file needs tls_cert_file (the certificate)")
    context = ssl.create_default_context(
        cafile=None if ca_file is None else os.fspath(ca_file)
    )
    if cert_file is not None:
        context.load_cert_chain(
            os.fspath(cert_file), None if key_file is None else os.fspath(key_file)
        )
    return context


class Client(Publisher):
    """A connection to a NATS server (cluster), made by ``connect``.

    Publishing never waits for the network: commands go into an outbound
    channel that the writer task drains, many commands per write. While the
    client is disconnected, commands stay queued (up to ``max_pending_bytes``)
    and are written after it reconnects; subscriptions are restored with their
    ids. Delivery is NATS core's: at-most-once (a batch being written when the
    connection breaks may be lost), in order per publisher.

    Args:
        servers: a server URL or a list of them (``nats://`` or ``tls://``,
            optionally with ``user:password@`` or ``token@``).
        name: the connection name the server shows, or ``None``.
        echo: whether the server delivers this client's own messages to its
            own subscriptions.
        user: a user name (a server URL's own ``user:password@`` or
            ``token@`` wins for that server).
        password: the user's password.
        token: an authentication token.
        nkey_seed: an NKey user seed (``SU...``); signs the server's nonce
            (needs the ``nkeys`` package).
        creds_file: a ``.creds`` file: its user JWT is sent and its seed signs
            the nonce (needs ``nkeys``).
        tls: the ``ssl.SSLContext`` for TLS; a server that requires TLS (its
            ``INFO`` says ``tls_required``) is upgraded after ``INFO`` with the
            default context when this is ``None``.
        tls_hostname: the name to check the server's certificate against
            (default: the host of the server's URL).
        tls_ca_file: a PEM file of the certificate authorities to trust
            instead of the system's (a private CA); makes the TLS context
            when ``tls`` is ``None``.
        tls_cert_file: a PEM file of the client's certificate (chain), for
            servers that verify clients (``verify: true``); with
            ``tls_key_file`` unless the key is in the same file.
        tls_key_file: the PEM file of the client certificate's private key.
        inbox_prefix: the first token(s) of the reply subjects of
            ``request`` and ``new_inbox`` (as nats.py's ``inbox_prefix``):
            ``<inbox_prefix>.<nuid>...``; a user whose permissions are scoped
            to ``app.>`` uses ``app._INBOX``, say.
        connect_timeout: seconds for one connection and its handshake.
        allow_reconnect: reconnect when the connection breaks; otherwise the
            client closes.
        max_reconnect_attempts: passes over the server list before giving up
            (-1: never give up).
        reconnect_wait: seconds before the first pass; doubled per failed
            pass up to ``max_reconnect_wait``.
        max_reconnect_wait: the longest wait between two passes, in seconds.
        reconnect_jitter: up to this many random seconds added to each wait.
        ping_interval: seconds between the client's PINGs.
        max_outstanding_pings: unanswered PINGs after which the connection is
            stale and dropped.
        max_pending_bytes: the most bytes of commands queued for the writer;
            beyond it ``publish`` waits (connected) or raises (disconnected).
        close_timeout: seconds that closing waits for queued commands to be
            written and confirmed.
        error_callback: a sync function called with asynchronous errors
            (disconnections, slow consumers, permissions violations, a
            callback's exception); by default they are logged as warnings
            on the ``actors.nats`` logger.

    Raises:
        TypeError / ValueError: a bad argument, naming it.
        OSError / ValueError: ``creds_file`` cannot be read or is not a creds
            file.
        OSError / ssl.SSLError: a ``tls_*_file`` cannot be read or is not
            PEM.
    """

    def __init__(
        self,
        servers: str | Sequence[str],
        *,
        name: str | None = None,
        echo: bool = True,
        user: str | None = None,
        password: str | None = None,
        token: str | None = None,
        nkey_seed: str | bytes | None = None,
        creds_file: str | os.PathLike[str] | None = None,
        tls: ssl.SSLContext | None = None,
        tls_hostname: str | None = None,
        tls_ca_file: str | os.PathLike[str] | None = None,
        tls_cert_file: str | os.PathLike[str] | None = None,
        tls_key_file: str | os.PathLike[str] | None = None,
        inbox_prefix: str = "_INBOX",
        connect_timeout: float = 2.0,
        allow_reconnect: bool = True,
        max_reconnect_attempts: int = 60,
        reconnect_wait: float = 0.5,
        max_reconnect_wait: float = 5.0,
        reconnect_jitter: float = 0.1,
        ping_interval: float = 120.0,
        max_outstanding_pings: int = 2,
        max_pending_bytes: int = 8 * 1024 * 1024,
        close_timeout: float = 5.0,
        error_callback: Callable[[Exception], object] | None = None,
    ) -> None:
        urls = [servers] if isinstance(servers, str) else list(servers)
        if not urls:
            raise ValueError("servers must name at least one server")
        self._servers = [parse_server(url) for url in urls]
        if tls is not None and not isinstance(tls, ssl.SSLContext):
            raise TypeError(f"tls must be an ssl.SSLContext, not {type(tls).__name__}")
        if tls is None:
            tls = tls_context(tls_ca_file, tls_cert_file, tls_key_file)
        elif (tls_ca_file, tls_cert_file, tls_key_file) != (None, None, None):
            raise ValueError(
                "give tls (an ssl.SSLContext) or the tls_*_file options, not both"
            )
        self._tls = tls
        check_subject(inbox_prefix, "inbox_prefix")
        if any(not t or t in ("*", ">") for t in inbox_prefix.split(".")):
            raise ValueError(
                "inbox_prefix must be subject tokens without wildcards, "
                f"not {inbox_prefix!r}"
            )
        self._inbox_root = inbox_prefix
        self._tls_hostname = tls_hostname
        self._connect_timeout = positive("connect_timeout", connect_timeout)
        self._allow_reconnect = bool(allow_reconnect)
        self._max_reconnect_attempts = integer(
            "max_reconnect_attempts", max_reconnect_attempts, -1
        )
        self._reconnect_wait = positive("reconnect_wait", reconnect_wait, zero=True)
        self._max_reconnect_wait = positive(
            "max_reconnect_wait", max_reconnect_wait, zero=True
        )
        self._reconnect_jitter = positive(
            "reconnect_jitter", reconnect_jitter, zero=True
        )
        self._ping_interval = positive("ping_interval", ping_interval)
        self._max_outstanding_pings = integer(
            "max_outstanding_pings", max_outstanding_pings, 1
        )
        self._max_pending = integer("max_pending_bytes", max_pending_bytes, 1)
        self._close_timeout = positive("close_timeout", close_timeout, zero=True)
        self._error_callback = error_callback
        seed: bytes | None = None
        jwt: str | None = None
        if creds_file is not None:
            jwt, seed = read_creds_file(creds_file)
        elif nkey_seed is not None:
            seed = (
                nkey_seed.encode() if isinstance(nkey_seed, str) else bytes(nkey_seed)
            )
        self._credentials = Credentials(
            user=user, password=password, token=token, nkey_seed=seed, jwt=jwt
        )
        self._options: dict[str, Any] = {
            "verbose": False,
            "pedantic": False,
            "lang": LANG,
            "version": VERSION,
            "protocol": 1,
            "echo": bool(echo),
            "headers": True,
            "no_responders": True,
        }
        if name is not None:
            self._options["name"] = name
        super().__init__()

    # -- public state ------------------------------------------------------

    @property
    def is_connected(self) -> bool:
        """Whether a connection to a server is up now."""
        return self._conn is not None

    @property
    def is_closed(self) -> bool:
        """Whether the client is closed (by its owner, or because it failed)."""
        return self._closed

    @property
    def last_error(self) -> BaseException | None:
        """What made the client give up, or ``None``."""
        return self._failure

    @property
    def server_info(self) -> Mapping[str, Any]:
        """The last ``INFO`` of the server the client is (or was) connected to."""
        return self._info

    @property
    def pending_bytes(self) -> int:
        """Bytes of commands queued and not yet taken by the writer (0: it
        has taken everything)."""
        return self._pending_bytes

    @property
    def max_payload(self) -> int:
        """The server's ``max_payload``: the largest headers + payload, in bytes."""
        return self._max_payload

    @property
    def connected_url(self) -> str | None:
        """The URL of the server the client is connected to, or ``None``."""
        conn = self._conn
        return None if conn is None else str(conn.server)

    @property
    def servers(self) -> list[str]:
        """The URLs of the server list (those learnt from servers included)."""
        return [str(server) for server in self._servers]

    def jetstream(
        self, *, prefix: str = "$JS.API", timeout: float = 5.0
    ) -> JetStream:
        """The JetStream API through this client (streams, publishing with
        acknowledgements, direct gets, key-value buckets): a
        [``JetStream``][actors.nats.JetStream]; making one sends nothing.

        Args:
            prefix: the API's subject prefix (``"$JS.<domain>.API"`` for a
                JetStream domain).
            timeout: seconds each API request and publish waits.

        Raises:
            TypeError / ValueError: a bad ``prefix`` or ``timeout``.
        """
        return JetStream(self, prefix=prefix, timeout=timeout)

    def new_inbox(self) -> str:
        """A fresh unique reply subject (``<inbox_prefix>.<nuid>``; by
        default ``_INBOX.<nuid>``)."""
        return f"{self._inbox_root}.{new_nuid()}"

    def statistics(self) -> ClientStatistics:
        """The client's counters now."""
        return ClientStatistics(
            self._received,
            self._bytes_written,
            self._writes,
            self._reconnects,
            self._pending_bytes,
            self._dropped,
            self._late_replies,
        )

    async def wait_closed(self) -> None:
        """Wait until the client is closed (see ``last_error`` for why)."""
        await self._closed_event.wait()

    # -- subscribing -------------------------------------------------------

    def _add_subscription(
        self,
        subject: str,
        queue: str | None,
        max_pending: float,
        callback: Callable[[Msg], object] | None,
    ) -> Subscription:
        if self._closed:
            raise ConnectionClosedError("the client is closed") from self._failure
        sub = Subscription(
            self, next(self._sids), subject, queue, max_pending, callback
        )
        self._subs[sub.sid] = sub
        if self._conn is not None:
            # Disconnected: the SUB goes out with the reconnection's replay.
            self._send_control(sub.subscribe_line())
        return sub

    async def subscribe(
        self,
        subject: str,
        queue: str | None = None,
        *,
        max_pending: int = 65536,
        callback: Callable[[Msg], object] | None = None,
    ) -> Subscription:
        """Subscribe to ``subject`` (wildcards ``*`` and ``>`` allowed).

        The SUB is queued behind earlier commands; ``flush`` after it to know
        the server has it. A checkpoint.

        Args:
            subject: the subject.
            queue: a queue group name, or ``None``.
            max_pending: the most messages buffered for the subscription before
                new ones are dropped (ignored with ``callback``).
            callback: a sync function called with each message as the client
                reads it, instead of buffering: by the reader task on Trio,
                in the transport's callback (outside any task) on asyncio and
                uvloop; it must not block nor enter a cancel scope.

        Returns:
            The subscription: iterate it, or read it with ``next_msg``.

        Raises:
            TypeError / ValueError: a bad ``subject``, ``queue``, ``max_pending``
                or ``callback``.
            ConnectionClosedError: the client is closed.
        """
        await anyio.lowlevel.checkpoint()
        check_subject(subject)
        if queue is not None:
            check_subject(queue, "queue")
        integer("max_pending", max_pending, 1)
        if callback is not None and not callable(callback):
            raise TypeError("callback must be callable")
        return self._add_subscription(subject, queue, max_pending, callback)

    def _remove(self, sub: Subscription, *, send_unsub: bool) -> None:
        if self._subs.pop(sub.sid, None) is not None:
            sub.close()
            if send_unsub and self._conn is not None:
                self._send_control(f"UNSUB {sub.sid}\r\n".encode())

    # -- request/reply -----------------------------------------------------

    async def request(
        self,
        subject: str,
        payload: bytes = b"",
        *,
        timeout: float = 2.0,
        headers: Mapping[str, str] | None = None,
    ) -> Msg:
        """Publish a request and wait for its first reply.

        Replies come through one wildcard subscription
        (``<inbox_prefix>.<nuid>.*``) made at the first request; each request
        parks on its own waiter.

        Args:
            subject: as ``publish``.
            payload: as ``publish``.
            timeout: seconds to wait for the reply.
            headers: as ``publish``.

        Returns:
            The reply.

        Raises:
            NoRespondersError: nobody subscribes to ``subject`` (the server's
                ``503`` status, at once).
            RequestTimeoutError: no reply within ``timeout`` (a ``TimeoutError``).
            ConnectionClosedError: the client is or becomes closed.
            Exception: everything ``publish`` raises.
        """
        positive("timeout", timeout)
        if self._inbox_sub is None:
            self._inbox_sub = self._add_subscription(
                self._inbox_prefix + "*", None, 0, self._on_reply
            )
        backend = self._backend
        if backend is None:
            backend = self._backend = current_backend()
        token = str(next(self._tokens))
        waiter = _Reply(self, token)
        self._replies[token] = waiter
        try:
            await self.publish(
                subject, payload, reply=self._inbox_prefix + token, headers=headers
            )
            answered = await waiter.park_for(backend, timeout)
        finally:
            self._replies.pop(token, None)  # answered: popped already
        if not answered:
            raise RequestTimeoutError(
                f"no reply to a request on {subject!r} within {timeout} s"
            )
        if waiter.state == _FAILED:
            raise waiter.outcome
        msg: Msg = waiter.outcome
        if msg.status == 503:
            raise NoRespondersError(f"no responders on {subject!r}")
        return msg

    async def close(self) -> None:
        """Write what is queued (within ``close_timeout``), then close.

        Buffered messages of subscriptions stay readable; then their iteration
        ends. Idempotent. Cancelled while it writes, it still closes (at once,
        what is queued unwritten), as Trio's ``aclose``.
        """
        if self._closed:
            return
        try:
            if self._conn is not None and self._close_timeout > 0:
                with anyio.move_on_after(self._close_timeout):
                    with suppress(NatsError):
                        await self.flush(self._close_timeout)
        finally:
            self._shutdown(None)

    async def drain(self) -> None:
        """Unsubscribe everything, let the server confirm (so no message for
        them is still on its way), then close. Messages buffered in
        subscriptions stay readable.
        """
        if self._closed:
            return
        for sub in list(self._subs.values()):
            if sub is not self._inbox_sub:
                self._send_control(f"UNSUB {sub.sid}\r\n".encode())
        await self.close()


@asynccontextmanager
async def connect(
    servers: str | Sequence[str] = "nats://127.0.0.1:4222", **options: Any
) -> AsyncIterator[Client]:
    """Connect to a NATS server: ``async with connect(url) as nc: ...``.

    The client's tasks live inside the ``async with``; leaving it normally
    writes what is queued (within ``close_timeout``) and closes; leaving it by
    an exception closes at once.

    Args:
        servers: a server URL or a list of them (``nats://``, ``tls://``, with
            ``user:password@`` or ``token@``); more are learnt from the
            servers' ``connect_urls``.
        **options: the keyword arguments of ``Client``: ``name``,
            ``echo``, ``user``, ``password``, ``token``, ``nkey_seed``,
            ``creds_file``, ``tls`` (an ``ssl.SSLContext``), ``tls_hostname``,
            ``tls_ca_file``, ``tls_cert_file``, ``tls_key_file``,
            ``inbox_prefix``, ``connect_timeout``, ``allow_reconnect``,
            ``max_reconnect_attempts`` (-1: forever), ``reconnect_wait``,
            ``max_reconnect_wait``, ``reconnect_jitter`` (seconds of random
            extra wait), ``ping_interval``, ``max_outstanding_pings``,
            ``max_pending_bytes``, ``close_timeout``, ``error_callback``.

    Raises:
        TypeError / ValueError: a bad option, naming it.
        NoServersError: no server accepted a connection (the last error is its
            ``__cause__``).
        AuthorizationError: the server refused the credentials.
    """
    client = Client(servers, **options)
    try:
        conn = await client._connect_first()  # outside the task group: unwrapped
    except BaseException:
        client._shutdown(None)
        raise
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client._run, conn)
            try:
                yield client
            except BaseException:
                client._shutdown(None)
                raise
            await client.close()
    finally:
        await anyio.aclose_forcefully(conn.stream)
