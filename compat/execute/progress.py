"""Progress of a long matrix: a live line on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


class Progress:
    """Thread-safe: units start and cells finish on worker threads. On a terminal, a
    live status line and a line per finished cell; in a log, a line per quarter."""

    def __init__(self, total: int, stream: TextIO | None = None, live: bool | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr  # the stderr of now, not of the first import
        self.live = self.stream.isatty() if live is None else live
        self.done = 0
        self.running: list[str] = []
        self.started = time.monotonic()
        self._lock = threading.Lock()

    def _elapsed(self) -> str:
        seconds = int(time.monotonic() - self.started)
        return f"{seconds // 60}:{seconds % 60:02d}"

    def _status(self) -> str:
        running = ", ".join(self.running) or "-"
        return f"[{self.done}/{self.total} cells, {self._elapsed()}] running: {running}"

    def _live_line(self) -> None:
        if self.live:
            self.stream.write("\r\033[K" + self._status()[:200])
            self.stream.flush()

    def _print(self, message: str) -> None:
        if self.live:
            self.stream.write("\r\033[K")
        self.stream.write(message + "\n")
        self._live_line()
        self.stream.flush()

    def start(self, cell: str) -> None:
        with self._lock:
            self.running.append(cell)
            self._live_line()

    def done_unit(self, label: str) -> None:
        """A unit of work (one worker process) ended; its cells finish when complete."""
        with self._lock:
            if label in self.running:
                self.running.remove(label)
            self._live_line()

    def note(self, message: str) -> None:
        """A line of its own, on a terminal and in a log alike (a phase starting)."""
        with self._lock:
            self._print(f"[{self.done}/{self.total} cells, {self._elapsed()}] {message}")

    def finish(self, cell: str, summary: str) -> None:
        with self._lock:
            if cell in self.running:
                self.running.remove(cell)
            self.done += 1
            # a log (CI, a pipe) gets a line per quarter of the cells, a terminal its live line
            quarter = self.done * 4 // max(1, self.total)
            if self.live or quarter > (self.done - 1) * 4 // max(1, self.total):
                done = f"[{self.done}/{self.total} cells, {self._elapsed()}]"
                self._print(f"{done} {cell}: {summary}")

    def close(self) -> None:
        with self._lock:
            if self.live:
                self.stream.write("\r\033[K")
                self.stream.flush()
