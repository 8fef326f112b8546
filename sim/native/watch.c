/* watch.c: the cache model an access at a time, where a page's flags cannot tell (fill.c
 * keeps those), and the cache's registers.
 *
 * Watched pages. A page is watched while one of its lines holds bytes the page-level
 * model cannot describe:
 *   - strict mode: a prior line (cached from before Python wrote the region: its bytes
 *     are not DRAM's) that the thread has not wholly written over. A read of a byte the
 *     thread did not write is a stale read.
 *   - a page some of whose lines (not all) a line flush dropped before any invalidate:
 *     a read of a line not dropped is a read before invalidate, of a dropped one is not.
 *   - every page of a region whose lines are known one by one (lines_known): from the
 *     load on where a Tensix stand-in may write DRAM under the cache, else from the
 *     thread's first access through the uncached alias. The lines in the cache, those
 *     written since clean (whatever a store wrote), the bytes of DRAM that changed under
 *     them, and which alias touched which line are known an access at a time.
 * tlb_fill maps a watched page at its address plus WATCH_ALIAS, where the engine maps
 * the span a second time as a device whose reads and writes call here: every access to
 * the page then comes here, with its offset and size, until the page is unwatched and
 * its TLB entry goes (the next flush of the TLB). Pages not watched stay on the fast path.
 * The interpreter (isa.c) reaches watched pages through watch_read and watch_write too.
 *
 * The cache's registers (Caches.md of tt-isa-documentation, BlackholeA0/L2CPUTile):
 *   CCACHE0 (the L3), at 0x0201_0000: FLUSH64 (+0x200, a physical address) and FLUSH32
 *     (+0x240, the address shifted right by 4) flush one line from the tile's caches:
 *     written back to DRAM if dirty, then dropped;
 *   PL2CACHE0 of hart H (its L2), at 0x1010_4000 + H * 0x4000: CFLUSH64 (+0x200) writes
 *     the line back from the hart's L2 to the L3, which is still the tile's cache, so
 *     DRAM does not change; FLUSHCOUNT (+0x208) reads the flushes still pending: 0, as
 *     the simulator's flushes are done at once.
 * Any other access to those blocks is a fault the core raises after the instruction
 * (Device: sim/hart/core.py names the register).
 *
 * The uncached alias (MemoryMap of the L2CPU tile: 0x0000_3000_0000 on, the cached
 * window less 0x4000_0000_0000): each region's span is mapped there as a device too, whose
 * loads and stores reach DRAM past the cache. A store there to a line the cache holds
 * leaves the cache's bytes as they were (stale: a cached read of them is a stale read);
 * to a line it does not hold, the next fill brings it. A load there reads DRAM, not a
 * dirty line's bytes. Direct regions (card mode: the view is DRAM itself) keep DRAM's
 * bytes under a cached line aside (side, side_mask) until the line leaves the cache.
 */
#include "hooks.h"

#define FULL (~0ull)

static uint64_t byte_mask(uint64_t first, uint64_t size) { /* bytes [first, first + size) of a line */
    return size >= 64 ? FULL : ((1ull << size) - 1) << first;
}

int page_watched(const CachedRegion *r, uint64_t page) {
    if (r->lines_known || r->tile)
        return 1;
    if (r->read_cores && r->read_early[page] && !r->invalidated && !r->written[page])
        return 1; /* (read before the invalidate: the lines each core reads are kept) */
    if (r->prior[page] && r->prior_lines && r->prior_lines[page])
        return 1;
    if (r->dropped && !r->invalidated) {
        uint64_t dropped = r->dropped[page];
        return dropped && dropped != FULL && !r->written[page] && !r->read_early[page];
    }
    return 0;
}

/* The lines of [OFFSET, OFFSET + SIZE), a line at a time: LINE, the first byte in it, and
 * how many (a loop's header: for (EACH_LINE(offset, size)) { ... }). */
#define EACH_LINE(offset, size)                                                                  \
    uint64_t at_ = (offset), end_ = (offset) + (size), line = 0, first = 0, count = 0;           \
    at_ < end_ && (line = at_ / LINE, first = at_ % LINE,                                        \
                   count = LINE - first < end_ - at_ ? LINE - first : end_ - at_, 1);            \
    at_ += count

static void mark(CachedRegion *r, uint64_t line, uint8_t state) {
    if (r->line_events && r->line_events[line] < state) {
        r->line_events[line] = state;
        CHANGED(r);
    }
}


static uint64_t first_byte(uint64_t mask) { return (uint64_t)__builtin_ctzll(mask); }
static uint64_t last_byte(uint64_t mask) { return 63 - (uint64_t)__builtin_clzll(mask); }

/* A stale read of LINE, beginning at byte FIRST of it: told once a line, with the stale
 * bytes of the line (STALE, a mask). A stale read that begins where the region's last one
 * began is the same bytes read again, with no other stale byte read between, as a loop
 * that waits on them does: the line's `told` gets TOLD_AGAIN (the checker's advice then
 * differs: sim/cache/checker.py). */
static void stale_read(CachedRegion *r, Core *core, uint64_t line, uint64_t stale, uint64_t first, int under) {
    uint64_t at = line * LINE + first + 1, last = r->last_stale_read;
    r->last_stale_read = at;
    if (r->told[line]) {
        if (last == at)
            r->told[line] |= TOLD_AGAIN;
        return;
    }
    r->told[line] = 1;
    mark(r, line, MARK_READ_STALE);
    uint64_t offset = line * LINE + first_byte(stale), size = last_byte(stale) - first_byte(stale) + 1;
    CacheEvent *e = cache_event(r, core, EVENT_STALE_READ, offset, size, r->base + offset, size, ACCESS_LOADS);
    if (e)
        e->under = under;
}

/* LINE of PAGE touched through the cached alias (CACHED) or the uncached one: the first
 * touch of a page through each is told (the checker keeps its source line, for a
 * mixed-alias: through the cached alias only once the thread has used the uncached one,
 * since before that the fill hook's first read of the page stands for it), and a line
 * touched through both is a mixed-alias, told once. */
static void touched(CachedRegion *r, Core *core, uint64_t page, uint64_t line, int cached) {
    uint64_t bit = 1ull << (line % LINES_PER_PAGE), address = r->base + line * LINE - (cached ? 0 : UNCACHED_OFFSET);
    const int either = ACCESS_LOADS | ACCESS_STORES;
    uint64_t *mine = cached ? r->cc_touched : r->uc_touched, *other = cached ? r->uc_touched : r->cc_touched;
    if (!mine[page] && (!cached || r->uncached_seen))
        cache_event(r, core, cached ? EVENT_FIRST_CACHED : EVENT_FIRST_UNCACHED, line * LINE, LINE, address, LINE,
                    either);
    mine[page] |= bit;
    if ((other[page] & bit) && !(r->mixed_told[page] & bit)) {
        r->mixed_told[page] |= bit;
        CacheEvent *e = cache_event(r, core, cached ? EVENT_MIXED_CACHED : EVENT_MIXED_UNCACHED, line * LINE, LINE,
                                    address, LINE, either);
        if (e) { /* (the cached touch the checker names, where no event told it: as it is now) */
            int read = r->read_pc && r->read_pc[page];
            e->before_pc = read ? r->read_pc[page] : r->write_pc[page];
            e->before_ra = read ? r->read_ra[page] : r->write_ra[page];
            e->before_core = read ? -1 : r->write_core[page];
        }
    }
}

static void tile_touch(CachedRegion *r, Core *core, uint64_t line, int write);

void watch_read(CachedRegion *r, Core *core, uint64_t offset, uint64_t size) {
    for (EACH_LINE(offset, size)) {
        uint64_t page = line / LINES_PER_PAGE, want = byte_mask(first, count);
        if (r->tile)
            tile_touch(r, core, line, 0);
        if (r->lines_known) {
            touched(r, core, page, line, 1);
            r->cached_lines[page] |= 1ull << (line % LINES_PER_PAGE); /* (filled, if it was not) */
            if (r->dram_changed[line] & want) { /* DRAM changed under the cached line */
                stale_read(r, core, line, r->dram_changed[line], first, 1);
                continue;
            }
        }
        if (read_line_before_invalidate(r, line, core)) /* Python's data, read before any invalidate (fill.c) */
            continue;
        /* a page read before it was written has its finding already (read before
         * invalidate), which covers the page */
        if (r->prior[page] && r->fresh && (r->fresh[line] & want) != want && !r->read_early[page])
            stale_read(r, core, line, ~r->fresh[line], first, 0);
    }
}

void watch_write(CachedRegion *r, Core *core, uint64_t offset, uint64_t size) {
    if (core) /* (another core's reservation of these bytes' line ends: reserve.c) */
        reservations_stored(core->reservations, core->engine.core, r->base + offset, size);
    for (EACH_LINE(offset, size)) {
        uint64_t page = line / LINES_PER_PAGE, wrote = byte_mask(first, count);
        if (r->tile)
            tile_touch(r, core, line, 1);
        /* dirty, whatever it stores, as on a card: where lines are known, or a prior line
         * (strict mode), which a page-level compare could take for clean; a page watched
         * for another reason keeps the documented rule (a store of a line's own bytes is clean) */
        if (r->lines_known || (r->prior[page] && r->fresh && r->fresh[line] != FULL))
            r->dirty_mask[page] |= 1ull << (line % LINES_PER_PAGE);
        if (r->lines_known) {
            touched(r, core, page, line, 1);
            r->cached_lines[page] |= 1ull << (line % LINES_PER_PAGE);
            r->dram_changed[line] &= ~wrote; /* the thread's own bytes now */
        }
        if (r->prior[page] && r->fresh && r->fresh[line] != FULL) {
            r->fresh[line] |= wrote;
            if (r->fresh[line] == FULL && r->prior_lines[page])
                r->prior_lines[page]--;
        }
    }
}

/* -- a region's span as a device: the watched pages' accesses ----------------------------- */

uint64_t watch_device_read(void *uc, uint64_t offset, unsigned size, void *data) {
    (void)uc;
    Watch *w = (Watch *)data;
    uint64_t value = 0;
    watch_read(w->region, w->core, offset, size); /* (first: an eviction may refill the line) */
    __builtin_memcpy(&value, w->region->view + offset, size > 8 ? 8 : size);
    return value;
}

void watch_device_write(void *uc, uint64_t offset, unsigned size, uint64_t value, void *data) {
    (void)uc;
    Watch *w = (Watch *)data;
    watch_write(w->region, w->core, offset, size);
    __builtin_memcpy(w->region->view + offset, &value, size > 8 ? 8 : size);
}

/* -- the clean bytes of a line ------------------------------------------------------------ */

/* Where the clean bytes of PAGE of R are (what its lines held when last clean): the rule,
 * written once, which the fill hook (fill.c: whether a first write keeps a copy) and the
 * line rules here read (is a line dirty, its clean bytes put back, a line written back),
 * for the model's Python too (sim/cache/model.py: region_dirty_lines, region_put_clean):
 *   - a copying region's (strict mode, bank D7, the card-size cache's neighbours), and a
 *     direct region's page written back since it was loaded: a copy of their own (clean);
 *   - a direct region's page as loaded: the bytes it was loaded with (loaded_bytes, or zeros);
 *   - a copy-on-write region's: DRAM's page, unless DRAM's bytes are not the cache's clean
 *     ones (strict mode's prior page, or one DRAM changed under: own_clean), a copy then. */
int clean_place(const CachedRegion *r, uint64_t page) {
    if (r->copy_all)
        return CLEAN_COPY;
    if (r->direct)
        return r->as_loaded[page] ? CLEAN_LOADED : CLEAN_COPY;
    return (r->prior[page] || (r->own_clean && r->own_clean[page])) ? CLEAN_COPY : CLEAN_IN_DRAM;
}

/* The clean bytes of the line at OFFSET (of page PAGE): 0 for zeros (direct, loaded as zeros). */
static const uint8_t *reference(const CachedRegion *r, uint64_t page, uint64_t offset) {
    switch (clean_place(r, page)) {
    case CLEAN_COPY: return r->clean + offset;
    case CLEAN_LOADED: return r->loaded_bytes ? r->loaded_bytes + offset : 0;
    default: return r->dram + offset;
    }
}

static int differs(const uint8_t *a, const uint8_t *b) { /* two lines; B 0: zeros */
    const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
    for (int i = 0; i < 8; i++)
        if (x[i] != (y ? y[i] : 0))
            return 1;
    return 0;
}

/* Whether the line at OFFSET is dirty: written since it was clean, where lines are known
 * one by one; elsewhere, a store seen here (a watched page's: strict mode's prior lines)
 * made it so, or its bytes differ from its clean ones (a store of a line's own bytes on the
 * fast path leaves it clean: sim/cache/model.py says why no program can tell). */
static int dirty(const CachedRegion *r, uint64_t page, uint64_t offset) {
    int seen = r->dirty_mask && (r->dirty_mask[page] >> (offset / LINE % LINES_PER_PAGE) & 1);
    if (r->lines_known || seen)
        return seen;
    return r->writable[page] && differs(r->view + offset, reference(r, page, offset));
}

/* The clean bytes of the line at OFFSET are now the view's (it was written back, or DRAM
 * changed under a line the cache does not hold), as CachedRegion._clean_again does for
 * whole pages. */
static void clean_again(CachedRegion *r, uint64_t page, uint64_t offset) {
    uint64_t start = page * PAGE;
    if (r->direct && r->as_loaded[page]) { /* the page's clean bytes are now its own copy */
        if (r->loaded_bytes)
            __builtin_memcpy(r->clean + start, r->loaded_bytes + start, PAGE);
        else
            __builtin_memset(r->clean + start, 0, PAGE);
        r->as_loaded[page] = 0;
    }
    if (clean_place(r, page) == CLEAN_COPY)
        __builtin_memcpy(r->clean + offset, r->view + offset, LINE);
    if (!r->copy_all) /* what lies under the view's copies is no longer DRAM's page */
        r->copy_fill[page] = 1;
}

/* The line at OFFSET leaves the cache: the next access fills it from DRAM, so the view
 * takes DRAM's bytes where they differ (stale ones). */
static void refill(CachedRegion *r, uint64_t page, uint64_t line) {
    uint64_t offset = line * LINE;
    int changed = 0;
    if (r->prior[page] && r->fresh && r->fresh[line] != FULL) { /* strict mode's prior line, stale bytes and all */
        __builtin_memcpy(r->view + offset, r->dram + offset, LINE);
        r->fresh[line] = FULL;
        if (r->prior_lines[page])
            r->prior_lines[page]--;
        changed = 1;
    }
    if (r->lines_known) {
        if (r->direct && r->side_mask[line]) { /* DRAM's bytes were kept aside */
            for (uint64_t i = 0; i < LINE; i++)
                if (r->side_mask[line] >> i & 1)
                    r->view[offset + i] = r->side[offset + i];
            r->side_mask[line] = 0;
            changed = 1;
        } else if (!r->direct && r->dram_changed[line]) {
            __builtin_memcpy(r->view + offset, r->dram + offset, LINE);
            changed = 1;
        }
        r->dram_changed[line] = 0;
        r->cached_lines[page] &= ~(1ull << (line % LINES_PER_PAGE));
    }
    if (changed && r->writable[page])
        clean_again(r, page, offset);
    else if (changed && r->direct)
        r->as_loaded[page] = 0;
    if (r->lines_known) { /* out of the cache: the next touch through either alias starts anew */
        uint64_t bit = 1ull << (line % LINES_PER_PAGE);
        r->cc_touched[page] &= ~bit;
        r->uc_touched[page] &= ~bit;
        r->mixed_told[page] &= ~bit;
    }
}

/* Every line of R leaves the cache (an invalidate, the hand-back: sim/cache/model.py, whose
 * page-level flags go there), where its lines are known one by one: DRAM's bytes kept aside
 * under cached lines go into the view (direct: the view is DRAM but for them), and the next
 * touch through either alias starts anew. */
void lines_dropped(CachedRegion *r) {
    uint64_t lines = r->pages * LINES_PER_PAGE;
    for (uint64_t line = 0; r->side_mask && line < lines; line++) {
        uint64_t mask = r->side_mask[line], offset = line * LINE, page = line / LINES_PER_PAGE;
        if (!mask)
            continue;
        for (uint64_t i = 0; i < LINE; i++)
            if (mask >> i & 1)
                r->view[offset + i] = r->side[offset + i];
        r->side_mask[line] = 0;
        r->copy_fill[page] = 1; /* (DRAM's own page now) */
        r->as_loaded[page] = 0; /* (its clean bytes are no longer those loaded) */
    }
    __builtin_memset(r->dram_changed, 0, lines * sizeof *r->dram_changed);
    __builtin_memset(r->cached_lines, 0, r->pages * sizeof *r->cached_lines);
    __builtin_memset(r->cc_touched, 0, r->pages * sizeof *r->cc_touched);
    __builtin_memset(r->uc_touched, 0, r->pages * sizeof *r->uc_touched);
    __builtin_memset(r->mixed_told, 0, r->pages * sizeof *r->mixed_told);
    if (r->own_clean)
        __builtin_memset(r->own_clean, 0, r->pages);
}

/* -- a line's write-back: a line flush's, an eviction's, a kmx_flush's ------------------------ */

/* The line at OFFSET (of PAGE) of R goes back to DRAM whole: the one rule of a write-back,
 * a line flush's and an eviction's (leave_cache, which then drops the line) and a
 * kmx_flush's (region_write_back, which keeps it, clean). DRAM takes the cache's bytes
 * (direct: DRAM is the view already), over anything written past the cache under them;
 * the line is no longer dirty, and none of its bytes is stale (strict mode's prior line:
 * the bytes the thread did not write went back too). KEEP_CLEAN: the page stays written,
 * so its clean bytes take the line's (a kmx_flush makes the whole page clean: its caller
 * does, sim/cache/model.py). */
static void write_back_line(CachedRegion *r, uint64_t page, uint64_t offset, int keep_clean) {
    uint64_t line = offset / LINE;
    if (r->prior[page] && r->fresh && r->fresh[line] != FULL) {
        r->fresh[line] = FULL;
        if (r->prior_lines[page])
            r->prior_lines[page]--;
    }
    if (!r->direct)
        __builtin_memcpy(r->dram + offset, r->view + offset, LINE);
    if (r->lines_known) /* the whole line went back, over what an uncached store wrote */
        r->dram_changed[line] = r->side_mask ? (r->side_mask[line] = 0) : 0;
    if (r->dirty_mask)
        r->dirty_mask[page] &= ~(1ull << (line % LINES_PER_PAGE));
    if (keep_clean)
        clean_again(r, page, offset);
}

/* The dirty lines of R's written pages [FIRST, END), by the one rule (dirty), into OUT (room
 * for every line of those pages); how many (sim/cache/model.py: a flush's, an invalidate's,
 * a submission's, a stand-in's read's). */
int64_t region_dirty_lines(const CachedRegion *r, uint64_t first, uint64_t end, int64_t *out) {
    int64_t found = 0;
    for (uint64_t page = first; page < end && page < r->pages; page++) {
        if (!r->writable[page])
            continue;
        for (uint64_t i = 0; i < LINES_PER_PAGE; i++)
            if (dirty(r, page, page * PAGE + i * LINE))
                out[found++] = (int64_t)(page * LINES_PER_PAGE + i);
    }
    return found;
}

/* A kmx_flush's write-back of R's dirty LINES (COUNT, which region_dirty_lines found): each
 * goes back as a line flush's does (write_back_line), stays cached, and is marked flushed.
 * The page-level flags (written, clean again) are the caller's (sim/cache/model.py). */
void region_write_back(CachedRegion *r, const int64_t *lines, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        uint64_t offset = (uint64_t)lines[i] * LINE;
        write_back_line(r, offset / PAGE, offset, 0);
        mark(r, (uint64_t)lines[i], MARK_FLUSHED);
    }
}

/* The clean bytes of R's LINES (COUNT) into INTO, each at its own offset: an invalidate of
 * a direct region puts them back in the view (DRAM), and Python's copy of DRAM as a card's
 * holds them where the cache holds dirty lines (sim/cache/model.py). */
void region_put_clean(const CachedRegion *r, const int64_t *lines, int64_t count, uint8_t *into) {
    for (int64_t i = 0; i < count; i++) {
        uint64_t offset = (uint64_t)lines[i] * LINE;
        const uint8_t *clean = reference(r, offset / PAGE, offset);
        if (clean)
            __builtin_memcpy(into + offset, clean, LINE);
        else
            __builtin_memset(into + offset, 0, LINE);
    }
}

/* -- a line flush -------------------------------------------------------------------------- */

/* The line at OFFSET of R leaves the cache: written back to DRAM if dirty, then dropped (a
 * later access fills it from DRAM again). FLUSHED: by a flush of the thread's (else an
 * eviction). Returns whether it was written back. */
static int leave_cache(CachedRegion *r, Core *core, uint64_t offset, int flushed) {
    uint64_t line = offset / LINE, page = offset / PAGE;
    if (!r->filled[page])
        return 0; /* not cached */
    if (r->unpainted && r->unpainted[page]) { /* (strict mode: prior lines, not yet painted) */
        r->unpainted[page] = 0;
        if (r->prior[page])
            __builtin_memset(r->view + page * PAGE, PRIOR_BYTE, PAGE);
    }
    int stale = r->prior[page] && r->fresh && r->fresh[line] != FULL;
    int written_back = 0;
    if (dirty(r, page, offset)) {
        if (stale && flushed) { /* the bytes it did not write go to DRAM (a store to the L3's registers) */
            uint64_t bytes = ~r->fresh[line];
            uint64_t at = offset + first_byte(bytes), size = last_byte(bytes) - first_byte(bytes) + 1;
            cache_event(r, core, EVENT_STALE_FLUSH, at, size, CCACHE0_BASE, CCACHE0_SIZE, ACCESS_STORES);
        }
        write_back_line(r, page, offset, 1);
        if (flushed) /* (marked only: no listener needs each line a flush wrote, so Python is not called) */
            mark(r, line, stale ? MARK_FLUSHED_STALE : MARK_FLUSHED);
        written_back = 1;
    }
    refill(r, page, line);
    return written_back;
}

/* CCACHE0_FLUSH64 of ADDRESS, in SPAN: the line written back to DRAM if dirty, then
 * dropped. Not a region's line: the simulator caches no other memory (the image, the
 * stacks and the heap are always DRAM's), so nothing. */
static void flush_line(Core *core, Span *span, uint64_t address) {
    core->device.line_flushes++;
    if (span->kind != SPAN_REGION)
        return;
    CachedRegion *r = span->region;
    uint64_t offset = (address - span->base) & ~(uint64_t)(LINE - 1);
    uint64_t line = offset / LINE, page = offset / PAGE;
    if (r->dropped && !r->invalidated) /* (the checker: the line counts as invalidated) */
        r->dropped[page] |= 1ull << (line % LINES_PER_PAGE);
    if (r->tile) {
        tile_remove(r->tile, (span->base + offset) / LINE, -1);
        r->rescued[line] = 0; /* (flushed now, as it should have been) */
    }
    leave_cache(r, core, offset, 1);
}

/* -- the card-size cache ------------------------------------------------------------------ */

/* CORE's access to LINE of R, in the tile's levels (tile.c): counted, and a line the L3
 * evicts for it leaves the cache, written back if dirty: a missing flush rescued. */
static void tile_touch(CachedRegion *r, Core *core, uint64_t line, int write) {
    Tile *t = r->tile;
    int hart = core ? (int)core->engine.core : 0;
    int level = tile_access(t, hart, r->base / LINE + line, write);
    access_took(core, level, 1); /* (the door for time: latency.c) */
    uint64_t *c = r->level_counts;
    c[level == 1 ? 0 : 1]++;
    if (level != 1)
        c[level == 2 ? 2 : 3]++;
    if (level == 3 || level == 0)
        c[level == 3 ? 4 : 5]++;
    if (!t->evicted || !core)
        return;
    uint64_t address = (t->evicted - 1) * LINE;
    Span *span = find_span(core, address);
    if (!span || span->kind != SPAN_REGION)
        return;
    CachedRegion *owner = span->region;
    uint64_t offset = address - span->base;
    owner->level_counts[6]++;
    if (leave_cache(owner, core, offset, 0)) {
        owner->level_counts[7]++;
        owner->rescued[offset / LINE] = 1;
        t->accessed = r->base + line * LINE;
        if (!owner->rescue_told) /* (the checker names the access of the first: sim/cache/checker.py) */
            cache_event(owner, core, EVENT_RESCUED, offset, LINE, t->accessed, 1, ACCESS_LOADS | ACCESS_STORES);
        owner->rescue_told = 1;
    }
}

/* -- the uncached alias: DRAM past the cache ------------------------------------------------ */

/* The thread's first access to R through the uncached alias: Python allocates what watch.c
 * keeps of each line (EVENT_UNCACHED), and every core's TLB goes, so that every page of
 * the region is watched from the next access on. */
static void start_uncached(CachedRegion *r, Core *core, void *uc) {
    if (r->on_uncached)
        r->on_uncached(r->token, EVENT_UNCACHED, 0, 0);
    /* This core's TLB goes now (the rest of its block is watched too), and its
     * interpreter's pages; the other cores' at the stop, before they run again. Where the
     * block hook counts, it stops the run before the next block, so that no block is cut
     * and counted twice (turns.c, as for the TLB's growth). */
    core->engine.ctl(uc, UC_CTL_TLB_FLUSH_WRITE);
    core->isa.page_generation++;
    core->device.retranslate = 1;
    if (!core->turn.counting)
        core->engine.emu_stop(uc);
}

/* DRAM's byte at OFFSET (direct: the view is DRAM but for dirty lines, whose DRAM bytes are
 * their clean ones, and bytes an uncached store wrote under a cached line, kept aside). */
uint8_t dram_byte(const CachedRegion *r, uint64_t offset) {
    if (!r->direct)
        return r->dram[offset];
    uint64_t line = offset / LINE, page = offset / PAGE;
    if (r->side_mask && (r->side_mask[line] >> (offset % LINE) & 1))
        return r->side[offset];
    if (dirty(r, page, line * LINE)) {
        const uint8_t *clean = reference(r, page, line * LINE);
        return clean ? clean[offset % LINE] : 0;
    }
    return r->view[offset];
}

uint64_t uncached_device_read(void *uc, uint64_t offset, unsigned size, void *data) {
    Watch *w = (Watch *)data;
    CachedRegion *r = w->region;
    if (!r->lines_known)
        start_uncached(r, w->core, uc);
    r->uncached_seen = 1;
    access_took(w->core, LEVEL_UNCACHED, 0);
    if (w->core && w->core->timing)
        timing_uncached(w->core, r->base + offset);
    uint64_t value = 0;
    for (unsigned i = 0; i < size && i < 8; i++)
        value |= (uint64_t)dram_byte(r, offset + i) << (8 * i);
    for (EACH_LINE(offset, size))
        touched(r, w->core, line / LINES_PER_PAGE, line, 0);
    return value;
}

void uncached_device_write(void *uc, uint64_t offset, unsigned size, uint64_t value, void *data) {
    Watch *w = (Watch *)data;
    CachedRegion *r = w->region;
    if (!r->lines_known)
        start_uncached(r, w->core, uc);
    r->uncached_seen = 1;
    access_took(w->core, LEVEL_UNCACHED, 0);
    if (w->core && w->core->timing)
        timing_uncached(w->core, r->base + offset);
    uint8_t bytes[8];
    __builtin_memcpy(bytes, &value, 8);
    reservations_stored(w->core->reservations, w->core->engine.core, r->base + offset, size < 8 ? size : 8);
    dram_store(r, offset, size < 8 ? size : 8, bytes, w->core);
}

/* SIZE bytes FROM to DRAM at OFFSET of R's span, past the cache (R's lines are known one
 * by one: lines_known). THREAD: the core whose store through the uncached alias it is
 * (its touch of each line is kept, for the mixed-alias finding); 0: another writer of
 * DRAM's (a Tensix stand-in's noc.write: noc.c). A line the cache holds keeps its bytes, stale
 * now; a line it does not hold is filled with DRAM's new bytes when next touched. */
void dram_store(CachedRegion *r, uint64_t offset, uint64_t size, const uint8_t *bytes, Core *thread) {
    for (EACH_LINE(offset, size)) {
        uint64_t page = line / LINES_PER_PAGE, mask = byte_mask(first, count), at = line * LINE + first;
        const uint8_t *from = bytes + (at - offset);
        if (thread)
            touched(r, thread, page, line, 0);
        int cached = r->filled[page] && (r->cached_lines[page] >> (line % LINES_PER_PAGE) & 1);
        r->copy_fill[page] = 1; /* DRAM's page is no longer what lies under the view (a snapshot) */
        if (cached) { /* DRAM changes; the cache keeps its bytes, stale now */
            if (r->direct) {
                __builtin_memcpy(r->side + at, from, count);
                r->side_mask[line] |= mask;
            } else {
                if (clean_place(r, page) == CLEAN_IN_DRAM) {
                    /* the page's clean bytes were DRAM's: they are kept aside first */
                    if (r->writable[page])
                        __builtin_memcpy(r->clean + page * PAGE, r->dram + page * PAGE, PAGE);
                    r->own_clean[page] = 1;
                }
                __builtin_memcpy(r->dram + at, from, count);
            }
            r->dram_changed[line] |= mask;
        } else { /* not cached: DRAM changes, and the next fill brings it */
            if (!r->direct)
                __builtin_memcpy(r->dram + at, from, count);
            __builtin_memcpy(r->view + at, from, count);
            if (r->writable[page])
                clean_again(r, page, line * LINE);
            else if (r->direct) /* the page's clean bytes are no longer those loaded */
                r->as_loaded[page] = 0;
        }
    }
}

/* -- the cache's registers ------------------------------------------------------------------ */

int device_holds(uint64_t address) {
    return (address >= CCACHE0_BASE && address < CCACHE0_BASE + CCACHE0_SIZE) ||
           (address >= PL2CACHE0_BASE && address < PL2CACHE0_BASE + PL2CACHE0_SIZE);
}

static void refuse(Core *core, void *uc, uint64_t address, unsigned size, int write) {
    if (core->device.fault_size)
        return; /* the first one is the fault */
    core->device.fault_address = address;
    core->device.fault_size = size;
    core->device.fault_write = write;
    core->device.fault_pc = core_access_pc(core, address, size, write ? ACCESS_STORES : ACCESS_LOADS);
    core->engine.emu_stop(uc);
}

/* The engine hands a device an 8-byte store as two 4-byte ones, low half first, one right
 * after the other in the same instruction. A low half waits in low_at for its high half;
 * anything else that comes to a register first (or the end of the run: sim/hart/core.py)
 * shows that it was a 4-byte store of its own, which is refused, at the pc it came at. */
static void settle(Core *core, void *uc, uint64_t address, unsigned size, int write) {
    Device *d = &core->device;
    if (!d->low_at || (write && size == 4 && address == d->low_at + 4))
        return;
    uint64_t at = d->low_at;
    d->low_at = 0;
    if (d->fault_size)
        return; /* (the first one is the fault) */
    refuse(core, uc, at, 4, 1);
    d->fault_pc = d->low_pc;
}

/* A store of SIZE at ADDRESS to the 8-byte register at REGISTER: 1 when it completes an
 * 8-byte store (VALUE is then the whole of it), 0 when it is a low half that waits for its
 * high half, -1 when it is no 8-byte store of the register (a fault). */
static int whole_store(Core *core, void *uc, uint64_t address, unsigned size, uint64_t *value, uint64_t reg) {
    Device *d = &core->device;
    if (size == 8 && address == reg)
        return 1;
    if (size == 4 && address == reg) {
        d->low_half = *value & 0xFFFFFFFFull;
        d->low_at = address;
        d->low_pc = core_access_pc(core, address, size, ACCESS_STORES);
        return 0;
    }
    if (size == 4 && address == reg + 4 && d->low_at == reg) {
        d->low_at = 0;
        *value = d->low_half | (*value << 32);
        return 1;
    }
    return -1;
}

/* A line flush of ADDRESS through REGISTER (CCACHE0_FLUSH64 or FLUSH32), whose store was
 * VALUE: an address of no memory of the thread's (not the image, a stack, the heap or a
 * region: a FLUSH32 of a cached-window address, cut to 36 bits, say) is refused. */
static void flush_checked(Core *core, void *uc, uint64_t reg, unsigned size, uint64_t value, uint64_t address) {
    Span *span = find_span(core, address);
    if (span) {
        flush_line(core, span, address);
        return;
    }
    if (!core->device.fault_size)
        core->device.fault_value = value;
    refuse(core, uc, reg, size, 1);
}

uint64_t ccache_read(void *uc, uint64_t offset, unsigned size, void *data) {
    Core *core = (Core *)data;
    settle(core, uc, CCACHE0_BASE + offset, size, 0);
    refuse(core, uc, CCACHE0_BASE + offset, size, 0);
    return 0;
}

void ccache_write(void *uc, uint64_t offset, unsigned size, uint64_t value, void *data) {
    Core *core = (Core *)data;
    uint64_t address = CCACHE0_BASE + offset;
    settle(core, uc, address, size, 1);
    if (offset == CCACHE0_FLUSH32 && size == 4) {
        flush_checked(core, uc, address, 4, value & 0xFFFFFFFFull, (value & 0xFFFFFFFFull) << 4);
        return;
    }
    int whole = whole_store(core, uc, address, size, &value, CCACHE0_BASE + CCACHE0_FLUSH64);
    if (whole > 0)
        flush_checked(core, uc, CCACHE0_BASE + CCACHE0_FLUSH64, 8, value, value);
    else if (whole < 0)
        refuse(core, uc, address, size, 1);
}

uint64_t pl2cache_read(void *uc, uint64_t offset, unsigned size, void *data) {
    Core *core = (Core *)data;
    settle(core, uc, PL2CACHE0_BASE + offset, size, 0);
    uint64_t at = offset % PL2CACHE0_STRIDE;
    if (at >= PL2CACHE0_FLUSHCOUNT && at + size <= PL2CACHE0_FLUSHCOUNT + 8)
        return 0; /* FLUSHCOUNT: nothing pending (an 8-byte load comes as two halves) */
    refuse(core, uc, PL2CACHE0_BASE + offset, size, 0);
    return 0;
}

void pl2cache_write(void *uc, uint64_t offset, unsigned size, uint64_t value, void *data) {
    Core *core = (Core *)data;
    uint64_t address = PL2CACHE0_BASE + offset;
    settle(core, uc, address, size, 1);
    uint64_t reg = address - offset % PL2CACHE0_STRIDE + PL2CACHE0_CFLUSH64;
    int whole = whole_store(core, uc, address, size, &value, reg);
    if (whole > 0) {
        core->device.l2_flushes++; /* L2 to L3: still the tile's cache */
        Span *span = find_span(core, value);
        if (span && span->kind == SPAN_REGION && span->region->tile)
            tile_remove(span->region->tile, value / LINE, (int)(offset / PL2CACHE0_STRIDE));
    }
    else if (whole < 0)
        refuse(core, uc, address, size, 1);
}
