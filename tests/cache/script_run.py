"""Scripts of memory operations run two ways: by a thread (tests/threads/script.c) and a
Tensix stand-in on the simulated card, and by a plain write-back cache written here a line
at a time (Reference). tests/cache/test_cache_vs_reference.py compares the two."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import komorebi as km
from tests.threads import THREADS, run_to_end

LINE, PAGE = 64, 4096
STALE = 0xA5
# what tests/threads/script.c does (its enum)
END, READ, WRITE, READ_BYTE, WRITE_BYTE, FLUSH, INVALIDATE, LINE_FLUSH, WRITE_PAGE, READ_PAGE, SYNC = range(11)
NAMES = {READ: "read", WRITE: "write", READ_BYTE: "read_byte", WRITE_BYTE: "write_byte", FLUSH: "flush",
         INVALIDATE: "invalidate", LINE_FLUSH: "line_flush", WRITE_PAGE: "write_page", READ_PAGE: "read_page"}
LOG_WORDS = 4096


@dataclass
class Step:
    """A step of a script: the core's operation (WHAT, OFFSET, VALUE), or the stand-in's
    noc calls at a hand-over (AGENT: ("write", offset, bytes) and ("read", offset, size))."""

    what: int
    offset: int = 0
    value: int = 0
    agent: list = field(default_factory=list)

    def __repr__(self) -> str:
        if self.what == SYNC:
            return f"agent{self.agent}"
        return f"{NAMES[self.what]}({self.offset}{', ' + hex(self.value) if self.what in (WRITE, WRITE_BYTE, WRITE_PAGE) else ''})"


class Reference:
    """A write-back cache a line at a time, as docs/memory-model.md says: a read or a write of a
    line not in the cache fills it from DRAM; a write makes the line dirty; a flush writes
    the dirty lines back and keeps them, clean; an invalidate drops every line; a line flush
    writes one line back if dirty, then drops it. Strict mode starts every line in the
    cache, clean, holding STALE bytes. What the thread and the stand-in see, and DRAM at
    the end (card mode hands the dirty lines back)."""

    def __init__(self, initial: np.ndarray, strict: bool) -> None:
        self.dram = initial.copy()
        self.lines = initial.size // LINE
        self.cached = np.full(self.lines, strict)
        self.dirty = np.zeros(self.lines, bool)
        self.cache = np.full(initial.size, STALE if strict else 0, np.uint8)
        self.strict = strict
        self.log: list[int] = []  # what the core's reads saw
        self.agent_reads: list[bytes] = []

    def _fill(self, offset: int, size: int) -> None:
        for line in range(offset // LINE, (offset + size - 1) // LINE + 1):
            if not self.cached[line]:
                self.cache[line * LINE : (line + 1) * LINE] = self.dram[line * LINE : (line + 1) * LINE]
                self.cached[line] = True

    def read(self, offset: int, size: int) -> bytes:
        self._fill(offset, size)
        return self.cache[offset : offset + size].tobytes()

    def write(self, offset: int, data: bytes) -> None:
        self._fill(offset, len(data))
        self.cache[offset : offset + len(data)] = np.frombuffer(data, np.uint8)
        self.dirty[offset // LINE : (offset + len(data) - 1) // LINE + 1] = True

    def _write_back(self, line: int) -> None:
        if self.cached[line] and self.dirty[line]:
            self.dram[line * LINE : (line + 1) * LINE] = self.cache[line * LINE : (line + 1) * LINE]
            self.dirty[line] = False

    def flush(self) -> None:
        for line in np.flatnonzero(self.dirty):
            self._write_back(int(line))

    def invalidate(self) -> None:
        self.cached[:] = False
        self.dirty[:] = False

    def line_flush(self, offset: int) -> None:
        line = offset // LINE
        self._write_back(line)
        self.cached[line] = False

    def step(self, step: Step) -> None:
        w, at, v = step.what, step.offset, step.value
        if w == READ:
            self.log.append(int.from_bytes(self.read(at, 8), "little"))
        elif w == WRITE:
            self.write(at, v.to_bytes(8, "little"))
        elif w == READ_BYTE:
            self.log.append(self.read(at, 1)[0])
        elif w == WRITE_BYTE:
            self.write(at, bytes([v & 0xFF]))
        elif w == FLUSH:
            self.flush()
        elif w == INVALIDATE:
            self.invalidate()
        elif w == LINE_FLUSH:
            self.line_flush(at)
        elif w == WRITE_PAGE:
            for i in range(0, PAGE, 8):
                self.write(at + i, ((v + i) % 2**64).to_bytes(8, "little"))
        elif w == READ_PAGE:
            total = 0
            for i in range(0, PAGE, 8):
                total = (total * 31 + int.from_bytes(self.read(at + i, 8), "little")) % 2**64
            self.log.append(total)
        elif w == SYNC:
            for call in step.agent:
                if call[0] == "write":
                    self.dram[call[1] : call[1] + len(call[2])] = np.frombuffer(call[2], np.uint8)
                else:
                    self.agent_reads.append(self.dram[call[1] : call[1] + call[2]].tobytes())

    def end(self) -> np.ndarray:
        """DRAM when the thread has ended: card mode hands every dirty line back."""
        if not self.strict:
            self.flush()
        return self.dram


@dataclass
class Outcome:
    log: list[int]
    agent_reads: list[bytes]
    dram: np.ndarray
    findings: list


def encode(steps: list[Step]) -> np.ndarray:
    rows = []
    for n, step in enumerate(steps):
        value = n + 1 if step.what == SYNC else step.value
        rows.append((step.what, step.offset, value & 0xFFFF_FFFF, value >> 32))
    rows.append((END, 0, 0, 0))
    return np.array(rows, dtype=np.uint32).reshape(-1)


def simulate(steps: list[Step], initial: np.ndarray, tmp_path: Path, **session) -> Outcome:
    """Run STEPS on the simulated card: the thread, and a stand-in doing the hand-overs."""
    syncs = [(n + 1, step.agent) for n, step in enumerate(steps) if step.what == SYNC]
    reads: list[bytes] = []

    def agent(noc):
        for number, calls in syncs:
            noc.wait("ctl", 0, number)
            for call in calls:
                if call[0] == "write":
                    noc.write("data", call[1], call[2])
                else:
                    reads.append(noc.read("data", call[1], call[2]).tobytes())
            noc.write("ctl", 4, np.uint32([number]))

    kernels = tmp_path / "kernels"
    kernels.mkdir(exist_ok=True)
    program = km.Program("script", kernels=kernels)
    program.thread(cluster=1, sources=[THREADS / "script.c"],
                   regions={"data": initial, "script": encode(steps), "ctl": 64, "log": 8 * LOG_WORDS})
    if syncs:
        program.noc_agent("tensix", agent, cluster=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)
        result, run = run_to_end(program, 600, **session)
    assert result.code == 0
    if syncs:
        assert run.agent("tensix").error is None, run.agent("tensix").error
    logged = sum(1 for step in steps if step.what in (READ, READ_BYTE, READ_PAGE))
    log = run.thread.read("log").view(np.uint64)[:logged].tolist()
    return Outcome(log, reads, run.thread.read("data"), run.findings)


def reference(steps: list[Step], initial: np.ndarray, strict: bool) -> Outcome:
    model = Reference(initial, strict)
    for step in steps:
        model.step(step)
    return Outcome(model.log, model.agent_reads, model.end(), [])
