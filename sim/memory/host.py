"""Host memory: the one module that asks the operating system for memory (DRAM's storage,
snapshots, the cache's views, the stacks and the image, the arrays `read()` hands out).

Two ways, one interface:

- **linux** (the default on Linux): memfds (anonymous files in memory) mapped with libc's
  mmap, shared or copy-on-write, and `MADV_DONTNEED` to give pages back. A snapshot of a
  big array is loaded without a copy, a read shares DRAM's memory until written, and a
  region costs about its size once (bench/bigregion.py).
- **portable**: only what every system Python runs on has: Python's anonymous `mmap`
  (page-aligned, as the engine needs) and numpy copies. Same behaviour; what the linux way
  shares, this one copies, so a big region costs more memory, and memory handed back is
  zeroed rather than returned. macOS and Windows use it (untested here);
  `KMX_HOST_MEMORY=portable` chooses it on Linux too, and CI runs the suite so.

The interface:

- `anonymous(size)`: a Block of zeros, the process's own.
- `new_file(name, size)`: a File, memory that several blocks can map: `shared()` (writes
  reach the file), `private()` (copy-on-write: the block's writes are its own),
  `read_only()`; `write(offset, data)` writes into it.
- A Block has `address` (for the engine), `size`, `array` (uint8), and three ways to
  let memory go, by what the caller needs of the bytes afterwards:
  `forget(start, size)`: they show what lies under them again (zeros, or the file's
  bytes); `discard(start, size)`: nothing will read them again; `evict()`: they stay as they are.
  Each gives the memory back to the system where the way allows (the linux way always:
  `MADV_DONTNEED` does each of the three on the mapping it is made for).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
from functools import lru_cache

import numpy as np

VARIABLE = "KMX_HOST_MEMORY"  # (the user's name for the choice, which komorebi reads: `ask`)
WAYS = ("linux", "portable")
_READ_WRITE = mmap.PROT_READ | mmap.PROT_WRITE if hasattr(mmap, "PROT_READ") else 0


def _private_mmap(size: int) -> mmap.mmap:
    """SIZE bytes of anonymous memory from Python's mmap, the process's own: private where
    the system says so (on POSIX Python's default is MAP_SHARED, which a forked child would
    share with its parent); Windows' anonymous memory is the process's own anyway."""
    if hasattr(mmap, "MAP_PRIVATE"):
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
    return mmap.mmap(-1, size)


class HostMemoryError(ValueError):
    """KMX_HOST_MEMORY names no way this system has."""


_asked = ""  # the way asked for ("": the system's own); komorebi asks as KMX_HOST_MEMORY says


def ask(name: str) -> None:
    """Ask for the way NAME ("linux", "portable"; "": the system's own). komorebi asks as
    the environment's KMX_HOST_MEMORY says (komorebi._simulator), before each use of host
    memory; `way` checks what was asked at the first use, and keeps its answer."""
    global _asked
    _asked = name


@lru_cache(maxsize=None)
def way() -> str:
    """The way in use: the one asked for, or linux where the system has memfds."""
    chosen = _asked
    native = "linux" if sys.platform.startswith("linux") and hasattr(os, "memfd_create") else "portable"
    if not chosen:
        return native
    if chosen not in WAYS:
        raise HostMemoryError(f"{VARIABLE}={chosen!r}: the ways are 'linux' and 'portable'")
    if chosen == "linux" and native != "linux":
        raise HostMemoryError(f"{VARIABLE}=linux, but this system ({sys.platform}) has no memfds")
    return chosen


def anonymous(size: int, huge: bool = False) -> "Block":
    """SIZE bytes of zeros (HUGE: in huge pages where the system allows)."""
    return WAY[way()].anonymous(size, huge)


def new_file(name: str, size: int) -> "File":
    """SIZE bytes of zeros that blocks can map (NAME: for the system's own listings)."""
    return WAY[way()].new_file(name, size)


class Block:
    """Host memory at `address`, `size` bytes, seen as the uint8 `array` (which keeps the
    block alive)."""

    address: int
    size: int
    array: np.ndarray
    madvise_forgets = False  # forget is madvise(MADV_DONTNEED) of [address, address + size)

    def forget(self, start: int = 0, size: int | None = None) -> None:
        raise NotImplementedError

    def discard(self, start: int = 0, size: int | None = None) -> None:
        raise NotImplementedError

    def evict(self) -> None:
        raise NotImplementedError


class File:
    size: int

    def write(self, offset: int, data: np.ndarray) -> None:
        raise NotImplementedError

    def shared(self) -> Block:
        raise NotImplementedError

    def private(self) -> Block:
        raise NotImplementedError

    def read_only(self) -> np.ndarray:
        raise NotImplementedError


# -- linux: memfds and libc's mmap ------------------------------------------------------------


@lru_cache(maxsize=None)
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return libc


class _Mapping:
    """One mapping made with libc's mmap, unmapped when it goes. The arrays over a block
    keep it (through their buffer), and it refers to nothing back: numpy arrays are not
    seen by Python's cycle collector, so a cycle through one would never be freed."""

    def __init__(self, address: int, size: int) -> None:
        self.address, self.size = address, size

    def __del__(self) -> None:
        address, self.address = self.address, None
        if address:
            _libc().munmap(address, self.size)


class _LinuxBlock(Block):
    """Memory mapped with libc's mmap, unmapped when the block and the last array over it
    have gone. (Python's mmap module keeps a duplicate file descriptor for each mapping,
    and a process has only so many: a thousand arrays from run.thread.read would run out.)"""

    def __init__(self, size: int, flags: int, fd: int = -1, prot: int = _READ_WRITE) -> None:
        address = _libc().mmap(None, size, prot, flags, fd, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            error = ctypes.get_errno()
            raise OSError(error, f"mapping {size} bytes: {os.strerror(error)}")
        self.address, self.size = address, size
        raw = (ctypes.c_uint8 * size).from_address(address)
        raw.mapping = _Mapping(address, size)  # the buffer (so every array over it) keeps the mapping
        self.array = np.frombuffer(raw, dtype=np.uint8)
        if not prot & mmap.PROT_WRITE:
            self.array.flags.writeable = False

    @classmethod
    def anonymous(cls, size: int, huge: bool = False) -> "_LinuxBlock":
        # Private: MADV_DONTNEED gives pages back and makes them zeros again (shared
        # anonymous memory would keep them).
        block = cls(size, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if huge and hasattr(mmap, "MADV_HUGEPAGE"):
            block._advise(mmap.MADV_HUGEPAGE, 0, size)
        return block

    def _advise(self, advice: int, start: int, size: int) -> None:
        _libc().madvise(self.address + start, size, advice)

    madvise_forgets = True

    def forget(self, start: int = 0, size: int | None = None) -> None:
        # Private anonymous: the pages are zeros again; private over a file: the file's;
        # shared: the file's, which are the block's own.
        self._advise(mmap.MADV_DONTNEED, start, self.size - start if size is None else size)

    def discard(self, start: int = 0, size: int | None = None) -> None:
        self.forget(start, size)

    def evict(self) -> None:
        self.forget()  # (a shared mapping's pages stay in its file)


class _LinuxFile(File):
    """A memfd, closed when the last object that needs it goes (a mapping keeps its
    memory without the descriptor)."""

    def __init__(self, name: str, size: int) -> None:
        fd = os.memfd_create(f"komorebi-{name}", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
        except BaseException:
            os.close(fd)
            raise
        self.fd, self.size = fd, size

    def __del__(self) -> None:
        fd, self.fd = getattr(self, "fd", -1), -1
        if fd >= 0:
            os.close(fd)

    def write(self, offset: int, data: np.ndarray) -> None:
        written = 0
        while written < data.size:
            written += os.pwrite(self.fd, data[written:], offset + written)

    def shared(self) -> Block:
        return _LinuxBlock(self.size, mmap.MAP_SHARED, self.fd)

    def private(self) -> Block:
        return _LinuxBlock(self.size, mmap.MAP_PRIVATE, self.fd)

    def read_only(self) -> np.ndarray:
        return _LinuxBlock(self.size, mmap.MAP_PRIVATE, self.fd, mmap.PROT_READ).array


# -- portable: Python's mmap and numpy ----------------------------------------------------------


class _PortableBlock(Block):
    """Anonymous memory from Python's mmap (page-aligned). What its bytes show when
    forgotten: zeros; UNDER's bytes (a private block over a file); or, SHARED (the file's
    own memory), what they hold, as a shared mapping's do."""

    def __init__(self, memory: mmap.mmap, under: "_PortableFile | None" = None, shared: bool = False) -> None:
        self._memory = memory
        self.size = len(memory)
        self.array = np.frombuffer(memory, dtype=np.uint8)
        self.address = self.array.ctypes.data
        self._under, self._shared = under, shared

    def forget(self, start: int = 0, size: int | None = None) -> None:
        end = self.size if size is None else start + size
        if self._shared:
            return
        if self._under is None:
            self.array[start:end] = 0
        else:
            self.array[start:end] = self._under.memory[start:end]

    def discard(self, start: int = 0, size: int | None = None) -> None:
        pass  # (the memory goes with the block)

    def evict(self) -> None:
        pass


class _PortableFile(File):
    def __init__(self, size: int) -> None:
        self.size = size
        self._mmap = _private_mmap(size)
        self.memory = np.frombuffer(self._mmap, dtype=np.uint8)

    def write(self, offset: int, data: np.ndarray) -> None:
        self.memory[offset : offset + data.size] = data

    def shared(self) -> Block:
        return _PortableBlock(self._mmap, shared=True)

    def private(self) -> Block:
        block = _PortableBlock(_private_mmap(self.size), under=self)
        block.array[:] = self.memory
        return block

    def read_only(self) -> np.ndarray:
        out = self.memory[:]
        out.flags.writeable = False
        return out


class _Way:
    def __init__(self, anonymous, new_file) -> None:
        self.anonymous, self.new_file = anonymous, new_file


WAY = {
    "linux": _Way(_LinuxBlock.anonymous, _LinuxFile),
    "portable": _Way(lambda size, huge=False: _PortableBlock(_private_mmap(size)), lambda name, size: _PortableFile(size)),
}
