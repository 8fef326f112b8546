"""Explaining, in the user's words: which source line a pc is, the frames that led there,
what an address is (a region's byte, a stack's guard, the uncached alias...), and the
instruction at a pc. Given to the cores (for their faults) and to the checker (for its
findings) by their cluster, so that neither needs the cluster itself.

Two small facts live here: a return address points just past its call, and `call_site`
takes it back into the call (2 bytes back lands inside a call of 2 or 4 bytes); and the
frame-pointer chain's layout (threads are built with -fno-omit-frame-pointer: the
caller's return address at fp-8, its frame pointer at fp-16).
"""

from __future__ import annotations

import functools

import struct
from functools import cached_property
from pathlib import Path
from typing import Protocol, Sequence

from ..._records import Category
from .faults import CoreFault, Frame
from ..image.dwarf import LineTable, SourceLine, line_table
from ..image.elf import ThreadImage
from ..isa import decode
from ..layout import (
    BANK_BYTES,
    CACHED_ALIAS,
    GUARD_BYTES,
    PAGE,
    STACK_GUARD_BYTES,
    UNCACHED_ALIAS,
    count_bytes,
)
from ..memory.address_space import AddressSpace, MemoryAccessError, Span

BACKTRACE_DEPTH = 8


def call_site(return_address: int) -> int:
    """A pc inside the call that RETURN_ADDRESS returns from."""
    return return_address - 2


class PlacedRegion(Protocol):
    """Where a region is, for messages (sim.machine.cluster.Region is one)."""

    name: str
    id: int
    address: int
    size: int
    span: Span


class Explainer:
    """The explaining of one cluster's thread: its IMAGE at IMAGE_BASE, its MEMORY, its
    STACKS and REGIONS, and RUNTIME, the folder of the runtime's own sources (kmx.h...),
    whose lines are not the user's."""

    def __init__(
        self,
        image: ThreadImage,
        image_base: int,
        memory: AddressSpace,
        stacks: Sequence[Span],
        regions: Sequence[PlacedRegion],
        runtime: Path,
    ) -> None:
        self.image = image
        self.image_base = image_base
        self.memory = memory
        self.stacks = list(stacks)
        self.regions = list(regions)
        self.runtime = runtime

    # -- source lines and frames ---------------------------------------------------------

    @cached_property
    def line_table(self) -> LineTable:
        return line_table(self.image.path)

    def source_line(self, pc: int) -> SourceLine | None:
        offset = pc - self.image_base
        if 0 <= offset < self.image.size:
            return self.line_table.lookup(self.image.stubs.site_of(offset))
        return None

    def unstubbed(self, pc: int) -> int:
        """PC, or, inside a stub of the loader's (sim.isa.rewrite), the pc of the
        instruction the stub stands for."""
        return self.image_base + self.image.stubs.site_of(pc - self.image_base)

    def in_runtime(self, source: SourceLine) -> bool:
        """SOURCE is the runtime's (kmx_runtime/) or the C library's (musl's C, or zig's
        own, in the ziglang package): not the user's line."""
        return Path(source.file).parent == self.runtime or _in_c_library(source.file)

    def in_code(self, pc: int) -> bool:
        """PC is in the image's code (not its data, a stack or a region)."""
        return self.image.in_code(pc - self.image_base)

    def frames(self, pc: int, fp: int) -> list[Frame]:
        """PC's frame, then its callers', by the frame-pointer chain from FP. (The C
        library's frames have no source lines: they are named by their function.)"""
        pc = self.unstubbed(pc)
        frames = [self._frame(pc)]
        for _ in range(BACKTRACE_DEPTH):
            try:
                ra, fp = struct.unpack("<QQ", self.memory.peek(fp - 16, 16))[::-1]
            except MemoryAccessError:
                break
            if ra == 0 or not self.in_code(call_site(ra)):
                break
            frames.append(self._frame(call_site(ra)))
        return frames

    def frames_of(self, pc: int, returns: "tuple[int, ...]") -> list[Frame]:
        """PC's frame, then its callers', whose return addresses (the frame-pointer chain's,
        read as `frames` reads it) are RETURNS: a frame kept when its memory may have
        changed since (sim/native/events.c)."""
        frames = [self._frame(self.unstubbed(pc))]
        for ra in returns[:BACKTRACE_DEPTH]:
            if ra == 0 or not self.in_code(call_site(ra)):
                break
            frames.append(self._frame(call_site(ra)))
        return frames

    def _frame(self, pc: int) -> Frame:
        source = self.source_line(pc)
        if source is not None or not self.in_code(pc):
            return Frame(pc, source)
        symbol = self.image.symbol_at(pc - self.image_base)
        return Frame(pc, None, symbol[0] if symbol else "")

    def user_frame(self, frames: list[Frame]) -> Frame:
        """The first frame outside the runtime (a kmx call's wrapper in kmx.h is a frame of
        its own), or the innermost when none is."""
        return next((f for f in frames if f.source and not self.in_runtime(f.source)), frames[0])

    def users_line(self, pc: int, ra: int | None = None) -> SourceLine | None:
        """The user's source line at PC; inside the runtime (memcpy, a kmx call), the
        caller's line, by the return address RA."""
        source = self.source_line(pc)
        if (source is None or self.in_runtime(source)) and ra:
            caller = self.source_line(call_site(ra))
            if caller is not None:
                return caller
        return source

    def fault(self, cluster: int, core: int, pc: int, fp: int, cause: str, came_from: int | None = None,
              category: Category = Category.MISTAKE) -> CoreFault:
        """A CoreFault at PC in CATEGORY, with its source line and a backtrace from FP
        (after CAME_FROM, a return address, when PC was reached by a bad jump)."""
        frames = self.frames(pc, fp)
        if came_from and self.source_line(call_site(came_from)) is not None:
            frames.insert(1, Frame(call_site(came_from), self.source_line(call_site(came_from))))
        named = self.user_frame(frames)
        return CoreFault(cluster, core, pc, cause, named.source, frames, named.pc, category)

    # -- instructions ----------------------------------------------------------------------

    def instruction(self, pc: int) -> int:
        """The instruction at PC: 16 bits when compressed, else 32. Raises
        MemoryAccessError when PC is not in the thread's memory."""
        low = struct.unpack("<H", self.memory.peek(pc, 2))[0]
        if decode.length(low) == 2:
            return low
        return struct.unpack("<I", self.memory.peek(pc, 4))[0]

    def instruction_text(self, pc: int) -> str:
        """The instruction at PC, for a message: 0x0001 (compressed) or 0x0000000b."""
        try:
            insn = self.instruction(pc)
        except MemoryAccessError:
            return "instruction not readable"
        width = 4 if decode.length(insn & 0xFFFF) == 2 else 8
        return f"instruction {insn:#0{width + 2}x}"

    # -- addresses ---------------------------------------------------------------------------

    def describe_address(self, address: int, fetch: bool = False) -> str:
        """Where ADDRESS is, in the user's words (FETCH: the core jumped there)."""
        if address < PAGE and fetch:
            return (
                "which is a null pointer: a call through a function pointer that is 0, or a "
                "return through a return address the thread overwrote"
            )
        if address < PAGE:
            return (
                "which is a null pointer (kmx_region returns 0 for a region ID the thread "
                "does not have)"
            )
        data = ": code runs only from the thread's image" if fetch else ""
        image_offset = address - self.image_base
        if 0 <= image_offset < self.image.size:
            symbol = self.image.symbol_at(image_offset)
            name = "" if symbol is None else f" ({symbol[0]!r}" + (f" + {symbol[1]})" if symbol[1] else ")")
            if self.image.in_code(image_offset):
                return f"which is in the thread's code{name}"
            if fetch:
                return (
                    f"which is in the thread's static data{name}, not in its code: the core "
                    "jumped into data (a call through a bad function pointer, or into a buffer "
                    "that holds no code)"
                )
            return f"which is in the thread's static data{name}"
        for stack in self.stacks:
            if stack.base - STACK_GUARD_BYTES <= address < stack.base:
                return f"the guard below {stack.name}: a stack overflow"
            if stack.base <= address < stack.end:
                return f"which is in {stack.name}{data}"
        heap = self.memory.find(address)
        if heap is not None and heap.kind == "heap":
            return f"which is in the thread's heap (what malloc hands out){data}"
        for region in self.regions:
            start = region.address
            if start <= address < start + region.size:
                return f"byte {address - start} of region {region.name!r} (ID {region.id}){data}"
            if start - PAGE <= address < start:
                return f"{count_bytes(start - address)} before the start of region {region.name!r} (ID {region.id})"
            if start + region.size <= address < region.span.end + GUARD_BYTES:
                past = address - start - region.size
                how_far = "the first byte" if past == 0 else count_bytes(past)
                return (
                    f"{how_far} past the end of region "
                    f"{region.name!r} (ID {region.id}, {region.size} bytes at {start:#x})"
                )
        for span in self.memory.spans:
            if span.base <= address < span.end:  # another cluster's region, in bank D7
                return f"which is in {span.label}{data}"
        if UNCACHED_ALIAS <= address < UNCACHED_ALIAS + BANK_BYTES:
            cached = address - UNCACHED_ALIAS + CACHED_ALIAS
            return (
                f"which is DRAM's uncached alias of {cached:#x} (that address at the cached "
                f"alias, {self.describe_address(cached, fetch).removeprefix('which is ')}), where "
                "the thread has no memory"
            )
        return "which is not in the thread's memory"


@functools.lru_cache(maxsize=4096)
def _in_c_library(file: str) -> bool:
    """FILE is one of the C library's sources: under the ziglang package (musl, zig's
    compiler-rt), or zig's own (its libc parts are Zig, named like c/string.zig)."""
    if file.endswith(".zig"):
        return True
    from ..build.toolchain import zig_folder

    return Path(file).is_relative_to(zig_folder())
