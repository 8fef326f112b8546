/* latency.c: the door for time. Each way into a region's memory that C sees says where
 * the bytes came from (a LEVEL_*, hooks.h) and how many lines it moved, here, and is
 * answered how many cycles that took, as gem5's atomic accesses answer their latency:
 *
 * - a core's access to a region with the card-size cache (watch.c, tile_touch): the level
 *   that held the line, L1, L2, L3 or DRAM;
 * - a fill of a page from DRAM, where the unbounded cache first brings it in (fill.c);
 * - an access through the uncached alias (watch.c);
 * - a kmx_flush or kmx_invalidate, per line it writes back or drops (calls.c).
 *
 * With no timing model (the default: a core's cycles count its instructions, turns.c) a
 * core has no table (MemoryTime.latency 0): every access answers 0, and nothing is added.
 * The timing model gives each core a table of cycles per level and per line moved, and
 * reads the sum (MemoryTime.cycles) as the memory's share of the core's clock.
 *
 * What the door does not see yet: an access the engine's TLB answers without a hook (a
 * hit in a page already filled, in the unbounded cache). Those cost what the table's
 * LEVEL_L1 row says only where every access is watched (the card-size cache, a region
 * whose lines are known one by one). */
#include "hooks.h"

uint64_t access_took(Core *core, int level, uint64_t lines) {
    if (!core || !core->memory.latency)
        return 0;
    uint64_t cycles = core->memory.latency[level] + core->memory.per_line[level] * lines;
    core->memory.cycles += cycles;
    core->memory.accesses[level]++;
    return cycles;
}
