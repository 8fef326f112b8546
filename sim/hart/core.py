"""One X280 hart: a Unicorn engine running the thread's code.

The engine's own TLB is the fast path: loads and stores to a page it has translated run at
full speed with no Python. Its virtual-TLB fill hook is the slow path, called once a page
(and again on the first store to a page first filled for reading): that is where the
cluster's cache model learns of fills and writes (sim.cache.model). ecalls (kmx calls) reach the
trap table (sim.kmx.traps) through the interrupt hook; any other exception ends the thread.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from typing import TYPE_CHECKING, Callable

from unicorn import (
    UC_ARCH_RISCV,
    UC_MODE_RISCV64,
    UC_HOOK_BLOCK,
    UC_HOOK_INTR,
    UC_HOOK_TLB_FILL,
    UC_MEM_FETCH,
    UC_MEM_WRITE,
    UC_PROT_ALL,
    UC_TLB_VIRTUAL,
    Uc,
    UcError,
)
from unicorn import unicorn_const as ucc
from unicorn.unicorn_py3.unicorn import uclib  # unicorn 2.1's binding: the C library
from unicorn.riscv_const import (
    UC_RISCV_REG_A0,
    UC_RISCV_REG_A1,
    UC_RISCV_REG_A2,
    UC_RISCV_REG_A7,
    UC_RISCV_REG_MSTATUS,
    UC_RISCV_REG_PC,
    UC_RISCV_REG_RA,
    UC_RISCV_REG_S0,
    UC_RISCV_REG_SP,
    UC_RISCV_REG_X0,
)

from ..isa import decode

from ..native import hooks

from ..isa import stand_in
from .faults import CoreFault, Frame
from ..layout import PAGE

if TYPE_CHECKING:
    from ..cluster import Cluster

MSTATUS_FS = 0x6000  # floating point on (ENGINE_NOTES: it starts off)
ECALL = 8

EXCEPTIONS = {
    0: "a jump to a misaligned address",
    1: "an instruction fetch from memory the thread may not run",
    2: "an illegal instruction",
    3: "a breakpoint (ebreak)",
    4: "a misaligned load",
    5: "a load the memory refused",
    6: "a misaligned store",
    7: "a store the memory refused",
    12: "an instruction fetch from an unmapped address",
    13: "a load from an unmapped address",
    15: "a store to an unmapped address",
}
ILLEGAL_HELP = (
    "The simulator runs RV64GC (I, M, A, F, D, C, Zicsr, Zifencei) and the cycle, "
    "instret and time counters; vector (V), bit-manipulation (Zba, Zbb) and half-precision "
    "(Zfh) instructions are not simulated yet. Compile for rv64gc (-mcpu=baseline_rv64, "
    "the default here)."
)

READY, BLOCKED, EXITED, FAULTED = "ready", "blocked", "exited", "faulted"

# The engine's TLB (QEMU's): 2**8 entries at first, at most 2**22; a flush doubles it when
# more than 70% of it was used since the last (sim/native/hooks.c, maybe_grow).
TLB_FIRST_ENTRIES = 1 << 8
TLB_MAX_ENTRIES = 1 << 22




class Core:
    """Hart NUMBER of CLUSTER: enters ENTRY with its stack at STACK_TOP and runs until
    HALT, where the start code goes once kmx_main has returned."""

    def __init__(
        self, cluster: "Cluster", number: int, entry: int, halt: int, stack_top: int
    ) -> None:
        self.cluster = cluster
        self.number = number
        self.state = READY
        self.code: int | None = None
        self.waiting: Callable[[], bool] | None = None  # a kmx call still to complete
        self.blocked_in = ""  # the kmx call it waits in: "kmx_barrier" or "kmx_submit"
        self._stopped_by_call = False  # the last run ended in a kmx call, not its count
        self._interrupted = False  # stopped from outside: the run is over
        self._fenced = False  # the core ran fence.i: its translations go before it goes on
        self._engine = threading.Lock()  # between interrupt (any thread) and close
        self._memory = cluster.memory
        uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
        uc.ctl_set_tlb_mode(UC_TLB_VIRTUAL)
        for span in self._memory.spans:
            uc.mem_map_ptr(span.base, span.size, UC_PROT_ALL, span.host_address)
        self.uc = uc
        finalize = getattr(uc, "_Uc__finalizer", None)
        if finalize is not None:  # at exit, sim.card stops the cores; then the OS frees all
            finalize.atexit = False
        # The TLB-fill hook and the cycle counter are C (sim/native/hooks.c): they run on the
        # fast path. Their state: this core's span table and counters.
        self.native = hooks.CoreState(
            core=number,
            reg_read=ctypes.cast(uclib.uc_reg_read, ctypes.c_void_p).value,
            reg_pc=UC_RISCV_REG_PC,
            reg_ra=UC_RISCV_REG_RA,
        )
        self._span_table()
        self.native.emu_stop = ctypes.cast(uclib.uc_emu_stop, ctypes.c_void_p).value
        self._tlb_entries = TLB_FIRST_ENTRIES
        self._grow_at = 2 * TLB_FIRST_ENTRIES
        self._add_native_hook(UC_HOOK_TLB_FILL, "tlb_fill")
        # The block hook counts cycles and ends turns of exact length (several cores);
        # added before the first run, as later hooks may not fire.
        self._counts = cluster.image.uses_cycles or cluster.core_count > 1
        if self._counts:
            self._add_native_hook(UC_HOOK_BLOCK, "count_block")
            self.native.counting = 1
        uc.hook_add(UC_HOOK_INTR, self._exception)
        uc.reg_write(UC_RISCV_REG_MSTATUS, uc.reg_read(UC_RISCV_REG_MSTATUS) | MSTATUS_FS)
        uc.reg_write(UC_RISCV_REG_SP, stack_top)
        uc.reg_write(UC_RISCV_REG_A0, number)
        self.pc = entry
        # emu_start's `until` must be a mapped address: Unicorn looks its page up
        # (unicorn issue 2376). The start code's halt loop, right after the exit call.
        self._halt = halt

    def map(self, span) -> None:
        """Map one more span of the address space (before the first run)."""
        self.uc.mem_map_ptr(span.base, span.size, UC_PROT_ALL, span.host_address)
        self._span_table()

    def _span_table(self) -> None:
        """The address space as hooks.c searches it: the spans, sorted, with their kinds
        and cache regions."""
        spans = self._memory.spans
        table = (hooks.SpanEntry * len(spans))()
        for entry, span in zip(table, spans):
            entry.base, entry.end = span.base, span.end
            entry.kind = hooks.SPAN_KINDS[span.kind]
            entry.host = hooks.host_pointer(span.host_address)
            if span.region is not None:
                entry.region = ctypes.pointer(span.region.state)
        self._spans = table  # kept alive for as long as the hooks may read it
        self.native.spans = table
        self.native.span_count = len(spans)

    def _add_native_hook(self, kind: int, name: str) -> None:
        handle = ctypes.c_size_t()
        status = uclib.uc_hook_add(
            self.uc._uch, ctypes.byref(handle), kind, hooks.function(name),
            ctypes.addressof(self.native), 1, 0,
        )
        if status != 0:
            raise UcError(status)

    @property
    def cycles(self) -> int:
        """Instructions begun, counted by the block hook (a thread that calls kmx_cycles or
        runs on several cores)."""
        return self.native.cycles

    @cycles.setter
    def cycles(self, value: int) -> None:
        self.native.cycles = value

    # -- running --------------------------------------------------------------------------

    def run(self, count: int = 0) -> None:
        """Run until the core exits, blocks, is interrupted or has run COUNT instructions
        (0: no limit). A fault raises CoreFault."""
        if count and not self._counts:
            raise ValueError("a turn of exact length needs the block hook (a core of several)")
        self._stopped_by_call = False
        native = self.native
        native.bad_access = 0
        native.budget_on, native.remaining, native.partial = int(count > 0), count, 0
        native.grow_at = self._grow_at
        try:
            while True:
                self.uc.emu_start(self.pc, self._halt)
                self.pc = self.uc.reg_read(UC_RISCV_REG_PC)
                if not self._go_on():
                    break
            if native.partial:  # the turn ends inside the next block
                native.partial = 0
                self._run_partial_block(native.remaining)
            self.cluster.raise_hook_error()
        except CoreFault:
            self.state = FAULTED
            raise
        except UcError as error:
            self.state = FAULTED
            raise self._fault_from(error) from None
        finally:
            native.budget_on = 0

    def _run_partial_block(self, left: int) -> None:
        """Run the first LEFT instructions of the block at pc, which the block hook
        stopped before (sim/native/hooks.c, count_block): up to an `until` address. The engine
        stops at `until` only in blocks it translates with it in mind, so the block's
        translation is dropped before, and the short one after."""
        if left == 0:
            return
        start, size = self.native.block_address, self.native.block_size
        code = self._memory.peek(start, size)
        offset = 0
        for _ in range(left):
            offset += decode.length(code[offset] | code[offset + 1] << 8)
        self.native.budget_on = 0
        self.native.grow_at = 0
        self.uc.ctl_remove_cache(start, start + size)
        try:
            self.uc.emu_start(start, start + offset)
        finally:
            self.uc.ctl_remove_cache(start, start + size)
            self.native.grow_at = self._grow_at
        self.pc = self.uc.reg_read(UC_RISCV_REG_PC)

    def _go_on(self) -> bool:
        """The run stopped for the engine's sake: to let its TLB grow (sim/native/hooks.c), or
        after a fence.i. Do what it stopped for, and say whether to go on."""
        grow, fenced = self.native.grow, self._fenced
        self.native.grow, self._fenced = 0, False
        if fenced:
            self.drop_translations()
        if not (grow or fenced) or self._stopped_by_call or self._interrupted or self.state != READY:
            return False  # the run would have ended here anyway
        if grow:  # a flush doubles the TLB while it is mostly in use
            self.flush_tlb()
            self._tlb_entries *= 2
            self._grow_at = self.native.refills + 2 * self._tlb_entries if self._tlb_entries < TLB_MAX_ENTRIES else 0
            self.native.grow_at = self._grow_at
        return True

    def interrupt(self) -> None:
        """Stop the engine (from any thread; nothing once the engine is closed)."""
        with self._engine:
            self._interrupted = True
            if self.uc is not None:
                self.uc.emu_stop()

    def flush_tlb(self) -> None:
        """Forget every translation, so that each page comes through the fill hook again."""
        self.uc.ctl(ucc.UC_CTL_TLB_FLUSH, ucc.UC_CTL_IO_WRITE)

    def drop_translations(self) -> None:
        """Forget the code the engine translated (and hooks.c's counts of its blocks), so
        that what runs next is what memory holds now: the core's fence.i."""
        self.uc.ctl_flush_tb()
        hooks.forget_blocks(self.native)

    def close(self) -> None:
        """Free the engine and its code cache now (not whenever the cyclic garbage
        collector finds them: the hooks make a cycle), once it will not run again."""
        with self._engine:
            uc, self.uc = self.uc, None
        if uc is None:
            return
        uc._callbacks.clear()  # the hooks' closures refer back to this core
        finalize = getattr(uc, "_Uc__finalizer", None)
        if finalize is not None:
            finalize()  # uc_close, once

    # -- what the trap layer uses ---------------------------------------------------------

    def call_arguments(self) -> tuple[int, int, int, int]:
        """The kmx call number (a7) and its arguments (a0, a1, a2)."""
        return self.uc.reg_read_batch(
            [UC_RISCV_REG_A7, UC_RISCV_REG_A0, UC_RISCV_REG_A1, UC_RISCV_REG_A2]
        )

    def current_pc(self) -> int:
        return self.uc.reg_read(UC_RISCV_REG_PC)

    def set_return(self, value: int) -> None:
        self.uc.reg_write(UC_RISCV_REG_A0, value & 0xFFFF_FFFF_FFFF_FFFF)

    def stop_here(self) -> None:
        """End the current emu_start after the instruction that trapped."""
        self._stopped_by_call = True
        self.uc.emu_stop()

    # -- hooks ------------------------------------------------------------------------------

    def _exception(self, uc, number: int, _data) -> None:
        if number == ECALL:
            self.cluster.traps.dispatch(self)
            return
        pc = self._trapping_pc(uc.reg_read(UC_RISCV_REG_PC))
        cause = EXCEPTIONS.get(number, f"RISC-V exception {number}")
        if number == 2:
            what = self._trapped(pc)
            if what is not None:
                self._run_trapped(what)
                return
            insn = self._instruction_at(pc)
            if not self.cluster.in_code(pc):
                cause = f"{cause} ({insn}) at {pc:#x}, {self.cluster.describe_address(pc, fetch=True)}"
            elif insn in ("instruction 0x0000", "instruction 0xc0001073"):  # (c.)unimp
                cause = f"a trap instruction ({insn}, unimp: what __builtin_trap() compiles to): the thread stopped itself on purpose"
            else:
                cause = f"{cause} ({insn}). {ILLEGAL_HELP}"
        elif number in (4, 6):
            cause = self._misaligned(pc, cause)
        raise self.fault(pc, cause)

    def _trapped(self, pc: int) -> stand_in.Trapped | None:
        """The instruction at PC, when it is one the simulator runs (sim.isa.stand_in): placed by
        the loader, or a read of the time CSR (in code the thread wrote, say)."""
        try:
            insn = self._instruction(pc)
        except Exception:
            return None
        placed = self.cluster.image.traps.get(pc - self.cluster.image_base)
        if placed is not None and insn == placed.replacement:  # (unless the thread wrote there since)
            return placed
        what = stand_in.trapped(insn) if decode.length(insn & 0xFFFF) == 4 else None
        return what if what is not None and what.counter == "time" else None

    def _run_trapped(self, what: stand_in.Trapped) -> None:
        """Do what the X280 does for WHAT, and go on after it (the engine's pc is there)."""
        if what.fence_i:  # drop the translations once the engine has stopped (sim.hart.core.run)
            self._fenced = True
            self.uc.emu_stop()
        elif what.rd:
            value = stand_in.counter_value(what.counter, self.native.cycles)
            self.uc.reg_write(UC_RISCV_REG_X0 + what.rd, value & 0xFFFF_FFFF_FFFF_FFFF)

    def _misaligned(self, pc: int, cause: str) -> str:
        """Plain loads and stores may be misaligned (the engine, like the X280, carries
        them out); an atomic may not."""
        try:
            insn = self._instruction(pc)
            address = decode.effective_address(insn, lambda n: self.uc.reg_read(UC_RISCV_REG_X0 + n))
        except Exception:
            return cause
        if insn & 0x7F == 0x2F and address is not None:
            size = 8 if (insn >> 12) & 7 == 3 else 4
            return (
                f"a misaligned atomic access to {address:#x}, {self.cluster.describe_address(address)}: "
                f"RV64A atomics (amo*, lr, sc) need an address that is a multiple of their size, "
                f"{size} bytes"
            )
        return f"{cause} at {address:#x}" if address is not None else cause

    # -- faults -----------------------------------------------------------------------------

    @staticmethod
    def _trapping_pc(pc: int) -> int:
        """Unicorn 2.1 adds 4 to pc before it reports any RISC-V exception, whatever the
        instruction's length (unicorn issue 1990; pull request 2384 would change it): the
        instruction that trapped is 4 bytes back, for a compressed one too."""
        return pc - 4

    def _instruction(self, pc: int) -> int:
        low = struct.unpack("<H", self._memory.peek(pc, 2))[0]
        if decode.length(low) == 2:
            return low
        return struct.unpack("<I", self._memory.peek(pc, 4))[0]

    def _instruction_at(self, pc: int) -> str:
        """The instruction at PC, for a message: 0x0001 (compressed) or 0x0000000b."""
        try:
            insn = self._instruction(pc)
        except Exception:
            return "instruction not readable"
        width = 4 if decode.length(insn & 0xFFFF) == 2 else 8
        return f"instruction {insn:#0{width + 2}x}"

    def _fault_from(self, error: UcError) -> CoreFault:
        pc = self.uc.reg_read(UC_RISCV_REG_PC)
        if self.native.bad_access:
            address, access = self.native.bad_address, self.native.bad_access
            try:  # the hook saw only the page; the instruction tells the byte
                exact = decode.effective_address(
                    self._instruction(pc), lambda n: self.uc.reg_read(UC_RISCV_REG_X0 + n)
                )
                if exact is not None and exact & ~(PAGE - 1) == address:
                    address = exact
            except Exception:
                pass
            what = {UC_MEM_FETCH: "an instruction fetch from", UC_MEM_WRITE: "a store to"}.get(
                access, "a load from"
            )
            fetch = access == UC_MEM_FETCH
            if fetch and pc & ~(PAGE - 1) == address:
                address = pc  # the jump's target itself, not just its page
            cause = f"{what} {address:#x}, {self.cluster.describe_address(address, fetch)}"
            if fetch:  # the jump's own pc is lost; ra tells where a call came from
                return self.fault(address, cause, came_from=self.uc.reg_read(UC_RISCV_REG_RA))
        elif error.errno == ucc.UC_ERR_INSN_INVALID:
            insn = self._instruction_at(pc)
            if insn in ("instruction 0x00100073", "instruction 0x9002"):  # ebreak, c.ebreak
                cause = f"an ebreak ({insn}): a breakpoint, and no debugger is attached"
            else:
                cause = f"an instruction the engine cannot run ({insn}). {ILLEGAL_HELP}"
        else:
            cause = f"the engine stopped: {error}"
        return self.fault(pc, cause)

    def fault(self, pc: int, cause: str, came_from: int | None = None) -> CoreFault:
        """A CoreFault at PC, with its source line and a backtrace through frame pointers
        (after CAME_FROM, a return address, when PC was reached by a bad jump)."""
        frames = self.cluster.frames(pc, self.uc.reg_read(UC_RISCV_REG_S0))
        if came_from and self.cluster.source_line(came_from - 2) is not None:
            frames.insert(1, Frame(came_from - 2, self.cluster.source_line(came_from - 2)))
        named = self._user_frame(frames)
        return CoreFault(self.cluster.number, self.number, pc, cause, named.source, frames, named.pc)

    def user_frame(self, pc: int, fp: int) -> Frame:
        """The frame of the user's code that led to PC (FP: the frame pointer, s0)."""
        return self._user_frame(self.cluster.frames(pc, fp))

    def _user_frame(self, frames: list[Frame]) -> Frame:
        # The first frame outside the runtime (a kmx call's wrapper in kmx.h is a frame
        # of its own), or PC's own when none is.
        return next(
            (f for f in frames if f.source and not self.cluster.in_runtime(f.source)), frames[0]
        )
