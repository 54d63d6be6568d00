"""Strategy and backoff arguments are checked when they are made, and the error
names the argument."""

from __future__ import annotations

from typing import Any

import pytest

from actors import Backoff, OneForAll, OneForOne, RestForOne, SupervisorStrategy


@pytest.mark.parametrize("cls", [SupervisorStrategy, OneForOne, OneForAll, RestForOne])
@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"backoff": 1.0}, TypeError, "^backoff must be a Backoff or None"),
        ({"max_restarts": True}, TypeError, "^max_restarts must be an integer"),
        ({"max_restarts": 2.5}, TypeError, "^max_restarts must be an integer"),
        ({"max_restarts": -1}, ValueError, "^max_restarts must be an integer >= 0"),
        ({"within": "5"}, TypeError, "^within must be a number of seconds"),
        ({"within": True}, TypeError, "^within must be a number of seconds"),
        ({"within": 0}, ValueError, "^within must be > 0 seconds"),
        ({"within": float("nan")}, ValueError, "^within must be > 0 seconds"),
        ({"decider": 3}, TypeError, "^decider must be a mapping"),
    ],
)
def test_a_bad_strategy_argument_raises_naming_it(
    cls: type[SupervisorStrategy], kwargs: dict[str, Any], error: type, pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        cls(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"min_delay": "1", "max_delay": 2}, TypeError, "^min_delay must be a number"),
        ({"min_delay": 1, "max_delay": None}, TypeError, "^max_delay must be a number"),
        ({"min_delay": 0, "max_delay": 1}, ValueError, "^min_delay must be > 0"),
        ({"min_delay": 2, "max_delay": 1}, ValueError, r"^max_delay \(1\) must be"),
        (
            {"min_delay": 1, "max_delay": float("inf")},
            ValueError,
            r"^max_delay \(inf\) must be finite",
        ),
        (
            {"min_delay": 1, "max_delay": 2, "random_factor": "0.1"},
            TypeError,
            "^random_factor must be a number",
        ),
        (
            {"min_delay": 1, "max_delay": 2, "random_factor": 2},
            ValueError,
            r"^random_factor must be within \[0, 1\]",
        ),
    ],
)
def test_a_bad_backoff_argument_raises_naming_it(
    kwargs: dict[str, Any], error: type, pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        Backoff(**kwargs)


def test_good_arguments_are_accepted() -> None:
    strategy = OneForAll(
        max_restarts=0, within=0.5, backoff=Backoff(0.1, 1.0, random_factor=0.5)
    )
    assert strategy.scope == "all"
