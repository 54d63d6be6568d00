"""``python -m benchmarks compare``: per-round ratios, spreads and verdicts."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks._ratios import (
    MIN_ROUNDS,
    RowKey,
    RowSamples,
    Verdict,
    collect,
    compare,
    markdown,
    ratios,
    verdict,
)


def test_ratios_are_candidate_over_base_round_by_round() -> None:
    assert ratios([2.0, 4.0], [1.0, 5.0]) == [0.5, 1.25]


def test_ratios_need_one_sample_per_round_on_both_sides() -> None:
    with pytest.raises(ValueError):
        ratios([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        ratios([], [])


def test_every_round_faster_is_a_win() -> None:
    assert verdict([0.8, 0.9, 0.99]) is Verdict.FASTER


def test_every_round_slower_is_a_loss() -> None:
    assert verdict([1.01, 1.2, 1.1]) is Verdict.SLOWER


def test_a_spread_crossing_one_is_inconclusive_whatever_the_median() -> None:
    assert verdict([0.5, 0.6, 0.7, 0.8, 1.01]) is Verdict.INCONCLUSIVE
    assert verdict([1.5, 1.4, 1.3, 0.99]) is Verdict.INCONCLUSIVE


def test_a_spread_touching_one_is_inconclusive() -> None:
    assert verdict([0.8, 0.9, 1.0]) is Verdict.INCONCLUSIVE
    assert verdict([1.0, 1.1, 1.2]) is Verdict.INCONCLUSIVE


def test_too_few_rounds_give_no_verdict() -> None:
    # One or two ratios have no spread worth the name, however far from 1.
    assert verdict([0.2] * (MIN_ROUNDS - 1)) is Verdict.INCONCLUSIVE
    assert verdict([0.2] * MIN_ROUNDS) is Verdict.FASTER


def test_quick_counts_give_no_verdict() -> None:
    assert verdict([0.2] * 10, quick=True) is Verdict.INCONCLUSIVE


def _report(*results: dict[str, Any]) -> dict[str, Any]:
    return {"schema": 1, "results": list(results)}


def _result(
    row: str,
    seconds: dict[str, float],
    *,
    count: int = 100,
    backend: str = "asyncio",
    error: str | None = None,
    subject: str = "ours",
) -> dict[str, Any]:
    return {
        "row": row,
        "backend": backend,
        "unit": "item",
        "count": count,
        "subject": subject,
        "error": error,
        "impls": {} if error else {n: {"seconds": [s]} for n, s in seconds.items()},
    }


def _rounds(*reports: dict[str, Any]) -> dict[RowKey, RowSamples]:
    rows: dict[RowKey, RowSamples] = {}
    for index, report in enumerate(reports):
        collect(rows, report, index)
    return rows


def test_the_spread_is_over_per_round_ratios_not_a_ratio_of_medians() -> None:
    # Round 2 was slow for both revisions alike (noise on the machine): the
    # per-round ratios see the candidate 10% faster in every round.
    base = _rounds(*(_report(_result("r", {"ours": s})) for s in (1.0, 5.0, 1.2)))
    cand = _rounds(*(_report(_result("r", {"ours": s})) for s in (0.9, 4.5, 1.08)))
    [row] = compare(base, cand)
    assert row.ratio is not None
    assert row.ratio.median == pytest.approx(0.9)
    assert row.ratio.min == pytest.approx(0.9)
    assert row.ratio.max == pytest.approx(0.9)
    assert row.verdict is Verdict.FASTER


def test_rows_are_compared_per_item_when_the_counts_differ() -> None:
    base = _rounds(*(_report(_result("r", {"ours": 1.0}, count=100)),) * 3)
    cand = _rounds(*(_report(_result("r", {"ours": 3.0}, count=200)),) * 3)
    [row] = compare(base, cand)
    assert row.ratio is not None and row.ratio.median == pytest.approx(1.5)
    assert row.base_ns is not None and row.base_ns.median == pytest.approx(1e7)
    assert row.verdict is Verdict.SLOWER


def test_only_the_subject_implementation_is_compared() -> None:
    base = _rounds(*(_report(_result("r", {"ours": 1.0, "anyio": 9.0})),) * 3)
    cand = _rounds(*(_report(_result("r", {"ours": 2.0, "anyio": 1.0})),) * 3)
    [row] = compare(base, cand)
    assert row.impl == "ours" and row.verdict is Verdict.SLOWER


def test_a_row_that_failed_in_any_round_fails_the_comparison() -> None:
    base = _rounds(
        _report(_result("r", {"ours": 1.0})),
        _report(_result("r", {}, error="sent 10, received 9")),
        _report(_result("r", {"ours": 1.0})),
    )
    cand = _rounds(*(_report(_result("r", {"ours": 1.0})),) * 3)
    [row] = compare(base, cand)
    assert row.verdict is Verdict.FAILED
    assert row.note == "base: sent 10, received 9"


def test_a_row_missing_from_a_round_fails_the_comparison() -> None:
    rows = _rounds(
        _report(_result("a", {"ours": 1.0}), _result("b", {"ours": 1.0})),
        _report(_result("a", {"ours": 1.0})),
        _report(_result("a", {"ours": 1.0}), _result("b", {"ours": 1.0})),
    )
    assert rows[("a", "asyncio")].error is None
    assert rows[("b", "asyncio")].error == "missing from round 2"


def test_a_row_in_one_revision_only_is_reported_not_compared() -> None:
    base = _rounds(*(_report(_result("old", {"ours": 1.0})),) * 3)
    cand = _rounds(*(_report(_result("new", {"ours": 1.0})),) * 3)
    rows = compare(base, cand)
    assert [(r.row, r.verdict, r.note) for r in rows] == [
        ("new", Verdict.UNMATCHED, "only in candidate"),
        ("old", Verdict.UNMATCHED, "only in base"),
    ]


def test_backends_are_compared_separately() -> None:
    def round_(asyncio_s: float, trio_s: float) -> dict[str, Any]:
        return _report(
            _result("r", {"ours": asyncio_s}),
            _result("r", {"ours": trio_s}, backend="trio"),
        )

    base = _rounds(*(round_(1.0, 1.0),) * 3)
    cand = _rounds(*(round_(0.5, 2.0),) * 3)
    verdicts = {(r.backend, r.verdict) for r in compare(base, cand)}
    assert verdicts == {("asyncio", Verdict.FASTER), ("trio", Verdict.SLOWER)}


def test_an_unknown_report_schema_is_refused() -> None:
    with pytest.raises(ValueError, match="schema"):
        collect({}, {"schema": 2, "results": []}, 0)


def test_the_table_shows_ratio_spread_verdict_and_a_tally() -> None:
    base = _rounds(*(_report(_result("r", {"ours": s})) for s in (1.0, 1.0, 1.0)))
    cand = _rounds(*(_report(_result("r", {"ours": s})) for s in (0.9, 1.1, 1.0)))
    text = markdown(
        compare(base, cand),
        title="Compare A -> B",
        command="python -m benchmarks compare A B",
        rounds=3,
        quick=False,
        clock="cpu",
    )
    assert "### asyncio" in text
    assert "| r | 10,000,000 | 10,000,000 (9,000,000-11,000,000) |" in text
    assert "| 1.00x (0.90-1.10) | inconclusive |" in text
    assert "0 faster, 0 slower, 1 inconclusive, 0 failed, 0 not compared." in text


def test_the_table_of_a_quick_comparison_says_it_proves_nothing_on_speed() -> None:
    base = _rounds(_report(_result("r", {"ours": 2.0})))
    cand = _rounds(_report(_result("r", {"ours": 1.0})))
    text = markdown(
        compare(base, cand, quick=True),
        title="t",
        command="c",
        rounds=1,
        quick=True,
        clock="cpu",
    )
    assert "says nothing on speed" in text
    assert "| 0.50x | inconclusive |" in text
