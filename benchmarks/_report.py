"""Reports: the Markdown table and the JSON file of a run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._clock import DESCRIPTIONS
from ._runner import RowResult, Settings, Spread

__all__ = ["Report", "impl_columns"]

SCHEMA = 1
FASTEST = "vs fastest baseline"  #: the header of the fastest-other column


@dataclass(frozen=True, slots=True)
class Report:
    """Everything one run produced."""

    command: str  #: the command line, as a user would type it again
    started: str  #: ISO 8601 time the run started (UTC)
    wall_seconds: float  #: how long the whole run took
    settings: Settings
    environment: dict[str, Any]
    results: Sequence[RowResult]

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
        when = f"`{self.command}`, {self.started}, {self.wall_seconds:.0f} s"
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
            lines += ["", f"### {backend}", "", *_table(results)]
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
        }

    def write(self, stem: Path) -> list[Path]:
        """Write ``STEM.json`` and ``STEM.md``; return their paths."""
        stem.parent.mkdir(parents=True, exist_ok=True)
        json_path = stem.with_name(stem.name + ".json")
        md_path = stem.with_name(stem.name + ".md")
        json_path.write_text(json.dumps(self.as_json(), indent=1) + "\n", "utf-8")
        md_path.write_text(self.markdown(), "utf-8")
        return [json_path, md_path]


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
