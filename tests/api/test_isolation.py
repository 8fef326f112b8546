"""Isolation: a thread reaches only its own image, stacks and regions, and the kmx calls
check every pointer against them; clusters 2 and 3 share bank D7, so each can reach the
other's regions at their addresses (through its own cache), as on the card."""

from __future__ import annotations

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT

KERNELS = ROOT / "tutorial" / "35_sharing_memory" / "kernels"

WHERE = r"""
#include "kmx.h"
/* Reports region 0's address; with words, reads and adds 1 to the uint32 at that address. */
int kmx_main(int core) {
    uint64_t bytes;
    uint64_t own = (uint64_t)kmx_region(0, &bytes);
    uint32_t out[4] = {(uint32_t)own, (uint32_t)(own >> 32), 0, 0};
    if (kmx_word_count() == 2) {
        volatile uint32_t* there = (volatile uint32_t*)((uint64_t)kmx_word(0) | (uint64_t)kmx_word(1) << 32);
        out[2] = there[0];       /* a load from the address Python gave */
        there[1] = out[2] + 1;   /* and a store */
    }
    kmx_result(0, out, 4);
    return 0;
}
"""


def addresses(tmp_path):
    """Where cluster 0's and cluster 3's regions land (the layout is fixed)."""
    source = tmp_path / "where.c"
    source.write_text(WHERE)
    program = km.Program("where", kernels=KERNELS)
    for cluster in (0, 3):
        program.thread(cluster=cluster, sources=[source], regions={"mine": np.arange(4, dtype=np.uint32)})
    with km.Session() as session:
        run = session.load(program)
        found = {}
        for cluster in (0, 3):
            words = run.thread_result(timeout=30, cluster=cluster).words
            found[cluster] = int(words[0]) | int(words[1]) << 32
        run.stop()
    return source, found


def test_clusters_two_and_three_reach_each_others_regions_in_bank_d7(tmp_path):
    source, found = addresses(tmp_path)
    program = km.Program("shared", kernels=KERNELS)
    program.thread(cluster=3, sources=[source], regions={"mine": np.array([41, 0, 0, 0], np.uint32)})
    there = found[3]
    program.thread(cluster=2, sources=[source], regions={"mine": 16}, words=[there & 0xFFFF_FFFF, there >> 32])
    with km.Session() as session:
        run = session.load(program)
        words = run.thread_result(timeout=30, cluster=2).words
        run.thread_result(timeout=30, cluster=3)
        run.stop()
    assert words[2] == 41  # cluster 2 read cluster 3's region, from D7
    # Cluster 2's store reached D7 at cluster 2's hand-back (there is no flush for it).
    assert run.threads[3].read("mine").view(np.uint32).tolist() == [41, 42, 0, 0]


def test_cluster_one_cannot_reach_cluster_zeros_bank(tmp_path):
    source, found = addresses(tmp_path)
    there = found[0]  # D5, at the same cached alias as cluster 1's own D6
    program = km.Program("refused", kernels=KERNELS)
    # Cluster 1 has no region, so at that address its own bank holds nothing of its thread.
    program.thread(cluster=1, sources=[source], words=[there & 0xFFFF_FFFF, there >> 32])
    with km.Session() as session:
        run = session.load(program)
        with pytest.raises(km.ThreadFault) as caught:
            run.thread_result(timeout=30)
        run.stop()
    assert f"a load from {there:#x}, which is not in the thread's memory" in caught.value.cause
    assert caught.value.line == 10


HOSTILE = r"""
#include "kmx.h"
/* Hands kmx_result a pointer Python chose: host memory, another bank, a guard page... */
int kmx_main(int core) {
    const uint32_t* p = (const uint32_t*)((uint64_t)kmx_word(0) | (uint64_t)kmx_word(1) << 32);
    kmx_result(0, p, 4);
    return 0;
}
"""


@pytest.mark.parametrize("address", [0, 0x1000, 0x7FFF_0000_0000, 0x4000_2FFF_F000, 0x4001_3000_0000, 2**64 - 8])
def test_kmx_calls_check_every_pointer(tmp_path, address):
    source = tmp_path / "hostile.c"
    source.write_text(HOSTILE)
    program = km.Program("hostile", kernels=KERNELS)
    program.thread(cluster=1, sources=[source], words=[address & 0xFFFF_FFFF, address >> 32])
    with km.Session() as session:
        run = session.load(program)
        with pytest.raises(km.ThreadFault) as caught:
            run.thread_result(timeout=30)
        run.stop()
    assert caught.value.cause.startswith("kmx_result: ") and caught.value.line == 6
