"""Death watch: ``watch`` delivers exactly one ``Terminated`` when the watched
actor stops (at once if it is dead already), none after ``unwatch``, even one
already queued (Akka's DeathWatch, Erlang's monitors)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from ._invoke import call_handler, call_hook
from ._ref import ActorRef
from ._system_signals import Terminated
from .mailbox import MailboxClosed

if TYPE_CHECKING:
    from ._cell import Cell
    from ._lifecycle import ExitReason

__all__ = [
    "deliver_terminated",
    "notify_watchers",
    "unwatch",
    "unwatch_remote",
    "watch",
    "watch_remote",
]


def watch(cell: Cell, target: Cell) -> None:
    """``cell`` watches ``target`` (watching twice still delivers once)."""
    if target is cell:
        return
    watching = cell.ensure_extras().watching
    if target in watching:
        return
    watching.add(target)
    if target.ended:
        cell.mailbox.send_signal(Terminated(target.ref, target.reason))
    else:
        target.ensure_extras().watchers.add(cell)


def unwatch(cell: Cell, target: Cell) -> None:
    """``cell`` stops watching ``target``: no Terminated after this call."""
    extras = cell.extras
    if extras is not None:
        extras.watching.discard(target)
    target_extras = target.extras
    if target_extras is not None:
        target_extras.watchers.discard(cell)


def watch_remote(cell: Cell, ref: ActorRef[Any]) -> None:
    """``cell`` watches ``ref``, a ref without a local cell (another node's
    actor): the system's remote extension delivers its Terminated.

    Raises:
        TypeError: the system has no remote extension (``ref`` is not a ref
            it could have made).
    """
    remote = cell.runtime.remote
    if remote is None:
        raise TypeError(f"{ref!r} is not a ref of this system")
    watching = cell.ensure_extras().watching
    if ref in watching:
        return
    watching.add(ref)
    remote.watch(cell, ref)


def unwatch_remote(cell: Cell, ref: ActorRef[Any]) -> None:
    """``cell`` stops watching ``ref`` (see ``watch_remote``)."""
    extras = cell.extras
    if extras is not None and ref in extras.watching:
        extras.watching.discard(ref)
        remote = cell.runtime.remote
        if remote is not None:
            remote.unwatch(cell, ref)


async def deliver_terminated(cell: Cell, signal: Terminated, receive: Any) -> None:
    """Hand a queued Terminated to the actor (its ``on_terminated`` hook, else
    ``receive``) unless it unwatched the actor after the signal was queued."""
    extras = cell.extras
    watched: Cell | ActorRef[Any] = signal.ref._cell
    if watched is None:  # a remote ref: watched by the ref itself
        watched = signal.ref
    if extras is None or watched not in extras.watching:
        return  # unwatched after it was queued: never delivered
    extras.watching.discard(watched)
    hook = getattr(cell.instance, "on_terminated", None)
    if hook is not None:
        await call_hook(hook, signal)
    else:
        await call_handler(receive, signal)


def notify_watchers(cell: Cell, reason: ExitReason) -> None:
    """``cell`` terminated: one Terminated to each watcher; unlink both ways;
    its registered name (``system.register``) is free again."""
    registry = cell.runtime.registry
    if registry is not None:
        registry.forget(cell)
    extras = cell.extras
    if extras is None:
        return
    for watched in extras.watching:
        if isinstance(watched, ActorRef):  # another node's actor
            remote = cell.runtime.remote
            if remote is not None:
                remote.unwatch(cell, watched)
            continue
        watched_extras = watched.extras
        if watched_extras is not None:
            watched_extras.watchers.discard(cell)
    extras.watching.clear()
    if extras.remote_watched:
        remote = cell.runtime.remote
        if remote is not None:
            remote.local_terminated(cell.ref, reason)
    if extras.watchers:
        terminated = Terminated(cell.ref, reason)
        for watcher in extras.watchers:
            with contextlib.suppress(MailboxClosed):
                watcher.mailbox.send_signal(terminated)
        extras.watchers.clear()
