"""The thread's heap: the pages the C library maps (mmap, munmap, mremap) for malloc.

The heap is one span of the cluster's share, after the stacks (sim.machine.cluster), its size the
thread's `heap` (km.Program.thread; DEFAULT_HEAP_BYTES by default). The C library's malloc
(zig's, over musl) asks the system for pages with mmap and gives big ones back with
munmap, as on Linux; here the system is this class: first fit over the free pages, whole
pages, zeros on every new mapping (as Linux's anonymous memory is). When no run of free
pages is long enough, mmap fails with ENOMEM and malloc returns NULL, as C says.

One heap a thread, shared by its cores: the simulator answers one system call at a time,
and the C library's malloc keeps its own state under its own locks (atomics), so the four
cores may allocate and free at once.
"""

from __future__ import annotations

import bisect

from ..layout import PAGE, align_up


class Heap:
    def __init__(self, span) -> None:
        self.span = span
        self.base, self.end = span.base, span.end
        self._free: list[tuple[int, int]] = [(self.base, self.end)]  # [start, end), sorted
        self.mapped = 0  # bytes mapped now
        self.peak = 0  # the most bytes mapped at once

    @property
    def size(self) -> int:
        return self.end - self.base

    def map(self, size: int) -> int | None:
        """SIZE bytes (rounded up to whole pages) of zeros: their address, or None when no
        run of free pages is that long."""
        size = align_up(size, PAGE)
        for i, (start, end) in enumerate(self._free):
            if end - start >= size:
                if end - start == size:
                    del self._free[i]
                else:
                    self._free[i] = (start + size, end)
                self._note(size)
                return start
        return None

    def unmap(self, address: int, size: int) -> bool:
        """Give back the pages of [ADDRESS, ADDRESS + SIZE); their bytes become zeros.
        False when the range is not whole pages inside the heap. Pages not mapped are
        left as they are (munmap's rule)."""
        size = align_up(size, PAGE)
        if address % PAGE or not self.base <= address or address + size > self.end or size == 0:
            return False
        cut_start, cut_end = address, address + size
        kept: list[tuple[int, int]] = []
        for start, end in self._free:  # the free runs, with the range added and merged
            if end < cut_start or start > cut_end:
                kept.append((start, end))
            else:
                cut_start, cut_end = min(start, cut_start), max(end, cut_end)
        freed_before = sum(end - start for start, end in self._free)
        bisect.insort(kept, (cut_start, cut_end))
        self._free = kept
        self.mapped -= sum(end - start for start, end in kept) - freed_before
        self.span.block.forget(address - self.base, size)
        return True

    def holds(self, address: int, size: int) -> bool:
        """[ADDRESS, ADDRESS + SIZE), whole pages, is inside the heap and mapped: no free
        run overlaps it."""
        end = address + align_up(size, PAGE)
        if not self.base <= address < end <= self.end:
            return False
        return not any(start < end and address < stop for start, stop in self._free)

    def remap(self, address: int, old: int, new: int, may_move: bool) -> int | None:
        """mremap: the mapping at ADDRESS of OLD bytes made NEW bytes long, in place when
        it can be, else (MAY_MOVE) moved with its bytes. None when it cannot."""
        old, new = align_up(old, PAGE), align_up(new, PAGE)
        if new <= old:
            if new < old:
                self.unmap(address + new, old - new)
            return address
        grow_at, more = address + old, new - old
        for i, (start, end) in enumerate(self._free):
            if start == grow_at and end - start >= more:
                self._free[i:i + 1] = [] if end - start == more else [(start + more, end)]
                self._note(more)
                return address
        if not may_move:
            return None
        moved = self.map(new)
        if moved is None:
            return None
        array = self.span.array
        array[moved - self.base : moved - self.base + old] = array[address - self.base : address - self.base + old]
        self.unmap(address, old)
        return moved

    def _note(self, size: int) -> None:
        self.mapped += size
        self.peak = max(self.peak, self.mapped)
