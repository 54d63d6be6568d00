"""``python -m benchmarks compare``: the command line and the alternating rounds."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from benchmarks import _compare_command as _compare
from benchmarks._cli import _parser, main
from benchmarks._ratios import Verdict, compare


def _parse(*argv: str) -> argparse.Namespace:
    return _parser().parse_args(list(argv))


def test_compare_takes_two_revisions_and_the_run_options() -> None:
    args = _parse(
        "compare", "main", "HEAD", "--rounds", "3", "--only", "ask",
        "--only", "flood/*", "--quick", "--backend", "trio", "--clock", "wall",
    )  # fmt: skip
    assert args.command == "compare"
    assert (args.base, args.candidate) == ("main", "HEAD")
    assert args.rounds == 3 and args.quick
    assert args.only == ["ask", "flood/*"]
    assert args.backend == ["trio"] and args.clock == "wall"


def test_compare_defaults_leave_rounds_and_clock_to_the_harnesses() -> None:
    args = _parse("compare", "HEAD~1", "HEAD")
    assert args.rounds is None and args.clock is None
    assert args.only == [] and args.backend == [] and not args.quick


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "HEAD"],  # one revision
        ["compare", "A", "B", "--rounds", "0"],
        ["compare", "A", "B", "--backend", "curio"],
        ["compare", "A", "B", "--output", "x"],  # a run option, not compare's
    ],
)
def test_a_bad_compare_command_line_exits_with_status_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2


def test_main_hands_compare_to_the_compare_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[argparse.Namespace, str]] = []

    def fake(args: argparse.Namespace, command: str) -> int:
        seen.append((args, command))
        return 7

    monkeypatch.setattr(_compare, "run_compare", fake)
    assert main(["compare", "HEAD~1", "HEAD", "--quick"]) == 7
    [(args, command)] = seen
    assert args.base == "HEAD~1"
    assert command == "python -m benchmarks compare 'HEAD~1' HEAD --quick"


def test_the_harness_options_pass_patterns_and_backends_through() -> None:
    args = _parse(
        "compare", "A", "B", "--quick", "--only", "ask", "--backend", "asyncio"
    )
    assert _compare._options(args) == [
        "--quick",
        "--only",
        "ask",
        "--backend",
        "asyncio",
    ]


def test_the_clock_is_left_to_the_harnesses_unless_asked() -> None:
    new = FakeCheckout("base", 1.0, [])
    assert "--clock" not in _compare._options(_parse("compare", "A", "B"))
    assert _compare._clock(None, new, new) is None
    assert _compare._clock("wall", new, new) == "wall"


def test_a_revision_older_than_the_clock_option_makes_both_time_by_wall() -> None:
    # Its harness rejects --clock and times on the wall clock: the other
    # revision is told to do the same.
    old, new = FakeCheckout("base", 1.0, []), FakeCheckout("candidate", 1.0, [])
    old.has_clock_option = False
    assert _compare._clock(None, old, new) == "wall"
    with pytest.raises(_compare.CheckoutError, match="--clock wall"):
        _compare._clock("cpu", old, new)
    log: list[str] = []
    old, new = FakeCheckout("base", 1.0, log), FakeCheckout("candidate", 1.0, log)
    old.has_clock_option = False
    old.clock = new.clock = "wall"
    _compare._run_rounds(old, new, ["--quick"], 1, "wall")  # type: ignore[arg-type]
    assert old.options == [["--quick"]]
    assert new.options == [["--quick", "--clock", "wall"]]


class FakeCheckout:
    """Stands in for a checked-out revision: records when it ran a round."""

    def __init__(self, label: str, seconds: float, log: list[str]) -> None:
        self.label = label
        self.seconds = seconds
        self.log = log
        self.clock = "cpu"
        self.has_clock_option = True
        self.short = label
        self.options: list[list[str]] = []

    def run_round(self, options: list[str], stem: Path) -> dict[str, Any]:
        self.log.append(self.label)
        self.options.append(options)
        return {
            "schema": 1,
            "settings": {"clock": self.clock},
            "results": [
                {
                    "row": "r",
                    "backend": "asyncio",
                    "unit": "item",
                    "count": 10,
                    "subject": "ours",
                    "error": None,
                    "impls": {"ours": {"seconds": [self.seconds]}},
                }
            ],
        }


def test_the_revisions_alternate_which_goes_first_round_by_round() -> None:
    log: list[str] = []
    base, candidate = (
        FakeCheckout("base", 2.0, log),
        FakeCheckout("candidate", 1.0, log),
    )
    run = _compare._run_rounds(base, candidate, [], 4)  # type: ignore[arg-type]
    first, second = ["base", "candidate"], ["candidate", "base"]
    assert log == first + second + first + second
    [row] = compare(run.base, run.candidate)
    assert row.verdict is Verdict.FASTER
    assert run.clock == "cpu"


def test_revisions_timing_on_different_clocks_are_not_compared() -> None:
    log: list[str] = []
    base, candidate = (
        FakeCheckout("base", 1.0, log),
        FakeCheckout("candidate", 1.0, log),
    )
    base.clock = "wall"
    with pytest.raises(_compare.CheckoutError, match="different clocks"):
        _compare._run_rounds(base, candidate, [], 3)  # type: ignore[arg-type]
