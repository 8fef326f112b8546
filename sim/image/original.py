"""The thread's code as the compiler and linker wrote it, where the loader changed it.

The loader changes the engine's copy of the code (sim.isa.rewrite's jumps to stubs for Zba
and Zbb, sim.isa.stand_in's traps for fence.i and the counters, the stubs themselves), so
that the engine runs it fast and as the X280 would. What the thread reads of its own code
must be what the compiler wrote: a function copied elsewhere and run after fence.i, or a
checksum of the code. This keeps the changed pages as written, for the thread's loads and
stores (sim/native/code.c, through the fill hook and the watch alias) and for Python's
reads and writes on its behalf (sim.memory.address_space: a kmx call, gdb).
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..layout import PAGE, align_up
from ..native import hooks
from .elf import ThreadImage


class Original:
    """IMAGE's changed pages as written, for an image placed at BASE into PLACED (its span's
    memory)."""

    def __init__(self, image: ThreadImage, base: int, placed: np.ndarray) -> None:
        slots, (stubs, stubs_end) = image.changes()
        edges = [*slots, *((stubs, stubs_end - 1) if stubs_end > stubs else ())]
        self.start = min(edges) // PAGE * PAGE
        self.end = align_up(max(edges) + 4, PAGE)
        self.bytes = np.zeros(self.end - self.start, np.uint8)
        image.place_as_written(self.bytes, base, self.start)
        self._span = placed
        self._placed = placed[self.start : self.end]
        self.changed = (self.bytes.reshape(-1, PAGE) != self._placed.reshape(-1, PAGE)).any(axis=1).astype(np.uint8)
        self._slots = np.array([base + slot for slot in slots], np.uint64)
        self.state = hooks.Original(
            base=base + self.start, end=base + self.end, bytes=hooks.pointer(self.bytes),
            image=hooks.pointer(self._placed), changed=hooks.pointer(self.changed),
            slots=hooks.pointer(self._slots, ctypes.c_uint64), slot_count=self._slots.size,
            stubs=base + stubs, stubs_end=base + stubs_end,
        )

    @classmethod
    def of(cls, image: ThreadImage, base: int, placed: np.ndarray) -> "Original | None":
        """IMAGE's, or None when the loader changed none of its code."""
        slots, (stubs, stubs_end) = image.changes()
        return cls(image, base, placed) if slots or stubs_end > stubs else None

    def _changed(self, offset: int) -> bool:
        return self.start <= offset < self.end and bool(self.changed[(offset - self.start) // PAGE])

    def _chunks(self, offset: int, size: int):
        """[OFFSET, OFFSET + SIZE) of the span a page at a time: (start, end, changed?)."""
        at, end = offset, offset + size
        while at < end:
            stop = min((at // PAGE + 1) * PAGE, end)
            yield at, stop, self._changed(at)
            at = stop

    def as_written(self, offset: int, data: bytes) -> bytes:
        """DATA, the span's bytes from OFFSET as the engine runs them, as the thread wrote them."""
        out = bytearray(data)
        for low, high, changed in self._chunks(offset, len(data)):
            if changed:
                out[low - offset : high - offset] = self.bytes[low - self.start : high - self.start].tobytes()
        return bytes(out)

    def write(self, offset: int, data: bytes) -> None:
        """Store DATA at OFFSET of the span as the thread would (code.c)."""
        for low, high, changed in self._chunks(offset, len(data)):
            piece = data[low - offset : high - offset]
            if changed:
                hooks.library().original_write(self.state, self.state.base - self.start + low, len(piece), piece)
            else:
                self._span[low:high] = np.frombuffer(piece, np.uint8)
