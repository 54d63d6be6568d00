"""Argument checks of the delivery layer, each error naming the argument."""

from __future__ import annotations

import math
from typing import Any

from .. import ActorContext, ActorSystem, SystemNotRunning
from ._protocol import MAX_ID

__all__ = [
    "check_count",
    "check_id",
    "check_seconds",
    "check_seq_nr",
    "spawner_system",
]


def check_count(name: str, value: object, least: int = 1) -> int:
    """``value`` if it is an int >= ``least``.

    Raises:
        TypeError: it is not an int (a bool is not one).
        ValueError: it is below ``least``.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {value!r}")
    if value < least:
        raise ValueError(f"{name} must be >= {least}, got {value}")
    return value


def check_seq_nr(name: str, value: object, highest: int, what: str = "sent") -> int:
    """``value`` if it is an int from 0 to ``highest`` (the highest number
    given out so far: a larger one would be waited for forever).

    Raises:
        TypeError: it is not an int (a bool is not one).
        ValueError: it is negative or above ``highest``, naming ``highest``.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int (a sequence number), not {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    if value > highest:
        raise ValueError(
            f"{name} {value} was never {what}: the highest sequence number "
            f"{what} so far is {highest}"
        )
    return value


def check_seconds(name: str, value: object) -> float:
    """``value`` if it is a finite number of seconds > 0.

    Raises:
        TypeError: it is not a number.
        ValueError: it is not > 0 and finite.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be seconds (a number), not {value!r}")
    if not 0 < value < math.inf:
        raise ValueError(f"{name} must be > 0 and finite seconds, got {value!r}")
    return float(value)


def check_id(name: str, value: object) -> str:
    """``value`` if it is a non-empty printable str of at most 255 characters.

    Raises:
        TypeError: it is not a str.
        ValueError: it is empty, too long or holds control characters.
    """
    if type(value) is not str:
        raise TypeError(f"{name} must be a str, not {value!r}")
    if not 0 < len(value) <= MAX_ID or not value.isprintable():
        raise ValueError(
            f"{name} must be 1 to {MAX_ID} printable characters, got {value[:60]!r}"
        )
    return value


def spawner_system(spawner: object) -> ActorSystem[Any]:
    """The system of ``spawner`` (a system, or an actor's context), checked
    before a controller does anything (a durable queue's load included).

    Raises:
        TypeError: it is neither.
        SystemNotRunning: the system is not running (not entered yet, or
            exited).
    """
    if isinstance(spawner, ActorSystem):
        system = spawner
    elif isinstance(spawner, ActorContext):
        system = spawner.system
    else:
        raise TypeError(
            f"spawner must be an ActorSystem or an ActorContext, not {spawner!r}"
        )
    if not system.running:
        raise SystemNotRunning("the actor system is not running (use async with)")
    return system
