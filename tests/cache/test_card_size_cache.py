"""The card-size cache (km.Session(cache="card-size"), sim/native/tile.c): the tile's L1D,
L2 and L3 at the card's sizes, checked against a small reference simulator written here
on random access streams; evictions that write dirty lines back, so that a missing flush
is sometimes rescued, and the checker says so; the counts per region."""

from __future__ import annotations

import random

import numpy as np
import pytest

import komorebi as km
from komorebi.sim.cache.model import Tile
from komorebi.sim.native import hooks
from tests.cache.test_checker import line_of, run_source

MASK = 2**64 - 1


class Reference:
    """The tile's caches, obviously: per level a list of sets, each a list of ways holding
    a line or None; inclusive; a store takes the line from the other harts; a victim is the
    first empty way, else one drawn from xorshift64 (13, 7, 17) seeded as sim.cache.model.Tile does."""

    def __init__(self, seed: int) -> None:
        self.random = ((seed * 0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D) % 2**64 or 1
        self.l1 = [[[None] * hooks.TILE_L1[1] for _ in range(hooks.TILE_L1[0])] for _ in range(4)]
        self.l2 = [[[None] * hooks.TILE_L2[1] for _ in range(hooks.TILE_L2[0])] for _ in range(4)]
        self.l3 = [[None] * hooks.TILE_L3[1] for _ in range(hooks.TILE_L3[0])]

    def _next(self) -> int:
        x = self.random
        x ^= (x << 13) & MASK
        x ^= x >> 7
        x ^= (x << 17) & MASK
        self.random = x
        return x

    def _place(self, ways: list, line: int):
        """Put LINE in WAYS; return the line it evicted, or None."""
        if None in ways:
            ways[ways.index(None)] = line
            return None
        at = self._next() % len(ways)
        old, ways[at] = ways[at], line
        return old

    @staticmethod
    def _drop(ways: list, line: int) -> None:
        if line in ways:
            ways[ways.index(line)] = None

    def _leave(self, hart: int, line: int, l2: bool = True) -> None:
        self._drop(self.l1[hart][line % len(self.l1[hart])], line)
        if l2:
            self._drop(self.l2[hart][line % len(self.l2[hart])], line)

    def access(self, hart: int, line: int, write: bool) -> tuple[int, int | None]:
        if write:
            for other in range(4):
                if other != hart:
                    self._leave(other, line)
        l1 = self.l1[hart][line % len(self.l1[hart])]
        if line in l1:
            return 1, None
        l2 = self.l2[hart][line % len(self.l2[hart])]
        evicted, level = None, 2
        if line not in l2:
            l3 = self.l3[line % len(self.l3)]
            level = 3
            if line not in l3:
                level = 0
                evicted = self._place(l3, line)
                if evicted is not None:
                    for h in range(4):
                        self._leave(h, evicted)
            gone = self._place(l2, line)
            if gone is not None:
                self._leave(hart, gone, l2=False)
        self._place(l1, line)
        return level, evicted


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_the_tile_agrees_with_the_reference_on_random_streams(seed):
    tile, reference = Tile(seed), Reference(seed)
    rng = random.Random(seed)
    counts = [0, 0, 0, 0]
    for _ in range(60_000):
        # a working set a little over the L3's 32768 lines, and hot spots, four harts
        line = rng.randrange(40_000) if rng.random() < 0.7 else rng.randrange(300)
        hart, write = rng.randrange(4), rng.random() < 0.3
        level, evicted = reference.access(hart, line, write)
        assert tile.access(hart, line, write) == level
        assert tile.evicted == evicted
        counts[level] += 1
    assert all(counts)  # every level hit, and misses to DRAM


def test_a_second_pass_over_a_region_the_l1d_holds_hits_there(tmp_path):
    text = """#include <kmx.h>
#include <stdint.h>

int kmx_main(int core) {
    volatile uint32_t *numbers = (volatile uint32_t *)kmx_region(0, 0);
    kmx_invalidate(0);
    uint32_t sum = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 1024; i += 16)
            sum += numbers[i];
    return sum == 2 * 32256;
}
"""
    done, [result], _ = run_source(tmp_path, text, mode="card", cache="card-size")
    assert result.code == 1
    numbers = next(c for c in done.cache_counts() if c.region == "numbers")
    assert (numbers.l1d_hits, numbers.l1d_misses, numbers.l2_misses, numbers.l3_misses) == (64, 64, 64, 64)
    assert numbers.evicted == 0


def test_a_missing_flush_is_rescued_by_eviction_and_the_checker_says_so(tmp_path):
    """4 MiB written, never flushed, through a 2 MiB L3: in strict mode (no hand-back) the
    lines the L3 evicted reach DRAM, the rest do not."""
    n = 1 << 20
    text = """#include <kmx.h>
#include <stdint.h>

int kmx_main(int core) {
    uint32_t *out = (uint32_t *)kmx_region(1, 0);
    kmx_invalidate(1);
    for (int i = 0; i < %d; i++)
        out[i] = 3 * i; /* the write */
    return 0;
}
""" % n
    regions = {"numbers": np.zeros(16, np.uint32), "tripled": 4 * n}
    done, _, _ = run_source(tmp_path, text, mode="strict", cache="card-size", regions=regions)
    out = done.thread.read("tripled").view(np.uint32)
    right = out == 3 * np.arange(n, dtype=np.uint32)
    counts = next(c for c in done.cache_counts() if c.region == "tripled")
    assert 0 < right.sum() < n
    assert right.reshape(-1, 16).all(axis=1).sum() == counts.written_back  # whole lines
    [finding] = done.findings
    assert finding.kind == "unflushed-write" and finding.line == line_of(text, "/* the write */")
    assert f"{counts.written_back} of them reached DRAM anyway, rescued by eviction at line" in finding.message
    # the unbounded cache never rescues
    done, _, _ = run_source(tmp_path, text, mode="strict", regions=regions)
    assert (done.thread.read("tripled").view(np.uint32) == 0).all()
    assert done.cache_counts() == []


def test_a_flush_after_the_eviction_is_no_mistake(tmp_path):
    n = 1 << 20
    text = """#include <kmx.h>
#include <stdint.h>

int kmx_main(int core) {
    uint32_t *out = (uint32_t *)kmx_region(1, 0);
    kmx_invalidate(1);
    for (int i = 0; i < %d; i++)
        out[i] = 3 * i;
    kmx_flush(1);
    return 0;
}
""" % n
    regions = {"numbers": np.zeros(16, np.uint32), "tripled": 4 * n}
    done, _, _ = run_source(tmp_path, text, mode="strict", cache="card-size", regions=regions)
    assert (done.thread.read("tripled").view(np.uint32) == 3 * np.arange(n, dtype=np.uint32)).all()
    assert done.findings == []


def test_invalidate_and_line_flushes_empty_the_levels(tmp_path):
    text = """#include <kmx.h>
#include <kmx_cache.h>
#include <stdint.h>

int kmx_main(int core) {
    volatile uint32_t *numbers = (volatile uint32_t *)kmx_region(0, 0);
    kmx_invalidate(0);
    uint32_t a = numbers[0];          /* a miss everywhere */
    kmx_invalidate(0);
    uint32_t b = numbers[0];          /* again */
    kmx_cache_flush_line((const void *)numbers);
    uint32_t c = numbers[0];          /* again */
    *(volatile uint64_t *)PL2CACHE0_CFLUSH64(0) = (uint64_t)(uintptr_t)numbers;
    uint32_t d = numbers[0];          /* a hit in the L3 */
    uint32_t e = numbers[0];          /* a hit in the L1D */
    return a + b + c + d + e;
}
"""
    done, _, _ = run_source(tmp_path, text, mode="card", cache="card-size")
    numbers = next(c for c in done.cache_counts() if c.region == "numbers")
    assert (numbers.l1d_hits, numbers.l1d_misses) == (1, 4)
    assert (numbers.l2_hits, numbers.l2_misses) == (0, 4)
    assert (numbers.l3_hits, numbers.l3_misses) == (1, 3)


@pytest.mark.parametrize(("arguments", "error", "said"), [
    ({"cache": "card"}, ValueError, "cache must be 'unbounded' or 'card-size', not 'card'"),
    ({"cache": 2}, TypeError, "cache must be a str"),
    ({"cache_seed": "1"}, TypeError, "cache_seed must be an int"),
])
def test_bad_cache_arguments_say_what_is_expected(arguments, error, said):
    with pytest.raises(error, match=said):
        km.Session(**arguments)
