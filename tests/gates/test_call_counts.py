"""The call-count gate: the hot paths may not make more calls than budgeted.

Calls per told message (tell -> a sync receive) and per ask round trip, on
asyncio and on Trio, are counted in a fresh interpreter by ``measure_calls.py``
and compared with ``budgets.json``. The counts are deterministic (no clocks, no
sleeps), so a failure means the code path changed, on any machine with the
same Python, anyio and Trio. See ``README.md`` here for what to do when it
fails.
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
SCRIPT = HERE / "measure_calls.py"
BUDGETS = HERE / "budgets.json"
BACKENDS = ("asyncio", "trio")
FIGURES = (
    "tell.call",
    "tell.c_call",
    "ask.call",
    "ask.c_call",
    "ping_pong.call",
    "ping_pong.c_call",
)


measured = measured_fixture(SCRIPT, BACKENDS)


def _report(measured: dict[str, Any], budgets: dict[str, Any]) -> str:
    backend = measured["backend"]
    limits = budgets["budgets"][backend]
    lines = [
        f"call counts on {backend}, running {_versions(measured['versions'])}; "
        f"budgets set with {_versions(budgets['measured_with'])}",
        f"  {'figure':<12} {'measured':>9} {'budget':>8} {'set at':>8} "
        f"{'in actors/':>11}",
    ]
    figures = measured["figures"]
    for key in FIGURES:
        limit = limits.get(key, {})
        flag = "  OVER" if figures[key] > limit.get("budget", float("inf")) else ""
        lines.append(
            f"  {key:<12} {figures[key]:>9.2f} {limit.get('budget', '-'):>8} "
            f"{limit.get('measured', '-'):>8} {figures[key + '.in_actors']:>11.2f}"
            + flag
        )
    for path, top in measured["breakdown"].items():
        lines += ["", f"calls per {path} unit, most frequent first:", *top]
    lines += [
        "",
        "A deliberate change? Re-measure with `python tests/gates/measure_calls.py "
        "--write-budgets` and commit budgets.json saying why (tests/gates/README.md).",
    ]
    return "\n".join(lines)


def _versions(v: dict[str, str]) -> str:
    return ", ".join(f"{name} {version}" for name, version in v.items()) or "?"


def test_hot_path_calls_stay_within_their_budgets(measured: dict[str, Any]) -> None:
    check_within(measured, load(BUDGETS), FIGURES, _report, "call-count")


def test_the_counts_repeat_within_one_process(measured: dict[str, Any]) -> None:
    # Measured twice: if the figures moved, the count depends on something
    # other than the code path (timing, leftovers of an earlier run).
    check_repeatable(measured, _report(measured, load(BUDGETS)))


def test_the_count_sees_each_message_handled_exactly_once(
    measured: dict[str, Any],
) -> None:
    # The handler's own call is in the tell figure, once per message: the count
    # covers the whole path up to the handler, and the run ended only after the
    # last message was handled (not before, not with extra messages).
    handler = [line for line in measured["breakdown"]["tell"] if "Sink.receive" in line]
    assert [line.split()[0] for line in handler] == ["1.000"], measured["breakdown"]
    assert measured["figures"]["tell.call"] >= 1.0


def test_every_figure_has_a_budget_with_its_meaning() -> None:
    check_meanings(load(BUDGETS), BACKENDS, FIGURES)
