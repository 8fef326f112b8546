"""Bare Unicorn: a thread's ELF on a plain engine, for the benchmarks to compare with.

No cache model, no scheduler, no Python between the thread and its memory: the image,
the stack and the regions mapped once, at the addresses the simulator gives them (its
Card places the thread; nothing of it runs), and one hook, for the ecalls, that answers
just the kmx calls a benchmark thread makes: region, word, word count, result, submit
(timestamped), exit; invalidate and flush do nothing, as memory has no cache here.

The engine's variants (`BareRun`'s keywords):

- memory: "map" (Unicorn allocates it, `mem_map`) or "ptr" (host memory, `mem_map_ptr`,
  as the simulator's spans are);
- tlb: "cpu" (the default: RISC-V's own translation, identity in machine mode),
  "virtual" (`UC_TLB_VIRTUAL` with no fill hook: Unicorn maps every page to itself,
  read-write-execute) or "identity hook" (`UC_TLB_VIRTUAL` with a Python fill hook that
  maps each page to itself, as the simulator's does without its cache model);
- exec_data: the stack and the regions mapped executable too (the simulator's are not);
- flush_tlb: the ecall hook drops the engine's TLB at kmx_invalidate and kmx_flush, as
  the simulator does (sim/machine/cluster.py). This matters for speed: the engine's TLB starts
  at 256 pages and grows only when it is flushed (it doubles when more than 70% of it
  was in use), so a run without flushes may keep missing where the simulator's does not.
  (The simulator also flushes it after many fills, to let it grow: sim/hart/core.py.)
"""

from __future__ import annotations

import gc
import struct
import time
from dataclasses import dataclass

import numpy as np

from komorebi.sim.hart import engine as _engine  # noqa: F401  (first: the simulator's build of the engine, the same for both)
from unicorn import unicorn_const as ucc
from unicorn import (
    UC_ARCH_RISCV,
    UC_HOOK_INTR,
    UC_HOOK_TLB_FILL,
    UC_MODE_RISCV64,
    UC_PROT_ALL,
    UC_PROT_READ,
    UC_PROT_WRITE,
    UC_TLB_VIRTUAL,
    Uc,
)
from unicorn.riscv_const import (
    UC_RISCV_REG_A0,
    UC_RISCV_REG_A1,
    UC_RISCV_REG_A2,
    UC_RISCV_REG_A7,
    UC_RISCV_REG_MSTATUS,
    UC_RISCV_REG_SP,
)

from komorebi.sim.machine.card import Card
from komorebi.sim.machine.cluster import Cluster
from komorebi.sim.image.elf import ThreadImage
from komorebi.sim.memory import host
from komorebi.sim.kmx import linux
from komorebi.sim.kmx.traps import Call

MSTATUS_FS = 0x6000  # floating point on: it starts off
ECALL = 8
DATA = UC_PROT_READ | UC_PROT_WRITE


@dataclass(frozen=True)
class Layout:
    """Where the simulator puts a thread: (address, size) of the image and of core 0's
    stack; for each region, (address, size, span address, span size)."""

    image: tuple[int, int]
    stack: tuple[int, int]
    regions: tuple[tuple[int, int, int, int], ...]


def layout_of(cluster: Cluster) -> Layout:
    """The layout of a thread the simulator has placed."""
    stack = cluster.stacks[0]
    return Layout(
        (cluster.image_base, cluster.image.size),
        (stack.base, stack.size),
        tuple((r.address, r.size, r.span.base, r.span.size) for r in cluster.regions),
    )


def place(image: ThreadImage, region_sizes: list[int], cluster: int = 1) -> Layout:
    """Where the simulator would put IMAGE with regions of REGION_SIZES bytes on
    CLUSTER: a Card places it, and is stopped without running."""
    card = Card()
    try:
        placed = card.place_thread(cluster, image, [(f"r{i}", size) for i, size in enumerate(region_sizes)], [], 1)
        return layout_of(placed)
    finally:
        card.stop()


class BareRun:
    """IMAGE at LAYOUT's addresses on a plain engine, with argument WORDS and region
    CONTENTS (region index: bytes; the others start zeroed)."""

    def __init__(
        self,
        image: ThreadImage,
        layout: Layout,
        *,
        words: tuple[int, ...] = (),
        contents: dict[int, bytes] | None = None,
        memory: str = "map",
        tlb: str = "cpu",
        exec_data: bool = False,
        flush_tlb: bool = False,
    ) -> None:
        uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
        self._buffers = []  # host memory for memory="ptr"
        if tlb != "cpu":
            uc.ctl_set_tlb_mode(UC_TLB_VIRTUAL)
        if tlb == "identity hook":
            uc.hook_add(UC_HOOK_TLB_FILL, self._identity)
        data = UC_PROT_ALL if exec_data else DATA
        base, size = layout.image
        self._map(uc, memory, base, size, UC_PROT_ALL)
        placed = np.zeros(size, dtype=np.uint8)
        image.place(placed, base)
        uc.mem_write(base, placed.tobytes())
        stack, stack_size = layout.stack
        self.data_start = stack  # code below, data (never run) from here on
        self._map(uc, memory, stack, stack_size, data)
        self.regions = []
        for address, region_size, span, span_size in layout.regions:
            self._map(uc, memory, span, span_size, data)
            self.regions.append((address, region_size))
        for index, content in (contents or {}).items():
            uc.mem_write(self.regions[index][0], content)
        uc.reg_write(UC_RISCV_REG_MSTATUS, uc.reg_read(UC_RISCV_REG_MSTATUS) | MSTATUS_FS)
        # What the simulator gives core 0 for the C library's start (sim.kmx.linux).
        block_at, block = linux.start_block(stack + stack_size, image.program_headers, 0)
        uc.mem_write(block_at, block)
        uc.reg_write(UC_RISCV_REG_SP, block_at)
        uc.reg_write(UC_RISCV_REG_A0, 0)
        uc.reg_write(UC_RISCV_REG_A1, block_at)
        uc.reg_write(UC_RISCV_REG_A2, 1)
        uc.hook_add(UC_HOOK_INTR, self._ecall)
        self.uc, self.entry, self.halt = uc, base + image.entry, base + image.halt
        self.words = tuple(words)
        self.result = np.zeros(48, dtype=np.uint32)
        self.submitted: list[float] = []  # perf_counter at each kmx_submit
        self.code: int | None = None
        self.flush_tlb = flush_tlb

    def _map(self, uc: Uc, memory: str, address: int, size: int, perms: int) -> None:
        if memory == "ptr":  # memory the host maps, as the simulator's spans are
            block = host.anonymous(size)
            self._buffers.append(block)
            uc.mem_map_ptr(address, size, perms, block.address)
        else:  # memory Unicorn allocates itself
            uc.mem_map(address, size, perms)

    def _identity(self, uc, address, access, entry, _data) -> bool:
        entry.paddr = address
        entry.perms = UC_PROT_ALL if address < self.data_start else DATA
        return True

    def _ecall(self, uc, number, _data) -> None:
        if number != ECALL:
            raise RuntimeError(f"bare run: RISC-V exception {number}")
        call, a0, a1, a2 = (uc.reg_read(r) for r in (UC_RISCV_REG_A7, UC_RISCV_REG_A0, UC_RISCV_REG_A1, UC_RISCV_REG_A2))
        if call == Call.SUBMIT:
            self.submitted.append(time.perf_counter())
        elif call == Call.REGION:
            address, size = self.regions[a0] if a0 < len(self.regions) else (0, 0)
            if a1:
                uc.mem_write(a1, struct.pack("<Q", size))
            uc.reg_write(UC_RISCV_REG_A0, address)
        elif call == Call.WORD:
            uc.reg_write(UC_RISCV_REG_A0, self.words[a0])
        elif call == Call.WORD_COUNT:
            uc.reg_write(UC_RISCV_REG_A0, len(self.words))
        elif call == Call.RESULT:
            self.result[a0 : a0 + a2] = struct.unpack(f"<{a2}I", uc.mem_read(a1, 4 * a2))
        elif call == Call.EXIT:
            self.code = a0
        elif call == linux.NUMBERS["set_tid_address"]:  # (the only one the C library's start makes)
            uc.reg_write(UC_RISCV_REG_A0, 1)
        elif call in (Call.INVALIDATE, Call.FLUSH):
            if self.flush_tlb:
                uc.ctl(ucc.UC_CTL_TLB_FLUSH, ucc.UC_CTL_IO_WRITE)
        else:
            raise RuntimeError(f"bare run: kmx call {call} is not answered here")

    def run(self) -> float:
        """Run the thread to its end; the seconds it took."""
        start = time.perf_counter()
        self.uc.emu_start(self.entry, self.halt)
        return time.perf_counter() - start

    def between_submits(self) -> float:
        """Seconds from the first kmx_submit to the second."""
        return self.submitted[1] - self.submitted[0]

    def read(self, index: int) -> bytes:
        """Region INDEX's bytes."""
        address, size = self.regions[index]
        return bytes(self.uc.mem_read(address, size))

    def close(self) -> None:
        """Free the engine and its memory now: its hooks make a reference cycle."""
        self.uc = None
        gc.collect()
        self._buffers = []  # after the engine: it maps them
