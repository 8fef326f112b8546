"""Threads on several clusters in one program; the cluster-to-bank map (sim/layout.py, SHARES)."""

import numpy as np
import pytest

import komorebi as km
from komorebi.sim.build.thread import build_thread
from komorebi.sim.machine.card import Card
from komorebi.sim.image.elf import load_image
from komorebi.sim.layout import CACHED_ALIAS, GiB
from tests.threads import THREADS

WHERE = """
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    uint64_t address = (uint64_t)kmx_region(0, &bytes);
    uint32_t out[3] = {(uint32_t)address, (uint32_t)(address >> 32), (uint32_t)kmx_cluster()};
    kmx_result(0, out, 3);
    return 0;
}
"""


def test_each_cluster_sees_its_share_at_the_cached_alias(tmp_path, kernels):
    (tmp_path / "where.c").write_text(WHERE)
    program = km.Program("where", kernels=kernels)
    for cluster in range(4):
        program.thread(cluster=cluster, sources=[tmp_path / "where.c"], regions={"r": 4096})
    with km.Session() as session:
        run = session.load(program)
        addresses = {}
        for cluster in range(4):
            words = run.thread_result(timeout=30, cluster=cluster).words
            assert words[2] == cluster
            addresses[cluster] = int(words[0]) | int(words[1]) << 32
        run.stop()
        with pytest.raises(ValueError, match="clusters"):
            run.thread
    for cluster in (0, 1, 2):
        assert CACHED_ALIAS <= addresses[cluster] < CACHED_ALIAS + 2 * GiB
    assert CACHED_ALIAS + 2 * GiB <= addresses[3] < CACHED_ALIAS + 4 * GiB


def test_clusters_two_and_three_share_bank_d7_in_halves():
    card = Card()
    image = load_image(build_thread([THREADS / "copy.c"]).elf)
    two = card.place_thread(2, image, [("a", 64), ("b", 64)], [], 1)
    three = card.place_thread(3, image, [("a", 64), ("b", 64)], [], 1)
    assert two.bank is three.bank and two.bank.name == "D7"
    offsets = [r.address - CACHED_ALIAS for r in two.regions + three.regions]
    assert all(o < 2 * GiB for o in offsets[:2]) and all(o >= 2 * GiB for o in offsets[2:])
    card.stop()


def test_threads_on_two_clusters_run_together(tmp_path, kernels):
    data = np.arange(5000, dtype=np.uint16)
    program = km.Program("two", kernels=kernels)
    program.thread(cluster=0, sources=[THREADS / "copy.c"], regions={"in": data, "out": data.nbytes})
    program.thread(cluster=3, sources=[THREADS / "copy.c"], regions={"in": data[::-1].copy(), "out": data.nbytes})
    with km.Session() as session:
        run = session.load(program)
        assert run.thread_result(timeout=30, cluster=3).code == 0
        assert run.thread_result(timeout=30, cluster=0).code == 0
        with pytest.raises(KeyError, match="cluster 1"):
            run.thread_result(timeout=1, cluster=1)
        run.stop()
    assert (run.threads[0].read("out").view(np.uint16) == data).all()
    assert (run.threads[3].read("out").view(np.uint16) == data[::-1]).all()
