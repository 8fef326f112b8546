"""Why a core stopped, in words: the cause of a fault, from what the engine and the
native hooks left (the exception's number, the access the memory refused, the vector
unit's refused element, the cache registers' refused access) and what the thread's code
and memory are (sim.hart.explain). A core (sim.hart.core) keeps its running; this module
keeps the words.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Protocol

from ..._records import Category
from ..cache import registers
from ..isa import decode, target, vector
from ..layout import PAGE
from ..memory.address_space import MemoryAccessError
from . import engine as engines
from .engine import EngineError
from .faults import CoreFault

if TYPE_CHECKING:
    from .explain import Explainer
    from ..native import hooks


class Context(Protocol):
    """What a hart's faults name of its cluster (sim.hart.core.HartContext is one)."""

    cluster: int
    explainer: "Explainer"


class Hart(Protocol):
    """The core whose faults a Diagnosis words (sim.hart.core.Core is one). The core imports
    this module, so this one names the core by what it reads of it, not by its class."""

    number: int
    context: Context
    engine: "engines.Engine | None"
    native: "hooks.CoreState"

    def vector_state(self) -> "hooks.VectorState": ...

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
ILLEGAL = 2
MISALIGNED = (4, 6)
REFUSED = (5, 7)  # a load or a store the memory refused (an flh or fsh, from isa.c)
ILLEGAL_HELP = (
    f"The simulated X280 runs {target.RUNS} (its vector unit with VLEN {target.VLEN}) and the "
    "cycle, instret and time counters."
)
TRAPS = ("instruction 0x0000", "instruction 0xc0001073")  # (c.)unimp: __builtin_trap()
EBREAKS = ("instruction 0x00100073", "instruction 0x9002")  # ebreak, c.ebreak


class Diagnosis:
    """The words for CORE's faults."""

    def __init__(self, core: Hart) -> None:
        self._core = weakref.proxy(core)  # (no cycle: a core is freed, memory files and all, once dropped)
        self._explain = core.context.explainer

    def exception(self, pc: int, number: int) -> str:
        """The cause of exception NUMBER at PC (no ecall, and no instruction the simulator
        runs in the engine's place: sim.hart.core takes those)."""
        cause = EXCEPTIONS.get(number, f"RISC-V exception {number}")
        if number == ILLEGAL:
            insn = self._explain.instruction_text(pc)
            if not self._explain.in_code(pc):
                return f"{cause} ({insn}) at {pc:#x}, {self._explain.describe_address(pc, fetch=True)}"
            if insn in TRAPS:
                return f"a trap instruction ({insn}, unimp: what __builtin_trap() compiles to): the thread stopped itself on purpose"
            return self.illegal(pc, insn, cause)
        if number in MISALIGNED:
            return self.misaligned(pc, cause)
        return cause

    def illegal(self, pc: int, insn: str, cause: str) -> str:
        """What an illegal instruction at PC is: of an extension the X280 lacks, a vector
        instruction the vector unit refused, or none at all."""
        try:
            bits = self._explain.instruction(pc)
        except MemoryAccessError:
            return f"{cause} ({insn}). {ILLEGAL_HELP}"
        known = decode.lacking(bits)
        if known is None:
            return f"{cause} ({insn}). {ILLEGAL_HELP}"
        extension, name = known
        if extension == "V":
            return self.vector_refused(bits, name, insn)
        if extension == "SiFive cache":
            return (
                f"an instruction of SiFive's L1 cache ({name}, {insn}): the card's X280 traps on it "
                "too (an illegal instruction, measured on a P300: it is an M-mode instruction). "
                "Flush a line through the L3's register CCACHE0_FLUSH64 instead (kmx_cache.h: "
                "kmx_cache_flush_line), or a whole region with kmx_flush and kmx_invalidate"
            )
        return (
            f"an instruction of {extension} ({decode.EXTENSIONS[extension]}: {name}, {insn}), which "
            f"the X280 does not have. {ILLEGAL_HELP}"
        )

    def vector_refused(self, bits: int, name: str, insn: str) -> str:
        """Why the vector unit (sim/native/vector/, which runs every vector instruction it
        can) refused the vector instruction NAME: vtype is illegal, or the encoding is one
        RVV 1.0 reserves, or one the simulator does not run."""
        state = self._core.vector_state()
        where = f"vl {state.vl}, vtype {vector.vtype_text(state.vtype)}"
        frm = self._core.engine.read("frm") & 7
        if vector.is_float(bits) and frm > 4 and not state.vtype & vector.VILL:
            return (
                f"a vector floating-point instruction ({name}, {insn}) while frm holds {frm}, a reserved "
                f"rounding mode ({where}): an instruction that rounds by frm is illegal then. Set frm to "
                f"0 to 4 (fesetround in C, or csrwi frm)"
            )
        if state.vtype & vector.VILL:
            return (
                f"a vector instruction ({name}, {insn}) while vtype is illegal ({where}): then every vector "
                f"instruction is illegal but vsetvli, vsetivli and vsetvl and the whole-register loads, stores "
                f"and moves. Set vtype with a vsetvli first"
            )
        return (
            f"a vector instruction ({name}, {insn}) that the vector unit refuses ({where}): an encoding "
            f"RVV 1.0 reserves (a register group not aligned to its LMUL, a destination overlapping a "
            f"source where the spec forbids it, a masked instruction writing v0, an element width or "
            f"group past what the X280 has, a vstart the instruction does not take), or one of the few "
            f"vector instructions the simulator does not run yet"
        )


    def misaligned(self, pc: int, cause: str) -> str:
        """Plain loads and stores may be misaligned (the engine, like the X280, carries
        them out); an atomic may not."""
        try:
            insn = self._explain.instruction(pc)
            address = decode.effective_address(insn, self._core.engine.x)
        except MemoryAccessError:
            return cause
        if insn & 0x7F == 0x2F and address is not None:
            size = 8 if (insn >> 12) & 7 == 3 else 4
            return (
                f"a misaligned atomic access to {address:#x}, {self._explain.describe_address(address)}: "
                f"RV64A atomics (amo*, lr, sc) need an address that is a multiple of their size, "
                f"{size} bytes"
            )
        return f"{cause} at {address:#x}" if address is not None else cause


    def refused(self, pc: int) -> CoreFault:
        """The fault of the access at PC that the fill hook refused (native.refused)."""
        address, access = self._core.native.refused.address, self._core.native.refused.access
        try:  # the hook saw only the page; the instruction tells the byte (a vector one: below)
            bits = self._explain.instruction(pc)
            exact = None if vector.is_memory(bits) else decode.effective_address(bits, self._core.engine.x)
            if exact is not None and exact & ~(PAGE - 1) == address:
                address = exact
        except MemoryAccessError:
            pass
        what = {engines.FETCH: "an instruction fetch from", engines.WRITE: "a store to"}.get(access, "a load from")
        fetch = access == engines.FETCH
        element = self.vector_element(pc, address)
        if element is not None:  # (a vector load's or store's element: its own address)
            address, detail = element
            what = f"{detail}: {what}"
        if fetch and pc & ~(PAGE - 1) == address:
            address = pc  # the jump's target itself, not just its page
        cause = f"{what} {address:#x}, {self._explain.describe_address(address, fetch)}"
        if fetch:  # the jump's own pc is lost; ra tells where a call came from
            return self.fault(address, cause, came_from=self._core.engine.read("ra"))
        return self.fault(pc, cause)

    def device_fault(self) -> CoreFault:
        """The fault of an access to the cache's registers that _device_refused found."""
        device = self._core.native.device
        address, size, store = device.fault_address, device.fault_size, bool(device.fault_write)
        device.fault_size = 0
        pc = device.fault_pc  # (the access's own: sim/native/events.c's walk of the block, core_access_pc)
        try:  # the engine hands a device an 8-byte access as two of 4: the instruction's size
            access = decode.memory_access(self._explain.instruction(pc))
            size = access[1] if access is not None else size
        except MemoryAccessError:
            pass
        block = registers.describe(address)
        what = f"{'an' if size == 8 else 'a'} {size}-byte {'store to' if store else 'load from'} {address:#x}, {block}"
        flushed = registers.flush_of_no_memory(address, size, device.fault_value) if store else None
        if flushed:  # (on a card the flush would do nothing, silently: the thread meant something else)
            return self.fault(pc, f"{what}. {flushed}")
        return self.fault(pc, f"{what}. {registers.SIMULATED}", category=Category.NOT_SIMULATED)

    def vector_element(self, pc: int, page: int) -> tuple[int, str] | None:
        """(the address, what it was) of the element a vector load or store at PC was
        refused at (the unit recorded it, sim/native/vector/memory.c), when it is one."""
        try:
            insn = self._explain.instruction(pc)
        except MemoryAccessError:
            return None
        if not vector.is_memory(insn):
            return None
        state = self._core.vector_state()
        start = state.refused_address
        # (the element's first byte's page, or the next one when the element runs into it)
        if state.refused < 0 or page not in (start & ~(PAGE - 1), (start + 7) & ~(PAGE - 1)):
            return None
        return max(start, page), (f"element {state.refused} of {vector.memory_name(insn)} "
                                  f"(vl {state.vl}, vtype {vector.vtype_text(state.vtype)})")

    def of_engine_error(self, error: EngineError) -> CoreFault:
        pc = self._core.engine.read("pc")
        if self._core.native.refused.access:
            return self.refused(pc)
        if error.invalid_instruction:
            insn = self._explain.instruction_text(pc)
            if insn in EBREAKS:
                cause = f"an ebreak ({insn}): a breakpoint, and no debugger is attached"
            else:
                cause = f"an instruction the engine cannot run ({insn}). {ILLEGAL_HELP}"
        else:  # (what the simulator cannot explain it does not blame on the thread)
            return self.fault(pc, f"the engine stopped: {error}", category=Category.SIMULATOR)
        return self.fault(pc, cause)

    def fault(self, pc: int, cause: str, came_from: int | None = None,
              category: Category = Category.MISTAKE) -> CoreFault:
        """A CoreFault at PC in CATEGORY, with its source line and a backtrace through
        frame pointers (after CAME_FROM, a return address, when PC was reached by a bad jump)."""
        fp = self._core.engine.read("fp") if self._core.engine is not None else 0
        return self._explain.fault(self._core.context.cluster, self._core.number, pc, fp, cause, came_from, category)
