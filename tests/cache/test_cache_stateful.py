"""The fast cache model (sim.cache.model) against a reference model that is obviously right: a
dictionary of 64-byte lines. Hypothesis drives both through random reads, writes,
invalidates, flushes and hand-backs at random offsets and sizes, in both modes, and after
every step compares DRAM, what a core reads, the lines each operation reported, the
checker's events (reads before any invalidate) and the stale bytes a flush writes back (those
not written since the line was prior).

The reference keeps, for each cached line, its bytes and its bytes when it was last clean;
a line is dirty when the two differ, or when a store to it was seen since while it still
held prior bytes the thread had not written over (strict mode watches such a line). That
is the model's documented rule (a store of a line's own bytes on the fast path leaves it
clean), said the simplest way.
"""

from __future__ import annotations

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from komorebi.sim.cache.events import CacheEvent, CacheEvents, Kind
from komorebi.sim.cache.model import PRIOR_BYTE, PRIOR_WORD, CachedRegion, Holding
from komorebi.sim.memory.dram import Snapshot, Storage, View
from komorebi.sim.layout import LINE, PAGE

PAGES = 3
# How the view is held (sim.cache.model, sim.memory.dram); direct only in card mode.
HOLDS = ("copy", "shared", "snapshot", "direct-zeros", "direct-snapshot")
SIZE = PAGES * PAGE
LINES = SIZE // LINE


class Reference:
    def __init__(self, dram: bytes, strict: bool) -> None:
        self.dram = bytearray(dram)
        # line -> [bytes now, bytes when last clean, prior (not written back since)?, the bytes
        # written since prior (a bit each), a store seen since clean (a watched page's: dirty
        # whatever it stored)]
        self.lines: dict[int, list] = {}
        if strict:
            for line in range(LINES):
                self.lines[line] = [bytes([PRIOR_BYTE]) * LINE, bytes([PRIOR_BYTE]) * LINE, True, 0, False]
        self.invalidated = False
        self.written_pages: set[int] = set()
        self.early_reads: set[int] = set()  # pages read before any invalidate or write

    def _line(self, line: int) -> list:
        if line not in self.lines:  # a fill: the whole page comes in, as on the model
            page = line * LINE // PAGE
            for other in range(page * PAGE // LINE, (page + 1) * PAGE // LINE):
                if other not in self.lines:
                    data = bytes(self.dram[other * LINE : (other + 1) * LINE])
                    self.lines[other] = [data, data, False, 0, False]
        return self.lines[line]

    def read(self, offset: int, size: int) -> bytes:
        for page in range(offset // PAGE, (offset + size - 1) // PAGE + 1):
            if not self.invalidated and page not in self.written_pages:
                self.early_reads.add(page)
        return self.peek(offset, size)

    def peek(self, offset: int, size: int) -> bytes:
        """The bytes a read would see, without being a read of the thread's."""
        out = bytearray()
        for address in range(offset, offset + size):
            out.append(self._line(address // LINE)[0][address % LINE])
        return bytes(out)

    def write(self, offset: int, data: bytes) -> None:
        for page in range(offset // PAGE, (offset + len(data) - 1) // PAGE + 1):
            self.written_pages.add(page)
        for i, value in enumerate(data):
            address = offset + i
            entry = self._line(address // LINE)
            line = bytearray(entry[0])
            line[address % LINE] = value
            entry[0] = bytes(line)
            # (a store to a line that still holds prior bytes is seen: dirty, whatever it stores)
            entry[4] = entry[4] or (entry[2] and entry[3] != (1 << LINE) - 1)
            entry[3] |= 1 << address % LINE

    def dirty(self) -> list[int]:
        return sorted(line for line, (now, clean, _, _, seen) in self.lines.items() if now != clean or seen)

    def stale_bytes(self, lines: list[int]) -> list[int]:
        """The bytes of prior LINES the thread has not written since (what a flush writes back
        of the stale bytes: the model knows which bytes were written)."""
        out = []
        for line in lines:
            _, _, prior, written, _ = self.lines[line]
            out += [line * LINE + byte for byte in range(LINE) if prior and not written >> byte & 1]
        return out

    def flush(self) -> list[int]:
        dirty = self.dirty()
        for line in dirty:
            entry = self.lines[line]
            self.dram[line * LINE : (line + 1) * LINE] = entry[0]
            entry[1] = entry[0]
            entry[2], entry[4] = False, False  # (written back: DRAM's bytes now, none stale, clean)
        return dirty

    def invalidate(self) -> list[int]:
        lost = self.dirty()
        self.lines.clear()
        self.invalidated = True
        return lost

    def hand_back(self) -> list[int]:
        written = self.flush()
        self.lines.clear()
        return written


class CacheMachine(RuleBasedStateMachine):
    @initialize(strict=st.booleans(), seed=st.integers(0, 2**32 - 1), hold=st.sampled_from(HOLDS))
    def start(self, strict, seed, hold):
        dram = np.random.default_rng(seed).integers(0, 256, SIZE, dtype=np.uint8)
        dram[: 2 * LINE] = PRIOR_BYTE  # some DRAM that already holds the prior lines' pattern
        if hold.startswith("direct"):  # card mode: the engines map DRAM itself
            strict = False
            if hold == "direct-snapshot":
                self.storage = Storage(SIZE, Snapshot(dram))
            else:  # zeros: anonymous memory while the thread runs, as in a run
                dram[:] = 0
                self.storage = Storage(SIZE, anonymous=True)
            self.view = self.dram = self.storage.dram
            self.model = CachedRegion(self.view, self.dram, Holding.DIRECT, storage=self.storage)
        elif hold == "copy":  # a view of its own
            self.storage = None
            self.view = np.zeros(SIZE, dtype=np.uint8)
            self.dram = dram.copy()
            self.model = CachedRegion(self.view, self.dram)
        else:  # the view is a copy-on-write mapping of DRAM (sim.memory.dram), as in a run
            if hold == "snapshot":  # DRAM starts as a snapshot of an array
                self.storage = Storage(SIZE, Snapshot(dram))
            else:  # a region that starts as zeros: DRAM is a file of its own
                dram[:] = 0
                self.storage = Storage(SIZE)
            view = View(self.storage)
            self.view = view.array
            self.dram = self.storage.dram
            self.model = CachedRegion(self.view, self.dram, Holding.COPY_ON_WRITE, memory=view)
        self.early_reads: list[int] = []  # (the model's events: its reads before any invalidate, by page)
        self.events = CacheEvents()
        self.events.attach(0, self.model)
        self.events.listeners.append(self)
        if strict:
            self.model.start_prior_lines()
        self.reference = Reference(dram.tobytes(), strict)

    def _access(self, offset: int, size: int, write: bool) -> None:
        """What a core's engine does: the fill hook for each page, and the watch of a
        watched page (sim/native/watch.c: the bytes a write wrote); then the bytes."""
        self.model.touch(offset, size, write)

    @rule(data=st.data())
    def read(self, data):
        offset = data.draw(st.integers(0, SIZE - 1))
        size = data.draw(st.integers(1, min(300, SIZE - offset)))
        self._access(offset, size, write=False)
        got = self.view[offset : offset + size].tobytes()
        assert got == self.reference.read(offset, size)

    @rule(data=st.data())
    def write(self, data):
        offset = data.draw(st.integers(0, SIZE - 1))
        size = data.draw(st.integers(1, min(300, SIZE - offset)))
        kind = data.draw(st.sampled_from(["random", "same", "prior"]))
        if kind == "random":
            payload = data.draw(st.binary(min_size=size, max_size=size))
        elif kind == "same":  # the line's own bytes: the documented approximation
            payload = self.reference.peek(offset, size)
        else:
            payload = bytes([PRIOR_BYTE]) * size
        self._access(offset, size, write=True)
        self.view[offset : offset + size] = np.frombuffer(payload, dtype=np.uint8)
        self.reference.write(offset, payload)

    @rule()
    def flush(self):
        lines = self.model.dirty_lines()
        assert lines.tolist() == self.reference.dirty()
        stale = self.reference.stale_bytes(lines.tolist())
        flushed, stale_bytes = self.model.flush(find_stale=True)
        assert flushed.tolist() == self.reference.flush()
        assert sorted(stale_bytes.tolist()) == stale

    # (anonymous DRAM moves into its file when read, which ends a run: tests/memory/test_memory_cost.py)
    @precondition(lambda self: getattr(self, "storage", None) is not None and not self.storage.anonymous)
    @rule(data=st.data())
    def read_back(self, data):
        """What run.thread.read returns after the run's hand-back: DRAM's bytes, in an
        array of the caller's own."""
        self.hand_back()
        copy = self.storage.copy(0, SIZE)
        assert copy.tobytes() == bytes(self.reference.dram)
        offset = data.draw(st.integers(0, SIZE - 1))
        copy[offset] ^= 0xFF  # the caller writes into it: DRAM does not change

    @rule()
    def invalidate(self):
        assert self.model.invalidate().tolist() == self.reference.invalidate()

    @precondition(lambda self: hasattr(self, "model"))
    @rule()
    def hand_back(self):
        assert self.model.hand_back().tolist() == self.reference.hand_back()

    @invariant()
    def dram_agrees(self):
        if hasattr(self, "model"):
            assert self.model.dram_as_on_a_card().tobytes() == bytes(self.reference.dram)

    def teardown(self) -> None:
        if hasattr(self, "events"):
            self.events.close()

    def heard(self, event) -> None:
        if isinstance(event, CacheEvent) and event.kind == Kind.READ_BEFORE_INVALIDATE:
            self.early_reads.append(event.offset // PAGE)

    @invariant()
    def early_reads_agree(self):
        if hasattr(self, "model"):
            self.events.deliver()
            assert sorted(self.early_reads) == sorted(self.reference.early_reads)
            assert len(self.early_reads) == len(set(self.early_reads))  # each page once

    @invariant()
    def dirty_lines_agree(self):
        if hasattr(self, "model"):
            assert self.model.dirty_lines().tolist() == self.reference.dirty()


TestCacheMachine = CacheMachine.TestCase
TestCacheMachine.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)


def test_the_prior_word_is_the_prior_byte_four_times():
    assert PRIOR_WORD == int.from_bytes(bytes([PRIOR_BYTE]) * 4, "little")
