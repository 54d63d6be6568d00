"""Reports: the Markdown table and the JSON file of a run."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._clock import DESCRIPTIONS
from ._registry import Impl, Row, Sample
from ._runner import RowResult, Settings, Spread

__all__ = ["MAX_COLUMNS", "Report", "display_command", "impl_columns", "split_table"]

SCHEMA = 1
FASTEST = "vs fastest baseline"  #: the header of the fastest-other column
#: The widest table a report writes: the documentation site shows each one
#: at page width, and a wider one is clipped there.
MAX_COLUMNS = 7


@dataclass(frozen=True, slots=True)
class Report:
    """Everything one run produced."""

    command: str  #: the command line, as a user would type it again
    started: str  #: ISO 8601 time the run started (UTC)
    wall_seconds: float  #: how long the whole run took
    settings: Settings
    environment: dict[str, Any]
    results: Sequence[RowResult]
    #: what the run measured, in words (``--title``); None: named after the
    #: row groups (see ``title``)
    given_title: str | None = None

    @property
    def title(self) -> str:
        """What the run measured, for the chart: ``--title``, or the row
        groups it ran (``Benchmark rows: queued, flood, fan_out``)."""
        if self.given_title:
            return self.given_title
        groups = dict.fromkeys(r.row.group for r in self.results)
        return "Benchmark rows: " + ", ".join(groups)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        """The report a run wrote as JSON (``as_json``), for ``render``:
        the same measurements, drawn and tabulated again.

        Raises:
            ValueError: the file has another schema.
        """
        if data.get("schema") != SCHEMA:
            raise ValueError(f"unknown report schema {data.get('schema')!r}")
        results = []
        for item in data["results"]:
            names = tuple(item["impls"]) or (item["subject"],)
            row = Row(
                item["row"],
                "",
                max(1, item["count"]),
                1,
                tuple(Impl(name, _not_run) for name in names),
                unit=item["unit"],
                subject=item["subject"],
            )
            result = RowResult(row, item["backend"], item["count"], names)
            result.error = item["error"]
            for name, impl in item["impls"].items():
                result.seconds[name] = list(impl["seconds"])
            results.append(result)
        settings = data["settings"]
        return cls(
            data["command"],
            data["started"],
            data["wall_seconds"],
            Settings(
                rounds=settings["rounds"],
                quick=settings["quick"],
                clock=settings.get("clock", "wall"),
                sample_timeout=settings.get("sample_timeout", 300.0),
            ),
            data["environment"],
            results,
            data.get("title"),
        )

    def backends(self) -> list[str]:
        return list(dict.fromkeys(r.backend for r in self.results))

    def on(self, backend: str) -> list[RowResult]:
        return [r for r in self.results if r.backend == backend]

    @property
    def failed(self) -> list[RowResult]:
        return [r for r in self.results if not r.ok]

    # -- Markdown ---------------------------------------------------------

    def markdown(self) -> str:
        env = self.environment
        machine, python, packages = env["machine"], env["python"], env["packages"]
        versions = ", ".join(
            f"{name} {version}"
            for name, version in packages.items()
            if version and name != "matplotlib"
        )
        git = env.get("git") or {}
        commit = git.get("commit", "unknown")[:12]
        if git.get("actors_modified"):
            commit += " (actors/ modified)"
        rounds = self.settings.rounds
        command = display_command(self.command)
        when = f"`{command}`, {self.started}, {self.wall_seconds:.0f} s"
        if self.settings.quick:
            when += ", QUICK: small counts, proves rows run, says nothing on speed"
        lines = [
            "## Benchmark results",
            "",
            when,
            "",
            f"{machine['cpu']} ({machine['cpus']} CPUs), {machine['platform']}; "
            f"{python['implementation']} {python['version']}; {versions}; "
            f"commit {commit}",
            "",
            f"Cells: ns per item (per pair where the row says so), median "
            f"(min-max) of {rounds} round{'s' if rounds != 1 else ''}. Ratios: "
            "time of the subject over time of the other implementation, round by "
            "round, median (min-max); below 1 the subject is faster. "
            f"{FASTEST}: the subject over the fastest other implementation "
            "of each round on that backend, median (min-max), and the one "
            "fastest in most rounds. "
            "Implementations alternate within each round; every sample runs in a "
            "fresh event loop and checks that everything sent was received. "
            f"Clock: {DESCRIPTIONS[self.settings.clock]}.",
        ]
        for backend in self.backends():
            results = self.on(backend)
            lines += ["", f"### {backend}", "", *split_table(_table(results))]
        if self.failed:
            lines += ["", "### Failures", ""]
            lines += [f"- {r.row.name} on {r.backend}: {r.error}" for r in self.failed]
        return "\n".join(lines) + "\n"

    # -- JSON -------------------------------------------------------------

    def as_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "command": self.command,
            "started": self.started,
            "wall_seconds": self.wall_seconds,
            "settings": {
                "rounds": self.settings.rounds,
                "quick": self.settings.quick,
                "sample_timeout": self.settings.sample_timeout,
                "clock": self.settings.clock,
            },
            "environment": self.environment,
            "results": [_result_json(r) for r in self.results],
            **({"title": self.given_title} if self.given_title else {}),
        }

    def write(self, stem: Path) -> list[Path]:
        """Write ``STEM.json`` and ``STEM.md``; return their paths."""
        stem.parent.mkdir(parents=True, exist_ok=True)
        json_path = stem.with_name(stem.name + ".json")
        md_path = stem.with_name(stem.name + ".md")
        json_path.write_text(json.dumps(self.as_json(), indent=1) + "\n", "utf-8")
        md_path.write_text(self.markdown(), "utf-8")
        return [json_path, md_path]


async def _not_run(count: int) -> Sample:  # pragma: no cover - never called
    raise RuntimeError("a report read from JSON does not run its rows")


def display_command(command: str) -> str:
    """The command as a reader of the results runs it: an absolute path to
    a checkout's ``benchmarks/`` becomes relative (``/tmp/wt5/benchmarks/x``
    -> ``benchmarks/x``), so no machine's directory shows."""
    return re.sub(r"(?<![\w./-])/[^\s'\"]*/(benchmarks/)", r"\1", command)


def split_table(lines: Sequence[str], max_columns: int = MAX_COLUMNS) -> list[str]:
    """A Markdown table of at most ``max_columns`` columns, or several.

    A wider one is cut into tables that each repeat the first column: the
    times first, then (from the ``vs fastest baseline`` column on) the
    ratios, each in chunks of ``max_columns - 1`` columns; a column empty in
    every row of its chunk is left out. Lines that are not a table's pass
    through.
    """
    rows = [_cells(line) for line in lines]
    if not rows or len(rows[0]) <= max_columns or len(rows) < 2:
        return list(lines)
    header, align, body = rows[0], rows[1], rows[2:]
    rest = list(range(1, len(header)))
    groups = [rest]
    if FASTEST in header:
        cut = header.index(FASTEST)
        groups = [[c for c in rest if c < cut], [c for c in rest if c >= cut]]
    out: list[str] = []
    width = max_columns - 1
    for group in groups:
        for start in range(0, len(group), width):
            chunk = [c for c in group[start : start + width] if any(r[c] for r in body)]
            if not chunk:
                continue
            if out:
                out.append("")
            for row in (header, align, *body):
                out.append("| " + " | ".join([row[0], *(row[c] for c in chunk)]) + " |")
    return out


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def impl_columns(results: Sequence[RowResult]) -> list[str]:
    """Implementation names in first-seen order, subjects first."""
    subjects = dict.fromkeys(r.row.subject for r in results)
    others = dict.fromkeys(n for r in results for n in r.impls if n not in subjects)
    return [*subjects, *others]


def _table(results: Sequence[RowResult]) -> list[str]:
    columns = impl_columns(results)
    ratio_columns = [
        (r.row.subject, other)
        for r in results
        for other in r.impls
        if other != r.row.subject
    ]
    ratio_columns = list(dict.fromkeys(ratio_columns))
    header = [
        "row",
        *columns,
        FASTEST,
        *(f"{a} / {b}" for a, b in ratio_columns),
    ]
    lines = [
        "| " + " | ".join(header) + " |",
        "| --- |" + " ---: |" * (len(header) - 1),
    ]
    for r in results:
        if not r.ok:
            cells = ["FAILED"] + ["" for _ in header[2:]]
        else:
            cells = [_ns(r.per_item(c)) if c in r.impls else "" for c in columns]
            fastest = r.fastest()
            cells.append(
                "" if fastest is None else f"{_ratio(fastest[0])} {fastest[1]}"
            )
            cells += [
                _ratio(r.ratio(a, b)) if a in r.impls and b in r.impls else ""
                for a, b in ratio_columns
            ]
        name = r.row.name
        if r.row.unit != "item":
            name += f" (per {r.row.unit})"
        lines.append("| " + " | ".join([name, *cells]) + " |")
    return lines


def _ns(s: Spread) -> str:
    return f"{s.median:,.0f} ({s.min:,.0f}-{s.max:,.0f})"


def _ratio(s: Spread) -> str:
    return f"{s.median:.2f}x ({s.min:.2f}-{s.max:.2f})"


def _spread_json(s: Spread) -> dict[str, float]:
    return {"median": s.median, "min": s.min, "max": s.max}


def _result_json(r: RowResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "row": r.row.name,
        "group": r.row.group,
        "backend": r.backend,
        "unit": r.row.unit,
        "count": r.count,
        "subject": r.row.subject,
        "error": r.error,
        "impls": {},
        "ratios": {},
    }
    if r.ok:
        for name in r.impls:
            out["impls"][name] = {
                "seconds": r.seconds[name],
                "ns_per_item": _spread_json(r.per_item(name)),
            }
        for other in r.impls:
            if other != r.row.subject:
                ratio = r.ratio(r.row.subject, other)
                out["ratios"][f"{r.row.subject}/{other}"] = _spread_json(ratio)
        fastest = r.fastest()
        if fastest is not None:
            out["fastest"] = {"impl": fastest[1], "ratio": _spread_json(fastest[0])}
    return out
