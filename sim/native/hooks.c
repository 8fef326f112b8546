/* hooks.c: the engine's hooks that run on every page translation and every basic block,
 * in C, so that no Python runs on the simulator's fast path (sim/native/hooks.py builds this
 * file for the host with zig cc and registers the functions with uc_hook_add).
 *
 * tlb_fill is Unicorn's virtual-TLB fill hook: the engine calls it when it has no
 * translation for a page, which is at the first access to a page, at the first store to
 * a page it translated for reading, after every TLB flush (the cluster flushes after each
 * invalidate and flush), and when the TLB is full. It is the cache model's slow path,
 * the same steps as sim/cache/model.py's CachedRegion.access (the reference, which the tests
 * compare against): fill a page's lines, remember the first store since the page was
 * clean, see a read of Python's data before any invalidate.
 *
 * count_block is the cycle model: one cycle an instruction, counted a basic block at a
 * time (only in threads that call kmx_cycles).
 *
 * The state is Python's: per-page flag arrays (numpy uint8), the views and DRAM are host
 * memory that Python allocated; the structs below mirror ctypes Structures of
 * sim/native/hooks.py field for field.
 */
#include <stddef.h>
#include <stdint.h>

#define PAGE 4096u
#define BLOCK_CACHE 1024 /* a power of 2 */
#define STALE_BYTE 0xA5

/* unicorn.h */
#define UC_MEM_READ 16
#define UC_MEM_WRITE 17
#define UC_MEM_FETCH 18
#define UC_PROT_READ 1
#define UC_PROT_WRITE 2
#define UC_PROT_EXEC 4

typedef struct {
    uint64_t paddr;
    uint32_t perms;
} uc_tlb_entry;

typedef int (*reg_read_fn)(void *uc, int regid, void *value);
typedef void (*page_event_fn)(int64_t token, uint64_t page);
typedef int (*emu_stop_fn)(void *uc);

enum { SPAN_IMAGE = 0, SPAN_STACK = 1, SPAN_REGION = 2 };

typedef struct {
    uint8_t *view;      /* the cache's copy of the span's lines (what the engine maps) */
    uint8_t *dram;      /* the span's DRAM */
    uint8_t *clean;     /* the page as it was before its first write (copying, or stale) */
    uint8_t *filled;    /* per page: its lines are in the cache */
    uint8_t *writable;  /* written since it was last clean */
    uint8_t *stale;     /* strict mode: the lines hold STALE_BYTE */
    uint8_t *unpainted; /* strict mode: not yet painted with STALE_BYTE; or 0 */
    uint8_t *loaded;    /* filled from DRAM at least once */
    uint8_t *written;   /* written at least once */
    uint8_t *read_stale;/* read before any invalidate and before any write */
    uint8_t *copy_fill; /* the view does not show DRAM by itself: a fill copies */
    uint64_t *write_pc; /* the first store since clean: its pc, ra and core */
    uint64_t *write_ra;
    int8_t *write_core;
    page_event_fn on_stale_read; /* Python: the checker hears of a stale read */
    int64_t token;               /* which region, for Python */
    int32_t invalidated;         /* the thread has invalidated the region at least once */
    int32_t copy_all;            /* every fill copies (the view is not the DRAM's COW) */
    uint8_t *as_loaded; /* direct: per page, its bytes are still those it was loaded with */
    int64_t direct;     /* the view is DRAM itself (sim/cache/model.py, "direct") */
} Region;

typedef struct {
    uint64_t base;
    uint64_t end;
    int64_t kind;
    Region *region;
    uint8_t *host; /* the span's host memory (the image's, for counting instructions) */
} Span;

typedef struct {
    Span *spans; /* sorted by base */
    int64_t span_count;
    int64_t core;
    reg_read_fn reg_read;
    int64_t reg_pc;
    int64_t reg_ra;
    uint64_t bad_address; /* the access tlb_fill refused, for the fault message */
    int64_t bad_access;
    uint64_t cycles; /* instructions begun, counted a block at a time */
    uint64_t fills;  /* how often tlb_fill ran */
    uint64_t grow_at; /* stop the run when fills reaches it (0: never): see tlb_fill */
    int64_t grow;     /* the run stopped so that the TLB can grow */
    emu_stop_fn emu_stop;
    int64_t budget_on;      /* the turn has an exact length: see count_block */
    uint64_t remaining;     /* instructions left in the turn */
    int64_t partial;        /* the run stopped before a block that would overrun the turn */
    uint64_t block_address; /* that block */
    uint64_t block_size;
    uint64_t block_keys[BLOCK_CACHE]; /* instructions of recent blocks, by address and size */
    uint32_t block_counts[BLOCK_CACHE];
    int64_t counting; /* count_block is hooked */
    uint64_t refills; /* fills of region pages the TLB had held before */
} Core;

static Span *find(Core *core, uint64_t address) {
    int64_t lo = 0, hi = core->span_count - 1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        Span *span = &core->spans[mid];
        if (address < span->base)
            hi = mid - 1;
        else if (address >= span->end)
            lo = mid + 1;
        else
            return span;
    }
    return 0;
}

static void copy_page(uint8_t *to, const uint8_t *from) {
    __builtin_memcpy(to, from, PAGE);
}

/* A core reads (WRITE: writes) PAGE of REGION. Returns whether the page may be written
 * without coming back here. sim/cache/model.py's CachedRegion.access does the same in Python. */
static int access(Region *r, uint64_t page, int write, Core *core, void *uc) {
    uint64_t start = page * PAGE;
    if (r->unpainted && r->unpainted[page]) {
        r->unpainted[page] = 0;
        if (r->stale[page])
            __builtin_memset(r->view + start, STALE_BYTE, PAGE);
    }
    if (!r->filled[page]) {
        if (r->copy_all || r->copy_fill[page])
            copy_page(r->view + start, r->dram + start);
        r->filled[page] = 1;
        r->loaded[page] = 1;
        r->stale[page] = 0;
    }
    if (write) {
        if (!r->writable[page]) { /* the first write since the page was clean */
            /* Keep the clean bytes, unless the model knows them another way: DRAM's
             * (copy-on-write), or the bytes the page was loaded with (direct). */
            int keep = r->direct ? !r->as_loaded[page] : (r->copy_all || r->stale[page]);
            if (keep)
                copy_page(r->clean + start, r->view + start);
            r->writable[page] = 1;
            r->written[page] = 1;
            uint64_t pc = 0, ra = 0; /* (no core: Python's own access, no source line) */
            if (core && uc) {
                core->reg_read(uc, (int)core->reg_pc, &pc);
                core->reg_read(uc, (int)core->reg_ra, &ra);
            }
            r->write_pc[page] = pc;
            r->write_ra[page] = ra;
            r->write_core[page] = core ? (int8_t)core->core : -1;
        }
    } else if (!(r->invalidated || r->written[page] || r->read_stale[page])) {
        r->read_stale[page] = 1; /* Python's data, read before any invalidate */
        if (r->on_stale_read)
            r->on_stale_read(r->token, page);
    }
    return r->writable[page];
}

/* The engine's TLB starts with 256 entries, direct-mapped, and QEMU grows it only when
 * it is flushed while most of its entries are in use. A thread that ranges over more pages
 * than that (a pointer chase over 32 MiB touches 8192) would miss on most accesses and
 * come here each time, for ever. So after many refills the run stops (sim/hart/core.py flushes
 * the TLB and goes on): each such flush doubles the TLB, until it holds what the thread
 * uses and the fills stop. Stopping here ends the run after the current instruction. */
static void maybe_grow(Core *core, void *uc) {
    if (core->grow_at && core->refills >= core->grow_at && !core->grow) {
        core->grow = 1;
        /* A stop from here ends the run inside the current block, after count_block
         * counted all of it: where the block hook runs, it stops the run at the next
         * block instead, before counting it, so that cycles and turns stay exact. */
        if (!core->counting)
            core->emu_stop(uc);
    }
}

int tlb_fill(void *uc, uint64_t address, int type, uc_tlb_entry *entry, Core *core) {
    core->fills++;
    Span *span = find(core, address);
    if (!span)
        goto refuse;
    entry->paddr = address & ~(uint64_t)(PAGE - 1);
    switch (span->kind) {
    case SPAN_REGION: {
        if (type == UC_MEM_FETCH)
            goto refuse;
        uint64_t page = (address - span->base) / PAGE;
        Region *r = span->region;
        /* Only a page the TLB held before and lost counts toward growing it: a thread
         * that streams through memory fills each page once, and gains nothing from a
         * bigger TLB. */
        if (r->filled[page] && (type != UC_MEM_WRITE || r->writable[page])) {
            core->refills++;
            maybe_grow(core, uc);
        }
        int writable = access(r, page, type == UC_MEM_WRITE, core, uc);
        entry->perms = writable ? UC_PROT_READ | UC_PROT_WRITE : UC_PROT_READ;
        return 1;
    }
    case SPAN_STACK:
        if (type == UC_MEM_FETCH) /* code runs only from the image */
            goto refuse;
        entry->perms = UC_PROT_READ | UC_PROT_WRITE;
        return 1;
    default:
        entry->perms = UC_PROT_READ | UC_PROT_WRITE | UC_PROT_EXEC;
        return 1;
    }
refuse:
    core->bad_address = address;
    core->bad_access = type;
    return 0;
}

/* Also the cache model's slow path, for Python's own reads and writes of a region
 * (sim.memory.address_space: the arguments of kmx calls). */
int region_access(Region *region, uint64_t page, int write, Core *core, void *uc) {
    return access(region, page, write, core, uc);
}

/* The cycle model and the turns' lengths, a basic block at a time: the engine calls this
 * at the start of each block, before it runs. Each instruction is one cycle. A turn of
 * exact length (several cores ready, sim/schedule.py) takes whole blocks while they fit;
 * at the first that would overrun it, the run stops before the block (the engine runs no
 * block whose hook asked it to stop), and sim/hart/core.py runs the few instructions left up
 * to an `until` address. Unicorn's own instruction count (emu_start's count) would call
 * a hook at every instruction instead. */
static uint64_t instructions(Core *core, uint64_t address, uint32_t size) {
    uint64_t key = address ^ ((uint64_t)size << 48);
    uint64_t slot = (address >> 1) & (BLOCK_CACHE - 1);
    if (core->block_keys[slot] == key)
        return core->block_counts[slot];
    Span *span = find(core, address);
    if (!span)
        return 0;
    const uint8_t *code = span->host + (address - span->base);
    uint64_t count = 0;
    for (uint32_t offset = 0; offset < size; count++)
        offset += (code[offset] & 3) == 3 ? 4 : 2;
    core->block_keys[slot] = key;
    core->block_counts[slot] = (uint32_t)count;
    return count;
}

void count_block(void *uc, uint64_t address, uint32_t size, Core *core) {
    if (core->grow) { /* the fill hook asked for a stop (maybe_grow): before this block */
        core->emu_stop(uc);
        return;
    }
    uint64_t count = instructions(core, address, size);
    if (core->budget_on) {
        if (count > core->remaining) {
            core->partial = 1;
            core->block_address = address;
            core->block_size = size;
            core->emu_stop(uc);
            return;
        }
        core->remaining -= count;
    }
    core->cycles += count;
}

/* The lines of VIEW (COUNT lines of 64 bytes) that differ from CLEAN (0: zeros): their
 * numbers, plus FIRST, go to OUT. Returns how many. One pass, no temporaries: a flush
 * of a big region reads it once at memory speed (sim/cache/model.py, _dirty_in). */
int64_t dirty_lines(const uint64_t *view, const uint64_t *clean, uint64_t count, int64_t first, int64_t *out) {
    int64_t found = 0;
    for (uint64_t line = 0; line < count; line++) {
        const uint64_t *v = view + line * 8;
        uint64_t differs = 0;
        if (clean) {
            const uint64_t *c = clean + line * 8;
            for (int word = 0; word < 8; word++)
                differs |= v[word] ^ c[word];
        } else {
            for (int word = 0; word < 8; word++)
                differs |= v[word];
        }
        if (differs)
            out[found++] = first + (int64_t)line;
    }
    return found;
}

/* The sizes of the structs, for sim/native/hooks.py to check its mirrors against. */
uint64_t struct_size(int which) {
    switch (which) {
    case 0: return sizeof(Region);
    case 1: return sizeof(Span);
    case 2: return sizeof(Core);
    default: return 0;
    }
}
