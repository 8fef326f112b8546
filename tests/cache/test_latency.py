"""The door for time (sim/native/latency.c): each way into a region's memory that C sees
answers where the bytes came from and how long that took, by a table the timing model
gives each core; with no table (the default) every access answers 0."""

from __future__ import annotations

import numpy as np
import pytest

from komorebi.sim.build.thread import build_thread
from komorebi.sim.cache.model import CARD_SIZE, UNBOUNDED
from komorebi.sim.image.elf import load_image
from komorebi.sim.layout import LINE, PAGE
from komorebi.sim.machine.card import Card
from komorebi.sim.machine.config import MachineConfig

# Reads 64 KiB twice (twice the L1D: its second pass misses there, and hits the L2), then
# flushes and invalidates it.
TWICE = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    volatile uint64_t* in = (volatile uint64_t*)kmx_region(0, 0);
    uint64_t sum = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 8192; i += 8)
            sum += in[i];
    kmx_flush(0);
    kmx_invalidate(0);
    return (int)(sum & 1);
}
"""
LATENCY = (100, 1, 10, 30, 0, 7, 5)  # DRAM, L1, L2, L3, uncached, flush, invalidate
PER_LINE = (0, 0, 0, 0, 0, 2, 0)


def _place(tmp_path, cache: str):
    source = tmp_path / "twice.c"
    source.write_text(TWICE)
    card = Card(MachineConfig(cache=cache))
    cluster = card.place_thread(1, load_image(build_thread([source]).elf), [("data", np.zeros(8192, np.uint64))], [], 1)
    return card, cluster


def _run(tmp_path, cache: str, timed: bool):
    card, cluster = _place(tmp_path, cache)
    try:
        core = cluster.cores[0]
        if timed:
            core.time_memory(LATENCY, PER_LINE)
        while core.state.value == "ready":
            core.run()
            cluster.runnable()
        region = cluster.regions[0].cache
        counts = region.counts() if cache == CARD_SIZE else None
        return core.memory_cycles, core.memory_accesses, counts, region.pages * PAGE // LINE
    finally:
        card.stop()


def test_the_card_size_caches_levels_answer_their_cycles(tmp_path):
    cycles, accesses, counts, lines = _run(tmp_path, CARD_SIZE, timed=True)
    (l1_hits, _), (l2_hits, _), (l3_hits, l3_misses) = counts["L1D"], counts["L2"], counts["L3"]
    assert accesses["L1"] == l1_hits and accesses["L2"] == l2_hits
    assert (accesses["L3"], accesses["DRAM"]) == (l3_hits, l3_misses)
    assert l3_misses == 1024 and l2_hits > 0  # (each line once from DRAM; the second pass from the L2)
    assert (accesses["flush"], accesses["invalidate"]) == (1, 1)
    assert cycles == 100 * l3_misses + l1_hits + 10 * l2_hits + 30 * l3_hits + 7 + 2 * lines + 5


def test_the_unbounded_caches_fill_answers_dram_once_a_page(tmp_path):
    cycles, accesses, _, lines = _run(tmp_path, UNBOUNDED, timed=True)
    assert accesses["DRAM"] == 16  # (16 pages, each filled once: the fill hook sees no hit)
    assert cycles == 100 * 16 + 7 + 2 * lines + 5


def test_no_table_answers_nothing(tmp_path):
    cycles, accesses, _, _ = _run(tmp_path, CARD_SIZE, timed=False)
    assert cycles == 0 and set(accesses.values()) == {0}


def test_a_table_of_the_wrong_size_is_refused(tmp_path):
    card, cluster = _place(tmp_path, UNBOUNDED)
    try:
        with pytest.raises(ValueError, match="a latency table has 7 entries"):
            cluster.cores[0].time_memory((1, 2), (0, 0))
    finally:
        card.stop()
