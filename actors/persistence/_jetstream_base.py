"""What the JetStream journal's parts share: the connection (its own client
inside the journal's ``async with``, or the caller's), the stream and the
buckets made on first use, and the retry of an operation after a transient
error (a lost answer, a server restarting, JetStream not ready yet) until
``write_timeout`` seconds have passed.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from typing import Any, Final, Literal, Self, TypeVar

import anyio

from ..nats import (
    Client,
    ConnectionClosedError,
    DisconnectedError,
    JetStream,
    JetStreamNotEnabledError,
    KeyValue,
    KeyValueConfig,
    NatsError,
    NoStreamResponseError,
    OutboundBufferFullError,
    RequestTimeoutError,
    StreamConfig,
    StreamNotFoundError,
    connect,
)
from ._errors import JournalClosed, JournalError
from ._journal import _Closable

__all__ = ["TRANSIENT", "JetStreamBase"]

T = TypeVar("T")

#: Errors after which an operation is tried again (until its deadline).
TRANSIENT: Final = (
    RequestTimeoutError,
    NoStreamResponseError,
    JetStreamNotEnabledError,
    DisconnectedError,
    OutboundBufferFullError,
)
_PAUSE: Final = 0.05  #: seconds before the first retry; doubled up to 1 s
#: The most copies of a stream a JetStream cluster keeps.
MAX_REPLICAS: Final = 5
_BAD_TOKEN: Final = re.compile(r"[\s*>]")


def check_prefix(prefix: object) -> str:
    """``prefix`` if it can begin the journal's subjects: a non-empty str of
    non-empty tokens separated by ``.``, without whitespace or the wildcards
    ``*`` and ``>`` (the journal adds ``.e.<id>``, ``.d.<id>`` to it).

    Raises:
        TypeError: it is not a str.
        ValueError: it is empty, has an empty token or a forbidden character.
    """
    if type(prefix) is not str:
        raise TypeError(f"subject_prefix must be a str or None, not {prefix!r}")
    if not prefix:
        raise ValueError(
            "subject_prefix must not be empty (None gives the default, "
            "'journal.<stream>')"
        )
    if any(not token or _BAD_TOKEN.search(token) for token in prefix.split(".")):
        raise ValueError(
            "subject_prefix must be tokens separated by '.', each non-empty "
            f"without whitespace, '*' or '>': {prefix!r}"
        )
    return prefix


class JetStreamBase(_Closable):
    """The connection, setup and retries of ``JetStreamJournal`` (whose
    docstring lists the arguments)."""

    def __init__(
        self,
        url: str | Sequence[str] | None = None,
        *,
        client: Client | None = None,
        stream: str = "ACTORS",
        subject_prefix: str | None = None,
        storage: Literal["file", "memory"] = "file",
        replicas: int = 1,
        duplicate_window: float = 120.0,
        write_timeout: float = 60.0,
        request_timeout: float = 5.0,
        read_batch: int = 256,
        max_cached: int = 100_000,
        connect_options: Mapping[str, Any] | None = None,
    ) -> None:
        if client is None and url is None:
            raise ValueError("JetStreamJournal needs a url or a client")
        if client is not None and not isinstance(client, Client):
            raise TypeError(f"client must be an actors.nats.Client, not {client!r}")
        for name, value in (
            ("write_timeout", write_timeout),
            ("request_timeout", request_timeout),
            ("duplicate_window", duplicate_window),
        ):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{name} must be seconds, not {value!r}")
            if not value > 0:
                raise ValueError(f"{name} must be > 0 seconds, not {value!r}")
        for name, count in (("read_batch", read_batch), ("max_cached", max_cached)):
            if isinstance(count, bool) or not isinstance(count, int):
                raise TypeError(f"{name} must be an int, not {count!r}")
            if count < 1:
                raise ValueError(f"{name} must be >= 1, not {count}")
        if isinstance(replicas, bool) or not isinstance(replicas, int):
            raise TypeError(f"replicas must be an int, not {replicas!r}")
        if not 1 <= replicas <= MAX_REPLICAS:
            raise ValueError(
                f"replicas must be 1 to {MAX_REPLICAS} (JetStream's limit), "
                f"not {replicas}"
            )
        if subject_prefix is not None:
            check_prefix(subject_prefix)
        prefix = f"journal.{stream}" if subject_prefix is None else subject_prefix
        self._config = StreamConfig(
            stream,
            subjects=(f"{prefix}.>",),
            storage=storage,
            num_replicas=replicas,
            duplicate_window=float(duplicate_window),
            allow_direct=True,
            allow_rollup_hdrs=True,
        )
        self.stream = stream
        self._events = f"{prefix}.e."
        self._deleted = f"{prefix}.d."
        self._buckets = (
            KeyValueConfig(f"{stream}_SNAPSHOTS", storage=storage, replicas=replicas),
            KeyValueConfig(f"{stream}_STATES", storage=storage, replicas=replicas),
        )
        self._url = url
        self._client = client
        self._connect_options = dict(connect_options or {})
        self.write_timeout = float(write_timeout)
        self.request_timeout = float(request_timeout)
        self.read_batch = read_batch
        self._max_cached = max_cached
        #: persistence id -> (its highest number, the stream sequence of the
        #: subject's last message): the last append's or read's.
        self._last: OrderedDict[str, tuple[int, int]] = OrderedDict()
        #: persistence id -> (the next number to read, a stream sequence at
        #: or below its message): where the last read page ended.
        self._cursor: OrderedDict[str, tuple[int, int]] = OrderedDict()
        self._js: JetStream | None = None
        self._snapshots: KeyValue | None = None
        self._states: KeyValue | None = None
        self._exit: AsyncExitStack | None = None
        self._setup_lock: anyio.Lock | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"JetStreamJournal(stream={self.stream!r})"

    # -- connection and setup --------------------------------------------------

    async def __aenter__(self) -> Self:
        url = self._url
        if self._client is None and url is not None and not self._closed:
            # The client's tasks live in this task's ``async with``.
            self._exit = AsyncExitStack()
            try:
                self._client = await self._exit.enter_async_context(
                    connect(url, **self._connect_options)
                )
            except NatsError as exc:
                self._exit = None
                raise JournalError(f"cannot connect to NATS: {exc}") from exc
        try:
            await self._ready()
        except BaseException:
            # Undo what was entered, in this task (the client's task group
            # was entered here): a client left open outlives the journal and
            # corrupts the loop's cancel scopes. Not under a shield of ours:
            # the task group's scope must be the innermost when it exits; a
            # cancellation makes the client close at once.
            await self.aclose()
            raise
        return self

    async def _ready(self) -> JetStream:
        """The JetStream context, after connecting and making the stream and
        the buckets (once)."""
        if self._closed:
            raise JournalClosed(f"{self!r} is closed")
        js = self._js
        if js is not None:
            return js
        if self._setup_lock is None:
            self._setup_lock = anyio.Lock()
        async with self._setup_lock:
            if self._js is not None:
                return self._js
            client = self._client
            if client is None:
                raise JournalError(
                    f"{self!r} is not connected: use it as ``async with "
                    "JetStreamJournal(url) as journal:`` (or give it a client)"
                )
            js = client.jetstream(timeout=self.request_timeout)
            await self._retrying(lambda: js.add_stream(self._config), "make the stream")
            self._snapshots = await self._retrying(
                lambda: js.create_key_value(self._buckets[0]), "make a bucket"
            )
            self._states = await self._retrying(
                lambda: js.create_key_value(self._buckets[1]), "make a bucket"
            )
            self._js = js
            return js

    async def _retrying(
        self,
        operation: Callable[[], Awaitable[T]],
        what: str,
        passing: tuple[type[Exception], ...] = (),
    ) -> T:
        """``operation()``, again after a transient error until
        ``write_timeout`` seconds have passed.

        Raises:
            Exception: an error of a ``passing`` type, as it is.
            JournalError: it failed for good (another NATS error, the cause)
                or kept failing.
        """
        deadline = 0.0
        pause = _PAUSE
        while True:
            try:
                return await operation()
            except TRANSIENT as exc:
                error: Exception = exc
            except StreamNotFoundError as exc:
                if exc.code != 503:  # 503: a restarting server's direct gets
                    if isinstance(exc, passing):
                        raise
                    raise JournalError(f"{self!r} could not {what}: {exc}") from exc
                error = exc
            except passing:
                raise
            except ConnectionClosedError as exc:
                raise JournalError(f"{self!r}: the NATS client is closed") from exc
            except NatsError as exc:
                raise JournalError(f"{self!r} could not {what}: {exc}") from exc
            if self._closed:
                raise JournalClosed(f"{self!r} is closed") from error
            if not deadline:  # the first failure: the clock starts
                deadline = anyio.current_time() + self.write_timeout
            if anyio.current_time() + pause > deadline:
                raise JournalError(
                    f"{self!r} could not {what} within {self.write_timeout} s: {error}"
                ) from error
            await anyio.sleep(pause)
            pause = min(1.0, pause * 2)

    def _remember(
        self, table: OrderedDict[str, tuple[int, int]], key: str, value: tuple[int, int]
    ) -> None:
        table[key] = value
        table.move_to_end(key)
        if len(table) > self._max_cached:
            table.popitem(last=False)

    # -- closing ---------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the journal's own client (not one given as ``client``);
        later calls raise ``JournalClosed``. Closing twice does nothing.
        Call it from the task that entered the journal (``async with``)."""
        if self._closed:
            return
        self._closed = True
        self._js = None  # the operations' fast path sees the close too
        exit_stack, self._exit = self._exit, None
        if exit_stack is not None:
            await exit_stack.aclose()

