"""The progress bar of long client commands (``import``, ``bench``): label, bar, done/total
partitions, partitions/s and time left, drawn by rich on a terminal, at most ten times a
second; the finished bar gives way to a closing line."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

__all__ = ["ProgressBar", "is_terminal"]

#: Seconds between two redraws.
_REDRAW = 0.1


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (where a bar redrawn in place makes sense)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class ProgressBar:
    """A bar of partitions done on ``stream``; one that is not ``visible`` counts and times
    but writes nothing. ``clock`` times the rate and the time left."""

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
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def start(self, label: str, total: int) -> None:
        """Begin a bar of ``total`` partitions and draw it."""
        self.label, self.total, self.done = label, total, 0
        self._start = self._shown = self.clock()
        if not self.visible:
            return
        console = Console(file=self.stream, force_terminal=True, color_system=None, width=100)
        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TextColumn("partitions {task.fields[rate]}/s ETA"),
            TimeRemainingColumn(),
            console=console,
            get_time=lambda: self.clock(),
            auto_refresh=False,
            transient=True,
        )
        self._bar.start()
        self._task = self._bar.add_task(label, total=total, rate="0")
        self._bar.refresh()

    def advance(self, count: int) -> None:
        """``count`` more done; redrawn when 0.1 s have passed or all are done."""
        self.done += count
        if self._bar is None or self._task is None:
            return
        self._bar.update(self._task, completed=self.done, rate=f"{self.rate:.0f}")
        now = self.clock()
        if now - self._shown >= _REDRAW or self.done >= self.total:
            self._shown = now
            self._bar.refresh()

    @property
    def rate(self) -> float:
        """Partitions per second so far."""
        elapsed = self.clock() - self._start
        return self.done / elapsed if elapsed > 0 else 0.0

    def end(self, text: str | None = None) -> None:
        """Take the bar away and write ``text`` in its place (or where the bar stood)."""
        if self._bar is None:
            return
        self._bar.stop()
        self._bar = self._task = None
        line = text
        if line is None:
            line = f"{self.label}: {self.done}/{self.total} partitions {self.rate:.0f}/s"
        self.stream.write(line + "\n")
        self.stream.flush()
