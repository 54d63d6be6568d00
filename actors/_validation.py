"""Argument checks of the runtime's public calls, in one place.

Each raises a ``TypeError`` (wrong kind of value) or a ``ValueError`` (out of
range) whose message starts with the argument's name, at the call that got
it. Durations are seconds. The channel core and the mailbox keep their own
checks (``check_limit``, ``check_buffer_size``, ``check_capacity``), which the
runtime reuses: they cannot import the runtime.
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any

from .channel.lowlevel import check_limit
from .mailbox import check_capacity

__all__ = [
    "check_capacity",
    "check_count",
    "check_duration",
    "check_limit",
    "check_name",
    "check_seconds_type",
    "check_timeout",
]


def check_seconds_type(name: str, value: object) -> None:
    """A duration's type: an int or a float (not a bool, not a string), one
    that a float can hold (durations are compared with the event loop's float
    clock).

    Raises:
        TypeError: it is not a number of seconds.
        ValueError: it is an int too large for a float.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number of seconds, not {value!r}")
    if isinstance(value, int):
        try:
            float(value)
        except OverflowError:
            raise ValueError(
                f"{name} is too large: {len(str(value))} digits of seconds"
            ) from None


def check_timeout(timeout: float, name: str = "timeout") -> float:
    """An ask's or a call's timeout: seconds, > 0.

    Raises:
        TypeError: it is not a number.
        ValueError: it is not > 0 (or is NaN).
    """
    check_seconds_type(name, timeout)
    if not timeout > 0 or math.isnan(timeout):
        raise ValueError(f"{name} must be > 0 seconds, got {timeout!r}")
    return timeout


def check_duration(name: str, seconds: float, *, zero: bool = False) -> float:
    """A timer's duration: seconds, > 0 (``zero``: >= 0), finite.

    Raises:
        TypeError: it is not a number.
        ValueError: it is out of range, NaN or infinite.
    """
    check_seconds_type(name, seconds)
    if zero:
        if not 0 <= seconds < math.inf:  # also rejects NaN
            raise ValueError(f"{name} must be >= 0 and finite seconds, got {seconds!r}")
    elif not 0 < seconds < math.inf:
        raise ValueError(f"{name} must be > 0 and finite seconds, got {seconds!r}")
    return float(seconds)


def check_count(value: int, name: str) -> int:
    """A count that may be 0 (how many dead letters to keep, ...).

    Raises:
        TypeError: it is not an integer (a bool is not one).
        ValueError: it is < 0.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


def check_name(name: Any) -> str:
    """An actor's name: one segment of a path (``/user/<name>``): not empty,
    not ``.`` or ``..``, not only spaces, without ``/`` and without control
    characters (a newline would break log lines).

    Raises:
        TypeError: it is not a string.
        ValueError: it is not a valid path segment.
    """
    if not isinstance(name, str):
        raise TypeError(f"an actor name is a string, not {name!r}")
    if (
        not name.strip()
        or name in (".", "..")
        or "/" in name
        or any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name)
    ):
        raise ValueError(
            "an actor name is a non-empty path segment (not '.' or '..', "
            f"without '/', spaces only or control characters): {name!r}"
        )
    return name
