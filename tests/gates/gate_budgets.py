"""What the gates here share: their budget files, the command line of their
measuring scripts, and the checks of their tests.

A gate is a measuring script (``measure_calls.py``, ``measure_footprint.py``)
run in a fresh interpreter, and a test module that runs it per backend and
compares its figures with a budget file (``budgets.json``,
``footprint_budgets.json``): ``{"measured_with": {...}, "budgets": {backend:
{figure: {"what", "measured", "budget"}}}}``. A budget is the figure it was
set from plus ``MARGIN``, rounded up to a tenth; a budget more than
``STALE`` times its figure no longer guards much (a warning says to tighten
it). Imported by the scripts (their own directory is first on ``sys.path``)
and by the tests (pytest puts this directory there).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import warnings
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

__all__ = [
    "MARGIN",
    "STALE",
    "check_meanings",
    "check_repeatable",
    "check_within",
    "command_line",
    "load",
    "measured_fixture",
    "rewrite",
    "run_measurement",
    "versions",
]

#: A budget is the measured figure plus 10%, rounded up to a tenth.
MARGIN = 1.10
#: A budget this far above its figure no longer guards much: tighten it.
STALE = 1.25

Measure = Callable[..., dict[str, Any]]


def versions() -> dict[str, str]:
    """The versions figures depend on (Python, anyio, Trio)."""
    return {
        "python": ".".join(map(str, sys.version_info[:2])),
        "anyio": version("anyio"),
        "trio": version("trio"),
    }


def load(path: Path) -> dict[str, Any]:
    """A budget file's contents."""
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


# -- the measuring scripts' side ------------------------------------------------


def rewrite(
    path: Path, backends: Sequence[str], measure: Measure, what: str
) -> dict[str, Any]:
    """Measure every backend and rewrite the budget file at ``path`` (each
    budget: its measured figure plus ``MARGIN``).

    Raises:
        SystemExit: a backend's ``what`` did not repeat (nothing written).
    """
    data = load(path)
    for backend in backends:
        result = measure(backend)
        if not result["repeatable"]:
            raise SystemExit(f"{backend}: the {what} did not repeat; not writing")
        for key, spec in data["budgets"][backend].items():
            measured = result["figures"][key]
            spec["measured"] = measured
            # round() first: 91 * 1.1 * 10 is 1001.0000000000001 in floats.
            spec["budget"] = math.ceil(round(measured * MARGIN * 10, 6)) / 10
    data["measured_with"] = versions()
    path.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    return data


def command_line(
    doc: str, backends: Sequence[str], measure: Measure, path: Path, what: str
) -> None:
    """A measuring script's command line: ``BACKEND [--breakdown N]`` prints
    the figures as JSON, ``--write-budgets`` measures every backend and
    rewrites the budget file at ``path`` (``rewrite``)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("backend", nargs="?", choices=backends)
    parser.add_argument("--breakdown", type=int, default=15, metavar="N")
    parser.add_argument("--write-budgets", action="store_true")
    args = parser.parse_args()
    if args.write_budgets:
        print(json.dumps(rewrite(path, backends, measure, what), indent=2))
    elif args.backend:
        print(json.dumps(measure(args.backend, args.breakdown), indent=1))
    else:
        parser.error("give a backend or --write-budgets")


# -- the tests' side ------------------------------------------------------------


def run_measurement(script: Path, backend: str) -> dict[str, Any]:
    """The figures of ``script`` on ``backend``, measured in a fresh
    interpreter (with the 25 most frequent calls broken down).

    Raises:
        AssertionError: the script failed (its standard error in the message).
    """
    done = subprocess.run(
        [sys.executable, str(script), backend, "--breakdown", "25"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise AssertionError(f"{script.name} {backend} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def measured_fixture(script: Path, backends: Sequence[str]) -> Any:
    """The ``measured`` fixture of a gate's test module: ``script``'s figures
    on each of ``backends``, measured once per module (``run_measurement``).
    Assign it to the module's ``measured``."""
    import pytest  # only the tests need it (the scripts import this module too)

    @pytest.fixture(scope="module", params=list(backends))
    def measured(request: pytest.FixtureRequest) -> dict[str, Any]:
        return run_measurement(script, request.param)

    return measured


def check_repeatable(
    measured: dict[str, Any], report: str, labels: tuple[str, str] = ("first", "again")
) -> None:
    """Fail, with ``report``, unless the script found its figures repeating
    within one process (``measured["repeatable"]``): else they depend on
    something other than the code path (timing, leftovers of an earlier run).
    ``labels`` name its two sets of figures (``figures``, ``repeat``)."""
    assert measured["repeatable"], (
        f"{labels[0]} {measured['figures']}\n{labels[1]} {measured['repeat']}\n"
        + report
    )


def check_within(
    measured: dict[str, Any],
    budgets: dict[str, Any],
    figures: Sequence[str],
    report: Callable[[dict[str, Any], dict[str, Any]], str],
    what: str,
) -> None:
    """Every figure within its budget (else an AssertionError with the
    report); a warning for budgets more than ``STALE`` times their figure;
    the report printed (shown with ``-s``, and on failure)."""
    backend = measured["backend"]
    limits = budgets["budgets"][backend]
    values = measured["figures"]
    over = [key for key in figures if values[key] > limits[key]["budget"]]
    assert not over, f"over budget: {over}\n" + report(measured, budgets)
    stale = [key for key in figures if values[key] * STALE < limits[key]["budget"]]
    if stale:
        warnings.warn(
            f"{what} budgets far above the measured figures on {backend}: "
            f"{stale}; lower them (--write-budgets)\n" + report(measured, budgets),
            stacklevel=2,
        )
    print(report(measured, budgets))


def check_meanings(
    budgets: dict[str, Any],
    backends: Sequence[str],
    figures: Sequence[str],
    *,
    positive: bool = False,
) -> None:
    """The budget file names the versions it was set with, and every backend
    has exactly ``figures``, each with what it counts and the figure it was
    set from at or below it (and above 0 with ``positive``)."""
    assert budgets["measured_with"], "record the versions the budgets were set with"
    for backend in backends:
        limits = budgets["budgets"][backend]
        assert sorted(limits) == sorted(figures), backend
        for key, limit in limits.items():
            assert limit["what"], (backend, key)
            assert limit["measured"] <= limit["budget"], (backend, key)
            assert limit["measured"] > 0 or not positive, (backend, key)
