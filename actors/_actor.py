"""``Actor``, the class users subclass."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, ClassVar, Generic

from ._strategies import SupervisorStrategy

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    from ._context import ActorContext

    #: The messages an actor handles. The default (PEP 696) makes a plain
    #: ``Actor`` mean ``Actor[Any]``, also under ``mypy --strict``: type
    #: checkers take it from typing_extensions' stubs, which they bundle.
    M = TypeVar("M", default=Any)
else:
    # At run time the default plays no part: a plain TypeVar, so no Python
    # version needs typing_extensions installed.
    from typing import TypeVar

    M = TypeVar("M")

__all__ = ["UNHANDLED", "Actor"]


class _Unhandled:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNHANDLED"


#: What ``Actor.receive`` returns: the message was not handled (no reply).
UNHANDLED: Any = _Unhandled()


class Actor(Generic[M]):
    """Base class of actors: state plus a ``receive(message)`` method.

    Generic in the messages it handles: ``class Counter(Actor[CounterMsg])``
    makes ``spawn(Counter)`` return an ``ActorRef[CounterMsg]``, so telling it
    anything else is a type error. A plain ``Actor`` subclass handles
    ``Any``.

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

    def receive(self, message: M) -> Any:
        """Handle one message. The default does not: it counts the message as
        a dead letter ("unhandled"), and an asker gets
        :exc:`~actors.UnhandledMessage` instead of a reply. A subclass passes
        on what it does not handle with ``return super().receive(message)``.
        """
        cell = self.context._cell
        cell.runtime.dead_letter(cell, message, "unhandled")
        return UNHANDLED

    def on_start(self) -> Awaitable[None] | None:
        """Called before the first message (sync or async)."""
        return None

    def on_stop(self) -> Awaitable[None] | None:
        """Called after the last message and before a restart (sync or async)."""
        return None

    def on_restart(self, exc: BaseException | None) -> Awaitable[None] | None:
        """Called on the new instance after a restart; calls ``on_start()``."""
        return self.on_start()
