"""A one-line progress bar for long client commands (``import``, ``bench``): done/total,
partitions/s and ETA, redrawn in place with ``\\r`` at most ten times a second."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["ProgressBar", "duration", "is_terminal"]

_BAR = 20


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (where a bar redrawn in place makes sense)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def duration(seconds: float) -> str:
    """``mm:ss`` (``h:mm:ss`` from an hour on)."""
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class ProgressBar:
    """``label [#####.....] done/total partitions rate/s ETA mm:ss`` on ``stream``; a bar that
    is not ``visible`` counts and times but writes nothing."""

    def __init__(
        self,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        *,
        visible: bool = True,
    ) -> None:
        self.stream = stream
        self.clock = clock
        self.visible = visible
        self.label = ""
        self.total = 0
        self.done = 0
        self._start = self._shown = 0.0
        self._width = 0  # the longest line drawn: a shorter one blanks what it leaves

    def start(self, label: str, total: int) -> None:
        """Begin a bar of ``total`` partitions and draw it."""
        self.label, self.total, self.done = label, total, 0
        self._start = self._shown = self.clock()
        self._draw()

    def advance(self, count: int) -> None:
        """``count`` more done; redrawn when 0.1 s have passed or all are done."""
        self.done += count
        now = self.clock()
        if now - self._shown >= 0.1 or self.done >= self.total:
            self._shown = now
            self._draw()

    @property
    def rate(self) -> float:
        """Partitions per second so far."""
        elapsed = self.clock() - self._start
        return self.done / elapsed if elapsed > 0 else 0.0

    def end(self, text: str | None = None) -> None:
        """End the bar's line: with ``text`` in its place, or the bar as it stands."""
        if not self.visible:
            return
        line = text if text is not None else self._line()
        self._write("\r" + line.ljust(self._width) + "\n")
        self._width = 0

    def _line(self) -> str:
        rate = self.rate
        left = self.total - self.done
        eta = duration(left / rate) if rate > 0 else "--:--"
        filled = int(_BAR * self.done / self.total) if self.total else _BAR
        bar = "#" * filled + "." * (_BAR - filled)
        return f"{self.label} [{bar}] {self.done}/{self.total} partitions {rate:.0f}/s ETA {eta}"

    def _draw(self) -> None:
        if not self.visible:
            return
        line = self._line()
        self._write("\r" + line.ljust(self._width))
        self._width = max(self._width, len(line))

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
