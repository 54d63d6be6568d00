"""The reliable-delivery call-count gate: a message from a producer
controller through a consumer controller to a consumer actor may not make
more calls than budgeted.

Calls per message (``await producer.send`` to the consumer actor's sync
``receive``, the confirmation and the demand back, in one system), on
asyncio and on Trio, are counted in a fresh interpreter by
``measure_delivery_calls.py`` and compared with ``delivery_budgets.json``.
The counts are deterministic (no I/O, no timer fires within a run), so a
failure means the path changed: an ask per message to the consumer again
would show at once. See ``README.md`` here for what to do when it fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gate_budgets import (
    check_meanings,
    check_repeatable,
    check_within,
    load,
    measured_fixture,
)

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "measure_delivery_calls.py"
BUDGETS = HERE / "delivery_budgets.json"
BACKENDS = ("asyncio", "trio")
FIGURES = ("reliable.call", "reliable.c_call")


measured = measured_fixture(SCRIPT, BACKENDS)


def _report(measured: dict[str, Any], budgets: dict[str, Any]) -> str:
    backend = measured["backend"]
    limits = budgets["budgets"][backend]
    figures = measured["figures"]
    lines = [f"reliable-delivery call counts on {backend}"]
    for key in FIGURES:
        limit = limits.get(key, {})
        flag = "  OVER" if figures[key] > limit.get("budget", float("inf")) else ""
        lines.append(
            f"  {key:<16} {figures[key]:>7.2f} budget {limit.get('budget', '-')}"
            f" (set at {limit.get('measured', '-')}), in actors/ "
            f"{figures[key + '.in_actors']:.2f}{flag}"
        )
    lines += ["", "calls per message, most frequent first:"]
    lines += measured["breakdown"]["reliable"]
    lines += [
        "",
        "A deliberate change? Re-measure with `python tests/gates/"
        "measure_delivery_calls.py --write-budgets` and commit "
        "delivery_budgets.json saying why (tests/gates/README.md).",
    ]
    return "\n".join(lines)


def test_reliable_delivery_calls_stay_within_their_budgets(
    measured: dict[str, Any],
) -> None:
    check_within(measured, load(BUDGETS), FIGURES, _report, "call-count")


def test_the_reliable_counts_repeat_within_one_process(
    measured: dict[str, Any],
) -> None:
    check_repeatable(measured, _report(measured, load(BUDGETS)))


def test_the_count_sees_each_message_handled_once_by_the_consumer_actor(
    measured: dict[str, Any],
) -> None:
    # The consumer actor's receive is called once per message, and nothing
    # on the path asks it (no ask per message).
    top = measured["breakdown"]["reliable"]
    handler = [line for line in top if "Counting.receive" in line]
    assert [line.split()[0] for line in handler] == ["1.000"], top
    assert not [line for line in top if "ActorRef.ask" in line], top


def test_every_reliable_figure_has_a_budget_with_its_meaning() -> None:
    check_meanings(load(BUDGETS), BACKENDS, FIGURES, positive=True)
