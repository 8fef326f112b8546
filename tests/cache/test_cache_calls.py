"""kmx_invalidate drops unflushed writes; kmx_flush writes back; the hand-back at the
thread's end writes back the rest. Shown by C threads whose output differs accordingly."""

import numpy as np
import pytest

import komorebi as km
from tests.threads import program_for, run_to_end

# Writes 7 into word 0, then (depending on argument word 0) flushes and/or invalidates,
# then reads word 0 again. Word 1 gets 9 and is never flushed: the hand-back writes it.
SOURCE = """
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    volatile uint32_t* p = (volatile uint32_t*)kmx_region(0, &bytes);
    uint32_t mode = kmx_word(0);
    kmx_invalidate(0);
    p[0] = 7;
    if (mode & 1) kmx_flush(0);
    if (mode & 2) kmx_invalidate(0);
    uint32_t seen = p[0];
    p[1] = 9;
    kmx_result(0, &seen, 1);
    return 0;
}
"""


def run_mode(tmp_path, mode):
    start = np.array([100, 200, 300], dtype=np.uint32)
    with pytest.warns(km.CoherenceWarning) as said:  # (word 1 is never flushed: on purpose)
        result, run = run_to_end(program_for(SOURCE, tmp_path, regions={"r": start}, words=[mode]))
    kinds = sorted(f.kind for f in run.findings)
    assert len(said) == len(kinds) and "unflushed-write" in kinds
    assert ("invalidate-dropped-writes" in kinds) == (mode == 2)
    return result.words[0], run.thread.read("r").view(np.uint32).tolist()


def test_without_either_call_the_write_is_seen_and_handed_back(tmp_path):
    assert run_mode(tmp_path, 0) == (7, [7, 9, 300])


def test_invalidate_drops_an_unflushed_write(tmp_path):
    assert run_mode(tmp_path, 2) == (100, [100, 9, 300])


def test_flush_writes_back_before_the_invalidate(tmp_path):
    assert run_mode(tmp_path, 3) == (7, [7, 9, 300])


def test_flush_alone_keeps_the_line_cached(tmp_path):
    assert run_mode(tmp_path, 1) == (7, [7, 9, 300])


def test_writes_after_a_flush_are_dirty_again(tmp_path):
    source = """
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    volatile uint32_t* p = (volatile uint32_t*)kmx_region(0, &bytes);
    kmx_invalidate(0);
    p[0] = 1;
    kmx_flush(0);
    p[0] = 2;          /* dirty again, never flushed */
    kmx_invalidate(0); /* ...and dropped: DRAM keeps 1 */
    uint32_t seen = p[0];
    kmx_result(0, &seen, 1);
    return 0;
}
"""
    with pytest.warns(km.CoherenceWarning, match=r"kmx_invalidate\(0\) at line 10 dropped dirty lines"):
        result, run = run_to_end(program_for(source, tmp_path, regions={"r": 64}))
    assert result.words[0] == 1
    assert run.thread.read("r").view(np.uint32)[0] == 1
