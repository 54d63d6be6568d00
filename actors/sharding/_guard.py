"""The lease guard of an entity: it handles a message only while its node's
lease of the entity's shard is valid on this node's clock.

The region fences a shard (stops its entities) when its lease could not be
renewed, ``margin`` seconds before the lease can expire. That is a timer: a
node whose process was stopped (SIGSTOP, a VM paused, a long GC) and resumed
after its lease expired runs the tasks that were ready first, and an entity
could handle a message already in its mailbox before the fence's timer fires,
while another node holds the shard. The guard closes that window: before
each message, the entity's class (swapped for a subclass made once per
entity class) checks the lease's ``valid_until`` (its shard's
``LeaseTerm``: ``term.until > term.now()``, two attribute loads and a clock
read; the clock read is what closes the window, so it stays); past it, the message is
not handled: it is a dead letter (counted in ``dropped``), and an ``ask``
gets a ``ShardingError``. So no entity handles a message outside its node's
lease. A handler the entity switches to with ``become`` (Akka's behaviours)
is guarded the same way: the subclass's ``become`` wraps it in the same
check, and a behaviour the entity took in its ``__init__`` (before the guard
was in place) is wrapped when the guard is put on.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Final

from .. import Actor, DeadLetter, ErrorReply
from ._errors import ShardingError
from ._lease import Leases, LeaseTerm
from ._state import TypeState

__all__ = ["guard"]

#: The attributes of a guarded instance that hold its check and its lease
#: term (the term apart: one attribute load per message).
_CHECK: Final = "_actors_sharding_lease"
_TERM: Final = "_actors_sharding_term"
#: entity class -> its guarded subclass (bounded by the classes of entities)
_GUARDED: dict[type, type] = {}


class _Check:
    """The lease term of one entity's shard (``term.until > term.now()``
    while it may handle a message), and what a refusal needs."""

    __slots__ = ("key", "shard", "term", "types")

    def __init__(
        self, types: TypeState, leases: Leases, shard: int, key: str
    ) -> None:
        self.types = types
        self.key = key
        # The shard's term: one object for the leases' life, updated in
        # place when the lease is taken, renewed or given up.
        self.term = leases.term(shard)
        self.shard = shard

    def refused(self, message: object) -> ErrorReply:
        types = self.types
        types.dropped += 1
        region = types.region
        if region is not None:
            types.system.dead_letters.publish(
                DeadLetter(region, message, "the shard's lease expired")
            )
        return ErrorReply(
            ShardingError(
                f"shard {self.shard} of {types.entity.type_name!r}: this node's "
                "lease expired before the message could be handled"
            )
        )


def _guarded_handler(check: _Check, handler: Callable[[Any], Any]) -> Any:
    """``handler`` (a behaviour given to ``become``) behind ``check``: sync
    or async as it is, so the message loop binds it as it would bind
    ``handler``."""
    if getattr(handler, _CHECK, None) is check:
        return handler  # guarded already (unbecome, then become it again)
    if inspect.iscoroutinefunction(handler):

        term = check.term

        async def behaviour(message: Any) -> Any:
            if term.until > term.now():
                return await handler(message)
            return check.refused(message)

    else:

        term = check.term

        def behaviour(message: Any) -> Any:  # type: ignore[misc]
            if term.until > term.now():
                return handler(message)
            return check.refused(message)

    setattr(behaviour, _CHECK, check)
    return behaviour


def _subclass(cls: type) -> type:
    guarded = _GUARDED.get(cls)
    if guarded is not None:
        return guarded
    inner: Callable[..., Any] = cls.receive  # type: ignore[attr-defined]
    if inspect.iscoroutinefunction(inner):

        async def receive(self: Any, message: Any) -> Any:
            term: LeaseTerm = self._actors_sharding_term
            if term.until > term.now():
                return await inner(self, message)
            return self.__dict__[_CHECK].refused(message)

    else:

        def receive(self: Any, message: Any) -> Any:  # type: ignore[misc]
            term: LeaseTerm = self._actors_sharding_term
            if term.until > term.now():
                return inner(self, message)
            return self.__dict__[_CHECK].refused(message)

    inner_become: Callable[..., None] = cls.become  # type: ignore[attr-defined]

    def become(
        self: Any, handler: Callable[[Any], Any], *, discard_old: bool = True
    ) -> None:
        if callable(handler):  # else become's own TypeError
            handler = _guarded_handler(self.__dict__[_CHECK], handler)
        inner_become(self, handler, discard_old=discard_old)

    become.__doc__ = inner_become.__doc__

    inner_stop: Callable[..., Any] = cls.on_stop  # type: ignore[attr-defined]
    if inspect.iscoroutinefunction(inner_stop):

        async def on_stop(self: Any) -> None:
            try:
                await inner_stop(self)
            finally:
                _ended(self)

    else:

        def on_stop(self: Any) -> Any:  # type: ignore[misc]
            try:
                return inner_stop(self)
            finally:
                _ended(self)

    guarded = type(
        cls.__name__,
        (cls,),
        {"__module__": cls.__module__, "__qualname__": cls.__qualname__},
    )
    # Set after the class is made: a durable actor's class refuses a
    # subclass that defines receive (its persistence machinery).
    type.__setattr__(guarded, "receive", receive)
    type.__setattr__(guarded, "become", become)
    type.__setattr__(guarded, "on_stop", on_stop)
    _GUARDED[cls] = guarded
    return guarded


def _ended(actor: Actor[Any]) -> None:
    """An entity's ``on_stop`` has run: at its last stop (not a restart),
    its entry leaves the fast path at once, before it terminates, so that no
    ``EntityRef`` sends to it once it has ended (its shard, failed and
    waiting to restart, or busy, may retire it only later)."""
    self_ref = actor.context.self_ref
    if self_ref.is_alive:
        return  # a restart: the same ref goes on
    check: _Check = actor.__dict__[_CHECK]
    types = check.types
    entry = types.active.get(check.key)
    if entry is not None and entry.ref == self_ref:
        types.retire(check.key, entry)


def _guard_behaviours(actor: Actor[Any]) -> None:
    """Wrap the behaviours ``actor`` took before it was guarded (``become``
    in its ``__init__``), in their stack order, through the public
    ``become``/``unbecome`` (guarded ``become`` wraps each)."""
    taken: list[Callable[[Any], Any]] = []
    while True:
        top = actor.behaviour
        actor.unbecome()
        if actor.behaviour == top:
            break  # at ``receive``: unbecome does nothing there
        taken.append(top)
    for handler in reversed(taken):
        actor.become(handler, discard_old=False)


def guard(
    factory: Callable[[str], Actor[Any]], types: TypeState, leases: Leases, shard: int
) -> Callable[[str], Actor[Any]]:
    """A factory of ``factory``'s entities, each guarded by the lease of
    ``shard`` (see the module docstring).

    Raises (from the factory it returns):
        TypeError: the factory did not return an ``Actor``.
    """

    def make(key: str) -> Actor[Any]:
        actor = factory(key)
        if not isinstance(actor, Actor):
            raise TypeError(
                f"the factory of entity type {types.entity.type_name!r} returned "
                f"{actor!r}, not an Actor"
            )
        actor.__class__ = _subclass(type(actor))
        check = _Check(types, leases, shard, key)
        object.__setattr__(actor, _CHECK, check)
        object.__setattr__(actor, _TERM, check.term)
        _guard_behaviours(actor)
        return actor

    return make
