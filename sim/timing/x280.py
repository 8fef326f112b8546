"""The X280's timing parameters: one table, which sim/native/timing.c reads (by the names
of sim/native/timing.def, in that order) and docs/timing.md prints.

Each parameter says where its value comes from:
- "D": documented for the X280: LLVM's scheduling model of `-mcpu=sifive-x280`
  (llvm/lib/Target/RISCV/RISCVSchedSiFive7.td, which SiFive's engineers maintain) or
  Tenstorrent's documents (tt-isa-documentation, BlackholeA0/L2CPUTile/Caches.md);
- "U": documented or measured for the SiFive U74, whose scalar pipeline the X280's is
  (LLVM models both with SiFive7Model): SiFive's U74-MC manual 21G1, gem5's
  riscvmatched model (from the FU740 manual), sbc-bench's measurements of a JH7110;
- "M": fitted to a measurement of the chip: tt-metal tools/l2cpu/README.md, one hart
  (or several) reading a 303,872-byte buffer at 1750 MHz (bench/timing.py reproduces
  each and prints the model's figure beside the chip's);
- "I": chosen here where nothing is published: an assumption, said as one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CLOCK_MHZ = 1750  # tt-bh-linux clock.py: the L2CPU PLL after reset; the chip's measurements ran at it
TIMER_MHZ = 50  # mtime (tt-bh-linux x280.dts: timebase-frequency)
MODELS = ("x280",)

_DEF = Path(__file__).resolve().parent.parent / "native" / "timing.def"


@dataclass(frozen=True)
class Parameter:
    value: int
    kind: str  # D, U, M or I (above)
    source: str


P = Parameter
LLVM = "LLVM RISCVSchedSiFive7.td (sifive-x280)"
U74 = "SiFive U74-MC manual 21G1"
COPY = "tt-metal tools/l2cpu/README.md, 303,872-byte read at 1750 MHz"
PARAMETERS: dict[str, Parameter] = {
    # the scalar pipeline
    "issue_width": P(2, "D", f"{LLVM}: IssueWidth 2; two pipes, A and B"),
    "alu_latency": P(1, "D", f"{LLVM}: integer ALU, early or late ALU (D153666)"),
    "load_latency": P(3, "D", f"{LLVM}: load latency 3; sbc-bench JH7110 (U74): L1D load-to-load 3 cycles"),
    "store_data_late": P(2, "I", "a store reads its data this many cycles after it issues (its address first): "
                         "SiFive7 reads store data late; the figure is not published"),
    "mul_latency": P(3, "D", f"{LLVM}: integer multiply 3"),
    "div_base": P(2, "U", f"{U74}, Table 18: divide latency 2 + log2(dividend) - log2(divisor)"),
    "div_min": P(6, "U", f"{U74}, Table 18: 6 to 68 cycles"),
    "div_max": P(68, "U", f"{U74}, Table 18: 6 to 68 cycles"),
    "div_unknown_64": P(66, "D", f"{LLVM}: 64-bit divide 66, not pipelined (a divide the engine runs: operands unseen)"),
    "div_unknown_32": P(34, "D", f"{LLVM}: 32-bit divide 34"),
    "fp_half": P(5, "D", f"{LLVM}: FP add, multiply, FMA, half 5"),
    "fp_single": P(5, "D", f"{LLVM}: FP add, multiply, FMA, single 5"),
    "fp_double": P(7, "D", f"{LLVM}: FP add, multiply, FMA, double 7"),
    "fp_move": P(3, "D", f"{LLVM}: sign-inject, min, max 3"),
    "fp_convert": P(3, "D", f"{LLVM}: conversions, compares, moves 3"),
    "fp_div_half": P(14, "D", f"{LLVM}: divide and square root, half 14, not pipelined"),
    "fp_div_single": P(27, "D", f"{LLVM}: divide and square root, single 27"),
    "fp_div_double": P(56, "D", f"{LLVM}: divide and square root, double 56"),
    "branch_penalty": P(3, "D", f"{LLVM}: MispredictPenalty 3"),
    "taken_bubble": P(0, "I", "a correctly predicted taken branch costs no cycle (not published)"),
    "bht_entries": P(8192, "I", "two-bit counters by pc; the U74 has a 3.6 KiB BHT (gem5 riscvmatched), "
                     "organisation not published"),
    "btb_entries": P(32, "U", "gem5 riscvmatched_core.py (FU740 manual): 32-entry BTB"),
    "ras_entries": P(12, "U", "gem5 riscvmatched_core.py (FU740 manual): 12-entry return stack"),
    "csr_latency": P(3, "I", "a CSR read's result (not published)"),
    "fence_cycles": P(10, "I", "a fence drains the pipeline (not published)"),
    "amo_latency": P(10, "I", "an AMO executes at the L1D (tt-isa-documentation Caches.md); its latency is not published"),
    "call_cycles": P(20, "I", "a kmx call on the card is a call into the runtime: its own instructions (not measured)"),
    # memory: a scalar miss adds these to the load's latency; the L1D fills one line at a time
    "l2_hit": P(6, "I", "private L2 hit: not published; below the L3's, above the L1D's 3"),
    "l3_hit": P(12, "M", f"{COPY}: scalar 8-byte loads from the L3, 0.101 ms (fitted: the L2's prefetcher is not "
                "modelled, so this is what a streaming line costs, not a single miss's latency)"),
    "dram_line": P(105, "M", f"{COPY}: vector read not in the L3, 0.284 ms, ~105 cycles a line"),
    # memory: the cycles a line keeps the vector unit's load or store sequencer busy
    "vector_l1_line": P(0, "I", "an L1D line streams at the datapath's width (the beats count it)"),
    "vector_l2_line": P(2, "I", "an L2 line streams at the datapath's width (not measured)"),
    "vector_l3_line": P(4, "M", f"{COPY}: vector read from the L3, 0.011 ms (~15.8 bytes a cycle)"),
    "vector_dram_line": P(105, "M", f"{COPY}: vector read not in the L3, 0.284 ms"),
    # the uncached alias (a line of a vector access; a scalar access waits its own round trip)
    "uncached_line_one": P(22, "M", f"{COPY}: uncached alias, one hart, 0.059 ms"),
    "uncached_line_two": P(25, "M", f"{COPY}: uncached alias, two harts at once, 0.069 ms each"),
    "uncached_line_crowded": P(500, "M", f"{COPY}: uncached alias, three or four harts at once, 1.1 to 1.7 ms each"),
    "uncached_scalar": P(105, "I", "a scalar uncached load's round trip: not measured for the local bank; "
                         "taken as a DRAM line's"),
    "uncached_window": P(20000, "I", "harts read the uncached alias 'at once' when their reads are this close in "
                         "time (about 11 us at 1750 MHz: longer than a turn of the cores' interleaving)"),
    "uncached_readers": P(2, "M", f"{COPY}: 'at most 2 harts per tile read the uncached zone at a time'"),
    "flush_line": P(2, "I", "a kmx_flush walks every line of the region (not measured)"),
    "invalidate_line": P(2, "I", "a kmx_invalidate walks every line of the region (not measured)"),
    "noc_step_ns": P(1000, "M", "tt-metal tools/l2cpu/tensix/README.md: one 64 B NoC poll from a Tensix core "
                     "takes about 1 us; a stand-in's noc call (a read, a write or a wait's poll) costs that, in "
                     "nanoseconds, for its first 64 bytes"),
    "noc_mb_per_s": P(19000, "M", "tt-metal tools/l2cpu/tensix/README.md: a Tensix push into one tile through the "
                      "uncached alias reaches ~19 GB/s; a noc call's bytes past its first 64 move at that (I for "
                      "reads: only pushes were measured)"),
    # the vector unit
    "vlen": P(512, "D", f"{LLVM}: VLEN 512"),
    "dlen": P(256, "D", f"{LLVM}: DLEN 256, two beats a register"),
    "vector_queue": P(8, "I", "the vector command queue's depth (not published)"),
    "v_load_latency": P(4, "D", f"{LLVM}: unit-stride vector load latency 4"),
    "v_store_latency": P(1, "D", f"{LLVM}: vector store latency 1"),
    "v_alu_latency": P(4, "D", f"{LLVM}: vector integer ALU, multiply, multiply-add 4"),
    "v_compare_extra": P(3, "D", f"{LLVM}: compares producing a mask, 3 more"),
    "v_wide_latency": P(8, "D", f"{LLVM}: widening, narrowing, fixed point 8"),
    "v_fp_latency": P(8, "D", f"{LLVM}: vector FP add, multiply, FMA, convert 8"),
    "v_move_latency": P(4, "D", f"{LLVM}: sign-inject, min, max, merge, move 4"),
    "v_div_factor_8": P(15, "D", f"{LLVM}: divide and square root, SEW 8: 15 x (VLEN/SEW x LMUL / 4)"),
    "v_div_factor_16": P(15, "D", f"{LLVM}: SEW 16: 15"),
    "v_div_factor_32": P(28, "D", f"{LLVM}: SEW 32: 28"),
    "v_div_factor_64": P(57, "D", f"{LLVM}: SEW 64: 57"),
    "v_reduction_step": P(5, "D", f"{LLVM}: unordered reduction 2 x LMUL + 5 x (4 + log2(DLEN/SEW))"),
    "v_ordered_per_element": P(6, "D", f"{LLVM}: ordered FP reduction 6 x VL"),
    "vsetvl_latency": P(3, "D", f"{LLVM}: vsetvl* 3, taken as its latency to the vector unit; its vl reaches "
                        "the scalar side in an ALU op's cycle (I: min(AVL, VLMAX); the chip's copy loop runs at "
                        "4 cycles a line with vl in its recurrence)"),
    "v_element_latency": P(3, "D", f"{LLVM}: strided and indexed: 3 + an element a cycle"),
}


def names() -> list[str]:
    """The parameters in the table's order (sim/native/timing.def)."""
    return re.findall(r"^P\((\w+)\)", _DEF.read_text(), flags=re.M)


def table(overrides: dict[str, int] | None = None) -> np.ndarray:
    """The parameters as the model reads them: uint32, in timing.def's order. OVERRIDES
    change some (bench/ and the tests try other values); an unknown name is an error."""
    order = names()
    missing = [name for name in order if name not in PARAMETERS]
    extra = [name for name in PARAMETERS if name not in order]
    if missing or extra:
        raise RuntimeError(f"sim/timing/x280.py and sim/native/timing.def disagree: missing {missing}, extra {extra}")
    values = {name: PARAMETERS[name].value for name in order}
    for name, value in (overrides or {}).items():
        if name not in values:
            raise ValueError(f"no timing parameter {name!r}; the parameters are {', '.join(order)}")
        values[name] = int(value)
    for name, value in values.items():
        if not 0 <= value < 2**32:
            raise ValueError(f"timing parameter {name} must be 0 to 2**32 - 1, not {value}")
    for name in ("issue_width", "vlen", "dlen", "noc_mb_per_s"):
        if values[name] < 1:
            raise ValueError(f"timing parameter {name} must be at least 1, not {values[name]}")
    for name in ("vlen", "dlen"):
        if values[name] & (values[name] - 1) or values[name] < 64:
            raise ValueError(f"timing parameter {name} must be a power of 2 of at least 64 bits, not {values[name]}")
    if values["vlen"] < values["dlen"]:
        raise ValueError(f"timing parameter vlen ({values['vlen']}) must be at least dlen ({values['dlen']})")
    for name in ("bht_entries",):
        if values[name] & (values[name] - 1) or not 0 < values[name] <= 65536:
            raise ValueError(f"{name} must be a power of 2 up to 65536, not {values[name]}")
    for name, most in (("btb_entries", 256), ("ras_entries", 64), ("vector_queue", 64)):
        if not 0 < values[name] <= most:
            raise ValueError(f"{name} must be 1 to {most}, not {values[name]}")
    return np.array([values[name] for name in order], dtype=np.uint32)
