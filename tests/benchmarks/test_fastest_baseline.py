"""The report's ``vs fastest baseline`` column: the subject over the fastest
other implementation of each round, and the actor rows' light baselines."""

from __future__ import annotations

from benchmarks._registry import Impl, Row, Sample, all_rows
from benchmarks._report import FASTEST, _table
from benchmarks._runner import RowResult
from benchmarks.rows import load


async def _never(count: int) -> Sample:  # pragma: no cover - never run
    raise AssertionError


def _result(seconds: dict[str, list[float]]) -> RowResult:
    impls = tuple(Impl(name, _never) for name in seconds)
    row = Row("demo/row", "a row", 10, 1, impls)
    result = RowResult(row, "asyncio", 10, tuple(seconds))
    result.seconds.update(seconds)
    return result


def test_the_fastest_baseline_is_chosen_round_by_round() -> None:
    result = _result(
        {
            "ours": [1.0, 1.0, 1.0],
            "a": [2.0, 4.0, 0.5],
            "b": [4.0, 2.0, 8.0],
        }
    )
    fastest = result.fastest()
    assert fastest is not None
    spread, impl = fastest
    # round 1: a (2.0); round 2: b (2.0); round 3: a (0.5)
    assert (spread.median, spread.min, spread.max) == (0.5, 0.5, 2.0)
    assert impl == "a"


def test_a_row_without_baselines_has_no_fastest() -> None:
    assert _result({"ours": [1.0]}).fastest() is None


def test_the_table_shows_the_fastest_baseline_and_which_it_was() -> None:
    header, _, line = _table([_result({"ours": [1.0], "a": [2.0], "b": [4.0]})])
    assert FASTEST in header
    assert "0.50x (0.50-0.50) a" in line


def test_the_latency_rows_have_light_baselines_on_every_backend() -> None:
    load()
    rows = {row.name: row for row in all_rows()}
    for name in ("ask", "ping_pong/pairs/1", "fan_out/workers/16/actors"):
        row = rows[name]
        assert {i.name for i in row.impls_on("asyncio")} >= {
            "asyncio.Queue (light)",
            "anyio (light)",
        }
        assert "trio (light)" in {i.name for i in row.impls_on("trio")}
