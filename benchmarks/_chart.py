"""The PNG chart: each row's time relative to the hand-written baseline.

One panel per backend. The baseline is asyncio.Queue tasks on asyncio and
uvloop and Trio's memory channels on trio (the first of :data:`REFERENCES` that
the row has); every other implementation is a bar at its time ratio to it
(median of per-round ratios, whiskers at min and max), on a log scale, so 1.0
means "as fast as the baseline" and left of it is faster.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from ._report import Report, impl_columns
from ._runner import RowResult

__all__ = ["REFERENCES", "write_chart"]

REFERENCES = ("asyncio.Queue", "trio")


def reference_of(result: RowResult) -> str | None:
    """The implementation a row's bars are relative to on its backend."""
    return next((name for name in REFERENCES if name in result.impls), None)


def write_chart(report: Report, path: Path) -> Path | None:
    """Draw the chart to ``path``; None if nothing can be drawn."""
    try:
        import matplotlib
    except ImportError:
        print(
            "benchmarks: no chart: matplotlib is not installed: pip install "
            'matplotlib, or the test extra: pip install -e ".[test]"',
            file=sys.stderr,
        )
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        (b, [r for r in report.on(b) if r.ok and reference_of(r)])
        for b in report.backends()
    ]
    panels = [(b, rs) for b, rs in panels if rs]
    if not panels:
        return None
    height = max(len(rs) for _, rs in panels)
    fig, axes = plt.subplots(
        1,
        len(panels),
        figsize=(5.5 * len(panels), 1.5 + 0.42 * height),
        squeeze=False,
        sharex=True,
    )
    for ax, (backend, results) in zip(axes[0], panels, strict=True):
        _panel(ax, backend, results)
    fig.suptitle(f"{report.command}\n(time / baseline time, log scale)", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _panel(ax: object, backend: str, results: Sequence[RowResult]) -> None:
    from matplotlib.axes import Axes
    from matplotlib.ticker import FuncFormatter

    assert isinstance(ax, Axes)
    names = [n for n in impl_columns(results) if n not in REFERENCES[:1]]
    ys = range(len(results))
    width = 0.8 / max(1, len(names))
    for k, name in enumerate(names):
        medians, lows, highs, positions = [], [], [], []
        for y, r in zip(ys, results, strict=True):
            ref = reference_of(r)
            if ref is None or name == ref or name not in r.impls:
                continue
            s = r.ratio(name, ref)
            positions.append(y + (k - (len(names) - 1) / 2) * width)
            medians.append(s.median)
            lows.append(s.median - s.min)
            highs.append(s.max - s.median)
        if positions:
            ax.barh(
                positions,
                medians,
                height=width,
                xerr=[lows, highs],
                label=name,
                capsize=2,
            )
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.set_yticks(list(ys), [r.row.name for r in results], fontsize=7)
    ax.invert_yaxis()
    refs = sorted({reference_of(r) or "" for r in results})
    ax.set_title(f"{backend} (baseline: {', '.join(refs)})", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(axis="x", which="both", alpha=0.3)
