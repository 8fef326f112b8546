"""Where things are: the card's address map as a thread sees it (docs/simulator.md, "The machine").

Each cluster sees its DRAM bank at the cached alias 0x4000_3000_0000. Clusters 0 and 1
have banks D5 and D6 to themselves; clusters 2 and 3 share D7, cluster 3's half starting
2 GiB in. Inside its share a cluster holds, in order: the thread's image, one stack per
core (each with an unmapped guard below it), the thread's heap, then the regions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30

PAGE = 4 * KiB
LINE = 64

CACHED_ALIAS = 0x4000_3000_0000
UNCACHED_ALIAS = 0x0000_3000_0000
UNCACHED_OFFSET = CACHED_ALIAS - UNCACHED_ALIAS  # an address's uncached alias is it less this (hooks.h too)

# The cache's registers (sim/cache/registers.py says what each is; hooks.h too): the L3's
# block, and one block per hart's L2
CCACHE0 = 0x0201_0000
CCACHE0_SIZE = 0x1000
PL2CACHE0 = 0x1010_4000
PL2CACHE0_STRIDE = 0x4000
PL2CACHE0_SIZE = 4 * PL2CACHE0_STRIDE

BANK_BYTES = 4 * GiB
STACK_BYTES = 1 * MiB
GUARD_BYTES = PAGE  # unmapped, after each region (and after the stacks and the heap)
# The C library's heap (sim.kmx.heap), after the stacks: its default size, which a thread
# sets with km.Program.thread(heap=...). Pages cost host memory only once touched.
DEFAULT_HEAP_BYTES = 64 * MiB
# Unmapped, below each stack. Threads are built to probe a frame bigger than a page a page
# at a time as they make it (sim.build.thread), so any overflow meets this guard; it is
# larger than a page for code built without probes (KMX_CC), whose frames of up to this
# size still meet it.
STACK_GUARD_BYTES = 64 * KiB

# The loader's stubs (sim.isa.rewrite) keep a register they borrow in the address space's
# last page, which a load or store reaches with no register but x0 (`sd t6, -8(x0)`), so
# that they never need a valid sp. Each core's engine maps it to a page of its own, at
# STUB_SCRATCH_PHYSICAL (sim/native/fill.c translates the one to the other).
STUB_SCRATCH = (1 << 64) - PAGE
STUB_SCRATCH_PHYSICAL = 0x7FFF_FFFF_F000

CLUSTERS = 4
CORES_PER_CLUSTER = 4
MAX_REGIONS = 16
MAX_WORDS = 64
RESULT_WORDS = 48
MAX_WAITING_SUBMISSIONS = 16

# QEMU's TLB is indexed by virtual page number; two regions that a loop walks together
# thrash it when their addresses are equal modulo its span (QEMU's TLB is a table indexed
# by the low bits of the page number, one entry a slot). Each region
# starts on a 1 MiB boundary plus a different multiple of 64 KiB, so that no two of the 16
# share low page-number bits.
REGION_ALIGN = 1 * MiB
REGION_STAGGER = 64 * KiB


@dataclass(frozen=True)
class Share:
    """A cluster's part of its DRAM bank."""

    bank: str
    offset: int  # from the bank's start
    size: int

    @property
    def base(self) -> int:
        """The share's first byte at the cached alias."""
        return CACHED_ALIAS + self.offset


SHARES = {
    0: Share("D5", 0, 4 * GiB),
    1: Share("D6", 0, 4 * GiB),
    2: Share("D7", 0, 2 * GiB),
    3: Share("D7", 2 * GiB, 2 * GiB),
}


def align_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def count_bytes(n: int) -> str:
    """1 -> '1 byte', 4 -> '4 bytes': a count in a message."""
    return f"{n} byte{'s' if n != 1 else ''}"


def human_bytes(n: int) -> str:
    """4096 -> '4 KiB', 3 * 2**30 -> '3 GiB', 1000 -> '1000 bytes', 2.5 GiB and a page
    -> '2.50 GiB (2684358656 bytes)': the largest unit, exact or with the bytes."""
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= size:
            if n % size == 0:
                return f"{n // size} {unit}"
            break
    if n >= GiB:
        return f"{n / GiB:.2f} GiB ({n} bytes)"
    if n >= MiB:
        return f"{n / MiB:.1f} MiB ({n} bytes)"
    return f"{n} bytes"


def runs(numbers: np.ndarray, longest: int | None = None) -> Iterator[tuple[int, int]]:
    """[first, end) of each run of consecutive integers in NUMBERS (sorted), cut into
    pieces at most LONGEST long: the pages to copy or compare, run by run."""
    if numbers.size == 0:
        return
    breaks = np.flatnonzero(np.diff(numbers) != 1) + 1
    for first, last in zip(numbers[np.r_[0, breaks]].tolist(), numbers[np.r_[breaks - 1, numbers.size - 1]].tolist()):
        step = longest or last + 1 - first
        for start in range(first, last + 1, step):
            yield start, min(start + step, last + 1)
