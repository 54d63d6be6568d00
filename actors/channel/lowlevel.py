"""The channel core's low-level API, for the layers built on it.

As ``trio.lowlevel`` and ``anyio.lowlevel``: what the mailbox, the runtime,
the remote layer, the NATS client and the test kit need from the channel core
beyond its streams, and the one module of the channel package they import
(``tests/layers`` checks it). Nothing here is needed to use channels.

* ``publish``: a package's ``__init__`` makes its re-exported names report
  that package as their ``__module__`` (as anyio and trio do).
* Which event loop runs: ``current_async_library``, ``current_backend``
  (the ``Backend`` of the running loop, chosen once per loop kind),
  ``ASYNCIO_BACKEND``.
* Parking a task: ``Waiter`` (``Backend.park``,
  ``park_for``, ``wake``), the wait handles of ``Backend.new_handle`` /
  ``Backend.resolve`` and their ``Stale``; ``Slot`` (and ``EMPTY``), the
  one-answer waiter every request/reply in the package parks on (the local
  ask, the remote ask, the NATS client's request): park, wake and late
  answer written once.
* The waiting senders and receivers of a buffer: ``SendWaiter`` (and its
  ``status``: ``PENDING``, ``DELIVERED``, ``WITHDRAWN``, ``BROKEN``),
  ``ReceiveWaiter``, and ``ChannelState``, the shared state of one channel (a
  work queue built on the channel's rules).
* Starting tasks with the loop's own primitive inside a task group:
  ``TaskSpawner``, made by ``task_spawner``.
* Ctrl-C on Trio: ``ki_protected``.
* Argument checks shared with the layers above: ``check_limit``,
  ``check_buffer_size``.
"""

from __future__ import annotations

from ._library import current_async_library as current_async_library
from ._public import publish as publish
from ._slot import EMPTY as EMPTY
from ._slot import Slot as Slot
from ._spawner import TaskSpawner as TaskSpawner
from ._spawner import task_spawner as task_spawner
from ._state import ChannelState as ChannelState
from ._state import check_buffer_size as check_buffer_size
from ._state import check_limit as check_limit
from ._waiters import ASYNCIO_BACKEND as ASYNCIO_BACKEND
from ._waiters import BROKEN as BROKEN
from ._waiters import DELIVERED as DELIVERED
from ._waiters import PENDING as PENDING
from ._waiters import WITHDRAWN as WITHDRAWN
from ._waiters import Backend as Backend
from ._waiters import Key as Key
from ._waiters import ReceiveWaiter as ReceiveWaiter
from ._waiters import SendWaiter as SendWaiter
from ._waiters import Stale as Stale
from ._waiters import Waiter as Waiter
from ._waiters import current_backend as current_backend
from ._waiters import ki_protected as ki_protected

__all__ = [
    "ASYNCIO_BACKEND",
    "BROKEN",
    "DELIVERED",
    "EMPTY",
    "PENDING",
    "WITHDRAWN",
    "Backend",
    "ChannelState",
    "Key",
    "ReceiveWaiter",
    "SendWaiter",
    "Slot",
    "Stale",
    "TaskSpawner",
    "Waiter",
    "check_buffer_size",
    "check_limit",
    "current_async_library",
    "current_backend",
    "ki_protected",
    "publish",
    "task_spawner",
]
