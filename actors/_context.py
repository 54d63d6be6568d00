"""``ActorContext``: what an actor knows about its place in the system
(``self.context``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ._actor import instance_of
from ._death_watch import unwatch as unwatch_cell
from ._death_watch import unwatch_remote, watch_remote
from ._death_watch import watch as watch_cell
from ._lifecycle import StopReason
from ._receive_timeout import set_receive_timeout
from ._ref import ActorRef
from ._spawn_options import SpawnOptions
from ._strategies import RestartType

if TYPE_CHECKING:
    from ._actor import Actor
    from ._cell import Cell
    from ._pool import PoolRef, Routing
    from ._system import ActorSystem
    from ._timers import TimerScheduler

__all__ = ["ActorContext"]

A = TypeVar("A", bound="Actor")


class ActorContext:
    """What an actor knows about its place in the system (``self.context``)."""

    __slots__ = ("_cell",)

    def __init__(self, cell: Cell) -> None:
        self._cell = cell

    @property
    def self_ref(self) -> ActorRef[Any]:
        """This actor's own ref."""
        return self._cell.ref

    @property
    def parent(self) -> ActorRef[Any]:
        """The parent's ref (the guardian's for top-level actors)."""
        parent = self._cell.parent
        return parent.ref if parent is not None else self._cell.ref

    @property
    def system(self) -> ActorSystem:
        """The system this actor runs in."""
        return self._cell.runtime.system

    @property
    def children(self) -> list[ActorRef[Any]]:
        """Refs of the live children, in start order."""
        return [child.ref for child in self._cell.children.values()]

    @property
    def name(self) -> str:
        """This actor's name."""
        return self._cell.name

    @property
    def path(self) -> str:
        """This actor's path, for example ``"/user/parent/child"``."""
        return self._cell.path

    def spawn(
        self,
        factory: Callable[..., A],
        *args: Any,
        name: str | None = None,
        capacity: int | None = None,
        drain: int | None = None,
        restart: RestartType = "transient",
        **kwargs: Any,
    ) -> ActorRef[Any]:
        """Spawn a child of this actor; same arguments as
        :meth:`ActorSystem.spawn`."""
        options = SpawnOptions(name, capacity, drain, restart)
        return self._cell.runtime.spawn(self._cell, factory, args, kwargs, options)

    def spawn_pool(
        self,
        factory: Callable[..., A],
        size: int,
        *args: Any,
        routing: Routing = "round_robin",
        name: str | None = None,
        capacity: int | None = None,
        drain: int | None = None,
        **kwargs: Any,
    ) -> PoolRef[Any]:
        """Spawn a pool of workers as a child; see :meth:`ActorSystem.spawn_pool`."""
        return self._cell.runtime.spawn_pool(
            self._cell, factory, size, args, kwargs, routing, name, capacity, drain
        )

    def stop(self, ref: ActorRef[Any] | None = None) -> None:
        """Stop this actor (no argument) or one of its children, after the
        message being handled.

        Raises:
            TypeError: ``ref`` is neither None nor an ActorRef.
            ValueError: ``ref`` is neither this actor nor one of its children.
        """
        cell = self._cell
        if ref is not None and not isinstance(ref, ActorRef):
            raise TypeError(
                f"stop() takes an ActorRef or nothing, not {type(ref).__name__}"
            )
        if ref is None or ref._cell is cell:
            cell.request_stop(StopReason.NORMAL)
            return
        target = ref._cell
        if target.parent is not cell:
            raise ValueError(
                f"{ref.path} is not a child of {cell.path}: stop it with ref.stop()"
            )
        target.request_stop(StopReason.PARENT)

    def watch(self, ref: ActorRef[Any]) -> None:
        """Watch another actor: when it terminates this actor receives exactly one
        :class:`~actors.Terminated` (at once if it is already dead). Watching
        twice still delivers once.

        A ref to another node's actor (``actors.remote.RemoteRef``) gets its
        ``Terminated`` when that actor stops (its reason transported) or when
        its node is declared down (reason ``actors.remote.NodeDown``).

        Raises:
            TypeError: ``ref`` is not an ActorRef.
        """
        if not isinstance(ref, ActorRef):
            raise TypeError(f"watch() takes an ActorRef, not {type(ref).__name__}")
        target = ref._cell
        if target is None:  # another node's actor
            watch_remote(self._cell, ref)
        else:
            watch_cell(self._cell, target)

    def unwatch(self, ref: ActorRef[Any]) -> None:
        """Stop watching: no ``Terminated`` for ``ref`` reaches this actor after
        this call, even one already queued. Unwatching an actor that is not
        watched does nothing.

        Raises:
            TypeError: ``ref`` is not an ActorRef.
        """
        if not isinstance(ref, ActorRef):
            raise TypeError(f"unwatch() takes an ActorRef, not {type(ref).__name__}")
        target = ref._cell
        if target is None:  # another node's actor
            unwatch_remote(self._cell, ref)
        else:
            unwatch_cell(self._cell, target)

    @property
    def timers(self) -> TimerScheduler:
        """This actor's keyed timers (see :class:`~actors.TimerScheduler`)."""
        extras = self._cell.ensure_extras()
        timers = extras.timers
        if timers is None:
            timers = extras.timers = self._cell.runtime.make_timers(self._cell)
        return timers

    def set_receive_timeout(self, timeout: float | None) -> None:
        """Receive a :class:`~actors.ReceiveTimeout` when no message came for
        ``timeout`` seconds (Akka's ``setReceiveTimeout``); None cancels it.

        Every message told, sent or asked resets it (the idle time counts
        from the end of the last handler); runtime signals do not (timer
        firings, ``Terminated``, the ``ReceiveTimeout`` itself). After it
        fires it is armed again for another ``timeout`` seconds. A restart
        starts without one; a stop cancels it. It goes to the current
        behaviour (see ``Actor.become``). It runs on the system's timers:
        never early, at most about a millisecond late. While it is set, each
        message costs a little more (a clock reading); without one, nothing.

        Raises:
            TypeError: ``timeout`` is neither a number nor None.
            ValueError: ``timeout`` is not > 0 and finite.
            RuntimeError: called before the instance exists (the factory has
                not been called yet).
            SystemNotRunning: the system is not running.
        """
        cell = self._cell
        instance = instance_of(cell)
        if instance is None:
            raise RuntimeError(
                f"{cell.path} has no instance yet: set the receive timeout from "
                "__init__, a hook or a handler"
            )
        set_receive_timeout(cell, instance, timeout)

    @property
    def receive_timeout(self) -> float | None:
        """The receive timeout in seconds, or None."""
        instance = instance_of(self._cell)
        state = None if instance is None else instance._actors_state
        return None if state is None else state.timeout
