"""``python -m benchmarks compare BASE CANDIDATE``: two revisions, alternating.

Both revisions are checked out and installed (``_checkouts``); then each round
runs the chosen rows once with each revision's own harness and interpreter, in
a fresh process, the revision that goes first alternating from round to round.
The reports are collected and compared row by row (``_ratios``); the
Markdown table goes to stdout, progress to stderr, and every round's report
with a ``compare.json`` summary under ``benchmarks/.compare/runs/<time>/``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ._checkouts import COMPARE_DIR, Checkout, CheckoutError, prepare, resolve
from ._ratios import (
    RowKey,
    RowSamples,
    Verdict,
    as_json,
    collect,
    compare,
    markdown,
)

__all__ = ["run_compare"]


def run_compare(args: argparse.Namespace, command: str) -> int:
    """Run the ``compare`` command; return the process exit status.

    0: every row ran (rows in one revision only are listed, not compared);
    1: some row failed in a revision; 2: a revision could not be resolved,
    installed or run.
    """
    rounds: int = args.rounds or (1 if args.quick else 5)
    try:
        base, candidate = (
            prepare(label, spec, resolve(spec), _progress)
            for label, spec in (("base", args.base), ("candidate", args.candidate))
        )
        clock = _clock(args.clock, base, candidate)
        run = _run_rounds(base, candidate, _options(args), rounds, clock)
    except CheckoutError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return 2
    comparisons = compare(run.base, run.candidate, quick=args.quick)
    title = (
        f"Compare {base.spec} ({base.short}) -> {candidate.spec} ({candidate.short})"
    )
    print(
        markdown(
            comparisons,
            title=title,
            command=command,
            rounds=rounds,
            quick=args.quick,
            clock=run.clock,
        ),
        end="",
    )
    summary = {
        "command": command,
        "rounds": rounds,
        "quick": args.quick,
        "clock": run.clock,
        "base": {"spec": base.spec, "commit": base.commit},
        "candidate": {"spec": candidate.spec, "commit": candidate.commit},
        "rows": as_json(comparisons),
    }
    path = run.directory / "compare.json"
    path.write_text(json.dumps(summary, indent=1) + "\n", "utf-8")
    _progress(f"wrote {_shown(path)} (every round's report is beside it)")
    return 1 if any(c.verdict is Verdict.FAILED for c in comparisons) else 0


@dataclass(frozen=True, slots=True)
class _Rounds:
    """What the rounds of one comparison collected."""

    base: dict[RowKey, RowSamples]
    candidate: dict[RowKey, RowSamples]
    clock: str  #: the clock both revisions timed samples with
    directory: Path  #: where every round's report was written


def _options(args: argparse.Namespace) -> list[str]:
    """The options every round passes to both revisions' harnesses (the clock
    aside: see :func:`_clock`)."""
    options = ["--quick"] if args.quick else []
    for pattern in args.only:
        options += ["--only", pattern]
    for backend in args.backend:
        options += ["--backend", backend]
    return options


def _clock(asked: str | None, *checkouts: Checkout) -> str | None:
    """The ``--clock`` to pass to the harnesses that take it (None: none).

    Harnesses from before ``--clock`` time on the wall clock and reject the
    option: the other revision is then told ``--clock wall`` to match. Either
    way the clocks the reports name are checked to agree.

    Raises:
        CheckoutError: a clock was asked for that an old harness cannot use.
    """
    old = [c for c in checkouts if not c.has_clock_option]
    if not old:
        return asked
    if asked not in (None, "wall"):
        raise CheckoutError(
            f"{old[0].label} ({old[0].short}) predates --clock and times samples "
            f"on the wall clock only: compare with --clock wall"
        )
    return "wall"


def _run_rounds(
    base: Checkout,
    candidate: Checkout,
    options: list[str],
    rounds: int,
    clock: str | None = None,
) -> _Rounds:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    directory = COMPARE_DIR / "runs" / stamp
    samples: dict[str, dict[RowKey, RowSamples]] = {"base": {}, "candidate": {}}
    clocks: dict[str, str] = {}
    for round_ in range(rounds):
        # The revision that goes first alternates: neither always runs on a
        # machine the other has just warmed up (or heated up).
        order = (base, candidate) if round_ % 2 == 0 else (candidate, base)
        took = []
        for checkout in order:
            started = time.perf_counter()
            extra = []
            if clock is not None and checkout.has_clock_option:
                extra = ["--clock", clock]
            report = checkout.run_round(
                [*options, *extra], directory / f"round{round_ + 1}-{checkout.label}"
            )
            took.append(f"{checkout.label} {time.perf_counter() - started:.1f} s")
            # Reports from before ``--clock`` existed timed on the wall clock.
            clocks[checkout.label] = report["settings"].get("clock", "wall")
            collect(samples[checkout.label], report, round_)
        if clocks["base"] != clocks["candidate"]:
            raise CheckoutError(
                f"the revisions timed samples on different clocks (base "
                f"{clocks['base']}, candidate {clocks['candidate']}): pass --clock"
            )
        _progress(f"round {round_ + 1}/{rounds}: " + ", ".join(took))
    return _Rounds(samples["base"], samples["candidate"], clocks["base"], directory)


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
