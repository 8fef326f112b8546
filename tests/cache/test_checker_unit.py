"""The coherence checker on its own (sim.cache.checker), without Unicorn or a compiler: a
cache model over plain arrays, a stand-in for the explaining and the cores, and each kind
of finding made happen through the model's own steps."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from komorebi.sim.cache.checker import (
    FLUSH_WROTE_STALE_BYTES,
    INVALIDATE_DROPPED_WRITES,
    READ_BEFORE_INVALIDATE,
    UNFLUSHED_WRITE,
    Checker,
)
from komorebi.sim.cache.events import CacheEvent, CacheEvents
from komorebi.sim.cache.model import CachedRegion
from komorebi.sim.image.dwarf import SourceLine
from komorebi.sim.layout import PAGE

SIZE = 3 * PAGE


@dataclass
class Region:
    name: str
    id: int
    offset: int
    size: int
    cache: CachedRegion


@dataclass
class Frame:
    source: SourceLine | None


class Explainer:
    """Every pc is a line of thread.c: line = pc // 4 (and the caller's, at ra)."""

    def users_line(self, pc: int, ra: int | None = None) -> SourceLine:
        return SourceLine("thread.c", pc // 4)

    def frames_of(self, pc: int, returns: tuple[int, ...]) -> list[Frame]:
        return [Frame(SourceLine("thread.c", pc // 4))]

    def user_frame(self, frames: list[Frame]) -> Frame:
        return frames[0]


class Core:
    def __init__(self, number: int, pc: int) -> None:
        self.number, self.pc = number, pc

    def users_frame(self, pc: int | None = None) -> Frame:
        return Frame(SourceLine("thread.c", (self.pc if pc is None else pc) // 4))

    def call_pc(self) -> int:
        return self.pc


class Engine(CachedRegion):
    """The model as a core's engine drives it: what each access raised (sim/cache/events.py)
    is heard at once, as the RUNNING core's at its pc (sim/native/events.c finds them)."""

    def hear(self, checker: Checker, running: Core) -> None:
        self.checker, self.running, self.events = checker, running, CacheEvents()
        self.events.attach(0, self)

    def touch(self, offset: int, size: int, write: bool, core=None) -> bool:
        writable = super().touch(offset, size, write, core)
        native = self.events.native
        for i in range(native.count):
            self.checker.heard(replace(CacheEvent.of(native.events[i]), core=self.running.number, pc=self.running.pc))
        native.count = 0
        return writable


def _setup(coherence="card", offset=0, size=SIZE):
    dram = np.zeros(SIZE, np.uint8)
    dram[:] = 7  # Python's data
    cache = Engine(np.zeros(SIZE, np.uint8), dram)
    if coherence == "strict":
        cache.start_prior_lines()
    region = Region("numbers", 0, offset, size, cache)
    running = Core(2, pc=40)
    checker = Checker(1, coherence, Explainer())
    checker.watch(region)
    cache.hear(checker, running)
    return checker, region, running


def test_a_read_before_an_invalidate_is_found_once_and_grows_to_every_page_read():
    checker, region, core = _setup()
    region.cache.access(0, write=False)
    core.pc = 80
    region.cache.access(2, write=False)
    [finding] = checker.findings
    assert (finding.kind, finding.cluster, finding.core, finding.region) == (READ_BEFORE_INVALIDATE, 1, 2, "numbers")
    assert (finding.start, finding.end) == (0, SIZE)  # pages 0 to 2
    assert (finding.file, finding.line) == ("thread.c", 10)  # the first read's line
    assert "kmx_invalidate(0)" in finding.message and "all 12288 bytes" in finding.message


def test_a_read_before_an_invalidate_names_the_lines_read():
    checker, region, core = _setup()
    region.cache.touch(100, 4, write=False)  # line 1
    region.cache.touch(2 * PAGE + 130, 200, write=False)  # lines 2 to 5 of page 2
    [finding] = checker.findings
    assert (finding.start, finding.end) == (64, 2 * PAGE + 6 * 64)  # from the first line read to the last
    assert f"(bytes 64 to {2 * PAGE + 6 * 64 - 1})" in finding.message


def test_no_read_finding_after_an_invalidate_or_a_write_first():
    checker, region, _ = _setup()
    region.cache.access(1, write=True)
    region.cache.access(1, write=False)  # the thread's own bytes: not Python's
    assert checker.findings == []
    region.cache.invalidate()
    region.cache.access(0, write=False)
    assert checker.findings == []


def test_an_unflushed_write_names_the_first_writer_and_the_lines():
    checker, region, _ = _setup()
    region.cache.access(1, write=True)
    region.cache.view[PAGE + 64 : PAGE + 70] = 1
    region.cache.write_pc[1], region.cache.write_core[1] = 400, 3
    lines, _ = region.cache.mark_unflushed()
    checker.unflushed(region, lines)
    [finding] = checker.findings
    assert (finding.kind, finding.core, finding.line) == (UNFLUSHED_WRITE, 3, 100)
    assert (finding.start, finding.end) == (PAGE + 64, PAGE + 128)
    assert "when the thread ended" in finding.message and "kmx_flush(0)" in finding.message


def test_a_submit_with_dirty_lines_names_the_submit_call():
    checker, region, _ = _setup()
    region.cache.access(0, write=True)
    region.cache.view[0] = 9
    region.cache.write_pc[0] = 4
    checker.unflushed(region, region.cache.dirty_lines(), submit_core=Core(0, pc=120))
    [finding] = checker.findings
    assert "when core 0 called kmx_submit at line 30" in finding.message


def test_an_invalidate_that_drops_dirty_lines():
    checker, region, _ = _setup()
    region.cache.access(2, write=True)
    region.cache.view[2 * PAGE] = 5
    lost = region.cache.invalidate()
    checker.dropped(region, lost, Core(1, pc=200))
    [finding] = checker.findings
    assert (finding.kind, finding.core, finding.line) == (INVALIDATE_DROPPED_WRITES, 1, 50)
    assert (finding.start, finding.end) == (2 * PAGE, 2 * PAGE + 64)


def test_a_strict_flush_of_stale_bytes_is_found_and_clipped_to_the_region():
    checker, region, _ = _setup("strict", offset=100, size=SIZE - 100)
    region.cache.touch(100, 4, write=True)  # the page is painted (prior lines), then written in part
    region.cache.view[100:104] = 1
    _, stale = region.cache.flush(find_stale=True, region_start=region.offset)
    checker.stale_flush(region, stale, Core(0, pc=12))
    [finding] = checker.findings
    assert finding.kind == FLUSH_WROTE_STALE_BYTES
    # Line 1 (span bytes 64 to 127) was written at bytes 100 to 103 only: its stale bytes
    # from the region's start on are span bytes 104 to 127, region bytes 4 to 27.
    assert (finding.start, finding.end) == (4, 28)
    assert "kmx_invalidate(0)" in finding.message


def test_findings_outside_the_region_bytes_are_not_reported():
    checker, region, _ = _setup(offset=PAGE, size=PAGE)
    region.cache.access(0, write=False)  # page 0 holds no byte of the region
    assert checker.findings == []
