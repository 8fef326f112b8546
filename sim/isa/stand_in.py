"""The X280's instructions that the engine would run unlike the X280, and what stands in.

Unicorn runs RV64GC, but these things in it differ from the card (docs/simulator.md, "What
the simulated X280 runs"; its floating point, which differed too, the simulator's build of
it fixes: sim/build/engine.py):

- `fence.i` is a no-op that ends the translated block. On the X280 it makes the hart's
  instruction fetches see the stores before it (its L1I is not coherent); here it must
  make the core drop the translations it made, so that code another core or a kmx call
  wrote since is run, not what was there before.
- `rdcycle` and `rdinstret` (and `mcycle`, `minstret`) read the host's clock, different on
  every run. Here they read the core's own count of instructions (the cycle model: one
  cycle an instruction, as kmx_cycles), or with the timing model its modelled cycles
  (rdinstret still its instructions), so a run is the same every time.
- `rdtime` is an illegal instruction. Here it reads a timer derived from the same count:
  the card's timer runs at TIMER_HZ and its cores at CORE_HZ (tt-bh-linux x280.dts:
  timebase-frequency 50 MHz, clock-frequency 1 GHz), so the time is the instruction
  count divided by CORE_HZ // TIMER_HZ; with the timing model, its cycles divided by the
  session's clock over TIMER_HZ.
- `lr` and `sc` keep the engine's reservation, and its `sc` compares values: a store by
  another core of the same value between the two (A-B-A) goes unseen. Here the
  reservation is the simulator's own (sim/native/reserve.c), which any store to the line
  by another core clears.

The loader finds these in the thread's code (`find_trapped`) and places, instead of each,
an instruction the engine traps on (a read of the `time` CSR, which the engine lacks; an
unused MISC-MEM encoding for fence.i; for lr and sc the same instruction with funct5 6 or
7, which no extension the X280 has defines). sim.hart.core answers the trap of the first
two; sim/native/isa.c runs lr and sc, in C.
"""

from __future__ import annotations

from dataclasses import dataclass

TIMER_HZ = 50_000_000
CORE_HZ = 1_000_000_000
INSTRUCTIONS_PER_TICK = CORE_HZ // TIMER_HZ

CSR_CYCLE, CSR_TIME, CSR_INSTRET = 0xC00, 0xC01, 0xC02
CSR_MCYCLE, CSR_MINSTRET = 0xB00, 0xB02
COUNTERS = {CSR_CYCLE: "cycle", CSR_TIME: "time", CSR_INSTRET: "instret", CSR_MCYCLE: "mcycle", CSR_MINSTRET: "minstret"}

SYSTEM, MISC_MEM, AMO = 0x73, 0x0F, 0x2F
FENCE_I_FUNCT3 = 1
FENCE_I_STAND_IN = 0x0000_700F  # MISC-MEM with funct3 7: no instruction, so it traps
CSR_READS = (2, 3, 6, 7)  # csrrs, csrrc, csrrsi, csrrci: a read when rs1 / uimm is 0
LR_SC = (2, 3)  # funct5 of lr and sc (funct3 2: .w, 3: .d)
LR_SC_STAND_IN = 4  # added to funct5: 6 stands for lr, 7 for sc (isa.c, reserve.c)


@dataclass(frozen=True)
class Trapped:
    """An instruction run by the simulator instead of the engine: `fence.i`, or a read of
    COUNTER (a name of COUNTERS) into register RD."""

    original: int
    replacement: int
    counter: str | None = None
    rd: int = 0
    native: bool = False  # run in C (sim/native/isa.c), not by sim.hart.core

    @property
    def fence_i(self) -> bool:
        return self.counter is None and not self.native


def trapped(insn: int) -> Trapped | None:
    """What INSN (a 32-bit instruction) is, when it is one the simulator runs."""
    opcode, funct3 = insn & 0x7F, (insn >> 12) & 7
    if opcode == MISC_MEM and funct3 == FENCE_I_FUNCT3:
        return Trapped(insn, FENCE_I_STAND_IN)
    if opcode == AMO and insn >> 27 in LR_SC and funct3 in (2, 3):
        return Trapped(insn, insn + (LR_SC_STAND_IN << 27), native=True)
    if opcode == SYSTEM and funct3 in CSR_READS and (insn >> 15) & 0x1F == 0:
        csr = insn >> 20
        if csr in COUNTERS:
            return Trapped(insn, (insn & 0x000F_FFFF) | CSR_TIME << 20, COUNTERS[csr], (insn >> 7) & 0x1F)
    return None


def find_trapped(code: bytes, start: int, data: list[tuple[int, int]] = (),
                 rewritable: dict[int, int] | None = None) -> dict[int, Trapped]:
    """The instructions of CODE (a section's bytes, at offset START) that the simulator
    runs, by offset. A linear sweep, which skips DATA ([from, to) offsets: what the
    assembler marked as data with `$d` mapping symbols, and objects placed among the
    code). Compiled RISC-V code has no data between its instructions. The instructions
    sim.isa.rewrite may turn into RV64GC go into REWRITABLE (offset -> instruction)."""
    from . import rewrite

    found = {}
    offset, end = 0, len(code) - 1
    data = sorted(data)
    while offset < end:
        inside = next((hi for lo, hi in data if lo <= start + offset < hi), None)
        if inside is not None:
            offset = inside - start
            continue
        if code[offset] & 3 != 3:
            offset += 2
            continue
        if offset + 4 > len(code):
            break
        insn = int.from_bytes(code[offset : offset + 4], "little")
        if (insn & 0x7F) in (SYSTEM, MISC_MEM, AMO):
            what = trapped(insn)
            if what is not None:
                found[start + offset] = what
        elif rewritable is not None and rewrite.candidate(insn):
            rewritable[start + offset] = insn
        offset += 4
    return found


def counter_value(counter: str, instructions: int, cycles: int | None = None,
                  cycles_per_tick: float = INSTRUCTIONS_PER_TICK) -> int:
    """What a read of COUNTER gives after INSTRUCTIONS instructions of the core, at its
    clock's CYCLES (the timing model's; None: one an instruction), CYCLES_PER_TICK to the
    timer's tick."""
    cycles = instructions if cycles is None else cycles
    if counter == "time":
        return int(cycles // cycles_per_tick)
    if counter in ("instret", "minstret"):
        return instructions
    return cycles
