"""Comparing two revisions: per-round ratios, their spread, a verdict, a table.

``python -m benchmarks compare BASE CANDIDATE`` runs each revision's own harness
one round at a time, alternately, and feeds every round's JSON report (the
harness's ``--output`` file) to :func:`collect`. This module is the arithmetic
and the table; it runs nothing (``_checkouts`` and ``_compare_command`` do).

A row's ratio is ``candidate / base`` of the subject implementation's time per
item, taken round by round (the two samples of a round ran one right after the
other, so slow drift on the machine hits both alike), then summarised as the
median and min-max of those per-round ratios. Below 1 the candidate is faster.
A row is a win or a loss only when every round agrees: a spread that contains
1.0 is :attr:`Verdict.INCONCLUSIVE`, whatever its median says.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ._runner import Spread

__all__ = [
    "MIN_ROUNDS",
    "Comparison",
    "RowSamples",
    "Verdict",
    "as_json",
    "collect",
    "compare",
    "markdown",
    "ratios",
    "verdict",
]

#: Rounds below which no row gets a verdict: one or two per-round ratios are
#: not a spread.
MIN_ROUNDS: Final = 3


class Verdict(enum.Enum):
    """What a row's per-round ratios say about the candidate."""

    FASTER = "faster"  #: every round's ratio is below 1
    SLOWER = "slower"  #: every round's ratio is above 1
    INCONCLUSIVE = "inconclusive"  #: the spread contains 1, or too few rounds
    FAILED = "failed"  #: the row failed in a revision
    UNMATCHED = "not compared"  #: the row exists in one revision only


RowKey = tuple[str, str]  # (row name, backend)


@dataclass(slots=True)
class RowSamples:
    """One row on one backend in one revision: seconds per item, round by round."""

    row: str
    backend: str
    unit: str  #: what one counted item is (``item``, ``pair``, ...)
    subject: str  #: the implementation the row is about (``ours``)
    #: implementation -> seconds per item, one entry per round
    per_item: dict[str, list[float]] = field(default_factory=dict)
    error: str | None = None  #: why the row failed in some round, if it did


def collect(
    rows: dict[RowKey, RowSamples], report: Mapping[str, Any], round_: int
) -> None:
    """Add one round's JSON report (rounds = 1) to ``rows``.

    Args:
        rows: the revision's samples so far, updated in place.
        report: the parsed JSON file the harness wrote for that round.
        round_: the round's index (0-based); a row that is missing from a
            round after the first, or was not in the first, is marked failed,
            so every kept row has exactly one sample per round.

    Raises:
        ValueError: the report is not the harness's JSON (unknown schema).
    """
    if report.get("schema") != 1:
        raise ValueError(f"unknown benchmark report schema {report.get('schema')!r}")
    seen: set[RowKey] = set()
    for result in report["results"]:
        key = (result["row"], result["backend"])
        seen.add(key)
        samples = rows.get(key)
        if samples is None:
            samples = rows[key] = RowSamples(
                result["row"], result["backend"], result["unit"], result["subject"]
            )
            if round_ > 0:
                samples.error = f"missing from rounds before round {round_ + 1}"
        if samples.error is not None:
            continue
        if result["error"] is not None:
            samples.error = result["error"]
            continue
        count = result["count"]
        for name, impl in result["impls"].items():
            seconds = impl["seconds"]
            samples.per_item.setdefault(name, []).extend(s / count for s in seconds)
    for key, samples in rows.items():
        if key not in seen and samples.error is None:
            samples.error = f"missing from round {round_ + 1}"


def ratios(base: Sequence[float], candidate: Sequence[float]) -> list[float]:
    """Per-round ratios ``candidate / base`` of two equally long sample lists.

    Raises:
        ValueError: the lists differ in length or are empty.
    """
    if not base or len(base) != len(candidate):
        raise ValueError(
            f"need one sample per round on both sides, got {len(base)} and "
            f"{len(candidate)}"
        )
    return [c / b for b, c in zip(base, candidate, strict=True)]


def verdict(per_round: Sequence[float], *, quick: bool = False) -> Verdict:
    """The verdict of a row from its per-round ratios ``candidate / base``.

    Faster or slower only when every round agrees: a min-max spread that
    reaches 1.0 is inconclusive, and so is every row with fewer than
    :data:`MIN_ROUNDS` rounds or measured at ``--quick`` counts (no warm-up,
    tiny counts: its timings mean nothing).
    """
    if quick or len(per_round) < MIN_ROUNDS:
        return Verdict.INCONCLUSIVE
    if max(per_round) < 1.0:
        return Verdict.FASTER
    if min(per_round) > 1.0:
        return Verdict.SLOWER
    return Verdict.INCONCLUSIVE


@dataclass(frozen=True, slots=True)
class Comparison:
    """One row on one backend, base against candidate."""

    row: str
    backend: str
    unit: str
    impl: str  #: the implementation compared (the row's subject)
    verdict: Verdict
    base_ns: Spread | None = None  #: ns per item in the base revision
    candidate_ns: Spread | None = None  #: ns per item in the candidate revision
    ratio: Spread | None = None  #: candidate / base, per round
    note: str = ""  #: why there is no ratio (a failure, a missing row)


def compare(
    base: Mapping[RowKey, RowSamples],
    candidate: Mapping[RowKey, RowSamples],
    *,
    quick: bool = False,
) -> list[Comparison]:
    """Compare every row of either revision (candidate's order, then base-only)."""
    keys = list(dict.fromkeys([*candidate, *base]))
    return [_compare_row(base.get(k), candidate.get(k), quick) for k in keys]


def _compare_row(
    base: RowSamples | None, candidate: RowSamples | None, quick: bool
) -> Comparison:
    some = candidate or base
    assert some is not None
    head = (some.row, some.backend, some.unit, some.subject)
    if base is None or candidate is None:
        which = "candidate" if base is None else "base"
        return Comparison(*head, Verdict.UNMATCHED, note=f"only in {which}")
    for label, samples in (("base", base), ("candidate", candidate)):
        if samples.error is not None:
            return Comparison(*head, Verdict.FAILED, note=f"{label}: {samples.error}")
    impl = candidate.subject
    if base.subject != impl or impl not in base.per_item:
        return Comparison(
            *head, Verdict.FAILED, note=f"base has no implementation {impl!r}"
        )
    b, c = base.per_item[impl], candidate.per_item[impl]
    per_round = ratios(b, c)
    return Comparison(
        *head,
        verdict(per_round, quick=quick),
        base_ns=Spread.of(b).scaled(1e9),
        candidate_ns=Spread.of(c).scaled(1e9),
        ratio=Spread.of(per_round),
    )


def markdown(
    comparisons: Iterable[Comparison],
    *,
    title: str,
    command: str,
    rounds: int,
    quick: bool,
    clock: str,
) -> str:
    """The comparison as Markdown: one table per backend, then a tally."""
    comparisons = list(comparisons)
    caveat = ""
    if quick:
        caveat = (
            " QUICK: small counts, no warm-up; proves both revisions run, says "
            "nothing on speed (every row inconclusive)."
        )
    elif rounds < MIN_ROUNDS:
        caveat = f" Fewer than {MIN_ROUNDS} rounds: every row is inconclusive."
    lines = [
        f"## {title}",
        "",
        f"`{command}`: {rounds} round{'s' if rounds != 1 else ''}, the two "
        f"revisions alternating (each round in a fresh process per revision), "
        f"clock {clock}.{caveat}",
        "",
        "Cells: ns per item of the row's subject implementation (`ours`), median "
        "(min-max) over rounds. `candidate / base`: the ratio of the two samples "
        "of each round, median (min-max); below 1.00x the candidate is faster. A "
        "row is faster or slower only when every round agrees; a spread that "
        "contains 1.00 is inconclusive.",
    ]
    for backend in dict.fromkeys(c.backend for c in comparisons):
        lines += [
            "",
            f"### {backend}",
            "",
            "| row | base | candidate | candidate / base | verdict |",
            "| --- | ---: | ---: | ---: | --- |",
        ]
        for c in comparisons:
            if c.backend == backend:
                lines.append(_table_row(c))
    tally = {v: sum(c.verdict is v for c in comparisons) for v in Verdict}
    lines += ["", ", ".join(f"{n} {v.value}" for v, n in tally.items()) + "."]
    return "\n".join(lines) + "\n"


def _table_row(c: Comparison) -> str:
    name = c.row if c.unit == "item" else f"{c.row} (per {c.unit})"
    if c.ratio is None or c.base_ns is None or c.candidate_ns is None:
        cells = [name, "", "", "", f"{c.verdict.value}: {c.note}"]
    else:
        cells = [
            name,
            _ns(c.base_ns),
            _ns(c.candidate_ns),
            _ratio(c.ratio),
            f"**{c.verdict.value}**"
            if c.verdict is not Verdict.INCONCLUSIVE
            else c.verdict.value,
        ]
    return "| " + " | ".join(cells) + " |"


def _ns(s: Spread) -> str:
    if s.min == s.max:  # one round, or every round alike: no bracket
        return f"{s.median:,.0f}"
    return f"{s.median:,.0f} ({s.min:,.0f}-{s.max:,.0f})"


def _ratio(s: Spread) -> str:
    if s.min == s.max:
        return f"{s.median:.2f}x"
    return f"{s.median:.2f}x ({s.min:.2f}-{s.max:.2f})"


def as_json(comparisons: Iterable[Comparison]) -> list[dict[str, Any]]:
    """JSON-ready rows of a comparison."""

    def spread(s: Spread | None) -> dict[str, float] | None:
        return None if s is None else {"median": s.median, "min": s.min, "max": s.max}

    return [
        {
            "row": c.row,
            "backend": c.backend,
            "unit": c.unit,
            "impl": c.impl,
            "verdict": c.verdict.value,
            "base_ns_per_item": spread(c.base_ns),
            "candidate_ns_per_item": spread(c.candidate_ns),
            "ratio": spread(c.ratio),
            "note": c.note,
        }
        for c in comparisons
    ]
