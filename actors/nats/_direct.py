"""The connection's fast paths, chosen once per connection by the backend
and stream it has (the one module that knows anyio's and the event loops'
stream internals):

* ``direct_writer``: a sync write of a lone command by its caller (no wake
  of the writer task);
* ``inline_reader``: on asyncio (and uvloop), what the server sends is
  parsed and delivered in the transport's ``data_received``, in the loop
  iteration that read it, instead of waking the reader task for it (a
  request/reply costs one loop iteration, an Event and a task step less on
  each side);
* ``direct_reader``: otherwise a ``receive`` lighter than the stream's own
  (asyncio streams that cannot be read inline, Trio).

TLS streams have none of them: their own ``send`` and ``receive`` are used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

import anyio
from anyio.abc import ByteStream, SocketAttribute

from ._connection import READ_SIZE

__all__ = ["InlineReader", "direct_reader", "direct_writer", "inline_reader"]


def _asyncio_parts(stream: ByteStream) -> tuple[Any, Any] | None:
    """The transport and anyio ``StreamProtocol`` of an asyncio TCP stream
    (read and written through a protocol with a read queue and read and write
    events), or None."""
    transport: Any = getattr(stream, "_transport", None)
    protocol: Any = getattr(stream, "_protocol", None)
    if (
        transport is None
        or getattr(protocol, "read_queue", None) is None
        or not hasattr(protocol, "read_event")
    ):
        return None
    return transport, protocol


def _read_size(transport: Any) -> None:
    if isinstance(getattr(transport, "max_size", None), int):
        # asyncio's selector transport reads up to 256 KiB at a time into a
        # fresh bytes object: above malloc's mmap threshold, so every read
        # is an mmap, a page fault, an mremap and a munmap (three system
        # calls more per message on a request/reply path). READ_SIZE reads
        # come from the heap. (uvloop reads into a buffer of its own.)
        transport.max_size = READ_SIZE


class InlineReader:
    """On an asyncio TCP stream: every chunk the transport reads goes to a
    ``feed`` (sync: it parses and delivers) called as the transport's
    ``data_received`` itself, in the loop iteration that read it. Make one
    with ``inline_reader``; ``start`` it; the reader task awaits ``wait``.

    ``feed`` runs in a loop callback, not in a task: it must not wait, nor
    enter cancel scopes, nor raise (it hands what it cannot handle to
    ``failed``). anyio finds its backend there through sniffio's context
    variable, which is set in the transport's callback context if the
    program was not started by ``anyio.run``.
    """

    __slots__ = ("_protocol", "_transport", "failure")

    def __init__(self, transport: Any, protocol: Any) -> None:
        self._transport = transport
        self._protocol = protocol
        #: Why the connection is read no more (``failed``, or torn down).
        self.failure: BaseException | None = None

    def start(self, feed: Callable[[bytes], None]) -> None:
        """Feed what the stream read before (in the calling task), then
        every chunk as the transport reads it."""
        protocol = self._protocol
        queue = protocol.read_queue
        while queue:
            feed(queue.popleft())

        def first(data: bytes) -> None:
            # The first chunk read in the callback context marks it for
            # anyio, then feed itself is the callback (no call of ours per
            # chunk in between).
            _mark_asyncio()
            if self.failure is None:
                self._install(feed)
                feed(data)

        self._install(first)
        self._transport.resume_reading()
        _read_size(self._transport)

    def _install(self, callback: Callable[[bytes], None]) -> None:
        self._protocol.data_received = callback
        # The transport may hold the protocol's methods (uvloop does): set the
        # protocol again so the new data_received is the one called.
        self._transport.set_protocol(self._protocol)

    def failed(self, error: BaseException) -> None:
        """``feed`` could not handle a chunk: nothing more is fed, and
        ``wait`` raises ``error``."""
        if self.failure is None:
            self.failure = error
            self._install(_ignore)
            self._protocol.read_event.set()

    async def wait(self) -> NoReturn:
        """Return never: raise the feed's failure, ``anyio.EndOfStream`` when
        the server closed the connection or ``anyio.BrokenResourceError``
        when it broke. Nothing is fed once this has ended (cancelled too)."""
        protocol = self._protocol
        try:
            while True:
                if self.failure is not None:
                    raise self.failure
                if protocol.exception is not None:
                    raise anyio.BrokenResourceError from protocol.exception
                if protocol.is_at_eof or self._transport.is_closing():
                    raise anyio.EndOfStream
                event = protocol.read_event
                event.clear()
                await event.wait()
        finally:
            # The connection is being torn down: nothing more is delivered.
            self.failed(anyio.ClosedResourceError())


def _ignore(data: bytes) -> None:
    """What a failed connection's transport reads: dropped (it is closing)."""


def inline_reader(stream: ByteStream) -> InlineReader | None:
    """An ``InlineReader`` of an asyncio TCP stream; None for other streams
    (Trio, TLS: the reader task reads, see ``direct_reader``)."""
    parts = _asyncio_parts(stream)
    if parts is None:
        return None
    return InlineReader(*parts)


def _mark_asyncio() -> None:
    # anyio calls in a loop callback find their backend through sniffio,
    # which (outside a task) knows it only from its context variable: set
    # here, in the transport's callback context, when anyio.run did not.
    try:
        import sniffio
    except ImportError:  # anyio assumes asyncio without sniffio
        return
    if sniffio.current_async_library_cvar.get() is None:
        sniffio.current_async_library_cvar.set("asyncio")


def direct_writer(stream: ByteStream) -> Callable[[bytes], int] | None:
    """A sync write of as many bytes as the stream takes at once (the count
    written; 0: none, write through the writer), or None when the stream has
    none (TLS). Chosen once per connection: the asyncio transport (which
    buffers what the socket does not take, unless paused), or the raw
    non-blocking socket (Trio)."""
    transport: Any = getattr(stream, "_transport", None)
    protocol: Any = getattr(stream, "_protocol", None)
    if transport is not None and hasattr(protocol, "write_event"):
        write = transport.write

        def write_asyncio(data: bytes) -> int:
            # Paused (the protocol makes a new event then): the writer waits.
            if not protocol.write_event.is_set():
                return 0
            write(data)
            return len(data)

        return write_asyncio
    if type(stream).__module__ == "anyio._backends._trio":
        try:
            sock = stream.extra(SocketAttribute.raw_socket)
        except Exception:
            return None
        send = sock.send

        def write_raw(data: bytes) -> int:
            try:
                return send(data)
            except OSError:  # would block, or broken: the writer deals with it
                return 0

        return write_raw
    return None


def direct_reader(stream: ByteStream) -> Callable[[int], Any] | None:
    """On Trio, a ``receive`` lighter than the stream's own (see
    ``_trio_reader``); None for other streams (asyncio TCP streams are read
    inline, see ``inline_reader``; TLS: the stream's own ``receive`` is
    used). Chosen once per connection."""
    if type(stream).__module__ == "anyio._backends._trio":
        return _trio_reader(stream)
    return None


def _trio_reader(stream: ByteStream) -> Callable[[int], Any] | None:
    """On Trio, a ``receive`` that waits for the socket to be readable, then
    reads: the reader calls it when it has handled everything, so the try
    first (a failed system call) and the schedule point after a read that
    Trio's socket ``recv`` makes are saved."""
    try:
        sock = stream.extra(SocketAttribute.raw_socket)
    except Exception:
        return None
    import trio

    wait_readable = trio.lowlevel.wait_readable
    recv = sock.recv

    async def receive(max_bytes: int) -> bytes:
        while True:
            await wait_readable(sock)  # a checkpoint
            try:
                data: bytes = recv(max_bytes)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            if not data:
                raise anyio.EndOfStream
            return data

    return receive


