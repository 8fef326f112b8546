"""The cache model's events (sim/native/events.c, sim/cache/events.py): raised in C where
the access is made, with its core, its pc and its frames, kept in order and heard by the
checker after the engine's callback, not inside it."""

from __future__ import annotations

import numpy as np

from tests.cache.test_checker import line_of, run_source

PAGES = 4
WORDS = PAGES * 1024

# In strict mode the thread writes a word of each page first (so each page is the
# thread's, and a read of the rest of it is a stale read, a line at a time), then reads
# every word: 256 stale lines, an event each, in one turn.
EVERY_LINE_STALE = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    uint32_t* in = (uint32_t*)kmx_region(0, 0);
    uint32_t* out = (uint32_t*)kmx_region(1, 0);
    for (int p = 0; p < 4; p++)
        in[p * 1024] = 1;
    uint32_t sum = 0;
    for (int i = 0; i < 4096; i++)
        sum += in[i]; /* every line */
    out[0] = sum;
    kmx_flush(1);
    return 0;
}
"""


def test_every_stale_line_read_in_one_turn_reaches_the_finding(tmp_path):
    """More events than the queue first holds (64): it grows, and none is lost; each is
    the reading core's, at the reading line."""
    regions = {"numbers": np.arange(WORDS, dtype=np.uint32), "tripled": 4096}
    run, _, _ = run_source(tmp_path, EVERY_LINE_STALE, mode="strict", regions=regions)
    [finding] = [f for f in run.findings if f.kind == "stale-read"]
    assert (finding.start, finding.end) == (4, WORDS * 4)  # from the first stale byte to the last
    assert finding.line == line_of(EVERY_LINE_STALE, "sum += in[i]")
    assert finding.core == 0


# The stale read is the block's third load; the first two read the stack, on lines of
# their own, before it: the engine's pc in the device callback is the block's start, so
# the event's pc is found by walking the block to the load whose address is the one read.
THIRD_LOAD = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    volatile uint32_t local[2] = {5, 6};
    uint32_t* in = (uint32_t*)kmx_region(0, 0);
    uint32_t* out = (uint32_t*)kmx_region(1, 0);
    in[0] = 1;
    uint32_t a = local[0];
    uint32_t b = local[1];
    uint32_t c = in[40]; /* the stale read */
    out[0] = a + b + c;
    kmx_flush(1);
    return 0;
}
"""


def test_a_stale_read_names_the_reading_instruction_not_its_blocks_first(tmp_path):
    regions = {"numbers": np.arange(1024, dtype=np.uint32), "tripled": 4096}
    run, _, _ = run_source(tmp_path, THIRD_LOAD, mode="strict", regions=regions)
    [finding] = [f for f in run.findings if f.kind == "stale-read"]
    assert finding.line == line_of(THIRD_LOAD, "the stale read")
    assert (finding.start, finding.end) == (128, 192)  # the line of in[40]: bytes 160 to 163 read, whole line stale


# A read through memcpy, the C library's: the finding names the user's line that called
# it, by the frames kept with the event (the frame-pointer chain, read in C at the access).
THROUGH_MEMCPY = r"""
#include <string.h>
#include "kmx.h"
static uint32_t copy[32];
int kmx_main(int core) {
    (void)core;
    uint32_t* in = (uint32_t*)kmx_region(0, 0);
    uint32_t* out = (uint32_t*)kmx_region(1, 0);
    in[0] = 1;
    volatile size_t bytes = sizeof copy; /* (not known when compiled: memcpy is called) */
    memcpy(copy, (const void*)(in + 64), bytes); /* the stale read */
    out[0] = copy[3];
    kmx_flush(1);
    return 0;
}
"""


def test_a_stale_read_inside_memcpy_names_the_line_that_called_it(tmp_path):
    regions = {"numbers": np.arange(1024, dtype=np.uint32), "tripled": 4096}
    run, _, _ = run_source(tmp_path, THROUGH_MEMCPY, mode="strict", regions=regions)
    [finding] = [f for f in run.findings if f.kind == "stale-read"]
    assert finding.line == line_of(THROUGH_MEMCPY, "the stale read")
    assert (finding.start, finding.end) == (256, 384)


def test_a_first_touch_again_and_again_is_one_event_in_the_queue():
    """A thread that spins on an invalidate and a load of a region it also reaches through
    the uncached alias touches the page through the cached alias first again at every
    turn of its loop: the checker keeps the latest first touch, so the queue keeps one
    event, not one a spin (which would grow while the loop runs in C)."""
    from komorebi.sim.cache.events import CacheEvents, Kind
    from komorebi.sim.cache.model import CachedRegion

    dram = np.arange(4096, dtype=np.uint8)
    cache = CachedRegion(np.zeros(4096, np.uint8), dram)
    cache.know_lines()
    cache.state.uncached_seen = 1  # (the thread has used the uncached alias)
    events = CacheEvents()
    events.attach(0, cache)
    heard = []

    class Listener:
        def heard(self, event):
            heard.append(event)

    events.listeners.append(Listener())
    try:
        for _ in range(1000):
            cache.invalidate()
            cache.touch(0, 4, write=False)
        assert (events.native.count, events.native.capacity) == (1, 64)
        events.deliver()
        assert [(e.kind, e.offset) for e in heard] == [(Kind.FIRST_CACHED, 0)]
        cache.touch(64, 4, write=False)  # (the same page: told once until its lines leave)
        cache.touch(4096 - 64, 4, write=False)
        events.deliver()
        assert [(e.kind, e.offset) for e in heard[1:]] == []
    finally:
        events.close()
        cache.release()


# Python reads the region for core 1's kmx_result, before any invalidate: the finding is
# core 1's, at the call's line (the cache model's event names the core whose call it is).
PYTHON_READS = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint32_t* in = (uint32_t*)kmx_region(0, 0);
    uint32_t* out = (uint32_t*)kmx_region(1, 0);
    if (core == 1)
        kmx_result(0, in + 8, 4); /* Python reads */
    kmx_barrier();
    if (core == 0) {
        out[0] = 1;
        kmx_flush(1);
    }
    return 0;
}
"""


def test_a_read_python_makes_for_a_call_is_the_calling_cores_at_its_line(tmp_path):
    run, _, _ = run_source(tmp_path, PYTHON_READS, cores=2)
    [finding] = [f for f in run.findings if f.kind == "read-before-invalidate"]
    assert (finding.core, finding.line) == (1, line_of(PYTHON_READS, "Python reads"))


# A cached write, a flush, the uncached alias, then a mixed alias, then a cached write of
# the same page again: the finding heard after all of it names the cached write before the
# mixed access (kept in the event), not the one after.
MIXED_THEN_WRITTEN = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    volatile uint32_t* in = (uint32_t*)kmx_region(0, 0);
    volatile uint32_t* u = (uint32_t*)kmx_region_uncached(0);
    kmx_invalidate(0);
    in[0] = 1; /* the cached write */
    kmx_flush(0);
    u[1024] = 5; /* the first uncached access (another page) */
    u[16] = 7; /* the mixed access */
    in[32] = 9; /* a cached write after it */
    kmx_flush(0);
    return 0;
}
"""


def test_a_mixed_alias_names_the_cached_touch_before_it_not_after(tmp_path):
    regions = {"numbers": np.arange(2048, dtype=np.uint32), "tripled": 4096}
    run, _, _ = run_source(tmp_path, MIXED_THEN_WRITTEN, regions=regions)
    [finding] = [f for f in run.findings if f.kind == "mixed-alias"]
    assert finding.line == line_of(MIXED_THEN_WRITTEN, "the mixed access")
    assert f"cached alias at line {line_of(MIXED_THEN_WRITTEN, 'the cached write */')}" in finding.message


def test_the_doors_region_wide_events_name_who_and_come_after_cs():
    """The door's region-wide operations (sim.cache.model, *_by) tell typed events with who
    did them, after the events C queued before them, in order (sim.cache.events)."""
    from types import SimpleNamespace

    from komorebi.sim.cache.events import (
        CacheEvent, CacheEvents, Flushed, HandedBack, Invalidated, Kind, LeftDirty, NocRead, NocWrote,
    )
    from komorebi.sim.cache.model import CachedRegion

    dram = np.zeros(2 * 4096, np.uint8)
    cache = CachedRegion(np.zeros(2 * 4096, np.uint8), dram)
    cache.know_lines()
    cache.state.uncached_seen = 1
    events = CacheEvents()
    events.attach(3, cache)
    heard = []
    events.listeners.append(SimpleNamespace(heard=heard.append))
    core, agent = object(), SimpleNamespace(name="tensix")
    try:
        cache.touch(0, 8, write=True)  # C queues the page's first cached touch
        cache.view[:8] = 7  # (the store the touch stood for)
        read = SimpleNamespace(size=8, file="t.py", line=1)
        assert cache.noc_read_by(agent, read, 0).tolist() == [0] * 8  # DRAM's: the line is dirty
        cache.submitted_by(core)
        cache.flush_by(core, False, 0)
        wrote = SimpleNamespace(size=4, file="t.py", line=2)
        cache.noc_write_by(agent, wrote, 4096, np.full(4, 9, np.uint8))
        cache.touch(64, 8, write=True)  # (the same page, still cached: no first touch)
        cache.view[64:72] = 5
        cache.invalidate_by(core)
        cache.thread_ended()
        cache.hand_back()
        kinds = [type(e).__name__ if not isinstance(e, CacheEvent) else e.kind for e in heard]
        assert kinds == [Kind.FIRST_CACHED, "NocRead", "LeftDirty", "Flushed", "NocWrote", "Invalidated",
                         "HandedBack"]
        assert all(e.region == 3 for e in heard)
        noc_read, left, flushed, noc_wrote, invalidated, handed = heard[1:]
        assert isinstance(noc_read, NocRead) and noc_read.agent is agent and noc_read.dirty.tolist() == [0]
        assert isinstance(left, LeftDirty) and left.submit_core is core and left.lines.tolist() == [0]
        assert isinstance(flushed, Flushed) and flushed.core is core and flushed.lines.tolist() == [0]
        assert isinstance(noc_wrote, NocWrote) and (noc_wrote.start, noc_wrote.end) == (4096, 4100)
        assert isinstance(invalidated, Invalidated) and invalidated.lost.tolist() == [1]  # written, not flushed
        assert isinstance(handed, HandedBack) and handed.lines.size == 0  # (nothing cached is left)
        assert dram[:8].tolist() == [7] * 8 and dram[4096:4100].tolist() == [9] * 4  # the flush's, the stand-in's
    finally:
        events.close()
        cache.release()
