"""The command line: ``python -m benchmarks [run] [options]``, ``... list`` and
``... compare BASE CANDIDATE``."""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from . import rows
from ._backends import BACKENDS, Backend
from ._chart import write_chart
from ._clock import CLOCKS
from ._environment import environment
from ._registry import ALL_BACKENDS, Row, select
from ._report import Report
from ._runner import Settings, run_rows

__all__ = ["main"]

RESULTS = Path(__file__).resolve().parent / "results"
COMMANDS = ("run", "list", "compare", "render")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = ["python", "-m", "benchmarks", *argv]
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help")):
        argv.insert(0, "run")  # ``run`` is the default command
    args = _parser().parse_args(argv)
    if args.command == "render":
        return _render(args)
    if args.command == "compare":
        # Each revision's own harness chooses its rows: nothing to load here.
        from ._compare_command import run_compare

        return run_compare(args, shlex.join(command))
    rows.load()
    selected = select(args.only)
    if not selected:
        print(
            f"no row matches {args.only}; see `python -m benchmarks list`",
            file=sys.stderr,
        )
        return 2
    if args.command == "list":
        _list(selected)
        return 0
    return _run(args, selected, shlex.join(command))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Run the benchmark rows side by side with the tools users "
        "would pick instead; print a Markdown table, write JSON, Markdown and a "
        "PNG chart under benchmarks/results/.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run rows (the default command)")
    listing = commands.add_parser("list", help="list rows and implementations")
    for sub in (run, listing):
        sub.add_argument(
            "--only",
            action="append",
            default=[],
            metavar="PATTERN",
            help="run only rows matching: a glob over the whole name "
            "('channel/*/bounded/*') or a substring ('8P1C'); repeatable",
        )
    run.add_argument(
        "--quick",
        action="store_true",
        help="every row once at small counts, no warm-up: proves rows work, "
        "never judge timings from it",
    )
    run.add_argument(
        "--rounds",
        type=_positive,
        default=None,
        help="samples per implementation, median taken (default 5; 1 with --quick)",
    )
    run.add_argument(
        "--backend",
        action="append",
        choices=[b.name for b in BACKENDS],
        default=[],
        help="run only on this backend; repeatable (default: every installed one)",
    )
    run.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="STEM",
        help="write STEM.json, STEM.md and STEM.png (default: "
        "benchmarks/results/latest, or .../quick with --quick)",
    )
    run.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="time samples by the process's CPU time (default: robust to other "
        "processes on the machine) or by wall time",
    )
    run.add_argument(
        "--sample-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="a sample still running after this long dumps all stacks and exits "
        "the process with an error (default 300)",
    )
    run.add_argument("--no-chart", action="store_true", help="skip the PNG chart")
    run.add_argument(
        "--title",
        default=None,
        help="what the run measures, in words, for the chart and the JSON "
        "(default: the row groups it ran)",
    )
    render = commands.add_parser(
        "render",
        help="write STEM.md and STEM.png again from STEM.json (no new samples)",
        description="Tabulate and draw a run again from the JSON it wrote: "
        "the same measurements, in the current layout.",
    )
    render.add_argument("stem", type=Path, metavar="STEM")
    render.add_argument("--title", default=None, help="as for run")
    render.add_argument("--no-chart", action="store_true", help="skip the PNG")
    _add_compare(commands)
    return parser


def _render(args: argparse.Namespace) -> int:
    import dataclasses
    import json

    stem: Path = args.stem
    data = json.loads(stem.with_name(stem.name + ".json").read_text())
    report = Report.from_json(data)
    if args.title:
        report = dataclasses.replace(report, given_title=args.title)
    written = report.write(stem)
    if not args.no_chart:
        chart = write_chart(report, stem.with_name(stem.name + ".png"))
        if chart:
            written.append(chart)
    print("wrote " + ", ".join(str(p) for p in written), file=sys.stderr)
    return 0


def _add_compare(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    compare = commands.add_parser(
        "compare",
        help="run two git revisions alternately and print each row's ratio",
        description="Check BASE and CANDIDATE out as git worktrees under "
        "benchmarks/.compare/, install each into its own virtualenv (reused "
        "while the commit matches), run the rows with each revision's own "
        "harness one round at a time, alternating, and print each row's time "
        "ratio CANDIDATE/BASE with its min-max spread over the rounds. A row "
        "whose spread contains 1.0 is inconclusive.",
    )
    compare.add_argument("base", metavar="BASE", help="the revision to compare to")
    compare.add_argument(
        "candidate", metavar="CANDIDATE", help="the revision under test"
    )
    compare.add_argument(
        "--rounds",
        type=_positive,
        default=None,
        help="rounds, each one process per revision (default 5; 1 with --quick); "
        "fewer than 3 give no verdict",
    )
    compare.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PATTERN",
        help="compare only rows matching (as for run); repeatable",
    )
    compare.add_argument(
        "--quick",
        action="store_true",
        help="small counts: proves both revisions run, gives no verdict",
    )
    compare.add_argument(
        "--backend",
        action="append",
        choices=[b.name for b in BACKENDS],
        default=[],
        help="compare on this backend only; repeatable (default: every one "
        "installed in the revisions' virtualenvs)",
    )
    compare.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default=None,
        help="passed to both harnesses (default: their own, which must agree; "
        "wall when a revision predates --clock)",
    )


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _list(selected: Sequence[Row]) -> None:
    for row in selected:
        impls = ", ".join(
            impl.name
            + (
                ""
                if impl.backends == ALL_BACKENDS
                else f" [{'/'.join(sorted(impl.backends))}]"
            )
            for impl in row.impls
        )
        print(f"{row.name}  ({row.count:,} {row.unit}s; quick {row.quick_count:,})")
        print(f"    {row.description}")
        print(f"    {impls}")


def _backends(requested: Sequence[str]) -> list[Backend]:
    chosen = []
    for backend in BACKENDS:
        if requested and backend.name not in requested:
            continue
        missing = backend.missing()
        if missing is None:
            chosen.append(backend)
        elif requested:
            raise SystemExit(f"backend {backend.name} cannot run: {missing}")
        else:
            print(f"skipping backend {backend.name}: {missing}", file=sys.stderr)
    return chosen


def _run(args: argparse.Namespace, selected: Sequence[Row], command: str) -> int:
    settings = Settings(
        rounds=args.rounds or (1 if args.quick else 5),
        quick=args.quick,
        sample_timeout=args.sample_timeout,
        clock=args.clock,
    )
    backends = _backends(args.backend)
    stem = args.output or RESULTS / ("quick" if args.quick else "latest")
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    env = environment()
    t0 = time.perf_counter()

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    results = run_rows(selected, backends, settings, progress)
    if hasattr(os, "getloadavg"):
        env["machine"]["load_average_at_end"] = list(os.getloadavg())
    report = Report(
        command, started, time.perf_counter() - t0, settings, env, results, args.title
    )
    print(report.markdown())
    written = report.write(stem)
    if not args.no_chart:
        chart = write_chart(report, stem.with_name(stem.name + ".png"))
        if chart:
            written.append(chart)
    print("wrote " + ", ".join(str(p) for p in written), file=sys.stderr)
    if report.failed:
        print(f"{len(report.failed)} row(s) FAILED", file=sys.stderr)
        return 1
    return 0
