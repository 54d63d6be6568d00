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


#: One colour per implementation, the same in every panel of every chart
#: (the light variants a lighter shade of their plain one). Others get the
#: next free colour of ``_SPARE``, in name order over the whole report.
COLOURS = {
    "ours": "#1f77b4",
    "asyncio.Queue": "#7f7f7f",
    "asyncio.Queue (light)": "#c7c7c7",
    "anyio": "#ff7f0e",
    "anyio (light)": "#ffbb78",
    "trio": "#2ca02c",
    "trio (light)": "#98df8a",
    "pykka (threads)": "#d62728",
    "nats-py": "#9467bd",
}
_SPARE = ("#8c564b", "#e377c2", "#17becf", "#bcbd22", "#9edae5", "#c5b0d5")
#: Width of the figure in inches: at its dpi, about the width of a page of
#: the documentation site, so nothing is scaled down to illegible.
WIDTH = 8.0


def colours(names: Sequence[str]) -> dict[str, str]:
    """A colour for each implementation name: ``COLOURS``, else a spare one."""
    out = {name: COLOURS[name] for name in names if name in COLOURS}
    spare = iter(_SPARE)
    for name in sorted(set(names) - set(out)):
        out[name] = next(spare, "#000000")
    return out


def write_chart(report: Report, path: Path) -> Path | None:
    """Draw the chart to ``path``; None if nothing can be drawn.

    One panel per backend, stacked, each the figure's full width; one legend
    for all of them above the panels, outside the bars; the title names the
    workload (``report.title``), never a command line.
    """
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
    from matplotlib.patches import Patch

    panels = [
        (b, [r for r in report.on(b) if r.ok and reference_of(r)])
        for b in report.backends()
    ]
    panels = [(b, rs) for b, rs in panels if rs]
    if not panels:
        return None
    drawn = [[n for n in impl_columns(rs) if n not in REFERENCES] for _, rs in panels]
    palette = colours([n for names in drawn for n in names])
    # Inches: each panel as tall as its bars need; above them the title and
    # the legend, between them room for a panel's title and ticks.
    heights = [
        0.35 + len(rs) * (0.08 * max(1, len(names)) + 0.12)
        for (_, rs), names in zip(panels, drawn, strict=True)
    ]
    legend_rows = -(-len(palette) // 4)
    top, gap, bottom = 0.75 + 0.3 * legend_rows, 0.65, 0.6
    total = top + sum(heights) + gap * (len(panels) - 1) + bottom
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(WIDTH, total),
        squeeze=False,
        sharex=True,
        gridspec_kw={"height_ratios": heights},
    )
    fig.subplots_adjust(
        right=0.97,
        top=1 - top / total,
        bottom=bottom / total,
        hspace=gap / (sum(heights) / len(panels)),
    )
    for ax, (backend, results), names in zip(axes[:, 0], panels, drawn, strict=True):
        _panel(ax, backend, results, names, palette)
    axes[-1, 0].set_xlabel(
        "time relative to the baseline (log scale): left of 1x is faster",
        fontsize=10,
    )
    fig.suptitle(report.title, fontsize=12, fontweight="bold", y=1 - 0.12 / total)
    legend = [Patch(color=palette[name], label=name) for name in palette]
    fig.legend(
        handles=legend,
        loc="upper center",
        bbox_to_anchor=(0.5, 1 - 0.42 / total),
        ncols=min(len(legend), 4),
        fontsize=10,
        frameon=False,
    )
    # Room on the left for the longest row name, measured as drawn.
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    widest = max(
        label.get_window_extent(renderer).width
        for ax in axes[:, 0]
        for label in ax.get_yticklabels()
    )
    fig.subplots_adjust(left=min(0.6, (widest + 36) / fig.bbox.width))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


#: How a panel names its baseline.
BASELINE_NAMES = {
    "asyncio.Queue": "asyncio.Queue tasks",
    "trio": "Trio memory channels",
}


def _panel(
    ax: object,
    backend: str,
    results: Sequence[RowResult],
    names: Sequence[str],
    palette: dict[str, str],
) -> None:
    from matplotlib.axes import Axes
    from matplotlib.ticker import FuncFormatter

    assert isinstance(ax, Axes)
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
                color=palette[name],
                capsize=2,
                error_kw={"linewidth": 0.8},
            )
    ax.axvline(1.0, color="black", linewidth=0.9)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.tick_params(axis="x", labelsize=9, labelbottom=True)
    ax.set_yticks(list(ys), [r.row.name for r in results], fontsize=9.5)
    ax.invert_yaxis()
    refs = sorted({reference_of(r) or "" for r in results})
    baseline = ", ".join(BASELINE_NAMES.get(ref, ref) for ref in refs)
    ax.set_title(f"{backend}: relative to {baseline} (1x)", fontsize=11, loc="left")
    ax.grid(axis="x", which="both", alpha=0.3)
