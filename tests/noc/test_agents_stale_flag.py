"""A thread that waits on a flag a Tensix stand-in raises, without an invalidate inside its
loop: it reads the cache's old copy again and again, and the checker's advice is to
invalidate inside the loop (not "after the thread sees its flag", which the flag is)."""

from __future__ import annotations

import warnings

import numpy as np

import komorebi as km
from tests.threads import program_for, run_to_end

WAITS = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    volatile uint32_t* flag = (volatile uint32_t*)kmx_region(0, 0);
    volatile uint32_t* ready = (volatile uint32_t*)kmx_region_uncached(1);
    kmx_invalidate(0);
    uint32_t seen = flag[0];      /* the flag's line is in the cache now */
    ready[0] = 1;                 /* the stand-in raises the flag in DRAM */
    for (int i = 0; i < 100000 && seen != 1; i++)
        seen = flag[0];           /* no invalidate in the loop: the cache's old copy */
    kmx_result(0, &seen, 1);
    return 0;
}
"""


def raise_flag(noc):
    noc.wait("ready", 0, 1)
    noc.write("flag", 0, np.uint32([1]))


def test_a_loop_that_waits_on_a_stale_flag_is_told_to_invalidate_inside_it(tmp_path):
    program = program_for(WAITS, tmp_path, regions={"flag": 64, "ready": 64})
    program.noc_agent("tensix", raise_flag, cluster=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)
        result, run = run_to_end(program, 600)
    assert int(result.words[0]) == 0  # it never saw the flag
    [finding] = [f for f in run.findings if f.kind == "stale-read"]
    assert finding.region == "flag" and finding.agent == "tensix" and finding.line == 11  # (the loop's read)
    assert finding.message.endswith("Call kmx_invalidate(0) inside the loop, before each read of them.")
    assert "again and again" in finding.message and "after the thread sees" not in finding.message
