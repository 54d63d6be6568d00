"""``Actor``, the class users subclass."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar, Generic

from ._actor_state import ActorState
from ._behaviour import become, current_behaviour, unbecome
from ._stash import (
    DEFAULT_STASH_CAPACITY,
    check_stash_capacity,
    stash,
    unstash,
    unstash_all,
)
from ._strategies import SupervisorStrategy, check_strategy_attribute

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    from ._cell import Cell
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

__all__ = ["UNHANDLED", "Actor", "Construction", "constructing", "instance_of"]


class _Unhandled:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNHANDLED"


#: What ``Actor.receive`` returns: the message was not handled (no reply).
UNHANDLED: Any = _Unhandled()


class Construction:
    """The runtime builds an instance for ``cell``: reading ``self.context``
    in ``__init__`` gives the cell's context and records the instance here
    (see ``_ContextAttribute``)."""

    __slots__ = ("active", "cell", "instance")

    def __init__(self, cell: Cell) -> None:
        self.cell = cell
        self.instance: Actor | None = None
        #: True while the factory runs. Tasks started meanwhile (an actor's
        #: children, its background work) copy the context var, so they see
        #: this object after the construction is over: then it means nothing.
        self.active = True


#: Set by the runtime around the factory call (see ``_incarnation``).
constructing: ContextVar[Construction | None] = ContextVar(
    "actors_constructing", default=None
)


def instance_of(cell: Cell) -> Actor | None:
    """``cell``'s instance, also while its factory is building it (``__init__``)."""
    instance = cell.instance
    if instance is None:
        construction = constructing.get()
        if (
            construction is not None
            and construction.active
            and construction.cell is cell
        ):
            instance = construction.instance
    return instance


class _ContextAttribute:
    """``Actor.context`` until the instance has its own: while the runtime
    builds the instance (its ``__init__``), the cell's context, kept in the
    instance's ``__dict__`` from then on, which wins over this non-data
    descriptor, so later reads cost nothing more; outside the runtime, a
    clear error."""

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        construction = constructing.get()
        if construction is not None and construction.active:
            context = construction.cell.context
            instance.__dict__["context"] = context
            if construction.instance is None:
                construction.instance = instance  # type: ignore[assignment]
            return context
        name = type(instance).__qualname__
        raise AttributeError(
            f"{name}.context is given by the runtime to the instances it "
            f"builds (system.spawn({name}), context.spawn({name})), from "
            f"__init__ on; this {name} was made outside the runtime (a plain "
            f"{name}(...) call, as in a unit test), so it has none"
        )


class _Receive:
    """``receive`` as an Actor class defines it: reads as the method (the
    class gets the function itself), refuses assignment on an instance, which
    the runtime would never see (it binds the handler once per incarnation):
    ``self.become(handler)`` is how an actor changes its handler."""

    __slots__ = ("__isabstractmethod__", "_get", "function")

    def __init__(self, function: Any) -> None:
        self.function = function
        self._get = getattr(type(function), "__get__", None)
        self.__isabstractmethod__ = getattr(function, "__isabstractmethod__", False)

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        get = self._get
        if get is None:  # a callable object that does not bind
            return self.function
        return get(self.function, instance, owner)  # a function: itself on the class

    def __set__(self, instance: object, value: object) -> None:
        raise AttributeError(
            f"{type(instance).__qualname__}.receive cannot be assigned (the "
            "runtime would not see it): call self.become(handler) to change "
            "the handler of the next messages"
        )

    def __delete__(self, instance: object) -> None:
        self.__set__(instance, None)


def _restart_call(cls: type) -> bool | str:
    """How the runtime passes the message to ``cls``'s ``on_restart``: True,
    ``(exc, message)``; ``"keyword"``, ``(exc, message=message)`` (a
    keyword-only ``message``); False, ``(exc)`` only (an override written
    before the message was passed). Read as the runtime calls it, bound to an
    instance: a static or class method is judged by its own parameters."""
    raw = inspect.getattr_static(cls, "on_restart")
    get = getattr(type(raw), "__get__", None)
    hook = raw if get is None else get(raw, object(), cls)
    try:
        signature = inspect.signature(hook)
    except (TypeError, ValueError):  # not introspectable: the current form
        return True
    for args, kwargs, how in (
        ((None, None), {}, True),
        ((None,), {"message": None}, "keyword"),
    ):
        try:
            signature.bind(*args, **kwargs)
        except TypeError:
            continue
        return how
    return False


class Actor(Generic[M]):
    """Base class of actors: state plus a ``receive(message)`` method.

    Generic in the messages it handles: ``class Counter(Actor[CounterMsg])``
    makes ``spawn(Counter)`` return an ``ActorRef[CounterMsg]``, so telling it
    anything else is a type error. A plain ``Actor`` subclass handles
    ``Any``.

    The runtime calls ``receive`` with one message at a time; it may be a plain
    method or ``async def``. Its return value is the reply to an ``ask`` (and is
    ignored for ``tell`` and ``send``); return [``ErrorReply``][actors.ErrorReply] to
    make the asker's ``ask`` raise an exception without failing. An exception
    escaping it is a failure that the parent's supervisor strategy handles.

    ``self.context`` is there from ``__init__`` on when the runtime builds the
    instance (``spawn``); an instance made outside the runtime (a unit test's
    ``Counter()``) has none, and reading it raises an AttributeError that says
    so.

    Handler patterns (see the how-to page "Behaviours, stash, receive
    timeout and error replies"): ``become``/``unbecome`` change the handler
    of the next messages (assigning ``self.receive`` raises an AttributeError
    instead of being ignored); ``stash``/``unstash_all`` set messages aside
    and put them back;
    ``self.context.set_receive_timeout(seconds)`` delivers a
    [``ReceiveTimeout``][actors.ReceiveTimeout] when no message came for that long.

    Lifecycle hooks, each sync or async, run in the actor's own task. Every
    instance the runtime builds gets its start hook before anything else (a
    stop requested before its task first ran included) and ``on_stop`` once
    that hook has returned, whatever the timing (Akka's preStart/postStop
    rule); an instance whose start hook raised gets no ``on_stop`` (as Akka's
    postStop, OTP's ``terminate`` after a failed ``init``), so the start hook
    cleans up what it opened before raising. Only a cancelled teardown
    (``shutdown_timeout`` ran out, the block was cancelled) skips hooks that
    have not run.

    * ``on_start()``: before the first message.
    * ``on_stop()``: after the last message (also before a restart); an
      exception here is logged and counted in ``system.failures``, and the
      actor still stops (or restarts). A ``BaseException`` that is not an
      ``Exception`` (``SystemExit``, ...) ends the incarnation, then shuts the
      system down and surfaces from ``async with``.
    * ``on_restart(exc, message)``: on the fresh instance after a restart,
      before its first message; ``exc`` is the failure that caused it (None
      when a ``permanent`` child stopped itself), ``message`` the message
      whose handling failed (None when none did: a failure in a start hook,
      a sibling's failure under one-for-all or rest-for-one). An override
      that takes only ``exc`` still works. By default it calls
      ``on_start()`` (as Akka's postRestart calls preStart).
    * ``on_terminated(terminated)``: optional. When defined it receives the
      [``Terminated``][actors.Terminated] signals of watched actors; when not,
      they go to ``receive``.

    Class attributes: ``supervisor_strategy``, how this actor supervises its
    children (default ``OneForOne()``); ``stash_capacity``, how many messages
    it may stash (default 1000).
    """

    supervisor_strategy: ClassVar[SupervisorStrategy | None] = None

    #: How many messages ``stash()`` may hold; one more raises StashOverflow.
    stash_capacity: ClassVar[int] = DEFAULT_STASH_CAPACITY

    if TYPE_CHECKING:
        #: Set by the runtime before ``__init__``.
        context: ActorContext
    else:
        context = _ContextAttribute()

    #: Rarely used state, made on first use (``_actor_state.state_of``).
    _actors_state: ActorState | None = None
    #: Whether (and how) this class's ``on_restart`` takes the message
    #: (checked once per class, in ``__init_subclass__``; see _restart_call).
    _actors_restart_message: ClassVar[bool | str] = True
    #: A check of an instance the runtime built, run once its factory has
    #: returned and before it starts (``_incarnation.construct``), or None: a
    #: misconfigured instance then makes ``spawn`` raise (its first instance
    #: is built there) instead of failing its start hook restart after
    #: restart. The durable actors check their persistence id and stores.
    _actors_check_built: ClassVar[Callable[[Any], None] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__
        receive = own.get("receive")
        if receive is not None and not isinstance(receive, _Receive):
            type.__setattr__(cls, "receive", _Receive(receive))
        if "stash_capacity" in own:
            check_stash_capacity(own["stash_capacity"], cls.__qualname__)
        strategy = own.get("supervisor_strategy")
        if strategy is not None and not hasattr(type(strategy), "__get__"):
            # When the class is defined, not at its first child's failure
            # (a property or other descriptor is read per instance, at spawn).
            check_strategy_attribute(cls, cls.__qualname__)
        cls._actors_restart_message = _restart_call(cls)

    def receive(self, message: M) -> Any:
        """Handle one message. The default does not: it counts the message as
        a dead letter ("unhandled"), and an asker gets
        [``UnhandledMessage``][actors.UnhandledMessage] instead of a reply. A
        subclass passes on what it does not handle with
        ``return super().receive(message)``.
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

    def on_restart(
        self, exc: BaseException | None, message: Any = None
    ) -> Awaitable[None] | None:
        """Called on the new instance after a restart; calls ``on_start()``.

        Args:
            exc: the failure that caused the restart (None: a ``permanent``
                child stopped itself).
            message: the message whose handling failed; None when no
                message's did (a start hook failed, or a sibling's failure
                restarts this actor too).
        """
        return self.on_start()

    # -- handler patterns ----------------------------------------------------

    def become(
        self, handler: Callable[[Any], Any], *, discard_old: bool = True
    ) -> None:
        """Send the next messages to ``handler`` (Akka's ``become``): a sync
        or async callable taking the message, whose return value is the reply
        to an ask, as ``receive``'s. Timer messages and ``Terminated`` (without
        ``on_terminated``) go to it too.

        It takes effect from the next message on (the current handler runs
        to its end). A restart starts from ``receive`` again. Call it from
        the actor's own code (``__init__``, hooks, handlers), not from
        another task or thread.

        Args:
            handler: the new behaviour, usually a method (``self.closed``).
            discard_old: True (default): replace the current behaviour;
                False: push it above the current one, which ``unbecome()``
                returns to.

        Raises:
            TypeError: ``handler`` is not callable.
            RuntimeError: called from another task (this actor's own
                background work included) or thread, as ``stash()``.
        """
        become(self, handler, discard_old)

    def unbecome(self) -> None:
        """Return to the behaviour below the current one on the stack
        (``receive`` at the bottom; at ``receive`` it does nothing). Takes
        effect from the next message on.

        Raises:
            RuntimeError: called from another task or thread (see ``become``).
        """
        unbecome(self)

    @property
    def behaviour(self) -> Callable[[Any], Any]:
        """The handler the next message goes to: ``receive`` unless
        ``become`` changed it."""
        return current_behaviour(self)

    def stash(self) -> None:
        """Set the message being handled aside until ``unstash_all()`` (or
        ``unstash()``) puts it back in front of the mailbox. An ask keeps its
        reply slot: it is answered when a handler finally handles it (its
        asker's timeout still runs). A stashed message no longer counts
        against the mailbox's capacity. On a restart the stashed messages go
        back in front of the mailbox; on a stop they become dead letters
        (asks fail with ActorStopped).

        Raises:
            StashOverflow: the stash holds ``stash_capacity`` messages.
            RuntimeError: not called from this actor's handler while it
                handles a message (``__init__``, a hook, another task).
        """
        stash(self)

    def unstash_all(self) -> int:
        """Put every stashed message back in front of the mailbox, in the
        order they were stashed: they are handled before any message that is
        still queued, starting with the next one (by the behaviour current
        then).

        Returns:
            How many messages were unstashed.

        Raises:
            RuntimeError: called from another task or thread (see ``become``).
        """
        return unstash_all(self)

    def unstash(self) -> bool:
        """Put the oldest stashed message back in front of the mailbox (after
        any the current handler unstashed before it).

        Returns:
            Whether there was one.

        Raises:
            RuntimeError: called from another task or thread (see ``become``).
        """
        return unstash(self)


# Actor's own ``receive`` too: assigning it on an instance of a subclass that
# does not define one raises as well.
type.__setattr__(Actor, "receive", _Receive(Actor.__dict__["receive"]))
