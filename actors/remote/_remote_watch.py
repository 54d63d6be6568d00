"""Remote death watch as the runtime asks for it (its ``RemoteExtension``
hooks) and ``RemoteRef.join``: a base class of
[``Remote``][actors.remote.Remote], one concept of its façade (the work is
``_watch``'s)."""

from __future__ import annotations

from typing import Any

from .. import ActorRef
from ._ref import RemoteRef
from ._remote_view import RemoteView
from .scaleout import RemotePoolRef

__all__ = ["RemoteWatching"]


class RemoteWatching(RemoteView):
    """The runtime's death-watch hooks of a node (see the module doc)."""

    def watch(self, watcher: object, ref: ActorRef[Any]) -> None:
        """The runtime's hook for ``context.watch(remote_ref)``: ``watcher``
        gets ``Terminated(ref, reason)`` when the remote actor terminates, or
        ``Terminated(ref, NodeDown)`` when its node is declared down (or nobody
        listens on it any more).

        A pool across processes (a ``RemotePoolRef``) is watched too: its
        watchers get ``Terminated(pool, reason)`` when it stops.

        Raises:
            TypeError: ``ref`` is not a remote ref (or a pool) of this node.
        """
        if isinstance(ref, RemotePoolRef):
            coordinator = ref.coordinator
            if coordinator is None:
                raise TypeError(f"{ref!r} has no coordinator yet")
            self._running().watch.watch_pool(watcher, ref, coordinator)
            return
        me: object = self
        if not isinstance(ref, RemoteRef) or ref._remote is not me:
            raise TypeError(f"{ref!r} is not a remote ref of this system")
        self._running().watch.watch(watcher, ref)

    def unwatch(self, watcher: object, ref: ActorRef[Any]) -> None:
        """The runtime's hook for ``context.unwatch(remote_ref)`` (and for a
        watcher that stopped)."""
        parts = self._parts
        if parts is None:
            return
        if isinstance(ref, RemoteRef):
            parts.watch.unwatch(watcher, ref)
        elif isinstance(ref, RemotePoolRef) and ref.coordinator is not None:
            parts.watch.unwatch_pool(watcher, ref.coordinator)

    def local_terminated(self, ref: ActorRef[Any], reason: object) -> None:
        """The runtime's hook: a local actor other nodes watch terminated;
        each gets one death notice, after what the actor sent it before."""
        parts = self._parts
        if parts is not None:
            parts.watch.local_terminated(ref, reason)

    async def join(self, ref: RemoteRef[Any]) -> object:
        """``await ref.join()``; see
        [``RemoteRef.join``][actors.remote.RemoteRef.join]."""
        return await self._running().watch.join(ref)

