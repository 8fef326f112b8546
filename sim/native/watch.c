/* watch.c: the cache model an access at a time, where a page's flags cannot tell (fill.c
 * keeps those), and the cache's registers.
 *
 * Watched pages. A page is watched while one of its lines holds bytes the page-level
 * model cannot describe:
 *   - strict mode: a stale line (its cached bytes are not DRAM's) that the thread has
 *     not wholly written over. A read of a byte the thread did not write is a stale read.
 *   - a page some of whose lines (not all) a line flush dropped before any invalidate:
 *     a read of a line not dropped is a read before invalidate, of a dropped one is not.
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
 */
#include "hooks.h"

#define FULL (~0ull)
#define CCACHE0_BASE 0x02010000ull
#define CCACHE0_SIZE 0x1000ull
#define PL2CACHE0_BASE 0x10104000ull
#define PL2CACHE0_STRIDE 0x4000ull
#define PL2CACHE0_SIZE (4 * PL2CACHE0_STRIDE)

static uint64_t byte_mask(uint64_t first, uint64_t size) { /* bytes [first, first + size) of a line */
    return size >= 64 ? FULL : ((1ull << size) - 1) << first;
}

int page_watched(const Region *r, uint64_t page) {
    if (r->stale[page] && r->stale_lines && r->stale_lines[page])
        return 1;
    if (r->dropped && !r->invalidated) {
        uint64_t dropped = r->dropped[page];
        return dropped && dropped != FULL && !r->written[page] && !r->read_stale[page];
    }
    return 0;
}

/* The lines of [OFFSET, OFFSET + SIZE), a line at a time: LINE, the first byte in it, and
 * how many (a loop's header: for (EACH_LINE(offset, size)) { ... STEP; }). */
#define EACH_LINE(offset, size)                                                                  \
    uint64_t at_ = (offset), end_ = (offset) + (size), line = 0, first = 0, count = 0;           \
    at_ < end_ && (line = at_ / LINE, first = at_ % LINE,                                        \
                   count = LINE - first < end_ - at_ ? LINE - first : end_ - at_, 1);            \
    at_ += count

static void mark(Region *r, uint64_t line, uint8_t state) {
    if (r->line_events && r->line_events[line] < state)
        r->line_events[line] = state;
}

void watch_read(Region *r, uint64_t offset, uint64_t size) {
    for (EACH_LINE(offset, size)) {
        uint64_t page = line / LINES_PER_PAGE, want = byte_mask(first, count);
        if (r->stale[page] && r->fresh && (r->fresh[line] & want) != want) {
            /* once a line; a page read before it was written has its finding already
             * (read before invalidate, fill.c), which covers the page */
            if (!r->told[line] && !r->read_stale[page]) {
                r->told[line] = 1;
                mark(r, line, MARK_READ_STALE);
                uint64_t stale = ~r->fresh[line]; /* the line's stale bytes, first to last */
                uint64_t lo = (uint64_t)__builtin_ctzll(stale), hi = 63 - (uint64_t)__builtin_clzll(stale);
                if (r->on_line_event)
                    r->on_line_event(r->token, EVENT_STALE_READ, line * LINE + lo, hi - lo + 1);
            }
        } else if (r->dropped && !r->invalidated && !r->written[page] && !r->read_stale[page] &&
                   !(r->dropped[page] >> (line % LINES_PER_PAGE) & 1)) {
            r->read_stale[page] = 1; /* Python's data, read before any invalidate (fill.c) */
            if (r->on_stale_read)
                r->on_stale_read(r->token, page);
        }
    }
}

void watch_write(Region *r, uint64_t offset, uint64_t size) {
    for (EACH_LINE(offset, size)) {
        uint64_t page = line / LINES_PER_PAGE;
        if (r->stale[page] && r->fresh && r->fresh[line] != FULL) {
            r->fresh[line] |= byte_mask(first, count);
            if (r->fresh[line] == FULL && r->stale_lines[page])
                r->stale_lines[page]--;
        }
    }
}

/* -- a region's span as a device: the watched pages' accesses ----------------------------- */

typedef struct {
    Region *region;
} Watch;

uint64_t watch_device_read(void *uc, uint64_t offset, unsigned size, void *data) {
    (void)uc;
    Region *r = ((Watch *)data)->region;
    uint64_t value = 0;
    __builtin_memcpy(&value, r->view + offset, size > 8 ? 8 : size);
    watch_read(r, offset, size);
    return value;
}

void watch_device_write(void *uc, uint64_t offset, unsigned size, uint64_t value, void *data) {
    (void)uc;
    Region *r = ((Watch *)data)->region;
    __builtin_memcpy(r->view + offset, &value, size > 8 ? 8 : size);
    watch_write(r, offset, size);
}

/* -- a line flush -------------------------------------------------------------------------- */

/* Where the clean bytes of the line at OFFSET (of page PAGE) are, as
 * sim/cache/model.py's CachedRegion._reference says: 0 for zeros (direct, loaded as zeros). */
static const uint8_t *reference(const Region *r, uint64_t page, uint64_t offset) {
    if (r->copy_all)
        return r->clean + offset;
    if (r->direct)
        return r->as_loaded[page] ? (r->loaded_bytes ? r->loaded_bytes + offset : 0) : r->clean + offset;
    return r->stale[page] ? r->clean + offset : r->dram + offset;
}

static int differs(const uint8_t *a, const uint8_t *b) { /* two lines; B 0: zeros */
    const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
    for (int i = 0; i < 8; i++)
        if (x[i] != (y ? y[i] : 0))
            return 1;
    return 0;
}

/* The line at OFFSET of R was written back: DRAM holds the view's bytes. Make the view's
 * bytes the line's clean ones, as CachedRegion._clean_again does for whole pages. */
static void clean_again(Region *r, uint64_t page, uint64_t offset) {
    uint64_t start = page * PAGE;
    if (r->direct && r->as_loaded[page]) { /* the page's clean bytes are now its own copy */
        if (r->loaded_bytes)
            __builtin_memcpy(r->clean + start, r->loaded_bytes + start, PAGE);
        else
            __builtin_memset(r->clean + start, 0, PAGE);
        r->as_loaded[page] = 0;
    }
    if (r->copy_all || r->direct || r->stale[page])
        __builtin_memcpy(r->clean + offset, r->view + offset, LINE);
    if (!r->copy_all) /* what lies under the view's copies is no longer DRAM's page */
        r->copy_fill[page] = 1;
}

/* CCACHE0_FLUSH64 of ADDRESS: the line written back to DRAM if dirty, then dropped (a
 * later access fills it from DRAM again). Not a region's line: the simulator caches no
 * other memory (the image, the stacks and the heap are always DRAM's), so nothing. */
static void flush_line(Core *core, uint64_t address) {
    core->device.line_flushes++;
    Span *span = find_span(core, address);
    if (!span || span->kind != SPAN_REGION)
        return;
    Region *r = span->region;
    uint64_t offset = (address - span->base) & ~(uint64_t)(LINE - 1);
    uint64_t line = offset / LINE, page = offset / PAGE;
    if (r->dropped && !r->invalidated) /* (the checker: the line counts as invalidated) */
        r->dropped[page] |= 1ull << (line % LINES_PER_PAGE);
    if (!r->filled[page])
        return; /* not cached */
    if (r->unpainted && r->unpainted[page]) { /* (strict mode: stale lines, not yet painted) */
        r->unpainted[page] = 0;
        if (r->stale[page])
            __builtin_memset(r->view + page * PAGE, STALE_BYTE, PAGE);
    }
    int stale = r->stale[page] && r->fresh && r->fresh[line] != FULL;
    int written_back = 0;
    if (r->writable[page] && differs(r->view + offset, reference(r, page, offset))) {
        if (stale && r->on_line_event) { /* the bytes it did not write go to DRAM */
            uint64_t bytes = ~r->fresh[line];
            uint64_t lo = (uint64_t)__builtin_ctzll(bytes), hi = 63 - (uint64_t)__builtin_clzll(bytes);
            r->on_line_event(r->token, EVENT_STALE_FLUSH, offset + lo, hi - lo + 1);
        }
        if (!r->direct)
            __builtin_memcpy(r->dram + offset, r->view + offset, LINE);
        clean_again(r, page, offset);
        mark(r, line, stale ? MARK_FLUSHED_STALE : MARK_FLUSHED);
        written_back = 1;
        if (r->on_line_event)
            r->on_line_event(r->token, EVENT_FLUSHED, offset, LINE);
    }
    if (stale) { /* dropped: the next access fills it with DRAM's bytes */
        if (!written_back) {
            __builtin_memcpy(r->view + offset, r->dram + offset, LINE);
            if (r->writable[page])
                __builtin_memcpy(r->clean + offset, r->view + offset, LINE);
        }
        r->fresh[line] = FULL;
        if (r->stale_lines[page])
            r->stale_lines[page]--;
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
    core->device.fault_pc = 0;
    core->engine.reg_read(uc, (int)core->engine.reg_pc, &core->device.fault_pc);
    core->engine.emu_stop(uc);
}

/* A 64-bit register's store, which the engine hands over as two 4-byte stores, low half
 * first: 1 with the whole VALUE when ADDRESS and SIZE complete one (or are one). */
static int whole_store(Core *core, uint64_t address, unsigned size, uint64_t *value) {
    if (size == 8)
        return 1;
    if (size != 4)
        return 0;
    if (address % 8 == 0) {
        core->device.low_half = *value & 0xFFFFFFFFull;
        core->device.low_at = address;
        return 0;
    }
    if (core->device.low_at != address - 4)
        return 0;
    core->device.low_at = 0;
    *value = core->device.low_half | (*value << 32);
    return 1;
}

uint64_t ccache_read(void *uc, uint64_t offset, unsigned size, void *data) {
    refuse((Core *)data, uc, CCACHE0_BASE + offset, size, 0);
    return 0;
}

void ccache_write(void *uc, uint64_t offset, unsigned size, uint64_t value, void *data) {
    Core *core = (Core *)data;
    if ((offset == 0x200 || offset == 0x204) && size == 4 && !whole_store(core, CCACHE0_BASE + offset, size, &value))
        return; /* (the low half: the high one completes the store) */
    if ((offset == 0x200 && size == 8) || (offset == 0x204 && size == 4))
        flush_line(core, value);
    else if (offset == 0x240 && size == 4)
        flush_line(core, (value & 0xFFFFFFFFull) << 4);
    else
        refuse(core, uc, CCACHE0_BASE + offset, size, 1);
}

uint64_t pl2cache_read(void *uc, uint64_t offset, unsigned size, void *data) {
    if (offset % PL2CACHE0_STRIDE == 0x208 && size <= 8)
        return 0; /* FLUSHCOUNT: nothing pending */
    refuse((Core *)data, uc, PL2CACHE0_BASE + offset, size, 0);
    return 0;
}

void pl2cache_write(void *uc, uint64_t offset, unsigned size, uint64_t value, void *data) {
    Core *core = (Core *)data;
    uint64_t at = offset % PL2CACHE0_STRIDE;
    if ((at == 0x200 || at == 0x204) && size == 4 && !whole_store(core, PL2CACHE0_BASE + offset, size, &value))
        return;
    if ((at == 0x200 && size == 8) || (at == 0x204 && size == 4))
        core->device.l2_flushes++; /* L2 to L3: still the tile's cache */
    else
        refuse(core, uc, PL2CACHE0_BASE + offset, size, 1);
}
