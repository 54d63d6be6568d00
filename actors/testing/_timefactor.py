"""The time factor: default timeouts of the test kit, stretched for slow
machines (Akka's ``akka.test.timefactor``)."""

from __future__ import annotations

import math
import os
from typing import Final

__all__ = [
    "DEFAULT_TIMEOUT",
    "ENV_VAR",
    "NO_MESSAGE_TIMEOUT",
    "dilated",
    "set_time_factor",
    "time_factor",
]

#: The environment variable read when no factor was set
#: (``--actors-timefactor`` sets one).
ENV_VAR: Final = "ACTORS_TEST_TIMEFACTOR"

#: Seconds an expectation waits by default, before the time factor.
DEFAULT_TIMEOUT: Final = 3.0

#: Seconds ``expect_no_message()`` watches by default, before the time factor.
NO_MESSAGE_TIMEOUT: Final = 0.1

_factor: float | None = None


def _check(factor: object, name: str) -> float:
    if isinstance(factor, bool) or not isinstance(factor, int | float):
        raise TypeError(f"{name} must be a number, not {factor!r}")
    if not (factor > 0 and math.isfinite(factor)):
        raise ValueError(f"{name} must be > 0 and finite, not {factor!r}")
    return float(factor)


def time_factor() -> float:
    """The factor default timeouts are multiplied by: the one set with
    [``set_time_factor``][actors.testing.set_time_factor] (the
    ``--actors-timefactor`` option does), else the environment variable
    ``ACTORS_TEST_TIMEFACTOR``, else 1.

    Raises:
        ValueError: ``ACTORS_TEST_TIMEFACTOR`` is not a number > 0.
    """
    if _factor is not None:
        return _factor
    text = os.environ.get(ENV_VAR, "").strip()
    if not text:
        return 1.0
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{ENV_VAR} must be a number > 0, not {text!r}") from None
    return _check(value, ENV_VAR)


def set_time_factor(factor: float | None) -> None:
    """Set the time factor for this process (None: back to the environment
    variable).

    Raises:
        TypeError: ``factor`` is not a number or None.
        ValueError: ``factor`` is not > 0 and finite.
    """
    global _factor
    _factor = None if factor is None else _check(factor, "factor")


def dilated(seconds: float) -> float:
    """``seconds`` multiplied by [``time_factor``][actors.testing.time_factor]."""
    return seconds * time_factor()
