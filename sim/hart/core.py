"""One X280 hart: an engine (sim.hart.engine) running the thread's code.

The engine's own TLB is the fast path: loads and stores to a page it has translated run at
full speed with no Python. Its virtual-TLB fill hook is the slow path, called once a page
(and again on the first store to a page first filled for reading): that is where the
cluster's cache model learns of fills and writes (sim.cache.model). ecalls (kmx calls)
reach the trap table (sim.kmx.traps) through the exception hook; the instructions the
simulator runs in the engine's place (sim.isa.stand_in) too; any other exception ends the
thread.
"""

from __future__ import annotations

import ctypes
import functools
import struct
import threading
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..._records import Category
from ..isa import decode, stand_in
from ..layout import PAGE
from ..memory import host
from ..memory.address_space import MemoryAccessError
from ..native import hooks
from . import engine as engines
from .engine import ECALL, Engine, EngineError
from .diagnosis import ILLEGAL, REFUSED, Diagnosis
from .faults import CoreFault
from .mapping import Mapping

if TYPE_CHECKING:
    from .explain import Explainer
    from ..image.elf import ThreadImage
    from ..image.original import Original
    from ..memory.address_space import AddressSpace
    from ..timing.model import ClusterTiming


# Unicorn 2.1 has moved pc 4 bytes past the instruction that trapped when it reports an
# exception, whatever the instruction's length (unicorn issue 1990; pull request 2384
# would change it): how far, at an illegal instruction and at an ecall, is probed once
# per process (conventions). An ecall is 4 bytes; a core stopped in one is past it.
ECALL_BYTES = 4
SH1ADD_T0_T1_T2 = 0x2073_22B3  # sh1add t0, t1, t2: an instruction the engine lacks
ECALL_INSN = 0x0000_0073


@dataclass(frozen=True)
class Conventions:
    """How far past the instruction that trapped the engine's pc is, in the hook."""

    illegal_past: int
    ecall_past: int


@functools.lru_cache(maxsize=None)
def conventions() -> Conventions:
    """The engine's pc conventions, probed on one engine: one instruction it lacks, one ecall."""
    code = host.anonymous(PAGE)
    code.array[:8] = np.frombuffer(struct.pack("<II", SH1ADD_T0_T1_T2, ECALL_INSN), np.uint8)
    engine = Engine()
    base = 0x1000_0000
    engine.map(base, PAGE, code.address)
    native = hooks.CoreState()
    span = (hooks.SpanEntry * 1)()
    span[0].base, span[0].end, span[0].kind = base, base + PAGE, hooks.SPAN_IMAGE
    span[0].host = hooks.host_pointer(code.address)
    native.table.spans, native.table.count = span, 1
    native.engine.reg_read, native.engine.emu_stop = engines.C_REG_READ, engines.C_EMU_STOP
    native.isa.probing = 1
    seen = []

    def on_trap(number: int) -> None:
        seen.append(engine.read("pc"))
        engine.stop()

    native.isa.on_trap = hooks.TRAP(on_trap)
    try:
        engine.hook_native("tlb_fill", hooks.function("tlb_fill"), ctypes.addressof(native))
        engine.hook_native("interrupt", hooks.function("isa_trap"), ctypes.addressof(native))
        engine.run(base, base + 8)
        # (an engine that ran the sh1add itself never trapped: then the documented 4)
        illegal = native.isa.probed_pc - base if native.isa.probed_pc else ECALL_BYTES
        engine.run(base + 4, base + 8)
        ecall = seen[0] - (base + 4) if seen else ECALL_BYTES
    finally:
        engine.close()
    return Conventions(int(illegal), int(ecall))

# The engine's TLB (QEMU's): 2**8 entries at first, at most 2**22; a flush doubles it when
# more than 70% of it was used since the last (sim/native/fill.c, maybe_grow).
TLB_FIRST_ENTRIES = 1 << 8
TLB_MAX_ENTRIES = 1 << 22


class State(str, Enum):
    READY = "ready"
    BLOCKED = "blocked"  # in a kmx call that waits (blocked_in says which)
    EXITED = "exited"  # returned from kmx_main
    FAULTED = "faulted"


READY, BLOCKED, EXITED, FAULTED = State.READY, State.BLOCKED, State.EXITED, State.FAULTED


@dataclass(frozen=True)
class HartContext:
    """What a hart sees of its cluster: its number, the address space, the thread's image
    (placed at IMAGE_BASE), the explaining, and the two calls out: ON_ECALL(core) for a kmx
    call, CHECK_HOOKS() after a run, which raises what went wrong in a hook of the cache."""

    cluster: int
    memory: "AddressSpace"
    image: "ThreadImage"
    image_base: int
    explainer: "Explainer"
    counting: bool  # the block hook counts instructions (kmx_cycles, or several cores)
    on_ecall: Callable[["Core"], None]
    check_hooks: Callable[[], None]
    forget_translations: Callable[[], None] = lambda: None  # every core's TLB of the cluster goes
    interpret: bool = True  # after an instruction the engine lacks, interpret hot code (isa.c)
    # A turn that ends inside a block runs its last instructions in the interpreter (isa.c,
    # isa_finish_turn) as far as it can, and only the rest through a block translated anew
    # for them: the same instructions, the same counts, without a translation a turn. (False:
    # every such rest through the engine, as the tests compare.)
    finish_turns_in_c: bool = True
    # the cluster's lr reservations, where another core may store between a core's lr and sc (reserve.c)
    reservations: hooks.Reservations | None = None
    original: "Original | None" = None  # the image's changed code as written (sim/native/code.c)
    timing: "ClusterTiming | None" = None  # the timing model (sim.timing): the cluster's part


class Core:
    """Hart NUMBER: enters ENTRY with its stack at STACK_TOP, a0 = NUMBER and a1, a2 =
    ARGUMENTS, and runs until HALT, where the start code goes once kmx_main has returned."""

    def __init__(self, number: int, context: HartContext, entry: int, halt: int, stack_top: int,
                 arguments: tuple[int, ...] = ()) -> None:
        self.number = number
        self.context = context
        self.state = READY
        self.code: int | None = None
        self.waiting: Callable[[], bool] | None = None  # a kmx call still to complete
        self.blocked_in = ""  # the kmx call it waits in: "kmx_barrier" or "kmx_submit"
        self._stopped_by_call = False  # the last run ended in a kmx call, not its count
        self.yielded = False  # the last run ended as the core waits for another (sched_yield, futex, sleep)
        self._interrupted = False  # stopped from outside: the run is over
        self._fenced = False  # the core ran fence.i: its translations go before it goes on
        self._engine_lock = threading.Lock()  # between interrupt (any thread) and close
        self._where_asked = False  # another thread asks where the running core is (`place`)
        self.pause_wanted = False  # a debugger asks the core to stop where it is (sim/debug/)
        self.parked = False  # a debugger holds it (at kmx_main, till every core is there): no turns
        # Why the last run ended early for a debugger (sim/debug/): ("breakpoint", pc),
        # ("watch", pc, address, access: engine.READ or WRITE), ("pause", pc); else None.
        self.debug_stop: tuple | None = None
        self.uncounted: list[tuple[int, int, int]] = []  # blocks' rests not run: (from, end, profile node)
        self._where_told = threading.Event()  # and is told: (pc, frame pointer)
        self._where: tuple[int, int] | None = None
        self._explain = context.explainer
        self.diagnosis = Diagnosis(self)  # the words of its faults
        self._conventions = conventions()
        self._pending: BaseException | None = None  # raised in a hook, for run to raise
        self.engine: Engine | None = Engine()
        # The TLB-fill hook, the cycle counter and the instructions the engine lacks are
        # C (sim/native/): they run on the fast path. Their state: this core's span table,
        # counters and the interpreter's memory.
        self.native = hooks.CoreState(engine=hooks.EngineCalls(
            reg_read=engines.C_REG_READ, reg_pc=engines.REG_PC, reg_ra=engines.REG_RA,
            emu_stop=engines.C_EMU_STOP, core=number, ctl=engines.C_CTL,
            emu_start=engines.C_EMU_START, uc=self.engine.handle,
        ))
        self._reserving = False  # (one of its cluster's cores for lr/sc: reserve_in)
        if context.reservations is not None:
            self.reserve_in(context.reservations)
        if context.original is not None:
            self.native.original = ctypes.pointer(context.original.state)
        self._scratch = np.zeros(hooks.scratch_size(), np.uint8)  # (zeros: calloc's, untouched pages)
        isa = self.native.isa
        isa.reg_write, isa.translate = engines.C_REG_WRITE, engines.C_TRANSLATE
        isa.on_trap = hooks.TRAP(self._on_trap)
        isa.illegal_past = self._conventions.illegal_past
        isa.interpret = int(context.interpret)
        isa.scratch = self._scratch.ctypes.data
        isa.page_generation = isa.code_generation = 1
        stubs = context.image.stubs  # (the loader's RV64GC for Zba and Zbb: sim.isa.rewrite)
        if stubs.end > stubs.start:
            self.native.turn.uncounted_start = context.image_base + stubs.start
            self.native.turn.uncounted_end = context.image_base + stubs.end
        self.mapping = Mapping(self.engine, self.native, context.memory, context.counting)
        self.timing = context.timing.core(number) if context.timing is not None else None
        if self.timing is not None:  # (its clock: sim/native/timing.c)
            self.native.timing = self.timing.address
        self._tlb_entries = TLB_FIRST_ENTRIES
        self._grow_at = 2 * TLB_FIRST_ENTRIES
        self.engine.write("sp", stack_top)
        for register, value in zip(("a0", "a1", "a2"), (number, *arguments)):
            self.engine.write(register, value)
        self.pc = entry
        # The engine's `until` must be a mapped address: Unicorn looks its page up
        # (unicorn issue 2376). The start code's halt loop, right after the exit call.
        self._halt = halt

    def map(self, span) -> None:
        """Map one more span of the address space (before the first run)."""
        self.mapping.add(span)

    def reserve_in(self, reservations: hooks.Reservations) -> None:
        """Be one of RESERVATIONS, its cluster's cores for lr/sc, so that a store by another
        core, or past the cache, to the line its lr reserved clears the reservation, and its
        stores clear theirs (sim/native/reserve.c)."""
        self.native.reservations = ctypes.pointer(reservations)
        reservations.cores[self.number] = ctypes.addressof(self.native)
        self._reserving = True

    def stored(self, address: int, size: int) -> None:
        """Python stored SIZE bytes at ADDRESS on this core's behalf (a kmx call, a system
        call, gdb): another core's lr reservation of those bytes ends (sim/native/reserve.c)."""
        if self._reserving:
            hooks.library().reservations_stored(self.native.reservations, self.number, address, size)

    def native_arguments(self) -> tuple[object, int] | tuple[None, None]:
        """What the native hooks' region_access takes for this core: its state and its engine
        (None, None once the engine is closed)."""
        if self.engine is None:
            return None, None
        return ctypes.byref(self.native), self.engine.handle

    # -- the door for time (sim/native/latency.c) ------------------------------------------

    def time_memory(self, latency, per_line) -> None:
        """From now on each access of this core's to a region that C sees answers
        LATENCY[level] + PER_LINE[level] * lines cycles, for each of hooks.LEVELS levels
        (hooks.LEVEL_NAMES), summed in memory_cycles. None, None: no table (the default,
        where a core's cycles count its instructions): every access answers 0."""
        if latency is None:
            self._memory_tables = None
            self.native.memory.latency = self.native.memory.per_line = None
            return
        tables = tuple(np.array(t, np.uint32) for t in (latency, per_line))
        if any(t.shape != (hooks.LEVELS,) for t in tables):
            raise ValueError(f"a latency table has {hooks.LEVELS} entries, one for each of {hooks.LEVEL_NAMES}")
        self._memory_tables = tables  # (kept alive: C reads them)
        self.native.memory.latency, self.native.memory.per_line = (
            t.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)) for t in tables)

    @property
    def memory_cycles(self) -> int:
        """The cycles this core's accesses took, by the table time_memory gave (0: none)."""
        return int(self.native.memory.cycles)

    @property
    def memory_accesses(self) -> dict[str, int]:
        """How many of this core's accesses the door answered, by level (time_memory)."""
        return dict(zip(hooks.LEVEL_NAMES, (int(n) for n in self.native.memory.accesses)))

    @property
    def cycles(self) -> int:
        """Instructions begun, counted by the block hook (a thread that calls kmx_cycles or
        reads a counter, or runs on several cores)."""
        return self.native.turn.cycles

    @cycles.setter
    def cycles(self, value: int) -> None:
        self.native.turn.cycles = value

    @property
    def clock(self) -> int:
        """The core's clock, what kmx_cycles and rdcycle read: the timing model's cycles
        (km.Session(timing=...): sim/native/timing.c), else its instructions."""
        return self.timing.cycles if self.timing is not None else self.native.turn.cycles

    def vector_state(self) -> hooks.VectorState:
        """The core's vector unit: v0-v31, vl, vtype, vstart, vxrm, vxsat (sim/native/vector/)."""
        return hooks.vector_state(self._scratch.ctypes.data)

    # -- running --------------------------------------------------------------------------

    def run(self, count: int = 0) -> None:
        """Run until the core exits, blocks, is interrupted or has run COUNT instructions
        (0: no limit). A fault raises CoreFault."""
        if count and not self.context.counting:
            raise ValueError("a turn of exact length needs the block hook (a core of several)")
        self.before_turns()
        native = self.native
        native.refused.access = native.refused.watch = 0
        native.turn.budget_on, native.turn.remaining, native.turn.partial = int(count > 0), count, 0
        self._run_turn(None)

    def before_turns(self) -> None:
        """What a turn starts from: no call stopped it yet, no debugger's stop (before the
        turn loop runs any of the core's turns: sim/native/sched.c, which hands Python
        every turn a call of Python's ends)."""
        self._stopped_by_call = self.yielded = False
        self.native.tlb.grow_at = self._grow_at
        self.debug_stop = None

    def finish_turn(self, pc: int, error: int) -> None:
        """The turn loop (sim/native/sched.c) ran the engine for this core's turn, which
        stopped at PC with the engine's ERROR (0: none) for something Python does: go on
        as `run` does after the engine. A fault raises CoreFault."""
        self.pc = pc
        self._run_turn(error)

    def _run_turn(self, ran: int | None) -> None:
        """The turn `run` began, or the turn loop's, whose engine RAN already with that
        error (0: none)."""
        native = self.native
        try:
            while True:
                try:
                    if ran is None:
                        self.engine.run(self.pc, self._halt)
                    elif ran:
                        raise EngineError.of_code(ran)
                    ran = None
                except EngineError:
                    if not native.refused.watch:
                        raise
                    self.pc = self.engine.read("pc")  # (a debugger's watchpoint: the access was not done)
                    self._watch_stop(self.pc)
                    break
                self.pc = self.engine.read("pc")
                if self._pending is not None:  # raised in the interrupt hook
                    error, self._pending = self._pending, None
                    raise error
                if self._device_refused():
                    raise self.diagnosis.device_fault()
                if native.turn.breakpoint_hit and self._breakpoint_stop():
                    break
                if self.debug_stop is not None or not self._go_on():
                    break
            if native.turn.partial:  # the turn ends inside the next block
                native.turn.partial = 0
                self._run_partial_block(native.turn.remaining)
                if self._device_refused():
                    raise self.diagnosis.device_fault()
            self.context.check_hooks()
        except CoreFault as fault:
            self.state = FAULTED
            self.uncount_rest(fault.pc, including=False)  # (the rest of its block never ran)
            raise
        except EngineError as error:
            self.state = FAULTED
            fault = self.diagnosis.of_engine_error(error)
            self.uncount_rest(fault.pc, including=False)
            raise fault from None
        finally:
            native.turn.budget_on = 0
            if self._reserving:  # (its lr reservation, as the turn ends: reserve.c)
                hooks.library().reservation_turn_ended(ctypes.byref(native))
            if self._where_asked and self.engine is not None:  # (asked during a turn of some length: `place`)
                self.answer_where()

    def _breakpoint_stop(self) -> bool:
        """The block hook stopped before a block with a debugger's breakpoint in it
        (sim/native/turns.c): run the block up to it, unless the turn ends first. Says
        whether the run is over."""
        turn = self.native.turn
        at, turn.breakpoint_hit = turn.breakpoint_hit, 0
        left = self.instructions_between(turn.block_address, at)
        if turn.budget_on and left > turn.remaining:
            turn.partial = 1  # the turn ends before the breakpoint
            return True
        if turn.budget_on:
            turn.remaining -= left
        for _ in range(4):  # (the block hook may stop before the block again, to let the TLB grow)
            self._run_partial_block(self.instructions_between(self.pc, at))
            if self.pc == at or self.debug_stop is not None or self.state != READY:
                break
            if self.native.device.retranslate:  # (as _go_on does)
                self.native.device.retranslate = 0
                self.context.forget_translations()
            self.native.tlb.grow = 0
            self.flush_tlb()
        if self.debug_stop is None:  # (else a watchpoint on the way stopped it first)
            self.debug_stop = ("breakpoint", self.pc)
        return True

    def _watch_stop(self, pc: int) -> None:
        """The memory refused the access of the instruction at PC for a debugger's
        watchpoint (sim/native/fill.c): the core stops before it."""
        refused = self.native.refused
        self.debug_stop = ("watch", pc, refused.address, refused.access)
        refused.watch = refused.access = 0
        self.uncount_rest(pc, including=True)

    def uncount_rest(self, pc: int, including: bool) -> None:
        """The block the core stopped in did not run from PC on (INCLUDING: nor PC's own
        instruction; a watchpoint's stop before it, or a fault at it): what the block hook
        counted of it as the block began is taken back, from the cycles, the turn and the
        profile (sim.observe.profile reads `uncounted`)."""
        turn = self.native.turn
        start, end = turn.current_address, turn.current_address + turn.current_size
        if not (turn.counting and start <= pc < end):
            return
        try:
            first = pc if including else pc + decode.length(int.from_bytes(self.context.memory.peek(pc, 2), "little"))
        except MemoryAccessError:
            return
        rest = self.instructions_between(first, end) if first < end else 0
        if not rest:
            return
        turn.cycles -= rest
        if turn.budget_on:
            turn.remaining += rest
        profile = self.native.profile
        if profile.on:
            self.uncounted.append((first, end, profile.stack_node[profile.depth - 1] if profile.depth else 0))
            profile.last_kind = 0  # (the block was cut short: it ended in no call nor return)

    def instructions_between(self, start: int, end: int) -> int:
        """The instructions from START up to END (of one block), as the block hook counts
        them: none in the loader's stubs."""
        turn = self.native.turn
        if turn.uncounted_start <= start < turn.uncounted_end:
            return 0
        code = self.context.memory.peek(start, end - start)
        offset = count = 0
        while offset < len(code):
            offset += decode.length(code[offset] | (code[offset + 1] << 8 if offset + 1 < len(code) else 0))
            count += 1
        return count

    def pause(self) -> None:
        """Stop the core where it is for a debugger, from any thread: its run ends with
        debug_stop ("pause", pc); nothing when it is not running."""
        with self._engine_lock:
            self.pause_wanted = True
            if self.engine is not None:
                self._stop_engine()

    def _run_partial_block(self, left: int) -> None:
        """Run the first LEFT instructions of the block at pc, which the block hook
        stopped before (sim/native/turns.c, count_block): up to an `until` address. The
        engine stops at `until` only in blocks it translates with it in mind, so the
        block's translation is dropped before, and the short one after."""
        if left == 0:
            return
        if self.context.finish_turns_in_c:  # first the interpreter, in C, as far as it can: no block is translated anew
            turn = self.native.turn
            turn.budget_on, turn.remaining = 1, left
            left = hooks.library().isa_finish_turn(self.engine.handle, ctypes.byref(self.native))
            turn.budget_on = 0
            self.pc = self.engine.read("pc")
            if self._pending is not None:  # (raised in a hook the interpreter's accesses called)
                error, self._pending = self._pending, None
                raise error
            if left == 0:
                return
        start, size = self.native.turn.block_address, self.native.turn.block_size
        if start != self.pc:  # (the block hook stopped before it once more: a TLB's growth, sim.hart.core._go_on)
            start, size = self.pc, size - (self.pc - start)
        code = self.context.memory.peek(start, size)
        offset = 0
        for _ in range(left):
            offset += decode.length(code[offset] | code[offset + 1] << 8)
        self.native.turn.budget_on = 0
        self.native.tlb.grow_at = 0
        interpreting, self.native.isa.interpret = self.native.isa.interpret, 0  # (it would run past `until`)
        self.engine.drop_translations(start, start + size)
        try:
            for _ in range(1000):  # (a stop from outside comes before the block, which then runs anew)
                self.engine.run(start, start + offset)
                if not self.native.turn.stop_asked or self._interrupted or self.engine.read("pc") != start:
                    break
                self.native.turn.stop_asked = 0
                if self._where_asked:
                    self.answer_where()
        except EngineError:
            if not self.native.refused.watch:
                raise
            self.pc = self.engine.read("pc")  # (a debugger's watchpoint: the access was not done)
            self._watch_stop(self.pc)
            return
        finally:
            self.engine.drop_translations(start, start + size)
            self.native.tlb.grow_at = self._grow_at
            self.native.isa.interpret = interpreting
        self.pc = self.engine.read("pc")
        if self._pending is not None:
            error, self._pending = self._pending, None
            raise error

    def _go_on(self) -> bool:
        """The run stopped for the engine's sake: to let its TLB grow (sim/native/), after a
        fence.i, for a region now watched whole, or from outside (another thread asks where
        the core is, a debugger's pause). Do what it stopped for, and say whether to go on."""
        self.context.check_hooks()  # (a hook's Python failed in the run: sim.machine.cluster._hook_failed)
        grow, fenced, where = self.native.tlb.grow, self._fenced, self._where_asked
        retranslate, asked = self.native.device.retranslate, self.native.turn.stop_asked
        self.native.turn.stop_asked = 0
        if self.pause_wanted:
            self.pause_wanted = False
            self.debug_stop = ("pause", self.pc)
        self.native.tlb.grow, self._fenced = 0, False
        self.native.device.retranslate = 0
        if retranslate:  # a region is watched whole now (sim/native/watch.c): every core's TLB goes
            self.context.forget_translations()
        if fenced:
            self.drop_translations()
        if where:
            self.answer_where()
        if (not (grow or fenced or where or retranslate or asked) or self._stopped_by_call or self._interrupted
                or self.state != READY or self.debug_stop is not None):
            return False  # the run would have ended here anyway
        if grow:  # a flush doubles the TLB while it is mostly in use
            self.flush_tlb()
            self._tlb_entries *= 2
            self._grow_at = self.native.tlb.refills + 2 * self._tlb_entries if self._tlb_entries < TLB_MAX_ENTRIES else 0
            self.native.tlb.grow_at = self._grow_at
        return True

    def interrupt(self) -> None:
        """Stop the engine (from any thread; nothing once the engine is closed)."""
        with self._engine_lock:
            self._interrupted = True
            if self.engine is not None:
                self._stop_engine()

    def _stop_engine(self) -> None:
        """Stop the engine from outside (another thread; under the engine's lock). A core
        that counts is stopped by its own block hook, on its own thread, before the next
        block (sim/native/turns.c, stop_asked; the interpreter returns to the engine at
        least every EPISODE instructions), so that it goes on where it stopped with its
        count and its turn's budget as they were. Unicorn's own stop from another thread
        may leave the engine's pc behind the block it stopped before, so that a run that
        goes on after it does not run as it would have: it is used only for a core with no
        block hook, and only to end its run (`interrupt`)."""
        self.native.turn.stop_asked = 1
        if not self.native.turn.counting:
            self.engine.stop()

    def flush_tlb(self) -> None:
        """Forget every page translation, so that each page comes through the fill hook
        again (after an invalidate or a flush)."""
        self.engine.flush_tlb()
        hooks.forget_pages(self.native)

    def drop_translations(self) -> None:
        """Forget the code the engine translated (and the native hooks' counts of its blocks), so
        that what runs next is what memory holds now: the core's fence.i."""
        self.engine.drop_translations()
        hooks.forget_blocks(self.native)

    def close(self) -> None:
        """Free the engine now (not whenever the cyclic garbage collector finds it: the
        hooks make a cycle), once it will not run again."""
        with self._engine_lock:
            engine, self.engine = self.engine, None
        if engine is not None:
            engine.close()
            self.native.isa.on_trap = hooks.NO_TRAP  # (the callback refers back to the core)

    # -- where the core is ---------------------------------------------------------------

    def position(self) -> tuple[int, int]:
        """(pc, frame pointer) of the core now: in a hook, the engine's; else where it
        stopped."""
        pc, fp = self.engine.read_many(["pc", "fp"])
        return pc, fp

    def place(self, running: bool, timeout: float = 0.5, ask: Callable[[], None] | None = None) -> tuple[int, int] | None:
        """(pc, frame pointer) of the core, from another thread. A RUNNING core is asked
        to say (the engine's registers are its own while it runs): at the end of its turn
        (ASK: the turn loop's, which then comes back between turns: sim.machine.schedule.TurnLoop),
        or, in a turn with no limit, stopped a moment by its block hook, after which it
        goes on as if nothing happened. A core with no block hook (a lone core that does
        not count) is not stopped: its registers are read as they are, which is where its
        engine last wrote them. One between runs says where it stopped. None when the
        engine is gone."""
        counting = self.native.turn.counting
        with self._engine_lock:
            if self.engine is None:
                return None
            if running:
                self._where_told.clear()
                self._where_asked = True
                if ask is not None:  # (the loop comes back at the turn's end)
                    ask()
                elif counting and not self.native.turn.budget_on:
                    self._stop_engine()
        if running and self._where_told.wait(timeout / 2):
            return self._where
        if running and counting:  # a turn with no limit, in the turn loop, or a long one: its block hook stops it
            with self._engine_lock:
                if self.engine is not None and self._where_asked:
                    self._stop_engine()
            if self._where_told.wait(timeout / 2):
                return self._where
        with self._engine_lock:  # (close takes the engine under the lock)
            if self.engine is None:
                return None
            if running:  # a core with no block hook, not stopped for a look: its registers as they are
                pc, fp = self.engine.read_many(["pc", "fp"])
                return pc, fp
            return self.pc, self.engine.read("fp")

    def answer_where(self) -> None:
        """Say where the core is to the thread that asked (`place`), on the core's own."""
        self._where_asked = False
        self._where = tuple(self.engine.read_many(["pc", "fp"]))
        self._where_told.set()

    @property
    def where_asked(self) -> bool:
        """Another thread asks where the core is (`place`), not yet told."""
        return self._where_asked

    @property
    def ecall_past(self) -> int:
        """How far past an ecall the engine leaves the pc when it traps (probed)."""
        return self._conventions.ecall_past

    def call_pc(self) -> int:
        """The pc of the ecall the core is in, or stopped after (a kmx call). (The hook
        moves the pc past an ecall when the engine left it there: _exception.)"""
        if self.engine is None:
            return self.call_pc_from(self.pc)
        return self.call_pc_from(self.engine.read("pc"))

    @staticmethod
    def call_pc_from(stopped_at: int) -> int:
        """The pc of the ecall of a core that stopped after it, at STOPPED_AT."""
        return stopped_at - ECALL_BYTES

    def users_frame(self, pc: int | None = None):
        """The frame of the user's code that led to PC (the core's own pc when None)."""
        now, fp = self.position()
        return self._explain.user_frame(self._explain.frames(now if pc is None else pc, fp))

    # -- what the trap layer uses ---------------------------------------------------------

    def call_arguments(self) -> tuple[int, int, int, int]:
        """The kmx call number (a7) and its arguments (a0, a1, a2)."""
        return tuple(self.engine.read_many(["a7", "a0", "a1", "a2"]))

    def system_call_arguments(self) -> tuple[int, ...]:
        """A Linux system call's six arguments, a0 to a5 (sim.kmx.linux)."""
        return tuple(self.engine.read_many(["a0", "a1", "a2", "a3", "a4", "a5"]))

    def set_return(self, value: int) -> None:
        self.engine.write("a0", value)

    @property
    def stopped_by_call(self) -> bool:
        """The last run ended in a kmx call that ends the turn (not its count)."""
        return self._stopped_by_call

    def stop_here(self) -> None:
        """End the current run after the instruction that trapped."""
        self._stopped_by_call = True
        self.engine.stop()

    def give_way(self) -> None:
        """End the current run as the core waits for another (a yield, a futex wait, a
        sleep): `yielded` tells the schedule (sim.machine.schedule, pct)."""
        self.stop_here()
        self.yielded = True

    # -- the exception hook ----------------------------------------------------------------

    def counter(self, name: str) -> int:
        """What a read of the counter NAME (cycle, time, instret...) gives now."""
        return stand_in.counter_value(name, self.native.turn.cycles, self.clock, self._timer_ratio())

    def _timer_ratio(self) -> float:
        """The core's cycles per tick of the timer (mtime, 50 MHz)."""
        if self.timing is None:
            return stand_in.INSTRUCTIONS_PER_TICK
        return self.timing.cluster.options.clock_mhz / stand_in.TIMER_HZ * 1e6

    def _on_trap(self, number: int) -> None:
        """The interrupt hook's call (sim/native/isa.c): an exception its C does not take.
        What it raises stops the run, and run raises it (a ctypes callback cannot)."""
        try:
            self._exception(number)
        except BaseException as error:  # noqa: BLE001 (KeyboardInterrupt too: run raises it)
            self._pending = error
            self.engine.stop()

    def _exception(self, number: int) -> None:
        if number == ECALL:
            if self._conventions.ecall_past == 0:  # (the engine would run the ecall again)
                self.engine.write("pc", self.engine.read("pc") + ECALL_BYTES)
            self.context.on_ecall(self)
            return
        pc = self.engine.read("pc") - self._conventions.illegal_past
        if number in REFUSED and self.native.refused.watch:  # a debugger's watchpoint (isa.c's access)
            self.engine.write("pc", pc)
            self._watch_stop(pc)
            self.engine.stop()
            return
        if number in REFUSED and self.native.refused.access:  # flh or fsh (isa.c)
            raise self.diagnosis.refused(pc)
        if number == ILLEGAL:
            what = self._stand_in(pc)
            if what is not None:
                self._run_stand_in(what)
                return
        raise self.fault(pc, self.diagnosis.exception(pc, number))

    def _stand_in(self, pc: int) -> stand_in.Trapped | None:
        """The instruction at PC, when it is one the simulator runs (sim.isa.stand_in):
        placed by the loader, or a read of the time CSR (in code the thread wrote, say)."""
        try:
            insn = self._explain.instruction(pc)
        except MemoryAccessError:
            return None
        placed = self.context.image.traps.get(pc - self.context.image_base)
        if placed is not None and insn == placed.replacement:  # (unless the thread wrote there since)
            return None if placed.native else placed  # (the native ones, isa.c runs)
        what = stand_in.trapped(insn) if decode.length(insn & 0xFFFF) == 4 else None
        return what if what is not None and what.counter == "time" else None

    def _run_stand_in(self, what: stand_in.Trapped) -> None:
        """Do what the X280 does for WHAT, and go on after it (the engine's pc is there)."""
        if self._conventions.illegal_past == 0:  # (the engine would run the stand-in again)
            self.engine.write("pc", self.engine.read("pc") + 4)
        if what.fence_i:  # drop the translations once the engine has stopped (run)
            self._fenced = True
            self.engine.stop()
        elif what.rd:
            self.engine.write(f"x{what.rd}", self.counter(what.counter))

    def _device_refused(self) -> bool:
        """Whether the run did to the cache's registers what the simulator refuses (watch.c):
        an access not modelled, a flush of no memory of the thread's, or a low half of a
        store that no high half followed (a 4-byte store of its own)."""
        device = self.native.device
        if device.low_at and not device.fault_size:
            device.fault_address, device.fault_size, device.fault_write = device.low_at, 4, 1
            device.fault_pc, device.fault_value = device.low_pc, 0
        device.low_at = 0
        return bool(device.fault_size)

    # -- faults (their words: sim.hart.diagnosis) ------------------------------------------

    def fault(self, pc: int, cause: str, came_from: int | None = None,
              category: Category = Category.MISTAKE) -> CoreFault:
        """A CoreFault at PC in CATEGORY (the thread's mistake unless said), with its source
        line and a backtrace through frame pointers (after CAME_FROM, a return address, when
        PC was reached by a bad jump)."""
        return self.diagnosis.fault(pc, cause, came_from, category)
