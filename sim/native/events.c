/* events.c: what the cache model saw that Python words (a stale read, a stale line
 * written back by a line flush, a line touched through both aliases, the first touch of a
 * page through each, a dirty line an eviction rescued, a read before any invalidate), as
 * typed events, each with the core that made the access, its pc and the return addresses
 * of its frames.
 *
 * They are raised here inside the engine's callbacks (a watched page's device, the fill
 * hook) and the interpreter, and kept in the cluster's queue (CacheEvents), in the order
 * they happened. Python hears them where the turn loop hands it the cores (before any of
 * the observers' points, after each run: sim/cache/events.py), not inside the engine; so
 * the access's pc and frames are found here, while the core is at it:
 *   - the pc: the interpreter's, or Python's call's (Core.site_pc), when it is known;
 *     else the engine's pc is the start of the translated block, or an instruction before
 *     the access in it, and the block is walked from there to the instruction that
 *     accesses the address (failing that, its base register since overwritten, the first
 *     access of its kind, or the engine's pc itself);
 *   - the frames: the frame-pointer chain, as a backtrace reads it (sim/hart/explain.py,
 *     frames), whose memory may have changed by the time Python hears. */
#include "hart.h"

#define UC_REG_FP (UC_REG_X0 + 8)
#define BLOCK_WALK 64 /* instructions walked from the engine's pc at most */
/* Events queued before the core's run is asked to stop, so that Python hears them (the
 * run goes on after, as after any stop asked from outside: turns.c, sim/hart/core.py) */
#define EVENTS_BEFORE_STOP 4096

/* Ask CORE's run to stop before its next block (its turn goes on after, as after any stop
 * asked from outside: turns.c, sim/hart/core.py; the interpreter does not look, and the
 * stop comes at the engine's next block), so that Python hears the queue. */
static void stop_soon(Core *core) {
    core->turn.stop_asked = 1;
    if (!core->turn.counting)
        core->engine.emu_stop(core->engine.uc);
}


/* SIZE bytes at ADDRESS of the thread's memory, into OUT: the code as the compiler wrote
 * it where the loader changed it (code.c). Whether they are there. */
static int peek(Core *core, uint64_t address, uint64_t size, void *out) {
    Span *span = find_span(core, address);
    if (!span || !span->host || address + size > span->end)
        return 0;
    if (original_changed(core->original, address))
        original_read(core->original, address, size, out);
    else
        __builtin_memcpy(out, span->host + (address - span->base), size);
    return 1;
}

/* The instruction at PC (a compressed one expanded), and its LENGTH; 0: none readable. */
static uint32_t instruction(Core *core, uint64_t pc, int *length) {
    uint16_t low = 0;
    uint32_t word = 0;
    if (!peek(core, pc, 2, &low))
        return 0;
    if ((low & 3) != 3) {
        *length = 2;
        return expand(low);
    }
    *length = 4;
    return peek(core, pc, 4, &word) ? word : 0;
}

static int ends_block(uint32_t insn) {
    uint32_t major = insn & 0x7F;
    return major == 0x63 || major == 0x67 || major == 0x6F || major == 0x73;
}

/* The pc of CORE's access now to SIZE bytes at ADDRESS (STORES: ACCESS_LOADS,
 * ACCESS_STORES or both, either), from inside a device callback: see above. */
static uint64_t access_pc(Core *core, uint64_t address, uint64_t size, int stores) {
    void *uc = core->engine.uc;
    uint64_t start = 0, x[32] = {0}, first = 0;
    core->engine.reg_read(uc, (int)core->engine.reg_pc, &start);
    for (int n = 1; n < 32; n++)
        core->engine.reg_read(uc, UC_REG_X0 + n, &x[n]);
    uint64_t pc = start;
    for (int i = 0; i < BLOCK_WALK; i++) {
        int length = 0, kind = 0;
        uint32_t insn = instruction(core, pc, &length);
        if (!length)
            break;
        uint64_t at = 0;
        int width = insn ? memory_access(insn, x, &at, &kind) : 0;
        if (width == ACCESS_VECTOR)
            return pc;
        if (width > 0 && (kind & stores)) {
            uint64_t want = size ? size : 1;
            if (at < address + want && address < at + (uint64_t)width)
                return pc;
            first = first ? first : pc;
        }
        if (!insn || ends_block(insn))
            break;
        pc += (uint64_t)length;
    }
    return first ? first : start;
}

/* The pc of CORE's access now to SIZE bytes at ADDRESS (STORES: ACCESS_LOADS, ACCESS_STORES
 * or both), from inside an engine's callback: the interpreter's or Python's call's where
 * known (Core.site_pc), else the engine's block walked (access_pc). The one walk: a cache
 * model's event's pc, and a refused access to the cache's registers (watch.c, the fault's). */
uint64_t core_access_pc(Core *core, uint64_t address, uint64_t size, int stores) {
    return core->site_pc ? core->site_pc : access_pc(core, address, size, stores);
}

/* The return addresses of the frames above the one at FP, by the frame-pointer chain (a
 * frame keeps its return address at fp - 8, its caller's fp at fp - 16). */
static void frames(Core *core, uint64_t fp, uint64_t *returns) {
    for (int i = 0; i < EVENT_RETURNS; i++) {
        uint64_t saved[2];
        if (!peek(core, fp - 16, 16, saved) || !saved[1])
            break;
        returns[i] = saved[1];
        fp = saved[0];
    }
}

/* Room for one more event of KIND about [OFFSET, OFFSET + SIZE) of R by CORE: the queue's
 * last when that is the same first touch again with none between (a thread that spins on
 * an invalidate and a load through both aliases: the checker keeps the latest first
 * touch of a page, so the newer one is all it needs), else a new one. */
static CacheEvent *queued(CacheEvents *q, const CachedRegion *r, Core *core, int kind, uint64_t offset, uint64_t size) {
    if (q->count && (kind == EVENT_FIRST_CACHED || kind == EVENT_FIRST_UNCACHED)) {
        CacheEvent *last = &q->events[q->count - 1];
        if (last->kind == kind && last->region == r->token && last->offset == offset && last->size == size &&
            last->core == (core ? core->engine.core : -1)) {
            __builtin_memset(last, 0, sizeof *last);
            return last;
        }
    }
    if (core && q->count >= EVENTS_BEFORE_STOP)
        stop_soon(core); /* (Python hears them at the stop) */
    if (q->count == q->capacity) {
        int64_t capacity = q->capacity ? q->capacity * 2 : 64;
        CacheEvent *grown = realloc(q->events, (size_t)capacity * sizeof *grown);
        if (!grown) {
            q->lost++;
            return 0;
        }
        q->events = grown;
        q->capacity = capacity;
    }
    CacheEvent *e = &q->events[q->count++];
    __builtin_memset(e, 0, sizeof *e);
    return e;
}

/* Whether an event of KIND about [OFFSET, OFFSET + SIZE) of R by CORE needs no entry of its
 * own, its finding made already (R->found): a read before any invalidate then tells the
 * checker nothing more (it names the bytes each core read from read_cores); any other grows
 * the finding by its bytes and its core's, which the queue's last event does as well when
 * it is the same kind's, region's and core's: that one grows to cover both (the checker
 * keeps each core's first byte to last, and the finding's). */
static int grown(CacheEvents *q, const CachedRegion *r, Core *core, int kind, uint64_t offset, uint64_t size) {
    if (!(r->found >> kind & 1))
        return 0;
    if (kind == EVENT_READ_BEFORE_INVALIDATE)
        return 1;
    CacheEvent *last = q->count ? &q->events[q->count - 1] : 0;
    if (!last || last->kind != kind || last->region != r->token || last->core != (core ? core->engine.core : -1))
        return 0;
    uint64_t end = last->offset + last->size > offset + size ? last->offset + last->size : offset + size;
    last->offset = last->offset < offset ? last->offset : offset;
    last->size = end - last->offset;
    return 1;
}

/* R saw KIND at [OFFSET, OFFSET + SIZE) of its span, at CORE's access (0: Python's own, a
 * Tensix stand-in's) to ACCESS_SIZE bytes at ADDRESS, which loads or stores (STORES:
 * ACCESS_*; 0: no access to find, the engine's pc as it is, the fill hook's). Returns
 * the event, for the caller's details (0: none kept). */
CacheEvent *cache_event(CachedRegion *r, Core *core, int kind, uint64_t offset, uint64_t size, uint64_t address,
                        uint64_t access_size, int stores) {
    CacheEvents *q = r->events;
    if (q && !core && q->acting) /* Python's own access, in a core's kmx call: the call's */
        core = q->acting;
    if (q && grown(q, r, core, kind, offset, size))
        return 0;
    CacheEvent *e = q ? queued(q, r, core, kind, offset, size) : 0;
    if (!e)
        return 0;
    e->kind = kind;
    e->region = r->token;
    e->offset = offset;
    e->size = size;
    e->core = core ? core->engine.core : -1;
    if (!core)
        return e;
    uint64_t fp = 0;
    if (stores)
        e->pc = core_access_pc(core, address, access_size, stores);
    else if (core->site_pc)
        e->pc = core->site_pc;
    else
        core->engine.reg_read(core->engine.uc, (int)core->engine.reg_pc, &e->pc);
    core->engine.reg_read(core->engine.uc, UC_REG_FP, &fp);
    frames(core, fp, e->returns);
    if (kind != EVENT_FIRST_CACHED && kind != EVENT_FIRST_UNCACHED && !(r->found >> kind & 1) &&
        !(r->stopped_for >> kind & 1)) {
        r->stopped_for |= 1ll << kind; /* (once a kind: an event that makes no finding does not stop every block) */
        stop_soon(core); /* the finding is heard after this block: its step and its time are where it happened */
    }
    return e;
}

void cache_events_free(CacheEvents *q) {
    free(q->events);
    q->events = 0;
    q->count = q->capacity = 0;
}
