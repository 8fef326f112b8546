"""What a thread prints with kmx_print: whole lines, each core's apart, to Python's
standard output with a `[cluster C, core N] ` prefix, and kept for `Thread.output`.

- Time is linear in what is printed: a core's unfinished line is kept in pieces, joined
  once when its newline comes (or when the thread ends).
- Memory is bounded. A line longer than LONGEST_LINE characters is cut there: that much is
  printed as a line of its own and the rest goes on as the next. What is kept for
  `Thread.output` is at most KEEP characters of the latest whole lines (km.Session's
  `output_limit`; None keeps everything); older lines are dropped from the start and
  counted in `dropped`. Everything printed reaches standard output as it comes, whatever
  is kept: redirect it to a file to have it all.
- Python's standard output is the host's. When it cannot be written (a closed pipe, a
  closed file) the thread goes on, its lines are still kept, and `host_error` says what
  happened (komorebi warns of it when the run stops). When `sys.stdout` is None (pythonw,
  a daemon) the lines are only kept, as Python's own print does nothing then.
"""

from __future__ import annotations

import sys
from collections import deque

LONGEST_LINE = 64 * 1024  # characters
KEEP = 1 << 20  # characters of the latest lines kept for Thread.output, by default


class Console:
    def __init__(self, cluster: int, cores: int, keep: int | None = KEEP) -> None:
        self.cluster = cluster
        self.keep = keep
        self.dropped = 0  # lines dropped from the start of what is kept
        self.host_error: BaseException | None = None  # writing to stdout failed
        self._lines: deque[str] = deque()
        self._kept = 0  # characters in _lines
        self._pending: dict[int, list[str]] = {core: [] for core in range(cores)}
        self._pending_size = dict.fromkeys(range(cores), 0)

    @property
    def text(self) -> str:
        """The kept lines, each with its newline, without prefixes."""
        return "".join(self._lines)

    def print(self, core: int, text: str) -> None:
        """TEXT printed by CORE: its whole lines go out now, the rest waits for more."""
        while text:
            newline = text.find("\n")
            piece = text if newline < 0 else text[:newline]
            room = LONGEST_LINE - self._pending_size[core]
            if len(piece) > room:  # the line is too long: cut it here
                self._add(core, piece[:room])
                self._end_line(core)
                text = text[room:]
                continue
            self._add(core, piece)
            if newline < 0:
                return
            self._end_line(core)
            text = text[newline + 1 :]

    def finish(self) -> None:
        """The thread ended: each core's unfinished line goes out as it is."""
        for core, pieces in self._pending.items():
            if pieces:
                self._end_line(core)

    def _add(self, core: int, piece: str) -> None:
        if piece:
            self._pending[core].append(piece)
            self._pending_size[core] += len(piece)

    def _end_line(self, core: int) -> None:
        line = "".join(self._pending[core])
        self._pending[core].clear()
        self._pending_size[core] = 0
        self._keep(line + "\n")
        self._write(f"[cluster {self.cluster}, core {core}] {line}\n")

    def _keep(self, line: str) -> None:
        self._lines.append(line)
        self._kept += len(line)
        if self.keep is None:
            return
        while self._kept > self.keep and self._lines:
            self._kept -= len(self._lines.popleft())
            self.dropped += 1

    def _write(self, text: str) -> None:
        out = sys.stdout
        if out is None or self.host_error is not None:
            return
        try:
            out.write(text)
            out.flush()
        except Exception as error:  # noqa: BLE001 - the host's trouble, not the thread's
            self.host_error = error
