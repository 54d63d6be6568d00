"""Checks of the client's arguments, each naming the argument it refuses."""

from __future__ import annotations

import math

__all__ = ["integer", "positive"]


def positive(name: str, value: object, *, zero: bool = False) -> float:
    """``value`` as a float of seconds: > 0 (or >= 0 with ``zero``).

    Raises:
        TypeError: it is not a number (a bool is not one).
        ValueError: it is NaN, negative, or 0 without ``zero``.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(
            f"{name} must be a number of seconds, not {type(value).__name__}"
        )
    if math.isnan(value) or value < 0 or (value == 0 and not zero):
        raise ValueError(f"{name} must be {'>= 0' if zero else '> 0'}, not {value!r}")
    return float(value)


def integer(name: str, value: object, minimum: int) -> int:
    """``value`` if it is an int of at least ``minimum``.

    Raises:
        TypeError: it is not an int (a bool is not one).
        ValueError: it is below ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    return value
