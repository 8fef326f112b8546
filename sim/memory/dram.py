"""The card's GDDR6 banks: storage apart from every cache.

A bank hands out storage for the spans the loader places in it. Only what is placed takes
host memory, so a 4 GiB bank costs what its regions cost.

How a span's DRAM is held, so that a big region costs its size once, not three or four
times (issue "Speed": 1 GiB in, tripled into 1 GiB, read back, within 2.5 GiB):

- A span's DRAM is a memfd (an anonymous file in memory) and its mapping, `dram`.
- A region made from a numpy array starts from a `Snapshot`: a memfd that Program.thread
  wrote once and nobody writes again. A load maps it copy-on-write as the region's DRAM,
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

import ctypes
import mmap
import os

import numpy as np

from ..layout import BANK_BYTES, PAGE, align_up, runs

_CHUNK = 64 << 20  # bytes written to a snapshot at a time (no temporary of the whole array)
SHARED_READS_FROM = 1 << 20  # spans this big keep their file, so that a read shares it


def _memfd(name: str, size: int) -> int:
    fd = os.memfd_create(f"komorebi-{name}", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, size)
    except BaseException:
        os.close(fd)
        raise
    return fd


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_MAP_FAILED = ctypes.c_void_p(-1).value
_READ_WRITE = mmap.PROT_READ | mmap.PROT_WRITE


class Mapping:
    """Memory mapped with libc's mmap, unmapped when the last array over it goes.
    (Python's mmap module keeps a duplicate file descriptor for each mapping, and a
    process has only so many: a thousand arrays from run.thread.read would run out.)"""

    def __init__(self, size: int, flags: int, fd: int = -1, prot: int = _READ_WRITE) -> None:
        address = _libc.mmap(None, size, prot, flags, fd, 0)
        if address in (None, _MAP_FAILED):
            error = ctypes.get_errno()
            raise OSError(error, f"mapping {size} bytes: {os.strerror(error)}")
        self.address, self.size, self._writable = address, size, bool(prot & mmap.PROT_WRITE)

    def __del__(self) -> None:
        address, self.address = getattr(self, "address", None), None
        if address:
            _libc.munmap(address, self.size)

    def array(self) -> np.ndarray:
        """The memory as a uint8 array, which keeps the mapping alive."""
        raw = (ctypes.c_uint8 * self.size).from_address(self.address)
        raw.mapping = self
        out = np.frombuffer(raw, dtype=np.uint8)
        if not self._writable:
            out.flags.writeable = False
        return out

    def advise(self, advice: int, start: int = 0, size: int | None = None) -> None:
        _libc.madvise(self.address + start, self.size - start if size is None else size, advice)


def _map(fd: int, size: int, shared: bool) -> tuple[Mapping, np.ndarray]:
    mapping = Mapping(size, mmap.MAP_SHARED if shared else mmap.MAP_PRIVATE, fd)
    return mapping, mapping.array()


def anonymous_memory(size: int) -> tuple[Mapping, np.ndarray]:
    """SIZE bytes of private anonymous memory, zeros: MADV_DONTNEED gives pages back and
    makes them zeros again (shared anonymous memory would keep them)."""
    mapping = Mapping(size, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return mapping, mapping.array()


class _File:
    """A memfd, closed when the last object that needs it goes."""

    def __init__(self, name: str, size: int) -> None:
        self.fd = _memfd(name, size)
        self.size = size

    def __del__(self) -> None:
        fd, self.fd = getattr(self, "fd", -1), -1
        if fd >= 0:
            os.close(fd)


class Snapshot:
    """A numpy array's bytes, copied once into memory that nobody writes again, laid out
    as the region's span will be: the bytes end at a page boundary (sim.cluster places a
    region so that it ends where its span ends)."""

    def __init__(self, array: np.ndarray) -> None:
        flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        self.size = int(flat.size)
        self.span_size = align_up(self.size, PAGE)
        self.file = _File("snapshot", self.span_size)
        offset = self.span_size - self.size
        for start in range(0, self.size, _CHUNK):
            piece = flat[start : start + _CHUNK]
            written = 0
            while written < piece.size:
                written += os.pwrite(self.file.fd, piece[written:], offset + start + written)


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
        self.file = _File("dram", size) if start is None else start.file
        # anonymous: while the thread runs, DRAM that starts as zeros is private
        # anonymous memory, in huge pages where the kernel allows: a core's first store
        # to a page costs less there than in a memfd (measured: 64 MiB of stores, 160 ms
        # against 200). `settle` moves it into the file when the run is over.
        self.anonymous = anonymous and start is None
        if self.anonymous:
            self.mapping, self.dram = anonymous_memory(size)
            if hasattr(mmap, "MADV_HUGEPAGE"):
                self.mapping.advise(mmap.MADV_HUGEPAGE)
        else:
            self.mapping, self.dram = _map(self.file.fd, size, shared=self.shared)
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
                written = 0
                while written < piece.size:
                    written += os.pwrite(self.file.fd, piece[written:], start + written)
            self.mapping.advise(mmap.MADV_DONTNEED, start, piece.size)
        self.anonymous = False
        self.mapping, self.dram = _map(self.file.fd, self.size, shared=True)

    def loaded_bytes(self) -> np.ndarray | None:
        """The span's bytes as they were loaded, read-only (None: zeros)."""
        if self.shared:
            return None
        return Mapping(self.size, mmap.MAP_PRIVATE, self.file.fd, mmap.PROT_READ).array()

    def copy(self, start: int, size: int) -> np.ndarray:
        """DRAM bytes [START, START + SIZE) as a new, writable array that shares memory
        with DRAM until either is written (a plain copy for a span small enough that it
        gave its file back: `release`)."""
        self.settle()
        if self.file is None:
            return np.array(self.dram[start : start + size])
        _, array = _map(self.file.fd, self.size, shared=False)
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
            self.mapping.advise(mmap.MADV_DONTNEED)
        if self.size < SHARED_READS_FROM:
            self.file = None


class View:
    """The cache's view of STORAGE when it is not DRAM itself (sim.cache.model): host memory
    the engines map, `array` at `address`. Over a snapshot it is a copy-on-write mapping
    of the snapshot, so a filled page shares the snapshot's memory until written; over
    zeros it is anonymous memory."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        if storage.shared:
            self._mapping, self.array = anonymous_memory(storage.size)
        else:
            self._mapping, self.array = _map(storage.file.fd, storage.size, shared=False)
        self.address = self._mapping.address
        self.own_pages = storage.own_pages

    def forget(self, start: int, size: int) -> None:
        """Drop the view's copies of bytes [START, START + SIZE): they show what is under
        them again, zeros or the snapshot's pages."""
        self._mapping.advise(mmap.MADV_DONTNEED, start, size)

    def release(self) -> None:
        """Nothing will run again: give every page of the view back."""
        self.forget(0, self.storage.size)


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
