"""The PNG plot of ``metastore-server bench``, drawn with matplotlib (the optional ``[bench]``
extra: ``pip install 'hbase-metastore[bench]'``).

Small multiples, one panel per operation: median latency (ms, linear y from 0) against the
partition count (log x), one line per metastore, a shared legend above naming what each line is
(``series_label``: ours or a reference HMS, its version, and host:port).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from metastore_server.distribution import install_hint

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Series = Mapping[str, Mapping[int, float]]  # metastore -> partitions -> median ms

#: How to get the plot when matplotlib is missing.
INSTALL_HINT = f"matplotlib is needed for the plot: {install_hint('bench')}"

_COLUMNS = 5
_PANEL_INCHES = (3.1, 2.5)
_HEADER_INCHES = 0.8
_DPI = 100


def available() -> bool:
    """Whether matplotlib can be imported (the ``[bench]`` extra is installed)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def plot_size(panels: int) -> tuple[int, int]:
    """(width, height) in pixels of a plot of ``panels`` panels."""
    cols = max(1, min(_COLUMNS, panels))
    rows = max(1, -(-panels // cols))
    width, height = _inches(cols, rows)
    return round(width * _DPI), round(height * _DPI)


def _inches(cols: int, rows: int) -> tuple[float, float]:
    return cols * _PANEL_INCHES[0], rows * _PANEL_INCHES[1] + _HEADER_INCHES


def series_label(label: str, identity: str) -> str:
    """A line's legend text: what the metastore is (``identity``, e.g. ``ours: hbase-metastore
    1.0``; empty when it did not say) and where (``label``, host:port)."""
    return f"{identity} ({label})" if identity else f"{label} (did not say what it is)"


def format_count(n: float) -> str:
    """A partition count as a short label: 1k, 10k, 1M."""
    for size, unit in ((1_000_000, "M"), (1_000, "k")):
        if n >= size:
            value = n / size
            return f"{value:.0f}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return f"{n:.0f}"


def write_png(
    path: Path,
    panels: Mapping[str, Series],
    metastores: Sequence[str],
    title: str = "median latency",
    legend: Mapping[str, str] | None = None,
) -> tuple[int, int]:
    """Draw the plot into ``path`` (``panels``: operation -> metastore -> partitions ->
    median ms; ``legend``: each metastore's legend text, default its name); its (width,
    height) in pixels. ImportError without matplotlib."""
    figure = draw(panels, metastores, title, legend)
    figure.savefig(path, format="png")
    return plot_size(max(1, len(panels)))


def draw(
    panels: Mapping[str, Series],
    metastores: Sequence[str],
    title: str = "median latency",
    legend: Mapping[str, str] | None = None,
) -> Figure:
    """The matplotlib Figure of ``write_png``."""
    from matplotlib.figure import Figure  # no pyplot: no global state, no display needed

    count = max(1, len(panels))
    cols = max(1, min(_COLUMNS, count))
    rows = max(1, -(-count // cols))
    figure = Figure(figsize=_inches(cols, rows), dpi=_DPI)
    top = 1 - _HEADER_INCHES / _inches(cols, rows)[1]
    grid = figure.add_gridspec(
        rows, cols, left=0.05, right=0.99, top=top, hspace=0.6, wspace=0.35
    )
    figure.suptitle(title, x=0.01, ha="left", fontsize=12)
    lines = {}
    for i, (operation, series) in enumerate(panels.items()):
        axes = figure.add_subplot(grid[divmod(i, cols)])
        axes.set_title(operation, fontsize=9)
        axes.set_xscale("log")
        axes.tick_params(labelsize=7)
        axes.grid(axis="y", linestyle=":", color="0.85")
        counts = sorted({n for line in series.values() for n in line})
        if counts:
            axes.set_xticks(counts, [format_count(n) for n in counts])
            axes.minorticks_off()
        for name in metastores:
            points = sorted((n, ms) for n, ms in series.get(name, {}).items() if math.isfinite(ms))
            if points:
                (lines[name],) = axes.plot(*zip(*points, strict=True), marker="o", label=name)
        axes.set_ylim(bottom=0)  # after the lines: the top follows them
        if not any(series.values()):
            axes.text(0.5, 0.5, "no data", ha="center", va="center", transform=axes.transAxes)
        axes.set_xlabel("partitions (log)", fontsize=7)
        axes.set_ylabel("ms", fontsize=7)
    if lines:
        texts = [(legend or {}).get(name, name) for name in lines]
        figure.legend(
            list(lines.values()), texts, loc="upper right", ncols=min(len(lines), 2), fontsize=9
        )
    return figure
