"""Bounds: a region bigger than its cluster's share of DRAM is refused at load with both
sizes; many loads in one session do not grow memory without bound."""

from __future__ import annotations

import os

import numpy as np
import pytest

import komorebi as km
from tests.conftest import HANG, ROOT

LESSON = ROOT / "tutorial" / "35_sharing_memory"
TRIPLE = LESSON / "thread" / "triple.c"


def resident_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.parametrize("cluster, share", [(1, "4 GiB"), (2, "2 GiB"), (3, "2 GiB")])
def test_a_region_bigger_than_the_share_is_refused_at_load_with_both_sizes(cluster, share):
    program = km.Program("huge", kernels=LESSON / "kernels")
    size = 3 * 2**30 if share == "2 GiB" else 5 * 2**30
    program.thread(cluster=cluster, sources=[TRIPLE], regions={"numbers": 4096, "huge": size})
    with km.Session() as session:
        with pytest.raises(ValueError) as caught:
            session.load(program)
        message = str(caught.value)
        assert f"region 'huge' is {size // 2**30} GiB" in message
        assert f"cluster {cluster}'s share of DRAM bank" in message and f"is {share}" in message
        # The session goes on.
        small = km.Program("small", kernels=LESSON / "kernels")
        small.thread(cluster=cluster, sources=[TRIPLE], regions={"numbers": np.ones(4, np.uint32), "tripled": 16})
        run = session.load(small)
        assert run.thread_result(timeout=30).code == 0
        run.stop()
        assert run.thread.read("tripled").view(np.uint32).tolist() == [3, 3, 3, 3]


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads resident memory from /proc")
def test_two_hundred_loads_in_one_session_do_not_grow_memory_without_bound():
    numbers = np.arange(1024, dtype=np.uint32)
    program = km.Program("loads", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[TRIPLE], regions={"numbers": numbers, "tripled": 4096})
    with km.Session() as session:
        for i in range(200):
            run = session.load(program)
            assert run.thread_result(timeout=30).code == 0
            run.stop()
            if i == 19:
                settled = resident_mib()
        grown = resident_mib() - settled
    # Measured here: about 8 MiB over the last 180 loads (allocator noise). A leak of one
    # engine or one region a load would be hundreds.
    assert grown < 64, f"resident memory grew {grown:.0f} MiB over 180 loads"


# -- the image and the stacks (issue 11, items 4 and 6) ------------------------------------------

BIG_FRAME = r"""
#include "kmx.h"
uint32_t global[2048];
static __attribute__((noinline)) uint32_t fill(uint32_t n) {
    volatile uint32_t big[(1 << 20) / 4 + 4096];  /* 1 MiB + 16 KiB: more than the stack */
    for (uint32_t i = 0; i < n; i++) big[i] = 0xdead;
    return big[0];
}
int kmx_main(int core) {
    uint32_t r = fill(kmx_word(0));
    uint32_t bad = 0;
    for (int i = 0; i < 2048; i++) bad += global[i] != 0;
    uint32_t out[2] = {r, bad};
    kmx_result(0, out, 2);
    return 0;
}
"""


@pytest.mark.parametrize("cores", [1, 2])
def test_a_frame_bigger_than_the_stack_is_a_stack_overflow_not_a_silent_write(tmp_path, cores):
    """The frame's bottom lies past the guard, in the image's globals (or another core's
    stack): only its first 1,042 words are written, so nothing but a probe of every page
    as the frame is made can meet the guard."""
    from tests.threads import program_for, run_to_end

    source = BIG_FRAME.replace("int kmx_main(int core) {", "int kmx_main(int core) {\n    if (core != cores - 1) return 0;").replace(
        '#include "kmx.h"', f'#include "kmx.h"\nstatic const int cores = {cores};'
    )
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(source, tmp_path, words=[1042], cores=cores))
    fault = caught.value
    assert fault.core == cores - 1
    assert f"the guard below core {cores - 1}'s stack: a stack overflow" in fault.cause
    assert fault.file.endswith("thread.c")


def test_an_image_too_big_for_the_share_is_refused_at_load_with_both_sizes(tmp_path):
    source = tmp_path / "bss.c"
    source.write_text('#include "kmx.h"\nstatic uint8_t huge[2560u << 20];\nint kmx_main(int core) { huge[kmx_word(0)] = 1; return huge[5]; }\n')
    program = km.Program("p", kernels=LESSON / "kernels")
    program.thread(cluster=2, sources=[source], words=[0])
    program.thread(cluster=3, sources=[source], words=[0])
    with km.Session() as session:
        with pytest.raises(ValueError) as caught:
            session.load(program)
    message = str(caught.value)
    assert "the thread's image (its code, data and .bss) is 2.50 GiB" in message
    assert "cluster 2's share of DRAM bank D7 is 2 GiB" in message
    assert "overlaps" not in message


def test_a_big_bss_costs_what_the_thread_touches(tmp_path):
    """A 2.5 GiB .bss on cluster 0 (a 4 GiB share) runs, in a process of its own so that
    its peak memory is its own."""
    source = tmp_path / "bss.c"
    source.write_text('#include "kmx.h"\nstatic uint8_t huge[2560u << 20];\nint kmx_main(int core) { huge[kmx_word(0)] = 7; return huge[kmx_word(0)]; }\n')
    script = (
        "import resource, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "import komorebi as km\n"
        f"p = km.Program('p', kernels={str(LESSON / 'kernels')!r})\n"
        f"p.thread(cluster=0, sources=[{str(source)!r}], words=[(2560 << 20) - 1])\n"
        "with km.Session() as s:\n"
        "    run = s.load(p)\n"
        "    print(run.thread_result(timeout=None).code)\n"
        "    run.stop()\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    code, peak_mib = map(int, done.stdout.split())
    assert code == 7
    assert peak_mib < 400, f"peak {peak_mib} MiB for a 2.5 GiB .bss the thread touched once"
