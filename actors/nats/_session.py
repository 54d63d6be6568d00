"""The client's machinery: one connection at a time, served by three tasks.

A reader task parses with a buffer and delivers to subscriptions (on asyncio,
the transport's callback does it as it reads, ``_direct.inline_reader``, and
the reader task waits for the connection's end); a writer task
drains the outbound channel with ``receive_many`` and writes one buffer per
wake (as async-nats' ``poll_recv_many``); a pinger detects a stale connection.
A command queued while the writer is idle and no burst is under way is written
at once by its caller (``Session._enqueue``): a lone request does not wait
for the writer's wake; the commands that follow it wake the writer and go out
together. A burst ends when data comes in or the writer parks again.
When the connection breaks, ``_connected`` replays the subscriptions with
their ids on the next one, which the manager task of ``_reconnect`` opens
(with backoff and jitter across the server list). The public API is
``Client``, which subclasses ``Reconnection`` and ``Publisher``.

Its size: the connection's tasks (reader, writer, pinger, reconnect) share
the connection's state and are one concept, the session.
"""

from __future__ import annotations

import itertools
import logging
import math
import ssl
from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ..channel import WouldBlock, create_memory_object_stream
from ..channel.lowlevel import EMPTY, Backend, Slot
from ._auth import Credentials
from ._connection import Connection, Server, error_for, parse_server
from ._direct import direct_reader, direct_writer, inline_reader
from ._errors import (
    ConnectionClosedError,
    DisconnectedError,
    PermissionsViolation,
    ProtocolError,
    StaleConnectionError,
)
from ._protocol import OK, PING, PONG, ErrLine, Msg, Op, ServerInfo, new_nuid
from ._subscription import Subscription

__all__ = ["Session"]

logger = logging.getLogger("actors.nats")

WRITE_BATCH = 4096  #: the most queued commands one write takes
READ_SIZE = 64 * 1024
PING_LINE = b"PING\r\n"
PONG_LINE = b"PONG\r\n"
DEFAULT_MAX_PAYLOAD = 1024 * 1024


class _Ping:
    """A PING in the outbound channel; its PONG sets the event."""

    __slots__ = ("error", "event")

    def __init__(self, event: anyio.Event | None) -> None:
        self.event = event
        self.error: BaseException | None = None

    def fail(self, error: BaseException) -> None:
        if self.event is not None:
            self.error = error
            self.event.set()


#: ``_Reply.state`` once answered: a reply message, or the client's failure.
_REPLIED, _FAILED = 1, 2


class _Reply(Slot):
    """A request parked until its reply: the channel core's one-answer
    waiter (an asyncio future with a loop timer, or Trio's own parking),
    cheaper than an Event inside a cancel scope."""

    __slots__ = ("session", "token")

    def __init__(self, session: Session, token: str) -> None:
        # The slot's fields set here (no super().__init__(): a call saved
        # per request).
        self.handle = None
        self.state = EMPTY
        self.outcome = None
        self.waiting = False
        self.abandoned = False
        self.on_done = None
        self.session = session
        self.token = token

    def lost(self) -> None:
        # Answered, then cancelled natively (asyncio) before it ran: the
        # reply came too late for its asker.
        self.session._late_replies += 1


class Session:
    """The connection machinery of a client (see the module docstring)."""

    # The configuration, set by Client.__init__ before Session.__init__.
    _servers: list[Server]
    _tls: ssl.SSLContext | None
    _tls_hostname: str | None
    _connect_timeout: float
    _allow_reconnect: bool
    _max_reconnect_attempts: int
    _reconnect_wait: float
    _max_reconnect_wait: float
    _reconnect_jitter: float
    _ping_interval: float
    _max_outstanding_pings: int
    _max_pending: int
    _close_timeout: float
    _error_callback: Callable[[Exception], object] | None
    _credentials: Credentials
    _options: dict[str, Any]
    _inbox_root: str

    def __init__(self) -> None:
        self._out_tx, self._out_rx = create_memory_object_stream[bytes | _Ping](
            math.inf
        )
        self._pending_bytes = 0
        #: The writer is parked with nothing handed to it (see _enqueue).
        self._writer_parked = False
        #: A direct write happened and no data came in since (a burst).
        self._burst = False
        self._write_now: Callable[[bytes], int] | None = None
        self._space: anyio.Event | None = None
        self._subs: dict[int, Subscription] = {}
        self._sids = itertools.count(1)
        self._conn: Connection | None = None
        self._info = ServerInfo()
        self._max_payload = DEFAULT_MAX_PAYLOAD
        self._closed = False
        self._failure: BaseException | None = None
        self._closed_event = anyio.Event()
        #: the manager task's scope: closing cancels it (never the owner's body)
        self._run_scope: anyio.CancelScope | None = None
        self._inbox_prefix = f"{self._inbox_root}.{new_nuid()}."
        self._inbox_sub: Subscription | None = None
        self._replies: dict[str, _Reply] = {}
        self._backend: Backend | None = None
        self._tokens = itertools.count(1)
        self._received = 0
        self._bytes_written = 0
        self._writes = 0
        self._reconnects = 0
        self._attempts = 0  #: reconnection rounds used since the last good one
        self._dropped = 0
        self._late_replies = 0

    def _send_control(self, data: bytes) -> None:
        # Protocol commands (SUB, UNSUB, PONG) are never refused for space.
        if not self._closed:
            self._enqueue(data)

    def _enqueue(self, data: bytes) -> None:
        """Queue ``data`` for the writer, or write it at once when the writer
        is parked with nothing in hand and no burst is under way (nothing
        queued can then come before it): the first command of a burst goes
        out without waiting for the writer's wake, the rest wake the writer
        and go out in one write."""
        if self._writer_parked and not self._burst:
            write = self._write_now
            assert write is not None
            written = write(data)
            if written:
                self._bytes_written += written
                self._writes += 1
                # The burst ends when data comes in or the writer next parks
                # (no callback of its own: that would cost a loop iteration).
                self._burst = True
                if written == len(data):
                    return
                data = data[written:]
        self._writer_parked = False
        self._pending_bytes += len(data)
        self._out_tx.send_nowait(data)

    # -- request/reply plumbing ---------------------------------------------

    def _on_reply(self, msg: Msg) -> None:
        waiter = self._replies.pop(msg.subject[len(self._inbox_prefix) :], None)
        if waiter is None or not waiter.fill(_REPLIED, msg, self._backend):
            self._late_replies += 1

    # -- errors ------------------------------------------------------------

    def _report(self, error: Exception) -> None:
        callback = self._error_callback
        if callback is None:
            logger.warning("NATS client: %s", error)
            return
        try:
            callback(error)
        except Exception:
            logger.exception("NATS client: error_callback raised")

    # -- the connection's tasks ---------------------------------------------

    def _dispatch(self, conn: Connection, op: Op) -> None:
        if op is PING:
            self._send_control(PONG_LINE)
        elif op is PONG:
            conn.pings_outstanding = 0
            if conn.pongs:
                marker = conn.pongs.popleft()
                if marker.event is not None:
                    marker.event.set()
        elif type(op) is ServerInfo:
            self._update_info(op)
        elif type(op) is ErrLine:
            error = error_for(op)
            if isinstance(error, PermissionsViolation):
                self._report(error)
            else:
                raise error
        elif op is not OK:  # pragma: no cover - the parser makes no other ops
            raise ProtocolError(f"unexpected operation {op!r}")

    def _update_info(self, info: ServerInfo) -> None:
        self._info = info
        max_payload = info.get("max_payload")
        if type(max_payload) is int and max_payload > 0:
            self._max_payload = max_payload
        urls = info.get("connect_urls")
        if isinstance(urls, list):
            known = {server.address for server in self._servers}
            for url in urls:
                try:
                    server = parse_server(str(url), discovered=True)
                except ValueError:
                    continue
                if server.address not in known:
                    known.add(server.address)
                    self._servers.append(server)

    async def _read_loop(self, conn: Connection) -> None:
        subs = self._subs
        for op in conn.leftover:
            if type(op) is Msg:
                sub = subs.get(op.sid)
                if sub is not None:
                    sub.deliver(op)
            else:
                self._dispatch(conn, op)
        inline = inline_reader(conn.stream)
        try:
            if inline is not None:
                inline.start(self._feeder(conn, inline.failed))
                await inline.wait()  # returns never: it raises at the end
            feed = self._feeder(conn, None)
            receive = direct_reader(conn.stream) or conn.stream.receive
            while True:
                feed(await receive(READ_SIZE))
        except anyio.EndOfStream:
            raise DisconnectedError("the server closed the connection") from None

    def _feeder(
        self, conn: Connection, failed: Callable[[Exception], None] | None
    ) -> Callable[[bytes], None]:
        """What handles each chunk read from ``conn``: parse, deliver each
        message to its subscription, act on the other operations; in the
        reader task (what cannot be handled raises there), or as the
        transport's callback (it goes to ``failed``: see
        ``_direct.InlineReader``)."""
        subs = self._subs
        parse = conn.parser.parse
        dispatch = self._dispatch
        report = self._report

        def feed(data: bytes) -> None:
            # Data came in: a new step of the conversation, so the first
            # command it leads to may be written at once (see _enqueue).
            self._burst = False
            received = 0
            try:
                for op in parse(data):
                    # Per message: one type check, one dict lookup, one call
                    # (the callback's: Subscription.deliver written out for a
                    # subscription with a callback and no limit).
                    if type(op) is Msg:
                        received += 1
                        sub = subs.get(op.sid)
                        if sub is None:
                            continue
                        callback = sub._callback
                        if callback is None or sub.max_msgs:
                            sub.deliver(op)
                            continue
                        sub.delivered += 1
                        try:
                            callback(op)
                        except Exception as exc:
                            report(exc)
                    else:
                        dispatch(conn, op)
            except Exception as exc:
                if failed is None:
                    raise
                failed(exc)
            finally:
                self._received += received

        return feed

    async def _write_loop(self, conn: Connection) -> None:
        send = conn.stream.send
        if conn.replay:
            await send(conn.replay)
        receive_many = self._out_rx.receive_many
        receive_nowait_many = self._out_rx.receive_nowait_many
        self._write_now = direct_writer(conn.stream)
        try:
            await self._write_batches(conn, send, receive_many, receive_nowait_many)
        finally:
            self._writer_parked = False
            self._burst = False
            self._write_now = None

    async def _write_batches(
        self,
        conn: Connection,
        send: Callable[[bytes], Any],
        receive_many: Callable[[int], Any],
        receive_nowait_many: Callable[[int], list[Any]],
    ) -> None:
        direct = self._write_now is not None
        while True:
            # Take what came in meanwhile without a checkpoint; wait only when
            # there is nothing.
            try:
                items = receive_nowait_many(WRITE_BATCH)
            except WouldBlock:
                self._writer_parked = direct
                self._burst = False
                try:
                    items = await receive_many(WRITE_BATCH)
                finally:
                    self._writer_parked = False
            try:
                data = b"".join(items)
            except TypeError:  # a flush or keep-alive PING among them
                parts: list[bytes] = []
                for item in items:
                    if type(item) is _Ping:
                        conn.pongs.append(item)
                        parts.append(PING_LINE)
                    else:
                        parts.append(item)
                data = b"".join(parts)
            self._pending_bytes -= len(data)
            space = self._space
            if space is not None and self._pending_bytes < self._max_pending:
                self._space = None
                space.set()
            # Written at once when the transport takes it (no checkpoint,
            # so no loop iteration per write: the next items wake this task
            # when they come); the rest through the stream's send.
            write_now = self._write_now
            written = 0 if write_now is None else write_now(data)
            if written < len(data):
                await send(data[written:] if written else data)
            self._writes += 1
            self._bytes_written += len(data)

    async def _ping_loop(self, conn: Connection) -> None:
        while True:
            await anyio.sleep(self._ping_interval)
            if conn.pings_outstanding >= self._max_outstanding_pings:
                raise StaleConnectionError(
                    f"{conn.pings_outstanding} PINGs to {conn.server} unanswered"
                )
            conn.pings_outstanding += 1
            self._pending_bytes += len(PING_LINE)
            self._writer_parked = False
            self._out_tx.send_nowait(_Ping(None))

    async def _guard(
        self, task: Callable[[Connection], Any], conn: Connection, tg: TaskGroup
    ) -> None:
        try:
            await task(conn)
        except Exception as exc:
            if conn.error is None:
                conn.error = exc
            tg.cancel_scope.cancel()

    async def _use_connection(self, conn: Connection) -> BaseException:
        """Run the connection's tasks until one fails; return its error."""
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._guard, self._read_loop, conn, tg)
                tg.start_soon(self._guard, self._write_loop, conn, tg)
                tg.start_soon(self._guard, self._ping_loop, conn, tg)
        finally:
            await anyio.aclose_forcefully(conn.stream)
        return conn.error or DisconnectedError("the connection ended")

    def _connected(self, conn: Connection) -> None:
        # Synchronous, so no SUB is lost or sent twice around the replay.
        self._update_info(conn.info)
        lines = []
        for sub in self._subs.values():
            lines.append(sub.subscribe_line())
            if sub.max_msgs:
                lines.append(
                    f"UNSUB {sub.sid} {sub.max_msgs - sub.delivered}\r\n".encode()
                )
        conn.replay = b"".join(lines)
        self._conn = conn

    def _lost(self, conn: Connection, error: BaseException) -> None:
        self._conn = None
        while conn.pongs:
            conn.pongs.popleft().fail(
                DisconnectedError(f"the connection broke before the PONG: {error}")
            )
        space = self._space
        if space is not None:
            self._space = None
            space.set()
        if isinstance(error, Exception):
            self._report(error)

    # -- closing -------------------------------------------------------------

    def _shutdown(self, failure: BaseException | None) -> None:
        """Close the client now: fail what waits, end every subscription."""
        if self._closed:
            return
        self._closed = True
        self._failure = failure
        closed = ConnectionClosedError(
            "the client is closed"
            if failure is None
            else f"the client failed: {failure}"
        )
        if failure is not None:
            closed.__cause__ = failure
        for sub in list(self._subs.values()):
            sub.close()
        self._subs.clear()
        replies = list(self._replies.values())
        self._replies.clear()
        for waiter in replies:
            waiter.fill(_FAILED, closed, self._backend)
        conn = self._conn
        if conn is not None:
            while conn.pongs:
                conn.pongs.popleft().fail(closed)
        unsent = 0
        try:
            while True:
                for item in self._out_rx.receive_nowait_many(WRITE_BATCH):
                    if type(item) is _Ping:
                        item.fail(closed)
                    else:
                        unsent += 1
        except (WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
            pass
        if unsent:
            logger.warning("NATS client closed with %d commands never written", unsent)
        space = self._space
        if space is not None:
            self._space = None
            space.set()
        self._out_tx.close()
        self._out_rx.close()
        self._conn = None
        self._closed_event.set()
        if self._run_scope is not None:
            self._run_scope.cancel()
