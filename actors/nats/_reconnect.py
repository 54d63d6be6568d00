"""Connecting and reconnecting: the first connection of a client, and the
manager task that opens a new connection when one breaks.

The first connection tries each server of the list once and fails with
``NoServersError`` when none accepts (``AuthorizationError`` at once when a
server refuses the credentials). After a break, the manager waits
``reconnect_wait`` seconds (doubled per failed pass over the list, up to
``max_reconnect_wait``, plus up to ``reconnect_jitter`` random seconds) before
each pass, gives up after ``max_reconnect_attempts`` passes (-1: never) and
then closes the client with the last error as the cause. A server that
speaks garbage (``ProtocolError``) keeps using the same budget; a connection
that worked until the network failed gets a fresh one (as nats.py).
"""

from __future__ import annotations

import random

import anyio

from ._connection import Connection, Server, open_connection
from ._errors import AuthorizationError, NatsError, NoServersError, ProtocolError
from ._session import Session

__all__ = ["Reconnection"]


class Reconnection(Session):
    """A session that opens its connections (see the module docstring)."""

    async def _open(self, server: Server) -> Connection:
        return await open_connection(
            server,
            options=self._options,
            credentials=self._credentials,
            tls=self._tls,
            tls_hostname=self._tls_hostname,
            timeout=self._connect_timeout,
        )

    async def _connect_first(self) -> Connection:
        last: BaseException | None = None
        for server in list(self._servers):
            try:
                conn = await self._open(server)
            except AuthorizationError:
                raise
            except (OSError, TimeoutError, NatsError, anyio.BrokenResourceError) as exc:
                last = exc
                continue
            self._connected(conn)
            return conn
        raise NoServersError(
            f"could not connect to any of {[str(s) for s in self._servers]}: {last}"
        ) from last

    async def _reconnect(self, error: BaseException) -> Connection | None:
        last = error
        if not isinstance(error, ProtocolError):
            # The connection worked until the network failed: a fresh budget. A
            # server that speaks garbage keeps using up the same budget instead.
            self._attempts = 0
        limit = self._max_reconnect_attempts
        while limit < 0 or self._attempts < limit:
            attempt = self._attempts
            delay = min(
                self._reconnect_wait * 2 ** min(attempt, 20), self._max_reconnect_wait
            )
            await anyio.sleep(delay + random.uniform(0, self._reconnect_jitter))
            self._attempts += 1
            for server in list(self._servers):
                try:
                    conn = await self._open(server)
                except (
                    OSError,
                    TimeoutError,
                    NatsError,
                    anyio.BrokenResourceError,
                ) as exc:
                    last = exc
                    continue
                self._reconnects += 1
                self._connected(conn)
                return conn
        self._failure = last
        return None

    async def _run(self, conn: Connection) -> None:
        with anyio.CancelScope() as self._run_scope:
            if not self._closed:
                await self._run_connections(conn)

    async def _run_connections(self, conn: Connection) -> None:
        while True:
            error = await self._use_connection(conn)
            self._lost(conn, error)
            if not self._allow_reconnect:
                self._shutdown(error)
                return
            next_conn = await self._reconnect(error)
            if next_conn is None:
                self._shutdown(self._failure)
                return
            conn = next_conn
