"""A cluster's address space: the spans a thread may touch, and Python's way into them.

A span is a page-aligned piece of the cluster's share that is backed by host memory: the
thread's image, a core's stack, or a region. Everything else (the guard page below each
stack, the gaps between regions, the rest of the bank) is not mapped, and an access there
is a fault. The engines map each span at its address; the ecall layer reads and writes the
thread's memory through `AddressSpace.read` and `write`, which go through the cache model
for regions, exactly as the core's own loads and stores do.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from . import host
from .dram import Storage, View
from ..layout import PAGE, count_bytes


class MemoryAccessError(Exception):
    """An access outside every span; the trap layer turns it into a ThreadFault."""

    def __init__(self, address: int, size: int, why: str, outside: bool = False) -> None:
        super().__init__(f"{count_bytes(size)} at {address:#x}: {why}")
        self.address = address
        self.size = size
        self.why = why
        self.outside = outside  # ADDRESS is in no span: describe it by where it is


class Lines(Protocol):
    """What a region's accesses from Python go through: the cache model's lines over it
    (sim.cache.model.CachedRegion is one; the cluster makes it, since the cache sits above
    memory and memory does not import it)."""

    def touch(self, offset: int, size: int, write: bool, core=None) -> None: ...


class Writer(Protocol):
    """A core as a store of Python's on its behalf reaches it (sim.hart.core.Core is one):
    another core's lr reservation of the bytes ends (sim/native/reserve.c)."""

    def stored(self, address: int, size: int) -> None: ...


class Code(Protocol):
    """The image's code as the thread wrote it, where the loader changed the engine's copy
    (sim.image.original.Original is one): what a read or a write on the thread's behalf reaches."""

    def as_written(self, offset: int, data: bytes) -> bytes: ...

    def write(self, offset: int, data: bytes) -> None: ...


@dataclass(eq=False)
class Span:
    """One mapped piece of the address space."""

    name: str  # "the thread's image", "core 0's stack", or the region's name
    kind: str  # "image", "stack" or "region"
    base: int
    size: int  # a multiple of PAGE
    array: np.ndarray = field(repr=False)
    host_address: int = field(repr=False)
    region: Lines | None = field(default=None, repr=False)  # a region's lines (sim.cache.model.CachedRegion)
    block: host.Block | None = field(default=None, repr=False)  # an image's or a stack's memory
    view: View | None = field(default=None, repr=False)  # a region's: the cache's view
    owner: int | None = None  # another cluster's number, for its region in bank D7
    code: Code | None = field(default=None, repr=False)  # the image's: its code as written, where changed

    @property
    def end(self) -> int:
        return self.base + self.size

    @property
    def label(self) -> str:
        """The span in a message: "region 'numbers'", "cluster 3's region 'x'", "core 0's stack"."""
        if self.kind != "region":
            return self.name
        return f"region {self.name!r}" if self.owner is None else f"cluster {self.owner}'s region {self.name!r}"

    def release(self) -> None:
        """Give the host memory back; the mapping stays, reading zeros."""
        if self.view is not None:
            self.view.release()
        elif self.block is not None:
            self.block.discard()

    @classmethod
    def over(cls, storage: Storage, name: str, base: int, lines: Lines, view: View | None = None) -> "Span":
        """A region's span over STORAGE, its accesses through LINES (the cache model's,
        which the cluster made): the engines map STORAGE's DRAM itself (VIEW None), or
        VIEW, a view of it of the cache's own (sim.memory.dram.View)."""
        if view is None:
            return cls(name, "region", base, storage.size, storage.dram, storage.mapping.address, region=lines)
        return cls(name, "region", base, storage.size, view.array, view.address, region=lines, view=view)

    @classmethod
    def allocate(cls, name: str, kind: str, base: int, size: int) -> "Span":
        if base % PAGE or size % PAGE or size <= 0:
            raise ValueError(f"span {name}: {base:#x}+{size:#x} is not whole pages")
        block = host.anonymous(size)
        return cls(name, kind, base, size, block.array, block.address, block=block)


class AddressSpace:
    """The spans of one cluster, sorted by address."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self._bases: list[int] = []

    def add(self, span: Span) -> Span:
        i = bisect.bisect_right(self._bases, span.base)
        if (i > 0 and self.spans[i - 1].end > span.base) or (
            i < len(self.spans) and span.end > self.spans[i].base
        ):
            raise ValueError(f"span {span.name} at {span.base:#x} overlaps another")
        self.spans.insert(i, span)
        self._bases.insert(i, span.base)
        return span

    def find(self, address: int) -> Span | None:
        i = bisect.bisect_right(self._bases, address) - 1
        if i >= 0 and address < self.spans[i].end:
            return self.spans[i]
        return None

    def _span_for(self, address: int, size: int) -> Span:
        span = self.find(address)
        if span is None:
            raise MemoryAccessError(address, size, "not in the thread's memory", outside=True)
        if address + size > span.end:
            raise MemoryAccessError(address, size, f"which runs past the end of {span.label}")
        return span

    def _through_cache(self, span: Span, offset: int, size: int, write: bool, core=None) -> None:
        if span.region is not None:
            span.region.touch(offset, max(size, 1), write, core)

    def peek(self, address: int, size: int) -> bytes:
        """SIZE bytes as they are, for the simulator's own eyes (a fault message, a frame
        walk, a block count): no fill, nothing the checker would see."""
        span = self._span_for(address, size)
        offset = address - span.base
        return span.array[offset : offset + size].tobytes()

    def read(self, address: int, size: int) -> bytes:
        """SIZE bytes as a core would load them."""
        span = self._span_for(address, size)
        offset = address - span.base
        self._through_cache(span, offset, size, write=False)
        data = span.array[offset : offset + size].tobytes()
        return data if span.code is None else span.code.as_written(offset, data)

    def write(self, address: int, data: bytes, core: "Writer | None" = None) -> None:
        """Store DATA as CORE (a sim.hart.core.Core, making a kmx call) would: the cache model
        remembers where the thread was for a first write, and another core's lr reservation
        of those bytes ends."""
        span = self._span_for(address, len(data))
        offset = address - span.base
        self._through_cache(span, offset, len(data), True, core)
        if core is not None:
            core.stored(address, len(data))
        if span.code is not None:
            span.code.write(offset, data)
        else:
            span.array[offset : offset + len(data)] = np.frombuffer(data, dtype=np.uint8)

    def read_string(self, address: int, limit: int = 4096) -> str:
        """A NUL-terminated string (at most LIMIT bytes), decoded as UTF-8."""
        out = bytearray()
        start = address
        while len(out) < limit:
            span = self._span_for(address, 1)
            chunk = self.read(address, min(span.end - address, PAGE - address % PAGE))
            end = chunk.find(b"\0")
            if end >= 0:
                out += chunk[:end]
                return out.decode("utf-8", errors="replace")
            out += chunk
            address += len(chunk)
        raise MemoryAccessError(start, limit, f"no 0 byte ends the string in its first {limit} bytes")
