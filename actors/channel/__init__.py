"""The channel core: memory object streams for anyio that never lose an item.

A drop-in for ``anyio.create_memory_object_stream`` (same endpoints, methods,
exceptions and statistics field names) with batch receives
(``receive_many`` / ``receive_nowait_many``), coalesced wakeups and lossless
hand-off under every cancellation path, on asyncio, uvloop and Trio.

The exceptions are anyio's own, re-exported here for convenience.
"""

from anyio import BrokenResourceError as BrokenResourceError
from anyio import ClosedResourceError as ClosedResourceError
from anyio import EndOfStream as EndOfStream
from anyio import WouldBlock as WouldBlock

from ._public import publish as _publish
from ._streams import MemoryObjectReceiveStream as MemoryObjectReceiveStream
from ._streams import MemoryObjectSendStream as MemoryObjectSendStream
from ._streams import MemoryObjectStreamStatistics as MemoryObjectStreamStatistics
from ._streams import create_memory_object_stream as create_memory_object_stream

__all__ = [
    "BrokenResourceError",
    "ClosedResourceError",
    "EndOfStream",
    "MemoryObjectReceiveStream",
    "MemoryObjectSendStream",
    "MemoryObjectStreamStatistics",
    "WouldBlock",
    "create_memory_object_stream",
]

# Public names report this package as their module (see actors.channel._public).
_publish(globals())
