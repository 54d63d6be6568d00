"""Charts and tables readable at page width: one colour per implementation
across panels, the legend outside the bars, a title naming the workload,
tables of at most 7 columns; and ``render`` redraws a run from its JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from benchmarks._chart import COLOURS, colours, write_chart
from benchmarks._registry import Impl, Row, Sample
from benchmarks._report import MAX_COLUMNS, Report, display_command, split_table
from benchmarks._runner import RowResult, Settings

ROOT = Path(__file__).resolve().parents[2]


async def _never(count: int) -> Sample:  # pragma: no cover - never run
    raise AssertionError


def _result(name: str, backend: str, seconds: dict[str, list[float]]) -> RowResult:
    row = Row(name, "a row", 10, 1, tuple(Impl(n, _never) for n in seconds))
    result = RowResult(row, backend, 10, tuple(seconds))
    result.seconds.update(seconds)
    return result


def _report(title: str | None = None) -> Report:
    many = {
        n: [1.0, 1.1] for n in ("ours", "asyncio.Queue", "anyio", "pykka (threads)")
    }
    many |= {f"peer-{i}": [2.0, 2.1] for i in range(4)}
    results = [
        _result("ping_pong/pairs/1", "asyncio", many),
        _result("queued", "asyncio", {"ours": [1.0], "asyncio.Queue": [2.0]}),
        _result(
            "ping_pong/pairs/1",
            "trio",
            {"ours": [1.0, 1.0], "trio": [2.0, 2.0], "pykka (threads)": [3.0, 3.0]},
        ),
    ]
    return Report(
        "python -m benchmarks --only 'ping_pong/*' --output /home/me/x/benchmarks/r",
        "2026-12-01T00:00:00+00:00",
        1.0,
        Settings(rounds=2, quick=False),
        {
            "machine": {"cpu": "cpu", "cpus": 2, "platform": "p"},
            "python": {"implementation": "CPython", "version": "3.11"},
            "packages": {},
        },
        results,
        title,
    )


def test_markdown_tables_have_at_most_seven_columns() -> None:
    text = _report().markdown()
    widths = [line.count("|") - 1 for line in text.splitlines() if line.startswith("|")]
    assert widths and max(widths) <= MAX_COLUMNS
    # Nothing is lost: every implementation's time and ratio is somewhere.
    for name in ("peer-0", "peer-3", "ours / peer-3", "vs fastest baseline"):
        assert name in text


def test_a_split_table_repeats_the_row_names_and_drops_empty_columns() -> None:
    lines = [
        "| row | a | b | c | d | e | f | g | vs fastest baseline | r |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        "| x | 1 | 2 | 3 | 4 | 5 | 6 |  | 0.5x | 0.4x |",
    ]
    tables = "\n".join(split_table(lines)).split("\n\n")
    assert [t.splitlines()[0] for t in tables] == [
        "| row | a | b | c | d | e | f |",
        "| row | vs fastest baseline | r |",
    ]
    assert all(t.splitlines()[2].startswith("| x |") for t in tables)


def test_the_command_shown_names_no_machine_directory() -> None:
    shown = display_command("python -m benchmarks --output /tmp/wt5/benchmarks/r/x")
    assert shown == "python -m benchmarks --output benchmarks/r/x"
    assert "/home/me" not in _report().markdown()


@pytest.mark.parametrize(
    "page",
    sorted((ROOT / "benchmarks" / "results").glob("*.md")),
    ids=lambda p: p.name,
)
def test_the_committed_results_tables_fit_the_page(page: Path) -> None:
    widths = [
        line.count("|") - 1
        for line in page.read_text().splitlines()
        if line.startswith("|")
    ]
    assert max(widths, default=0) <= MAX_COLUMNS


def test_render_tabulates_the_same_measurements_from_the_json() -> None:
    report = _report("Round trips")
    again = Report.from_json(json.loads(json.dumps(report.as_json())))
    assert again.markdown() == report.markdown()
    assert again.title == "Round trips"


def test_each_implementation_keeps_one_colour_across_panels() -> None:
    palette = colours(["ours", "peer-1", "anyio", "peer-0"])
    assert palette["ours"] == COLOURS["ours"] and palette["anyio"] == COLOURS["anyio"]
    assert palette["peer-0"] != palette["peer-1"]
    assert colours(["peer-1", "peer-0"]) == {
        k: palette[k] for k in ("peer-1", "peer-0")
    }


def test_the_chart_has_one_legend_outside_the_panels_and_names_the_workload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    figures: list[Any] = []
    monkeypatch.setattr(plt, "close", figures.append)
    path = write_chart(_report(), tmp_path / "chart.png")
    assert path is not None and path.stat().st_size > 0
    (fig,) = figures
    title = fig._suptitle.get_text()
    assert title == "Benchmark rows: ping_pong, queued"
    assert "python -m" not in title and "/" not in title.replace("ping_pong", "")
    (legend,) = fig.legends
    assert all(ax.get_legend() is None for ax in fig.axes)  # not over the bars
    # The legend sits above the top panel.
    top = max(ax.get_position().y1 for ax in fig.axes)
    assert legend.get_window_extent().y0 >= top * fig.bbox.height - 1
    # Bars of one implementation have its one colour in both panels.
    by_label = {
        t.get_text(): h.get_facecolor()
        for t, h in zip(legend.get_texts(), legend.legend_handles, strict=True)
    }
    for ax in fig.axes:
        for bar in ax.patches:
            assert bar.get_facecolor() in by_label.values()
    pykka = by_label["pykka (threads)"]
    panels_with_pykka = [
        ax for ax in fig.axes if any(b.get_facecolor() == pykka for b in ax.patches)
    ]
    assert len(panels_with_pykka) == 2
    assert re.match(r"^(asyncio|trio): relative to ", fig.axes[0].get_title("left"))
