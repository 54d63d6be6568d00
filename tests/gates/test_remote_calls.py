"""The remote call-count gate: a remote ask round trip may not make more calls
than budgeted.

Calls per sequential ask round trip between two nodes in one process, over
a private ``nats-server`` (both sides, their read loops and the event loop
counted), and per job of a pool across those nodes (coordinator and member),
on asyncio and on Trio, are counted in a fresh interpreter by
``measure_remote_calls.py`` and compared with ``remote_budgets.json``. Each
figure is the least of three measurements (a loaded machine only adds the
loop's polls while the server's answer is not there yet), so a failure means
the remote path changed. See ``README.md`` here for what to do when it
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
SCRIPT = HERE / "measure_remote_calls.py"
BUDGETS = HERE / "remote_budgets.json"
BACKENDS = ("asyncio", "trio")
FIGURES = ("ask.call", "ask.c_call", "job.call", "job.c_call")


measured = measured_fixture(SCRIPT, BACKENDS)


def _report(measured: dict[str, Any], budgets: dict[str, Any]) -> str:
    backend = measured["backend"]
    limits = budgets["budgets"][backend]
    figures = measured["figures"]
    lines = [
        f"remote ask and pool job call counts on {backend}; budgets set with "
        f"{budgets['measured_with']}",
        f"  {'figure':<11} {'measured':>9} {'budget':>8} {'set at':>8} "
        f"{'in actors/':>11}",
    ]
    for key in FIGURES:
        limit = limits.get(key, {})
        flag = "  OVER" if figures[key] > limit.get("budget", float("inf")) else ""
        lines.append(
            f"  {key:<11} {figures[key]:>9.2f} {limit.get('budget', '-'):>8} "
            f"{limit.get('measured', '-'):>8} {figures[key + '.in_actors']:>11.2f}"
            + flag
        )
    for name, unit in (("ask", "round trip"), ("job", "pool job")):
        lines += ["", f"calls per {unit}, most frequent first:"]
        lines += measured["breakdown"][name]
    lines += [
        "",
        "A deliberate change? Re-measure with `python tests/gates/"
        "measure_remote_calls.py --write-budgets` and commit remote_budgets.json "
        "saying why (tests/gates/README.md).",
    ]
    return "\n".join(lines)


def test_a_remote_ask_round_trip_and_a_pool_job_stay_within_their_call_budgets(
    measured: dict[str, Any],
) -> None:
    check_within(measured, load(BUDGETS), FIGURES, _report, "remote call-count")


def test_the_remote_counts_repeat_within_one_process(measured: dict[str, Any]) -> None:
    # The calls made in actors/ repeat across the measurements within the
    # script's TOLERANCE: a wider spread means the count depends on something
    # other than the code path.
    check_repeatable(measured, _report(measured, load(BUDGETS)), ("least", "most"))


def test_every_remote_figure_has_a_budget_and_a_meaning() -> None:
    check_meanings(load(BUDGETS), BACKENDS, FIGURES, positive=True)
