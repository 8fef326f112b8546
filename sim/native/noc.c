/* noc.c: a region's DRAM as the NoC reaches it, past the X280's cache: what a Tensix
 * stand-in reads (noc.read), and whether DRAM holds what it waits for (noc.wait; the turn
 * loop asks between turns, sched.c). Its writes are the uncached alias's stores
 * (watch.c, dram_store): the two reach DRAM the same way.
 *
 * DRAM's bytes: a region the cache copies (strict mode, bank D7, a region a stand-in
 * wrote) has DRAM of its own; a direct one's DRAM is the view, but for dirty lines, whose
 * DRAM bytes are their clean ones, and bytes written past the cache under a cached line,
 * kept aside (dram_byte). */
#include "hooks.h"

void noc_read(const CachedRegion *r, uint64_t offset, uint64_t size, uint8_t *out) {
    if (!r->direct) {
        __builtin_memcpy(out, r->dram + offset, size);
        return;
    }
    uint64_t at = offset, end = offset + size;
    while (at < end) { /* a line at a time: most lines are the view's, whole */
        uint64_t line_end = (at / LINE + 1) * LINE, count = (line_end < end ? line_end : end) - at;
        uint64_t line = at / LINE, page = at / PAGE;
        int plain = !r->writable[page] && !(r->side_mask && r->side_mask[line]);
        if (plain)
            __builtin_memcpy(out + (at - offset), r->view + at, count);
        else
            for (uint64_t i = 0; i < count; i++)
                out[at - offset + i] = dram_byte(r, at + i);
        at += count;
    }
}

int noc_holds(const CachedRegion *r, uint64_t offset, uint64_t size, uint64_t value) {
    uint8_t bytes[8];
    noc_read(r, offset, size, bytes);
    for (uint64_t i = 0; i < size; i++)
        if (bytes[i] != (uint8_t)(value >> (8 * i)))
            return 0;
    return 1;
}
