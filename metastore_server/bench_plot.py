"""The PNG plot of ``metastore-server bench``, drawn without any plotting library.

Small multiples, one panel per operation: median latency (ms, linear y from 0) against the
partition count (log x), one coloured line per metastore. Text uses a small built-in bitmap font
(lower case, digits and some punctuation; upper case is drawn as lower case). The image is an
8-bit RGB PNG written with :mod:`zlib` and :mod:`struct`.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

Color = tuple[int, int, int]

WHITE: Color = (255, 255, 255)
BLACK: Color = (30, 30, 30)
GREY: Color = (120, 120, 120)
GRID: Color = (225, 225, 225)
PALETTE: tuple[Color, ...] = (
    (31, 119, 180),
    (230, 120, 20),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
)

# 5 x 9 glyphs ('#' on): rows 0-6 above the baseline, 7-8 below (descenders, '_').
_GLYPHS: dict[str, str] = {
    "a": "...../...../.###./....#/.####/#...#/.####",
    "b": "#..../#..../####./#...#/#...#/#...#/####.",
    "c": "...../...../.####/#..../#..../#..../.####",
    "d": "....#/....#/.####/#...#/#...#/#...#/.####",
    "e": "...../...../.###./#...#/#####/#..../.####",
    "f": "..##./.#.../####./.#.../.#.../.#.../.#...",
    "g": "...../...../.####/#...#/#...#/#...#/.####/....#/.###.",
    "h": "#..../#..../####./#...#/#...#/#...#/#...#",
    "i": "..#../...../.##../..#../..#../..#../.###.",
    "j": "...#./...../..##./...#./...#./...#./...#./#..#./.##..",
    "k": "#..../#..../#..#./#.#../##.../#.#../#..#.",
    "l": ".##../..#../..#../..#../..#../..#../.###.",
    "m": "...../...../##.#./#.#.#/#.#.#/#.#.#/#.#.#",
    "n": "...../...../####./#...#/#...#/#...#/#...#",
    "o": "...../...../.###./#...#/#...#/#...#/.###.",
    "p": "...../...../####./#...#/#...#/#...#/####./#..../#....",
    "q": "...../...../.####/#...#/#...#/#...#/.####/....#/....#",
    "r": "...../...../#.##./##..#/#..../#..../#....",
    "s": "...../...../.####/#..../.###./....#/####.",
    "t": ".#.../.#.../####./.#.../.#.../.#..#/..##.",
    "u": "...../...../#...#/#...#/#...#/#..##/.##.#",
    "v": "...../...../#...#/#...#/#...#/.#.#./..#..",
    "w": "...../...../#...#/#.#.#/#.#.#/#.#.#/.#.#.",
    "x": "...../...../#...#/.#.#./..#../.#.#./#...#",
    "y": "...../...../#...#/#...#/#...#/#...#/.####/....#/.###.",
    "z": "...../...../#####/...#./..#../.#.../#####",
    "0": ".###./#...#/#..##/#.#.#/##..#/#...#/.###.",
    "1": "..#../.##../..#../..#../..#../..#../.###.",
    "2": ".###./#...#/....#/...#./..#../.#.../#####",
    "3": "####./....#/....#/.###./....#/....#/####.",
    "4": "...#./..##./.#.#./#..#./#####/...#./...#.",
    "5": "#####/#..../####./....#/....#/#...#/.###.",
    "6": "..##./.#.../#..../####./#...#/#...#/.###.",
    "7": "#####/....#/...#./..#../.#.../.#.../.#...",
    "8": ".###./#...#/#...#/.###./#...#/#...#/.###.",
    "9": ".###./#...#/#...#/.####/....#/...#./.##..",
    " ": "",
    ".": "...../...../...../...../...../.##../.##..",
    ",": "...../...../...../...../...../.##../.##../.#...",
    ":": "...../.##../.##../...../.##../.##../.....",
    "_": "...../...../...../...../...../...../...../#####",
    "-": "...../...../...../.###.",
    "+": "...../..#../..#../#####/..#../..#..",
    "=": "...../...../#####/...../#####",
    "/": "....#/...#./...#./..#../.#.../.#.../#....",
    "(": "...#./..#../.#.../.#.../.#.../..#../...#.",
    ")": ".#.../..#../...#./...#./...#./..#../.#...",
    "[": ".###./.#.../.#.../.#.../.#.../.#.../.###.",
    "]": ".###./...#./...#./...#./...#./...#./.###.",
    "%": "##..#/##.#./...#./..#../.#.../.#.##/#..##",
    "#": ".#.#./#####/.#.#./.#.#./#####/.#.#.",
    "<": "...#./..#../.#.../#..../.#.../..#../...#.",
    ">": ".#.../..#../...#./....#/...#./..#../.#...",
    "?": ".###./#...#/....#/...#./..#../...../..#..",
}
_UNKNOWN = "#####/#...#/#...#/#...#/#...#/#...#/#####"
GLYPH_W, GLYPH_H, ADVANCE = 5, 9, 6


def _glyph(ch: str) -> list[str]:
    pattern = _GLYPHS.get(ch.lower(), _UNKNOWN)
    return pattern.split("/") if pattern else []


class Canvas:
    """An RGB image in memory with the few drawing primitives the plot needs."""

    def __init__(self, width: int, height: int, background: Color = WHITE) -> None:
        self.width = width
        self.height = height
        self.pixels = bytearray(bytes(background) * (width * height))

    def put(self, x: int, y: int, color: Color) -> None:
        """Set one pixel (ignored outside the image)."""
        if 0 <= x < self.width and 0 <= y < self.height:
            i = (y * self.width + x) * 3
            self.pixels[i : i + 3] = bytes(color)

    def rect(self, x0: int, y0: int, x1: int, y1: int, color: Color) -> None:
        """Fill the rectangle [x0, x1] x [y0, y1]."""
        x0, x1 = max(0, min(x0, x1)), min(self.width - 1, max(x0, x1))
        y0, y1 = max(0, min(y0, y1)), min(self.height - 1, max(y0, y1))
        if x0 > x1:
            return
        row = bytes(color) * (x1 - x0 + 1)
        for y in range(y0, y1 + 1):
            i = (y * self.width + x0) * 3
            self.pixels[i : i + len(row)] = row

    def line(self, x0: int, y0: int, x1: int, y1: int, color: Color, width: int = 1) -> None:
        """A straight line (Bresenham), ``width`` pixels thick."""
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err = dx + dy
        lo, hi = -(width // 2), (width - 1) // 2
        while True:
            if width == 1:
                self.put(x0, y0, color)
            else:
                self.rect(x0 + lo, y0 + lo, x0 + hi, y0 + hi, color)
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def dashed_hline(self, x0: int, x1: int, y: int, color: Color) -> None:
        """A dotted horizontal line (grid)."""
        for x in range(x0, x1 + 1, 3):
            self.put(x, y, color)

    def text(self, x: int, y: int, text: str, color: Color = BLACK, scale: int = 1) -> None:
        """``text`` with its top-left corner at (x, y)."""
        for n, ch in enumerate(text):
            for row, bits in enumerate(_glyph(ch)):
                for col, bit in enumerate(bits):
                    if bit == "#":
                        px, py = x + (n * ADVANCE + col) * scale, y + row * scale
                        self.rect(px, py, px + scale - 1, py + scale - 1, color)

    @staticmethod
    def text_width(text: str, scale: int = 1) -> int:
        """Width in pixels of ``text``."""
        return max(0, len(text) * ADVANCE - 1) * scale

    def png(self) -> bytes:
        """The image as PNG bytes (8-bit RGB, no filtering)."""
        stride = self.width * 3
        raw = b"".join(
            b"\x00" + bytes(self.pixels[y * stride : (y + 1) * stride]) for y in range(self.height)
        )

        def chunk(kind: bytes, data: bytes) -> bytes:
            crc = zlib.crc32(kind + data) & 0xFFFFFFFF
            return struct.pack("!I", len(data)) + kind + data + struct.pack("!I", crc)

        header = struct.pack("!IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b"")
        )


# --------------------------------------------------------------------------- axes


def nice_step(span: float, ticks: int = 5) -> float:
    """A 1, 2 or 5 times a power of ten step giving about ``ticks`` ticks over ``span``."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def format_count(n: float) -> str:
    """100, 1k, 10k, 2.5m..."""
    for suffix, scale in (("m", 1e6), ("k", 1e3)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f}{suffix}" if value == int(value) else f"{value:.1f}{suffix}"
    return f"{n:.0f}"


def format_ms(value: float, step: float) -> str:
    """A y tick label with as many decimals as the step needs."""
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return f"{value:.{decimals}f}"


# --------------------------------------------------------------------------- the plot


@dataclass(frozen=True)
class PlotLayout:
    """Panel sizes in pixels."""

    panel_w: int = 310
    panel_h: int = 250
    columns: int = 5
    margin: int = 16
    header_h: int = 64


Series = Mapping[str, Mapping[int, float]]  # metastore -> partitions -> median ms


def plot_size(panels: int, layout: PlotLayout = PlotLayout()) -> tuple[int, int]:
    """(width, height) of a plot of ``panels`` panels."""
    cols = max(1, min(layout.columns, panels))
    rows = max(1, -(-panels // cols))
    return (
        2 * layout.margin + cols * layout.panel_w,
        layout.header_h + rows * layout.panel_h + layout.margin,
    )


def _panel(
    canvas: Canvas,
    x: int,
    y: int,
    layout: PlotLayout,
    title: str,
    series: Series,
    colors: Mapping[str, Color],
) -> None:
    left, right = x + 54, x + layout.panel_w - 14
    top, bottom = y + 36, y + layout.panel_h - 36
    canvas.text(x + (layout.panel_w - canvas.text_width(title, 2)) // 2, y + 4, title, scale=2)
    points = [(n, ms) for line in series.values() for n, ms in line.items() if math.isfinite(ms)]
    counts = sorted({n for line in series.values() for n in line})
    if not points or not counts:
        canvas.rect(left, bottom, right, bottom, GREY)
        canvas.text(left + 8, (top + bottom) // 2, "no data", GREY)
        return
    lo, hi = math.log10(min(counts)), math.log10(max(counts))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.06
    lo, hi = lo - pad, hi + pad
    top_ms = max(ms for _, ms in points)
    step = nice_step(top_ms if top_ms > 0 else 1.0)
    y_max = step * max(1, math.ceil(top_ms / step * 1.05 - 1e-9))

    def px(n: int) -> int:
        return round(left + (math.log10(n) - lo) / (hi - lo) * (right - left))

    def py(ms: float) -> int:
        return round(bottom - ms / y_max * (bottom - top))

    ticks = round(y_max / step)
    for i in range(ticks + 1):
        value = i * step
        ty = py(value)
        if i:
            canvas.dashed_hline(left, right, ty, GRID)
        label = format_ms(value, step)
        canvas.text(left - 6 - canvas.text_width(label), ty - 3, label, GREY)
        canvas.rect(left - 3, ty, left - 1, ty, GREY)
    for n in counts:
        tx = px(n)
        label = format_count(n)
        canvas.rect(tx, bottom + 1, tx, bottom + 3, GREY)
        canvas.text(tx - canvas.text_width(label) // 2, bottom + 6, label, GREY)
    canvas.rect(left, top, left, bottom, GREY)
    canvas.rect(left, bottom, right, bottom, GREY)
    axis = "partitions (log)"
    canvas.text((left + right - canvas.text_width(axis)) // 2, bottom + 20, axis, GREY)
    canvas.text(left - 6 - canvas.text_width("ms"), top - 14, "ms", GREY)
    for name, line in series.items():
        color = colors[name]
        pts = [(px(n), py(ms)) for n, ms in sorted(line.items()) if math.isfinite(ms)]
        for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
            canvas.line(x0, y0, x1, y1, color, width=2)
        for cx, cy in pts:
            canvas.rect(cx - 3, cy - 3, cx + 3, cy + 3, color)


def render(
    panels: Mapping[str, Series],
    metastores: Sequence[str],
    title: str = "median latency",
    layout: PlotLayout = PlotLayout(),
) -> Canvas:
    """One panel per operation (``panels``: operation -> metastore -> partitions -> median
    ms), a legend of ``metastores`` in the header."""
    width, height = plot_size(len(panels), layout)
    canvas = Canvas(width, height)
    colors = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(metastores)}
    canvas.text(layout.margin, 10, title, scale=2)
    lx, ly = layout.margin, 38
    for name in metastores:
        canvas.rect(lx, ly + 2, lx + 18, ly + 6, colors[name])
        canvas.text(lx + 24, ly - 2, name, scale=2)
        lx += 24 + canvas.text_width(name, 2) + 24
    cols = max(1, min(layout.columns, len(panels)))
    for i, (op, series) in enumerate(panels.items()):
        row, col = divmod(i, cols)
        _panel(
            canvas,
            layout.margin + col * layout.panel_w,
            layout.header_h + row * layout.panel_h,
            layout,
            op,
            series,
            colors,
        )
    return canvas


def write_png(
    path: Path,
    panels: Mapping[str, Series],
    metastores: Sequence[str],
    title: str = "median latency",
) -> tuple[int, int]:
    """Render the plot into ``path``; its (width, height)."""
    canvas = render(panels, metastores, title)
    path.write_bytes(canvas.png())
    return canvas.width, canvas.height
