/* latency.c: the door for time. These ways into a region's memory say where the bytes
 * came from (a LEVEL_*, hooks.h) and how many lines they moved, here, and are answered
 * how many cycles that took, as gem5's atomic accesses answer their latency:
 *
 * - a core's access to a region with the card-size cache (watch.c, tile_touch): the level
 *   that held the line, L1, L2, L3 or DRAM;
 * - a fill of a page from DRAM, where the unbounded cache first brings it in (fill.c);
 * - an access through the uncached alias (watch.c);
 * - a kmx_flush or kmx_invalidate, with every line of the region (a flush walks them all,
 *   written or not), answered in C (calls.c) or Python (sim/cache/model.py, _took).
 *
 * Python's own accesses on a core's behalf during a kmx call (a result's words) count as
 * that core's.
 *
 * With no table (MemoryTime.latency 0, the default) every access answers 0, and nothing
 * is added. The timing model (timing.c) hears a flush's and an invalidate's lines here;
 * the cached levels and the uncached alias it times itself (timing_uncached).
 * The timing model gives each core a table of cycles per level and per line moved, and
 * reads the sum (MemoryTime.cycles) as the memory's share of the core's clock.
 *
 * Not answered yet: an access the engine's TLB answers without a hook (a hit in a page
 * already filled, in the unbounded cache); a watched access of the unbounded cache
 * (watch.c's watch_read and watch_write, where lines are known one by one), a line's
 * refill after a line flush, and a line flush through the cache's registers. */
#include "hooks.h"

uint64_t access_took(Core *core, int level, uint64_t lines) {
    if (core && core->timing && level >= LEVEL_FLUSH) /* (the cached levels and the uncached alias are the model's own) */
        timing_took(core, level, lines);
    if (!core || !core->memory.latency)
        return 0;
    uint64_t cycles = core->memory.latency[level] + core->memory.per_line[level] * lines;
    core->memory.cycles += cycles;
    core->memory.accesses[level]++;
    return cycles;
}
