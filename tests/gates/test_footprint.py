"""The footprint gate: an idle actor may not retain more, nor a spawn call
more, than budgeted.

Bytes and memory blocks retained per idle actor (``tracemalloc``) and Python
and C calls per spawn, on asyncio and on Trio, are measured in a fresh
interpreter by ``measure_footprint.py`` and compared with
``footprint_budgets.json``. The figures are deterministic (no clocks, no
sleeps; bytes within a few per actor), so a failure means the runtime keeps
more per actor or does more per spawn. See ``README.md`` here for what to do
when it fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import measure_footprint
from gate_budgets import (
    check_meanings,
    check_repeatable,
    check_within,
    load,
    measured_fixture,
)

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "measure_footprint.py"
BUDGETS = HERE / "footprint_budgets.json"
BACKENDS = measure_footprint.BACKENDS
FIGURES = measure_footprint.FIGURES  # (one list: the script's)


measured = measured_fixture(SCRIPT, BACKENDS)


def _report(measured: dict[str, Any], budgets: dict[str, Any]) -> str:
    backend = measured["backend"]
    limits = budgets["budgets"][backend]
    figures = measured["figures"]
    lines = [
        f"footprint on {backend}; budgets set with {budgets['measured_with']}",
        f"  {'figure':<13} {'measured':>9} {'budget':>9} {'set at':>9}",
    ]
    for key in FIGURES:
        limit = limits.get(key, {})
        flag = "  OVER" if figures[key] > limit.get("budget", float("inf")) else ""
        lines.append(
            f"  {key:<13} {figures[key]:>9} {limit.get('budget', '-'):>9} "
            f"{limit.get('measured', '-'):>9}{flag}"
        )
    baseline = measured["baseline"]
    tasked = measured["mailed_tasked"]
    lines += [
        f"  an actor idle after one message, before it hibernated (its task "
        f"parked): {tasked['bytes']} bytes, {tasked['blocks']} blocks",
        f"  an anyio task parked on an Event with a deque: {baseline['bytes']} "
        f"bytes, {baseline['blocks']} blocks (an idle actor: "
        f"{measured['idle_over_baseline']}x)",
        "",
        "calls per spawn, most frequent first:",
        *measured["breakdown"],
        "",
        "A deliberate change? Re-measure with `python tests/gates/"
        "measure_footprint.py --write-budgets` and commit footprint_budgets.json "
        "saying why (tests/gates/README.md).",
    ]
    return "\n".join(lines)


def test_an_idle_actor_and_a_spawn_stay_within_their_budgets(
    measured: dict[str, Any],
) -> None:
    check_within(measured, load(BUDGETS), FIGURES, _report, "footprint")


def test_the_footprint_repeats_within_one_process(measured: dict[str, Any]) -> None:
    # Measured twice: if the figures moved, they depend on something other
    # than the code (timing, leftovers of an earlier run).
    check_repeatable(measured, _report(measured, load(BUDGETS)))


def test_the_measurement_sees_the_actors_it_made(measured: dict[str, Any]) -> None:
    # An idle actor holds at least its cell, mailbox, ref, context and
    # instance (a handful of blocks, hundreds of bytes), and every spawn
    # calls the start hook once: a figure near zero means the measurement
    # missed the actors, not that they became free.
    figures = measured["figures"]
    assert figures["idle.bytes"] >= 400
    assert figures["idle.blocks"] >= 5
    assert figures["mailed.bytes"] >= 400
    # Before the clock moved, each mailed actor held its task (kilobytes: its
    # frames, its task, its cancel scope): the clock's two ticks are what
    # took them, so a gate that stopped moving it would show here.
    assert measured["mailed_tasked"]["bytes"] > figures["mailed.bytes"] + 1_000
    assert any("Starter.on_start" in line for line in measured["breakdown"]) or (
        figures["spawn.call"] >= 10
    )
    assert measured["baseline"]["bytes"] > 0


def test_every_footprint_figure_has_a_budget_with_its_meaning() -> None:
    check_meanings(load(BUDGETS), BACKENDS, FIGURES, positive=True)
