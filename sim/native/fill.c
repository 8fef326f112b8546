/* fill.c: tlb_fill, the engine's virtual-TLB fill hook, and the cache model's slow path.
 *
 * The engine calls tlb_fill when it has no translation for a page: at the first access
 * to a page, at the first store to a page it translated for reading, after every TLB
 * flush (the cluster flushes after each invalidate and flush), and when the TLB is full.
 * Here the cache model (sim/cache/model.py, CachedRegion) fills a page's lines, remembers
 * the first store since the page was clean, and sees a read of Python's data before any
 * invalidate; and the TLB is let grow (maybe_grow). region_access is the same slow path
 * for Python's own reads and writes of a region (the arguments of kmx calls). */
#include "hooks.h"

static void copy_page(uint8_t *to, const uint8_t *from) {
    __builtin_memcpy(to, from, PAGE);
}

/* A core reads (WRITE: writes) PAGE of REGION. Returns whether the page may be written
 * without coming back here. */
static int access(CachedRegion *r, uint64_t page, int write, Core *core, void *uc) {
    uint64_t start = page * PAGE;
    if (r->unpainted && r->unpainted[page]) {
        r->unpainted[page] = 0;
        if (r->prior[page])
            __builtin_memset(r->view + start, PRIOR_BYTE, PAGE);
    }
    if (!r->filled[page]) {
        if (core && uc && core->profile.on)
            profile_cache(core, uc, 0);
        if (!r->tile) /* (the unbounded cache's fill: the access's line from DRAM; the card-size
                       * cache answers each access's level itself: latency.c) */
            access_took(core, LEVEL_DRAM, 1);
        if (r->copy_all || r->copy_fill[page])
            copy_page(r->view + start, r->dram + start);
        r->filled[page] = 1;
        if (!r->loaded[page]) {
            r->loaded[page] = 1;
            CHANGED(r);
        }
        r->prior[page] = 0;
    }
    if (write) {
        if (!r->writable[page]) { /* the first write since the page was clean */
            if (core && uc && core->profile.on)
                profile_cache(core, uc, 1);
            /* Keep the clean bytes, unless the model knows them another way: DRAM's
             * (copy-on-write), or the bytes the page was loaded with (direct). */
            if (clean_place(r, page) == CLEAN_COPY)
                copy_page(r->clean + start, r->view + start);
            r->writable[page] = 1;
            r->written[page] = 1;
            uint64_t pc = 0, ra = 0; /* (no core: Python's own access, no source line) */
            if (core && uc) {
                core->engine.reg_read(uc, (int)core->engine.reg_pc, &pc);
                core->engine.reg_read(uc, (int)core->engine.reg_ra, &ra);
            }
            r->write_pc[page] = pc;
            r->write_ra[page] = ra;
            r->write_core[page] = core ? (int8_t)core->engine.core : -1;
        }
    } else if (r->read_pc && !r->read_pc[page] && core && uc) { /* (the checker: a mixed-alias's other line) */
        core->engine.reg_read(uc, (int)core->engine.reg_pc, &r->read_pc[page]);
        core->engine.reg_read(uc, (int)core->engine.reg_ra, &r->read_ra[page]);
    }
    if (!write && !(r->dropped && r->dropped[page])) /* (a page a line flush dropped lines of */
        read_before_invalidate(r, page, 0, 0, core);   /* is watched instead, or needs nothing: watch.c) */
    return r->writable[page];
}

/* CORE (0: Python) reads lines [FIRST_LINE, END_LINE) of PAGE of R (none: only the page):
 * Python's data, read before any invalidate, on a page the thread did not write first?
 * Each core's first such read of a page is told to the checker, and the lines are kept
 * (read_cores). Returns whether it is one. */
/* CORE reads LINE: read_before_invalidate, unless a line flush dropped the line before
 * any invalidate (the flush is that line's invalidate). */
int read_line_before_invalidate(CachedRegion *r, uint64_t line, Core *core) {
    if (r->dropped && (r->dropped[line / LINES_PER_PAGE] >> (line % LINES_PER_PAGE) & 1))
        return 0;
    return read_before_invalidate(r, line / LINES_PER_PAGE, line, line + 1, core);
}

int read_before_invalidate(CachedRegion *r, uint64_t page, uint64_t first_line, uint64_t end_line, Core *core) {
    if (r->invalidated || r->written[page])
        return 0;
    uint8_t bit = READ_BIT(core);
    if (r->read_cores)
        for (uint64_t line = first_line; line < end_line; line++)
            if (!(r->read_cores[line] & bit)) {
                r->read_cores[line] |= bit;
                CHANGED(r);
            }
    if (!(r->read_early[page] & bit)) {
        r->read_early[page] |= bit;
        CHANGED(r);
        cache_event(r, core, EVENT_READ_BEFORE_INVALIDATE, page * PAGE, PAGE, 0, 0, 0); /* (at the engine's pc) */
    }
    return 1;
}

/* The engine's TLB starts with 256 entries, direct-mapped, and QEMU grows it only when
 * it is flushed while most of its entries are in use. A thread that ranges over more
 * pages than that (a pointer chase over 32 MiB touches 8192) would miss on most accesses
 * and come here each time, for ever. So after many refills the run stops
 * (sim/hart/core.py flushes the TLB and goes on): each such flush doubles the TLB, until
 * it holds what the thread uses and the fills stop. Stopping here ends the run after the
 * current instruction. */
static void maybe_grow(Core *core, void *uc) {
    TlbGrowth *tlb = &core->tlb;
    if (tlb->grow_at && tlb->refills >= tlb->grow_at && !tlb->grow) {
        tlb->grow = 1;
        /* A stop from here ends the run inside the current block, after count_block
         * counted all of it: where the block hook runs, it stops the run at the next
         * block instead, before counting it, so that cycles and turns stay exact. */
        if (!core->turn.counting)
            core->engine.emu_stop(uc);
    }
}

static int fill_page(void *uc, uint64_t address, int type, uc_tlb_entry *entry, Core *core) {
    Route to = route(core, address, core->table.scratch_virtual);
    Span *span = to.span;
    entry->paddr = address & ~(uint64_t)(PAGE - 1);
    entry->perms = UC_PROT_READ | UC_PROT_WRITE;
    switch (to.kind) {
    case ROUTE_SCRATCH: /* data only (sim/isa/rewrite.py) */
        if (type == UC_MEM_FETCH)
            goto refuse;
        entry->paddr = core->table.scratch_physical;
        return 1;
    case ROUTE_DEVICE: /* the cache's registers (watch.c): data only */
        if (type == UC_MEM_FETCH)
            goto refuse;
        return 1;
    case ROUTE_UNCACHED: /* a region's span is a device there (watch.c); the rest is not */
        if (type == UC_MEM_FETCH) /* cached by the simulator at all */
            goto refuse;
        if (span->kind != SPAN_REGION) /* (the cached page, or its watch alias for another's lr: reserve.c) */
            entry->paddr = (to.cached & ~(uint64_t)(PAGE - 1)) + (reserved_elsewhere(core, to.cached) ? WATCH_ALIAS : 0);
        return 1;
    case ROUTE_SPAN:
        break;
    default: /* nothing, or a watched page's alias (only the TLB gives one) */
        goto refuse;
    }
    switch (span->kind) {
    case SPAN_REGION: {
        if (type == UC_MEM_FETCH)
            goto refuse;
        uint64_t page = (address - span->base) / PAGE;
        CachedRegion *r = span->region;
        /* Only a page the TLB held before and lost counts toward growing it: a thread
         * that streams through memory fills each page once, and gains nothing from a
         * bigger TLB. */
        if (r->filled[page] && (type != UC_MEM_WRITE || r->writable[page])) {
            core->tlb.refills++;
            maybe_grow(core, uc);
        }
        int writable = access(r, page, type == UC_MEM_WRITE, core, uc);
        entry->perms = writable ? UC_PROT_READ | UC_PROT_WRITE : UC_PROT_READ;
        if (page_watched(r, page) || reserved_elsewhere(core, address)) /* every access comes to watch.c */
            entry->paddr += WATCH_ALIAS;
        return 1;
    }
    case SPAN_STACK:
        if (type == UC_MEM_FETCH) /* code runs only from the image */
            goto refuse;
        entry->perms = UC_PROT_READ | UC_PROT_WRITE;
        if (reserved_elsewhere(core, address)) /* (another core's lr: its stores seen, reserve.c) */
            entry->paddr += WATCH_ALIAS;
        return 1;
    default: {
        /* A page of code the loader changed is the engine's to run and, as written, the
         * thread's to load and store (code.c): each way of reaching it comes back here. */
        int changed = original_changed(core->original, address);
        entry->perms = UC_PROT_READ | UC_PROT_WRITE | UC_PROT_EXEC;
        if (type == UC_MEM_FETCH && changed)
            entry->perms = UC_PROT_EXEC;
        else if (type != UC_MEM_FETCH && (changed || reserved_elsewhere(core, address))) {
            entry->paddr += WATCH_ALIAS; /* (a reservation of another core's: reserve.c) */
            entry->perms = UC_PROT_READ | UC_PROT_WRITE;
        }
        return 1;
    }
    }
refuse:
    core->refused.address = address;
    core->refused.access = type;
    core->refused.watch = 0;
    return 0;
}

/* What a debugger watches on PAGE (Debug): 1 reads, 2 writes, 0 nothing. */
int debugger_watches(const Debug *debug, uint64_t page) {
    int64_t at = sorted_find(debug->pages, debug->count, page);
    return at < 0 ? 0 : debug->kinds[at];
}

int tlb_fill(void *uc, uint64_t address, int type, uc_tlb_entry *entry, Core *core) {
    core->tlb.fills++;
    int kinds = 0;
    if (core->debug.count) { /* a watched access is refused before it is done (sim/debug/) */
        uint64_t page = address & ~(uint64_t)(PAGE - 1);
        kinds = debugger_watches(&core->debug, page);
        if ((type == UC_MEM_WRITE && kinds & 2) || (type != UC_MEM_WRITE && type != UC_MEM_FETCH && kinds & 1)) {
            core->refused.address = address;
            core->refused.access = type;
            core->refused.watch = 1;
            return 0;
        }
    }
    int filled = fill_page(uc, address, type, entry, core);
    if (filled && kinds) /* the entry allows only what is not watched, so that the rest comes back */
        entry->perms &= type == UC_MEM_WRITE ? ~UC_PROT_READ : type == UC_MEM_FETCH ? UC_PROT_EXEC : ~UC_PROT_WRITE;
    return filled;
}

/* Python reads (WRITE: writes) [OFFSET, OFFSET + SIZE) of REGION's span, on CORE's behalf
 * (0: its own): what a fill does for each page, and then what a core's access does: on a
 * watched page watch.c's, elsewhere a read's lines kept as watch.c keeps them (SIZE 0: the
 * page of OFFSET, no line). Returns whether the last page may be written without coming
 * back here. */
int region_access(CachedRegion *region, uint64_t offset, uint64_t size, int write, Core *core, void *uc) {
    int writable = 0;
    uint64_t end = offset + (size ? size : 1);
    for (uint64_t page = offset / PAGE; page * PAGE < end; page++)
        writable = access(region, page, write, core, uc);
    for (uint64_t at = offset; size && at < end;) { /* a page at a time */
        uint64_t page = at / PAGE, stop = (page + 1) * PAGE < end ? (page + 1) * PAGE : end;
        if (page_watched(region, page))
            (write ? watch_write : watch_read)(region, core, at, stop - at);
        else if (!write)
            for (uint64_t line = at / LINE; line * LINE < stop; line++)
                read_line_before_invalidate(region, line, core);
        at = stop;
    }
    return writable;
}
