"""The cache's memory-mapped registers, by name: what a thread may do with them in the
simulator, and what a fault says of the others (sim/native/watch.c does the accesses).

From tt-isa-documentation, BlackholeA0/L2CPUTile/Caches.md (kmx_runtime/kmx_cache.h has
the same names for C):

| register | address | simulated |
| --- | --- | --- |
| CCACHE0_FLUSH64 | 0x0201_0200 | an 8-byte store of a physical address: that line written back to DRAM if dirty, then dropped |
| CCACHE0_FLUSH32 | 0x0201_0240 | a 4-byte store of the address shifted right by 4: the same |
| PL2CACHE0_CFLUSH64 | 0x1010_4200 + hart * 0x4000 | an 8-byte store: the line goes from the hart's L2 to the L3, still in the tile's cache (DRAM does not change) |
| PL2CACHE0_FLUSHCOUNT | 0x1010_4208 + hart * 0x4000 | a load: 0 (every flush is done at once) |

A line flush of an address that is no memory of the thread's (not its image, a stack, the
heap or a region) is a fault too, which says what the store named: on the card it would
flush nothing the thread has, so it is always a mistake (a FLUSH32 of a region's address,
which has more than 36 bits, say).
"""

from __future__ import annotations

from ..layout import BANK_BYTES, CCACHE0, PL2CACHE0, PL2CACHE0_STRIDE, UNCACHED_ALIAS

# offset in the block: (name, size in bytes, what it is), as Caches.md lists them
_CCACHE0 = {
    0x000: ("CCACHE0_CONFIG", 4, "the L3's topology, read-only"),
    0x008: ("CCACHE0_WAYENABLE", 1, "how many of the L3's pieces are cache ways"),
    0x200: ("CCACHE0_FLUSH64", 8, "flushes a line: an 8-byte store of its physical address"),
    0x240: ("CCACHE0_FLUSH32", 4, "flushes a line: a 4-byte store of its physical address shifted right by 4"),
}
_CCACHE0_WAYMASK = (0x800, 38 * 8)  # CCACHE0_WAYMASK0, 38 of 8 bytes
_PL2CACHE0 = {
    0x000: ("PL2CACHE0_CONFIG", 4, "the L2's topology, read-only"),
    0x200: ("PL2CACHE0_CFLUSH64", 8, "flushes a line from the hart's L2 to the L3: an 8-byte store"),
    0x208: ("PL2CACHE0_FLUSHCOUNT", 1, "the flushes still pending, read-only"),
    0x1008: ("PL2CACHE0_CONFIGBITS", 4, "configuration bits"),
}

SIMULATED = (
    "The simulator models only CCACHE0_FLUSH64 (an 8-byte store of a line's physical "
    "address), CCACHE0_FLUSH32 (a 4-byte store of the address shifted right by 4), "
    "PL2CACHE0_CFLUSH64 (an 8-byte store) and PL2CACHE0_FLUSHCOUNT (a load); kmx_flush and "
    "kmx_invalidate do a whole region at once (kmx_runtime/kmx_cache.h)"
)


FLUSH64 = CCACHE0 + 0x200
FLUSH32 = CCACHE0 + 0x240


def flush_of_no_memory(address: int, size: int, value: int) -> str | None:
    """What a line flush through ADDRESS (a store of SIZE bytes of VALUE) named, when the
    simulator refused it for naming no memory the tile caches for the thread; None for any
    other fault."""
    if address == FLUSH64 and size == 8:
        named, how = value, f"It named {value:#x}"
    elif address == FLUSH32 and size == 4:
        named, how = value << 4, f"It stored {value:#x}, which names {value << 4:#x} (the value shifted left by 4)"
    else:
        return None
    if UNCACHED_ALIAS <= named < UNCACHED_ALIAS + BANK_BYTES:
        where = "an address of the uncached alias, whose lines no cache holds"
    else:
        where = "no memory of the thread's"
    advice = ("FLUSH32 reaches only 36-bit physical addresses, and a region's are from "
              "0x4000_3000_0000 on: flush a region's lines through CCACHE0_FLUSH64 (kmx_cache_flush_line)"
              if address == FLUSH32 else
              "the register takes a line's physical address, which is its address in the thread "
              "(a region's are from 0x4000_3000_0000 on)")
    return f"{how}, {where}, so no line was flushed: {advice}"


def _named(table: dict, offset: int) -> str | None:
    for start, (name, size, what) in table.items():
        if start <= offset < start + max(size, 1):
            return f"{name} ({what})"
    return None


def describe(address: int) -> str:
    """Which register of which block ADDRESS is, in words."""
    if CCACHE0 <= address < CCACHE0 + 0x1000:
        offset = address - CCACHE0
        block = "the L3 cache's register block CCACHE0 (0x0201_0000)"
        name = _named(_CCACHE0, offset)
        start, size = _CCACHE0_WAYMASK
        if name is None and start <= offset < start + size:
            name = f"CCACHE0_WAYMASK0 entry {(offset - start) // 8} (which L3 ways a master may evict)"
    else:
        hart, offset = divmod(address - PL2CACHE0, PL2CACHE0_STRIDE)
        block = f"hart {hart}'s L2 cache register block PL2CACHE0 ({PL2CACHE0 + hart * PL2CACHE0_STRIDE:#x})"
        name = _named(_PL2CACHE0, offset)
    return f"{name} in {block}" if name else f"offset {offset:#x} of {block}, no register the simulator knows"
