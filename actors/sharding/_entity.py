"""``Entity``: an entity type, what a node hosting it needs to make its
entities (Akka's ``Entity`` of Cluster Sharding, Orleans' grain class).

Only data and validation: the regions and shards that run entities read it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable
from typing import Any, Final, Generic, TypeVar, final

from .. import Actor

__all__ = ["DEFAULT_BUFFER", "DEFAULT_PASSIVATE_AFTER", "DEFAULT_SHARDS", "Entity"]

M = TypeVar("M")

#: Shards per entity type unless told (Akka's guideline: ten times the most
#: nodes the type will ever run on; the count is fixed for the type's life).
DEFAULT_SHARDS: Final = 100
#: Seconds an entity may be idle before it is passivated unless told (Akka's
#: default idle timeout, 120 s).
DEFAULT_PASSIVATE_AFTER: Final = 120.0
#: Messages held per shard while it has no home or is handed off, and per
#: entity while it is passivating, unless told (Akka's buffer-size, 100,000,
#: is per region; this is per shard).
DEFAULT_BUFFER: Final = 10_000

_TYPE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class _Default:
    """The default of ``passivate_after``: 120 s, or never when ``remember``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<default>"


_DEFAULT: Final = _Default()


def _positive_seconds(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} is a number of seconds or None, not {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number of seconds > 0, not {value}")
    return float(value)


@final
class Entity(Generic[M]):
    """An entity type: its name, how to make one entity from its key, and how
    its entities are placed and kept.

    Register it on every node that hosts the type
    (``Sharding(system, entities=[...])``); a node that only sends to the type
    needs nothing but its name. The type is generic in the message type ``M``
    of its actors, so ``sharding.entity_ref(ACCOUNT, "42")`` is an
    ``EntityRef[M]``.

    Args:
        type_name: the type's name, the same on every node: 1 to 64
            characters, letters, digits, ``_``, ``.`` and ``-``, starting with a
            letter or digit (it names actors and placement keys).
        factory: called with the entity's key (a ``str``) to make its actor,
            each time the entity starts (on demand, after passivation, after a
            hand-off, after a failure: the supervisor's restart calls it
            again). An [``EventSourcedActor``][actors.persistence.EventSourcedActor]
            whose persistence id is made from the key recovers its state
            wherever it starts.
        shards: how many shards the type's keys are hashed into (>= 1; fixed
            for the type's life: changing it moves every key).
        passivate_after: seconds an entity may go without a message before it
            is stopped (passivated); its next message starts it again. None:
            never. Default: 120 s, or never when ``remember`` is set (as
            Akka, remembered entities are not passivated on idle).
        role: only nodes with this role (``Sharding(..., roles=...)``) host
            the type; the others proxy it (None: every node that registers
            it hosts it).
        remember: start the entities that were running again after their
            shard moves or their node restarts (Akka's remember-entities).
        buffer: how many messages may wait per shard (no home yet, hand-off)
            and per passivating entity (>= 1); past it, ``tell`` raises
            [``BufferFull``][actors.sharding.BufferFull] and the message is
            counted as a dead letter.
        stop_message: told to an entity to stop it for a hand-off, after the
            messages queued before it (Akka's ``handOffStopMessage``; the actor
            must stop itself when it gets it). None: the shard waits until the
            entity's mailbox is empty, then stops it.

    Raises:
        TypeError: an argument has the wrong type (``factory`` not callable,
            ``shards`` not an int, ...).
        ValueError: ``type_name`` is malformed, ``shards`` < 1, a duration is
            not a finite number > 0, ``buffer`` < 1, or ``remember`` is set
            with a ``passivate_after`` (remembered entities stay up).
    """

    __slots__ = (
        "buffer",
        "factory",
        "passivate_after",
        "remember",
        "role",
        "shards",
        "stop_message",
        "type_name",
    )

    type_name: str
    factory: Callable[[str], Actor[M]]
    shards: int
    passivate_after: float | None
    role: str | None
    remember: bool
    buffer: int
    stop_message: Hashable | None

    def __init__(
        self,
        type_name: str,
        factory: Callable[[str], Actor[M]],
        *,
        shards: int = DEFAULT_SHARDS,
        passivate_after: float | _Default | None = _DEFAULT,
        role: str | None = None,
        remember: bool = False,
        buffer: int = DEFAULT_BUFFER,
        stop_message: Any = None,
    ) -> None:
        if type(type_name) is not str:
            raise TypeError(f"type_name is a str, not {type_name!r}")
        if _TYPE_NAME.fullmatch(type_name) is None:
            raise ValueError(
                f"type_name {type_name!r} must be 1 to 64 letters, digits, '_', '.' "
                "or '-', starting with a letter or digit"
            )
        if not callable(factory):
            raise TypeError(
                f"factory makes the entity's actor from its key: a callable, "
                f"not {factory!r}"
            )
        if type(shards) is not int:
            raise TypeError(f"shards is an int, not {shards!r}")
        if shards < 1:
            raise ValueError(f"shards must be >= 1, not {shards}")
        if type(remember) is not bool:
            raise TypeError(f"remember is a bool, not {remember!r}")
        if isinstance(passivate_after, _Default):
            idle: float | None = None if remember else DEFAULT_PASSIVATE_AFTER
        elif passivate_after is None:
            idle = None
        else:
            idle = _positive_seconds("passivate_after", passivate_after)
            if remember:
                raise ValueError(
                    f"entity type {type_name!r}: remembered entities are not "
                    "passivated on idle (as Akka's remember-entities); leave "
                    "passivate_after unset or None, or set remember=False"
                )
        if role is not None and (type(role) is not str or not role):
            raise TypeError(f"role is a non-empty str or None, not {role!r}")
        if type(buffer) is not int:
            raise TypeError(f"buffer is an int, not {buffer!r}")
        if buffer < 1:
            raise ValueError(f"buffer must be >= 1, not {buffer}")
        if stop_message is not None:
            try:
                hash(stop_message)
            except TypeError:
                raise TypeError(
                    f"stop_message must be hashable (a constant), not {stop_message!r}"
                ) from None
        self.type_name = type_name
        self.factory = factory
        self.shards = shards
        self.passivate_after = idle
        self.role = role
        self.remember = remember
        self.buffer = buffer
        self.stop_message = stop_message

    def __repr__(self) -> str:
        return (
            f"Entity({self.type_name!r}, shards={self.shards}, "
            f"passivate_after={self.passivate_after}, role={self.role!r}, "
            f"remember={self.remember})"
        )
