/* calls.c: the kmx calls answered here, in C, at the ecall, when nothing needs Python
 * (sim/kmx/traps.py answers the rest, and these too when a listener hears every call).
 *
 * A thread that waits for the Tensix side spins on kmx_invalidate and a load; a trip to
 * Python for each call cost tens of microseconds where the card takes a tenth of one.
 * Here are answered: kmx_cycles, kmx_cluster, kmx_word, kmx_word_count, kmx_region (with
 * no size to store) and kmx_region_uncached, which read what the cluster knows
 * (Calls); and kmx_invalidate and kmx_flush of a region no line of which was written
 * since it was clean, where the cache's rule is the same whatever the mode: a flush
 * writes nothing back, and an invalidate drops the lines (region_drop, which the
 * model's Python calls too: the rule is here once) and loses nothing; and kmx_barrier
 * after the start code's, in a turn of the turn loop (sched.c), over the count Python's
 * barrier keeps too (Calls.barrier_*): the core arrives and its turn ends; the last to
 * arrive makes the others ready again, any other is not ready until then, in the loop's
 * Group.ready (Python sets its cores' states from the count as the loop comes back:
 * sim/machine/cluster.py, settle_barrier); in Python, each core's arrival is a trip out
 * of the loop. Anything else goes to Python: a bad argument (its fault is worded there),
 * a region with written lines, one a Tensix stand-in wrote under, a barrier once a core
 * has returned (Python finds the deadlock), or a call whose step of the cache's story
 * would look at lines that changed since the story last did.
 *
 * The story (sim/observe/story.py) hears every invalidate, flush and barrier. One
 * answered here is queued (Calls.events) and told to it at the next point the observers
 * hear on the cores' host thread, in order, before that point (sim/observe/observers.py,
 * sim/kmx/traps.py's tell_answered). It is answered here only when its
 * step is known without looking: no line's state changed since the story last looked
 * (Calls.generation, which the cache model raises at every such change, against
 * Calls.looked), and Python already knows the call site's source line (Calls.sites). */
#include "hooks.h"

enum { CALL_REGION = 2, CALL_INVALIDATE = 3, CALL_FLUSH = 4, CALL_WORD = 6, CALL_WORD_COUNT = 7,
       CALL_CYCLES = 10, CALL_CLUSTER = 11, CALL_BARRIER = 12,
       CALL_REGION_UNCACHED = 14 }; /* kmx_runtime/kmx.h's KMX_CALL_* (tests/kmx/test_answered_in_c.py checks) */
#define UC_REG_A0 (UC_REG_X0 + 10)
#define UC_REG_A1 (UC_REG_X0 + 11)
#define UC_REG_A7 (UC_REG_X0 + 17)
#define MADV_DONTNEED 4 /* (Linux's: FORGET_HERE is set only there, sim/memory/host.py) */

int madvise(void *address, size_t length, int advice); /* (the process's libc) */

static int zeros(const uint8_t *bytes, uint64_t count) {
    for (uint64_t i = 0; i < count; i++)
        if (bytes[i])
            return 0;
    return 1;
}

/* No line of R was written since it was clean: a flush writes nothing, an invalidate
 * loses nothing. */
static int nothing_written(const CachedRegion *r) {
    return zeros(r->writable, r->pages) &&
           (!r->dirty_mask || zeros((const uint8_t *)r->dirty_mask, r->pages * sizeof *r->dirty_mask));
}

/* An invalidate's drop of every line of R (sim/cache/model.py, CachedRegion._drop calls
 * it too): nothing is in the cache, so the next access fills from DRAM. FORGET: the view's
 * copies of DRAM's pages go back to the kernel here (FORGET_HERE), or Python gives them
 * back after (FORGET_IN_PYTHON: a host without madvise's semantics, sim/memory/host.py). */
void region_drop(CachedRegion *r, int forget) {
    if (r->lines_known) /* the next fills bring DRAM's bytes (watch.c) */
        lines_dropped(r);
    __builtin_memset(r->filled, 0, r->pages);
    __builtin_memset(r->writable, 0, r->pages);
    if (r->dirty_mask)
        __builtin_memset(r->dirty_mask, 0, r->pages * sizeof *r->dirty_mask);
    __builtin_memset(r->prior, 0, r->pages);
    r->unpainted = 0;
    if (forget && r->forget_view == FORGET_HERE)
        madvise(r->view, r->pages * PAGE, MADV_DONTNEED);
}

/* After an invalidate's drop of R (CachedRegion.invalidate calls it too): every line has
 * left every level of the card-size cache, and the region has been invalidated. */
void region_invalidated(CachedRegion *r) {
    if (r->tile)
        tile_remove_range(r->tile, r->base / LINE, r->base / LINE + r->pages * LINES_PER_PAGE);
    r->invalidated = 1;
}

#define PAGE_BY_PAGE 16 /* a region of more filled pages than this: the whole TLB is flushed */

/* After an invalidate (before its drop) or a flush of R, answered here or in Python
 * (sim/machine/cluster.py): every core of the cluster forgets its translations of R's
 * filled pages, so that each comes through the fill hook again. Only a filled page has a
 * translation (the fill hook marks every page it gives the engine; only a drop clears the
 * mark), and a flush takes away the write permission of written pages, which are filled.
 * A few pages are flushed one by one; more, or a flush the engine refuses, the whole TLB,
 * as sim/hart/core.py's Core.flush_tlb does. (A page of another region the TLB keeps is as
 * it was: its fill would find it so.) The rule for Python's calls and C's alike. */
void region_forget_translations(Calls *c, const CachedRegion *r) {
    uint64_t pages[PAGE_BY_PAGE];
    int64_t count = 0;
    for (uint64_t page = 0; page < r->pages && count <= PAGE_BY_PAGE; page++)
        if (r->filled[page]) {
            if (count < PAGE_BY_PAGE)
                pages[count] = r->base + page * PAGE;
            count++;
        }
    for (int64_t i = 0; i < c->core_count; i++) {
        Core *core = c->cores[i];
        if (!core)
            continue;
        int whole = count > PAGE_BY_PAGE;
        for (int64_t k = 0; k < count && !whole; k++)
            whole = core->engine.ctl(core->engine.uc, UC_CTL_TLB_FLUSH_PAGE_WRITE, pages[k]) != 0;
        if (whole)
            core->engine.ctl(core->engine.uc, UC_CTL_TLB_FLUSH_WRITE);
        core->isa.page_generation++;
    }
}

static int site_known(const Calls *c, uint64_t pc, uint64_t ra) {
    for (int64_t i = 0; i < c->site_count; i++)
        if (c->sites[i].pc == pc && c->sites[i].ra == ra)
            return 1;
    return 0;
}

/* Whether the story's step for CORE's call at PC is known without looking (or the story
 * hears nothing): no line's state changed since the story last looked, the queue has room,
 * and Python knows the call site's source line; its return address into *RA. */
static int step_known(Calls *c, Core *core, void *uc, uint64_t pc, uint64_t *ra) {
    *ra = 0;
    if (!c->story)
        return 1;
    core->engine.reg_read(uc, (int)core->engine.reg_ra, ra);
    return c->generation == c->looked && c->event_count < CALL_EVENTS && site_known(c, pc, *ra);
}

/* The call answered here queued for the story (which step_known allowed), to be told at
 * the next point the observers hear (sim/kmx/traps.py, tell_answered). */
static void queue_step(Calls *c, Core *core, uint64_t number, uint64_t argument, uint64_t pc, uint64_t ra) {
    if (!c->story)
        return;
    /* (the same call again, nothing between: one event, counted; anything between reached
     * Python, which told the story the queue) */
    CallEvent *e = c->event_count ? &c->events[c->event_count - 1] : 0;
    if (e && e->core == core->engine.core && e->number == number && e->argument == argument && e->pc == pc &&
        e->ra == ra) {
        e->times++;
        return;
    }
    e = &c->events[c->event_count++];
    e->core = core->engine.core;
    e->number = number;
    e->argument = argument;
    e->pc = pc;
    e->ra = ra;
    e->times = 1;
}

/* CORE's kmx_invalidate or kmx_flush of region ID (the caller checked it): whether it
 * was answered here. */
static int region_call(Calls *c, Core *core, void *uc, uint64_t number, uint64_t id, uint64_t pc) {
    CachedRegion *r = c->regions[id];
    if (!r || !nothing_written(r))
        return 0;
    if (number == CALL_INVALIDATE && (r->noc_writes || r->unpainted || r->forget_view == FORGET_IN_PYTHON))
        return 0; /* (the checker forgets a stand-in's writes; strict mode's first drop; the view Python gives back) */
    if (number == CALL_FLUSH && r->rescued && !zeros(r->rescued, r->pages * LINES_PER_PAGE))
        return 0; /* (a flush clears the card-size cache's rescued lines: Python's) */
    uint64_t ra;
    if (!step_known(c, core, uc, pc, &ra))
        return 0;
    if (number == CALL_INVALIDATE) {
        region_forget_translations(c, r); /* (before the drop: which were filled) */
        /* The view's copies need not go back for the next fills to be DRAM's, so the
         * madvise (a system call, and a fault at the next touch) is saved: where no line
         * was written since clean, a page the view holds a copy of is one a fill copies
         * again (copy_fill: copied by a fill, or flushed). Where lines are known one by
         * one, watch.c fills a line from the view, and the view differs from DRAM only
         * where DRAM changed under a cached line (dram_changed: a stand-in's write, an
         * uncached store): those lines take DRAM's bytes here, as the madvise would have
         * shown them. (Not for prior lines, strict mode's, nor a copying cache's, whose
         * DRAM another cluster writes: there the view goes back.) */
        int forget = r->lines_known && r->forget_view == FORGET_HERE &&
                     (r->copy_all || !zeros(r->prior, r->pages));
        if (r->lines_known && !forget && !r->direct)
            for (uint64_t line = 0; line < r->pages * LINES_PER_PAGE; line++)
                if (r->dram_changed[line])
                    __builtin_memcpy(r->view + line * LINE, r->dram + line * LINE, LINE);
        region_drop(r, forget);
        region_invalidated(r);
    } /* (a flush of no written line changes no page: each translation stays as it was) */
    /* (the door for time: a flush or an invalidate walks the region's lines, latency.c;
     * sim/cache/model.py's flush_by and invalidate_by answer Python's the same) */
    access_took(core, number == CALL_FLUSH ? LEVEL_FLUSH : LEVEL_INVALIDATE, r->pages * LINES_PER_PAGE);
    if (core->timing && number == CALL_INVALIDATE)
        timing_invalidated(core->timing, r->base, r->pages * PAGE);
    queue_step(c, core, number, id, pc, ra);
    return 1;
}

/* CORE's kmx_barrier at PC: whether it was answered here. As Python's (sim/machine/
 * cluster.py, Cluster.barrier, over the same count): the core arrives; the last to arrive
 * releases the others, which are ready again, and ends its turn, so that the next turn
 * starts at the same instruction whatever the quantum was; any other blocks (not ready)
 * and ends its turn. Answered here only in a turn of the turn loop (sched.c), where the
 * turn would end in the loop had Python answered: the loop's turn, nothing of it left for
 * Python so far. Python answers the start code's (its release is where kmx_main begins,
 * which the schedule hears), and every barrier once a core has returned (none can
 * complete: Python finds the deadlock as the turn ends). */
static int barrier_call(Calls *c, Core *core, void *uc, uint64_t pc) {
    struct Group *g = c->loop;
    int64_t n = core->engine.core;
    if (!g || g->running < 0 || n < 0 || n >= CLUSTER_CORES || c->loop_bits[n] != 1ull << g->running)
        return 0; /* (a turn Python runs) */
    if (!c->barrier_generation || c->exited || turn_left_python(core, g->turn_python))
        return 0;
    uint64_t ra;
    if (!step_known(c, core, uc, pc, &ra))
        return 0;
    if (++c->barrier_arrivals == c->core_count) {
        for (int64_t k = 0; k < c->core_count && k < CLUSTER_CORES; k++)
            if (c->barrier_waiting >> k & 1) {
                g->ready |= c->loop_bits[k];
                if (core->timing && c->cores[k]->timing) /* (timed: the others waited until the last came) */
                    timing_waited(c->cores[k]->timing, core->timing->now);
            }
        c->barrier_waiting = 0;
        c->barrier_arrivals = 0;
        c->barrier_generation++;
    } else {
        c->barrier_waiting |= 1ull << n;
        g->ready &= ~c->loop_bits[n];
    }
    queue_step(c, core, CALL_BARRIER, 0, pc, ra);
    g->ended = 1;
    core->engine.emu_stop(uc);
    return 1;
}

/* The call at PC was answered: the engine goes on after it (its pc is there already when
 * it reports an ecall past it; a write of the pc ends the engine's block). */
static int past_the_ecall(Calls *c, Core *core, void *uc, uint64_t pc) {
    c->answered++;
    if (!c->ecall_past) {
        pc += 4;
        core->isa.reg_write(uc, (int)core->engine.reg_pc, &pc);
    }
    return 1;
}

/* The ecall CORE is at (a kmx call's number in a7): answered here? Then a0 holds its value
 * and the engine goes on after the ecall. */
int calls_answer(void *uc, Core *core) {
    Calls *c = core->calls;
    if (!c || !c->on)
        return 0;
    uint64_t number = 0, a0 = 0, a1 = 0, pc = 0, value = 0;
    core->engine.reg_read(uc, UC_REG_A7, &number);
    core->engine.reg_read(uc, UC_REG_A0, &a0);
    core->engine.reg_read(uc, (int)core->engine.reg_pc, &pc);
    pc -= (uint64_t)c->ecall_past; /* the ecall's own */
    switch (number) {
    case CALL_CYCLES: value = core->timing ? core->timing->now : core->turn.cycles; break;
    case CALL_CLUSTER: value = (uint64_t)c->cluster; break;
    case CALL_WORD_COUNT: value = (uint64_t)c->word_count; break;
    case CALL_WORD:
        if (a0 >= (uint64_t)c->word_count)
            return 0; /* (a fault, which Python words) */
        value = c->words[a0];
        break;
    case CALL_REGION:
        core->engine.reg_read(uc, UC_REG_A1, &a1);
        if (a1) /* (the size goes to the thread's memory: Python's, through the cache) */
            return 0;
        value = a0 < (uint64_t)c->region_count ? c->addresses[a0] : 0;
        break;
    case CALL_REGION_UNCACHED:
        value = a0 < (uint64_t)c->region_count ? c->addresses[a0] - UNCACHED_OFFSET : 0;
        break;
    case CALL_INVALIDATE:
    case CALL_FLUSH:
        if (a0 >= (uint64_t)c->region_count || !region_call(c, core, uc, number, a0, pc))
            return 0;
        return past_the_ecall(c, core, uc, pc);
    case CALL_BARRIER:
        if (!barrier_call(c, core, uc, pc))
            return 0;
        return past_the_ecall(c, core, uc, pc);
    default: return 0;
    }
    core->isa.reg_write(uc, UC_REG_A0, &value);
    return past_the_ecall(c, core, uc, pc);
}
