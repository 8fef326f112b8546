"""The card's GDDR6 banks: storage apart from every cache.

A bank hands out storage for the spans the loader places in it. Only what is placed takes
host memory, so a 4 GiB bank costs what its regions cost.

How a span's DRAM is held, so that a big region costs its size once, not three or four
times (issue "Speed": 1 GiB in, tripled into 1 GiB, read back, within 2.5 GiB):

Host memory comes from sim.memory.host, whose linux way is what this says (its portable
way behaves the same with copies where this shares):

- A span's DRAM is a memory file (a memfd) and its mapping, `dram`.
- A region made from a numpy array starts from a `Snapshot`: a memory file that
  Program.thread wrote once and nobody writes again. A load maps it copy-on-write as the region's DRAM,
  so loading costs no copy, and loading the same program again starts from the same
  bytes. Pages the thread flushes over become DRAM's own (`own_pages`).
- In card mode the engines map DRAM itself (sim.cache.model, "direct"). DRAM that starts as
  zeros is then private anonymous memory while the thread runs (a first store costs less
  there than in a memfd, and huge pages are allowed), and `settle` moves it into its
  memfd when the run is over.
- Otherwise the cache has a `View` of its own: over a snapshot, another copy-on-write
  mapping of it, so a page the cache fills shares the snapshot's memory until written;
  over zeros, anonymous memory.
- What `run.thread.read` returns after the run is one more copy-on-write mapping: a new
  array, which costs memory only where the caller writes into it.
"""

from __future__ import annotations

import numpy as np

from ..layout import BANK_BYTES, PAGE, align_up, runs
from . import host

_CHUNK = 64 << 20  # bytes written to a snapshot at a time (no temporary of the whole array)
SHARED_READS_FROM = 1 << 20  # spans this big keep their file, so that a read shares it


class Snapshot:
    """A numpy array's bytes, copied once into memory that nobody writes again, laid out
    as the region's span will be: the bytes end at a page boundary (sim.machine.cluster places a
    region so that it ends where its span ends)."""

    def __init__(self, array: np.ndarray) -> None:
        flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        self.size = int(flat.size)
        self.span_size = align_up(self.size, PAGE)
        self.file = host.new_file("snapshot", self.span_size)
        offset = self.span_size - self.size
        for start in range(0, self.size, _CHUNK):
            self.file.write(offset + start, flat[start : start + _CHUNK])

    def array(self) -> np.ndarray:
        """The bytes, read-only."""
        return self.file.read_only()[self.span_size - self.size :]


class Storage:
    """One span's DRAM: `dram`, a uint8 array of the span's bytes. FROM: the snapshot it
    starts as (a region made from an array), or None (zeros)."""

    def __init__(self, size: int, start: Snapshot | None = None, anonymous: bool = False) -> None:
        if start is not None and start.span_size != size:
            raise ValueError(f"a snapshot of {start.span_size} bytes for a span of {size}")
        self.size = size
        # shared: DRAM is the file itself, so a mapping of the file shows DRAM as it is
        # now. Otherwise DRAM is a private mapping of the snapshot: pages the thread
        # flushed over are DRAM's own, and a mapping of the file does not show them.
        self.shared = start is None
        self.file = host.new_file("dram", size) if start is None else start.file
        # anonymous: while the thread runs, DRAM that starts as zeros is private
        # anonymous memory, in huge pages where the kernel allows: a core's first store
        # to a page costs less there than in a memfd (measured: 64 MiB of stores, 160 ms
        # against 200). `settle` moves it into the file when the run is over.
        self.anonymous = anonymous and start is None
        if self.anonymous:
            self.mapping = host.anonymous(size, huge=True)
        else:
            self.mapping = self.file.shared() if self.shared else self.file.private()
        self.dram = self.mapping.array
        # Per page: DRAM's own page, written over the snapshot (the cache models set it).
        self.own_pages = None if self.shared else np.zeros(size // PAGE, np.uint8)

    def settle(self) -> None:
        """Move anonymous DRAM into its file, a chunk at a time (each chunk's memory is
        given back as it goes), so that `copy` can share it."""
        if not self.anonymous:
            return
        for start in range(0, self.size, _CHUNK):
            piece = self.dram[start : start + _CHUNK]
            if piece.any():  # (a hole reads as zeros)
                self.file.write(start, piece)
            self.mapping.discard(start, piece.size)
        self.anonymous = False
        self.mapping = self.file.shared()
        self.dram = self.mapping.array

    def loaded_bytes(self) -> np.ndarray | None:
        """The span's bytes as they were loaded, read-only (None: zeros)."""
        if self.shared:
            return None
        return self.file.read_only()

    def copy(self, start: int, size: int) -> np.ndarray:
        """DRAM bytes [START, START + SIZE) as a new, writable array that shares memory
        with DRAM until either is written (a plain copy for a span small enough that it
        gave its file back: `release`)."""
        self.settle()
        if self.file is None:
            return np.array(self.dram[start : start + size])
        array = self.file.private().array
        if self.own_pages is not None:  # a mapping of the snapshot lacks DRAM's own pages
            for first, end in runs(np.flatnonzero(self.own_pages)):
                array[first * PAGE : end * PAGE] = self.dram[first * PAGE : end * PAGE]
        return array[start : start + size]

    def release(self) -> None:
        """Nothing will run again: take DRAM out of the process's resident pages (the file
        keeps them; they come back when read). A span smaller than SHARED_READS_FROM gives
        its file descriptor back too (its mapping keeps the memory): a process has only so
        many, and a run kept for its results would hold one a region; reading such a span
        costs a copy of its size."""
        self.settle()
        if self.shared:
            self.mapping.evict()
        if self.size < SHARED_READS_FROM:
            self.file = None


class View:
    """The cache's view of STORAGE when it is not DRAM itself (sim.cache.model): host memory
    the engines map, `array` at `address`. Over a snapshot it is a copy-on-write mapping
    of the snapshot, so a filled page shares the snapshot's memory until written; over
    zeros it is anonymous memory."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._mapping = host.anonymous(storage.size) if storage.shared else storage.file.private()
        self.array = self._mapping.array
        self.address = self._mapping.address
        self.madvise_forgets = self._mapping.madvise_forgets  # (forget is madvise's, which C may call)
        self.own_pages = storage.own_pages

    def forget(self, start: int, size: int) -> None:
        """Drop the view's copies of bytes [START, START + SIZE): they show what is under
        them again, zeros or the snapshot's pages."""
        self._mapping.forget(start, size)

    def release(self) -> None:
        """Nothing will run again: give every page of the view back."""
        self._mapping.discard()


class Bank:
    """One DRAM bank, by name (D5, D6, D7)."""

    def __init__(self, name: str, size: int = BANK_BYTES) -> None:
        self.name = name
        self.size = size
        self._spans: list[tuple[int, int]] = []

    def storage(self, offset: int, size: int, start: Snapshot | None = None, anonymous: bool = False) -> Storage:
        """DRAM [offset, offset + size) of the bank, for one placed span: zeros, or the
        bytes of START."""
        if offset < 0 or offset + size > self.size:
            raise ValueError(f"bank {self.name}: span {offset:#x}+{size:#x} is outside it")
        for other, other_size in self._spans:
            if offset < other + other_size and other < offset + size:
                raise ValueError(f"bank {self.name}: span {offset:#x} overlaps {other:#x}")
        self._spans.append((offset, size))
        return Storage(size, start, anonymous)
