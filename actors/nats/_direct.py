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

from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

import anyio
from anyio.abc import ByteStream, SocketAttribute

from ._connection import READ_SIZE

__all__ = ["direct_reader", "direct_writer", "inline_reader"]


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


def inline_reader(
    stream: ByteStream, feed: Callable[[bytes], None]
) -> Callable[[], Awaitable[NoReturn]] | None:
    """On an asyncio TCP stream: hand every chunk the transport reads to
    ``feed`` (sync: it parses and delivers) from the transport's
    ``data_received``; returns what the reader task awaits instead of reading:
    it raises when the connection ends (``anyio.EndOfStream``: the server
    closed it; ``anyio.BrokenResourceError``: it broke) or when ``feed``
    raised (that exception: the connection is then read no more). None for
    other streams (Trio, TLS).

    Chunks the stream had read before this call are fed first, in the
    calling task. ``feed`` runs in a loop callback, not in a task: it must not
    wait, nor enter cancel scopes. anyio finds its backend there through
    sniffio's context variable, which is set for the transport's callbacks if
    the program was not started by ``anyio.run``.
    """
    parts = _asyncio_parts(stream)
    if parts is None:
        return None
    transport, protocol = parts
    queue = protocol.read_queue
    while queue:
        feed(queue.popleft())
    failure: list[BaseException] = []
    marked = False

    def data_received(data: bytes) -> None:
        nonlocal marked
        if failure:
            return  # it failed: the reader ends the connection
        if not marked:
            marked = True
            _mark_asyncio()
        try:
            feed(data)
        except Exception as exc:
            failure.append(exc)
            protocol.read_event.set()

    protocol.data_received = data_received
    # The transport may hold the protocol's methods (uvloop does): set the
    # protocol again so the new data_received is the one called.
    transport.set_protocol(protocol)
    transport.resume_reading()
    _read_size(transport)

    async def wait() -> NoReturn:
        try:
            while True:
                if failure:
                    raise failure[0]
                if protocol.exception is not None:
                    raise anyio.BrokenResourceError from protocol.exception
                if protocol.is_at_eof or transport.is_closing():
                    raise anyio.EndOfStream
                event = protocol.read_event
                event.clear()
                await event.wait()
        finally:
            # The connection is being torn down: nothing more is delivered.
            failure.append(anyio.ClosedResourceError())

    return wait


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


