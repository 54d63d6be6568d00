"""``Actor``, the class users subclass, and its ``ActorContext``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ._supervision import RestartType, SupervisorStrategy

if TYPE_CHECKING:
    from ._cell import Cell
    from ._pool import PoolRef, Routing
    from ._ref import ActorRef
    from ._system import ActorSystem
    from ._timers import TimerScheduler

__all__ = ["Actor", "ActorContext"]

A = TypeVar("A", bound="Actor")


class Actor:
    """Base class of actors: state plus a ``receive(message)`` method.

    The runtime calls ``receive`` with one message at a time; it may be a plain
    method or ``async def``. Its return value is the reply to an ``ask`` (and is
    ignored for ``tell`` and ``send``). An exception escaping it is a failure that
    the parent's supervisor strategy handles.

    Lifecycle hooks, each sync or async, run in the actor's own task:

    * ``on_start()``: before the first message.
    * ``on_stop()``: after the last message (also before a restart); an
      exception here is logged and counted in ``system.failures``, and the
      actor still stops (or restarts).
    * ``on_restart(exc)``: on the fresh instance after a restart, before its
      first message; ``exc`` is the failure that caused it (None when a
      ``permanent`` child stopped itself). By default it calls ``on_start()``
      (as Akka's postRestart calls preStart).
    * ``on_terminated(terminated)``: optional. When defined it receives the
      :class:`~actors.Terminated` signals of watched actors; when not, they go to
      ``receive``.

    Class attribute ``supervisor_strategy``: how this actor supervises its
    children (default ``OneForOne()``).
    """

    supervisor_strategy: ClassVar[SupervisorStrategy | None] = None

    #: Set by the runtime before ``on_start``.
    context: ActorContext

    def receive(self, message: Any) -> Any:
        """Handle one message; the default counts it as a dead letter
        ("unhandled")."""
        cell = self.context._cell
        cell.system.dead_letter(cell, message, "unhandled")
        return None

    def on_start(self) -> Awaitable[None] | None:
        """Called before the first message (sync or async)."""
        return None

    def on_stop(self) -> Awaitable[None] | None:
        """Called after the last message and before a restart (sync or async)."""
        return None

    def on_restart(self, exc: BaseException | None) -> Awaitable[None] | None:
        """Called on the new instance after a restart; calls ``on_start()``."""
        return self.on_start()


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
        return self._cell.system

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
        return self._cell.system._spawn(
            self._cell, factory, args, kwargs, name, capacity, drain, restart
        )

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
        from ._pool import spawn_pool

        return spawn_pool(
            self._cell, factory, size, args, kwargs, routing, name, capacity, drain
        )

    def stop(self, ref: ActorRef[Any] | None = None) -> None:
        """Stop this actor (no argument) or one of its children, after the
        message being handled.

        Raises:
            TypeError: ``ref`` is neither None nor an ActorRef.
            ValueError: ``ref`` is neither this actor nor one of its children.
        """
        from ._cell import StopReason
        from ._ref import ActorRef

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

        Raises:
            TypeError: ``ref`` is not an ActorRef.
        """
        from ._ref import ActorRef
        from ._signals import Terminated

        if not isinstance(ref, ActorRef):
            raise TypeError(f"watch() takes an ActorRef, not {type(ref).__name__}")
        cell = self._cell
        target = ref._cell
        if target is cell or target in cell.watching:
            return
        cell.watching.add(target)
        if target.terminated.is_set():
            cell.mailbox.send_signal(Terminated(target.ref, target.reason))
        else:
            target.watchers.add(cell)

    def unwatch(self, ref: ActorRef[Any]) -> None:
        """Stop watching: no ``Terminated`` for ``ref`` reaches this actor after
        this call, even one already queued. Unwatching an actor that is not
        watched does nothing.

        Raises:
            TypeError: ``ref`` is not an ActorRef.
        """
        from ._ref import ActorRef

        if not isinstance(ref, ActorRef):
            raise TypeError(f"unwatch() takes an ActorRef, not {type(ref).__name__}")
        cell = self._cell
        target = ref._cell
        cell.watching.discard(target)
        target.watchers.discard(cell)

    @property
    def timers(self) -> TimerScheduler:
        """This actor's keyed timers (see :class:`~actors.TimerScheduler`)."""
        cell = self._cell
        if cell.timers is None:
            from ._timers import TimerScheduler

            cell.timers = TimerScheduler(cell)
        timers: TimerScheduler = cell.timers
        return timers
