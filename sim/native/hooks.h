/* hooks.h: what the native hooks share (the C files of sim/native). They run on the
 * simulator's fast path, in C, so that no Python runs there: sim/native/hooks.py builds
 * them for the host with zig cc into one library and registers them with the engine
 * (sim/hart/engine.py).
 *
 *   fill.c    the engine's TLB-fill hook: the cache model's slow path, and the TLB's growth
 *   turns.c   the block hook: the cycle model, and turns of an exact length
 *   watch.c   the line rules: a watched page's accesses, a line's write-back, the dirty
 *             lines, where a page's clean bytes are, the uncached alias, the cache's registers
 *   events.c  what the cache model saw that Python words, queued for it
 *   latency.c the door for time: what an access into a region took
 *   spans.c   which span an address is in (and a search of a sorted array)
 *   route.c   what an address is (a span, its uncached alias, a watched page, the cache's
 *             registers, the stubs' scratch): one answer for fill.c and isa.c
 *   sizes.c   the structs' sizes, for hooks.py to check its mirrors against
 *   isa.c     the interrupt hook: the X280's instructions the engine lacks (Zba, Zbb,
 *             Zfh) run in C, and the interpreter that goes on from them while code is hot
 *   decode.c  the interpreter's decoder, from the table of the scalar instructions (scalar.def)
 *   softfloat.c  half precision exactly, and fmin/fmax as the F extension says
 *   profile.c the profile: how often each block ran, and the call tree (when asked for)
 *   sched.c   whose turn it is, and the turn loop: the cores take turns in C until one
 *             needs Python
 *   noc.c     a region's DRAM as a Tensix stand-in's NoC reaches it, past the cache
 *   calls.c   the kmx calls answered in C, at the ecall, when nothing needs Python
 *   timing.c  the timing model (km.Session(timing="x280"), docs/timing.md): a core's clock in
 *             the X280's cycles, from its pipeline, vector unit and memory
 *
 * The state is Python's: per-page flag arrays (numpy uint8); the views and DRAM are host
 * memory that Python allocated. The structs below mirror ctypes Structures of
 * sim/native/hooks.py, field for field.
 */
#ifndef KOMOREBI_HOOKS_H
#define KOMOREBI_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#define PAGE 4096u
#define BLOCK_CACHE 1024 /* a power of 2 */
#define PRIOR_BYTE 0xA5 /* what a prior line holds: strict mode's (sim/cache/model.py says the words) */

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
typedef int (*reg_write_fn)(void *uc, int regid, const void *value);
typedef int (*translate_fn)(void *uc, uint64_t address, int prot, uint64_t *paddress);
typedef void (*trap_fn)(int64_t number);
typedef int (*emu_stop_fn)(void *uc);
typedef int (*emu_start_fn)(void *uc, uint64_t begin, uint64_t until, uint64_t timeout, size_t count);
typedef int (*ctl_fn)(void *uc, int control, ...);
#define UC_CTL_TLB_FLUSH_WRITE ((1 << 30) | 11) /* unicorn.h: UC_CTL_WRITE(UC_CTL_TLB_FLUSH, 0) */
/* UC_CTL_WRITE(UC_CTL_TLB_FLUSH_PAGE, 1): one page's entries (the simulator's engine patch,
 * sim/build/engine_patches/02-tlb-flush-page.patch) */
#define UC_CTL_TLB_FLUSH_PAGE_WRITE ((1 << 30) | (1 << 26) | 15)
typedef void (*line_event_fn)(int64_t token, int64_t kind, uint64_t offset, uint64_t size);

enum { SPAN_IMAGE = 0, SPAN_STACK = 1, SPAN_REGION = 2 };

/* The tile's caches at the card's size (tile.c). */
#define TILE_HARTS 4
#define TILE_L1_SETS 128
#define TILE_L1_WAYS 4
#define TILE_L2_SETS 256
#define TILE_L2_WAYS 8
#define TILE_L3_SETS 2048
#define TILE_L3_WAYS 16
typedef struct {
    uint64_t random;   /* the replacement's generator (xorshift64): the session's seed */
    uint64_t evicted;  /* the line the L3 evicted at the last access, plus one (0: none) */
    uint64_t accessed; /* the address of the access that evicted it (watch.c) */
    uint64_t l1[TILE_HARTS][TILE_L1_SETS][TILE_L1_WAYS]; /* a line's address over 64, plus one */
    uint64_t l2[TILE_HARTS][TILE_L2_SETS][TILE_L2_WAYS];
    uint64_t l3[TILE_L3_SETS][TILE_L3_WAYS];
    uint64_t harts_seen;  /* a bit a hart: it has accessed a line (a store need not look in the others) */
} Tile;
int tile_access(Tile *t, int hart, uint64_t line, int write);
void tile_remove(Tile *t, uint64_t line, int hart);
void tile_remove_range(Tile *t, uint64_t first, uint64_t end);

/* What the cache model saw that Python words (events.c, queued: CacheEvent.kind), and
 * EVENT_UNCACHED, which Python's model answers at once (CachedRegion.on_uncached: the
 * call sim/cache/model.py's _uncached makes). */
enum { EVENT_STALE_READ = 1, EVENT_STALE_FLUSH = 2, /* (3: no longer told) */ EVENT_UNCACHED = 4,
       EVENT_MIXED_CACHED = 5, EVENT_MIXED_UNCACHED = 6, EVENT_FIRST_CACHED = 7, EVENT_FIRST_UNCACHED = 8,
       EVENT_RESCUED = 9, EVENT_READ_BEFORE_INVALIDATE = 10 };
#define EVENT_RETURNS 8 /* return addresses kept of an event's frames (sim/hart/explain.py's BACKTRACE_DEPTH) */
typedef struct {
    int64_t kind;       /* EVENT_* */
    int64_t region;     /* its region's token */
    uint64_t offset;    /* the bytes of the region's span it is about */
    uint64_t size;
    int64_t under;      /* a stale read: of bytes DRAM changed under the cached line (an uncached
                         * store's, a stand-in's), else of a prior line's (strict mode) */
    int64_t core;       /* the core whose access it was (-1: Python's own, or a Tensix stand-in's) */
    uint64_t pc;        /* the access's */
    uint64_t returns[EVENT_RETURNS]; /* the frames' return addresses, innermost first (0: no more) */
    uint64_t before_pc;  /* a mixed alias: the page's first cached read the fill hook saw, or its */
    uint64_t before_ra;  /* first write since clean (pc, ra, core: -1 none), as they were then */
    int64_t before_core;
} CacheEvent;
typedef struct CacheEvents { /* a cluster's, in the order they happened; Python empties it */
    CacheEvent *events;
    int64_t count;
    int64_t capacity;
    uint64_t lost;      /* events with no memory to keep them */
    struct Core *acting; /* the core whose kmx call Python answers now: Python's own accesses
                          * are its (0: none) */
} CacheEvents;

/* One region's lines in the cache model (sim/cache/model.py, CachedRegion). */
typedef struct {
    uint8_t *view;      /* the cache's copy of the span's lines (what the engine maps) */
    uint8_t *dram;      /* the span's DRAM */
    uint8_t *clean;     /* the page as it was before its first write (copying, or prior) */
    uint8_t *filled;    /* per page: its lines are in the cache */
    uint8_t *writable;  /* written since it was last clean */
    uint8_t *prior;     /* strict mode: its lines are prior ones, from before Python wrote the
                         * region, holding PRIOR_BYTE (until an invalidate drops them) */
    uint8_t *unpainted; /* strict mode: not yet painted with PRIOR_BYTE; or 0 */
    uint8_t *loaded;    /* filled from DRAM at least once */
    uint8_t *written;   /* written at least once */
    uint8_t *read_early;/* read before any invalidate and before any write: a bit per core (READ_BIT) */
    uint8_t *copy_fill; /* the view does not show DRAM by itself: a fill copies */
    uint64_t *write_pc; /* the first store since clean: its pc, ra and core */
    uint64_t *write_ra;
    int8_t *write_core;
    struct CacheEvents *events;  /* the cluster's queue of what Python words (events.c) */
    int64_t token;               /* which region, for Python */
    int32_t invalidated;         /* the thread has invalidated the region at least once */
    int32_t copy_all;            /* every fill copies (the view is not the DRAM's COW) */
    uint8_t *as_loaded; /* direct: per page, its bytes are still those it was loaded with */
    int64_t direct;     /* the view is DRAM itself (sim/cache/model.py, "direct") */
    /* An access at a time (watch.c): what the page-level flags above cannot tell. */
    uint64_t *fresh;       /* per line, strict mode: the bytes the thread wrote since it was prior */
    uint8_t *prior_lines;  /* per page, strict mode: how many of its lines still hold prior bytes */
    uint64_t *dropped;     /* per page, a bit per line: a line flush dropped it (before any invalidate) */
    uint8_t *told;         /* per line: its stale read was told to Python (and TOLD_AGAIN: watch.c) */
    uint8_t *line_events;  /* per line: what happened to it (sim/cache/model.py) */
    uint8_t *loaded_bytes; /* direct: the bytes the span was loaded with (0: zeros) */
    line_event_fn on_uncached; /* Python: the thread's first uncached access (EVENT_UNCACHED) */
    /* Lines known one by one (watch.c): from the load on where a Tensix stand-in may write
     * DRAM under the cache, from the thread's first access through the uncached alias
     * otherwise, every page of the region is watched, and these say what the page-level
     * flags cannot. */
    int64_t lines_known;
    int64_t uncached_seen;  /* the thread has used the region's uncached alias */
    uint64_t *cached_lines; /* per page, a bit per line: the line is in the cache */
    uint64_t *dirty_mask;   /* per page, a bit per line: written since the line was clean */
    uint64_t *cc_touched;   /* per page, a bit per line: touched through the cached alias, */
    uint64_t *uc_touched;   /* and through the uncached one */
    uint64_t *mixed_told;   /* per page, a bit per line: its mixed-alias was told to Python */
    uint64_t *dram_changed; /* per line: bytes DRAM changed under the cached line (an uncached store,
                             * a stand-in's noc.write): the cache's copy of them is stale */
    uint64_t *side_mask;    /* direct, per line: the bytes of DRAM held in `side` (the view holds the cache's) */
    uint8_t *side;
    uint8_t *own_clean;     /* copy-on-write, per page: its clean bytes are a copy, not DRAM's */
    uint64_t *read_pc;      /* per page: the pc and ra of its first read the fill hook saw */
    uint64_t *read_ra;
    /* The card-size cache (tile.c): every page watched, every access counted. */
    Tile *tile;             /* the cluster's tile (0: the unbounded cache) */
    uint64_t base;          /* the span's address */
    uint64_t *level_counts; /* L1D hits, misses, L2 hits, misses, L3 hits, misses, lines the L3
                             * evicted, and of those the dirty ones it wrote back */
    uint8_t *rescued;       /* per line: an eviction wrote it back dirty, and no flush since */
    /* Per line, a bit per core (READ_BIT): the core read it before any invalidate, on a
     * page not written before. A page read so is watched until the invalidate (or its
     * first write), so that the checker names the lines each core read. */
    uint8_t *read_cores;
    uint64_t last_stale_read; /* its first byte in the span, plus one (watch.c) */
    uint64_t pages;         /* the span's */
    /* What calls.c reads to answer a kmx_invalidate or kmx_flush in C */
    uint64_t *generation;   /* the cluster's Calls.generation: raised at each change of a line's
                             * state as the story sees it (loaded, read before an invalidate, its
                             * mark; sim/cache/model.py, line_states); 0: none */
    int64_t noc_writes;     /* a Tensix stand-in wrote under lines of it since the last invalidate
                             * (the checker keeps which: sim/cache/checker.py) */
    int64_t forget_view;    /* FORGET_*: how a drop gives the view's copies back (region_drop) */
    int64_t rescue_told;    /* an eviction rescued a dirty line of it, and that was told (the
                             * checker names the first: one event, watch.c) */
    int64_t found;          /* a bit (1 << EVENT_*) for each kind of event whose finding the
                             * checker has made: later ones of the kind grow it (events.c) */
    int64_t stopped_for;    /* a bit (1 << EVENT_*) for each kind of event a run was stopped for,
                             * so that Python heard the first at once (events.c) */
} CachedRegion;
enum { FORGET_NONE = 0, FORGET_HERE = 1, FORGET_IN_PYTHON = 2 };
#define CHANGED(r) do { if ((r)->generation) (*(r)->generation)++; } while (0)
#define TOLD_AGAIN 0x80 /* (CachedRegion.told: the line's stale bytes were read again, at once: watch.c) */
#define READ_BIT(core) ((core) ? (uint8_t)(1u << ((core)->engine.core & 7)) : (uint8_t)0x80) /* 0x80: Python */

/* The uncached alias of the cluster's DRAM: an address less this (sim/layout.py) */
#define UNCACHED_OFFSET 0x400000000000ull
#define UNCACHED_LOW 0x30000000ull   /* the alias of the lowest and highest */
#define UNCACHED_HIGH 0x130000000ull /* cached addresses (0x4000_3000_0000 on) */
#define LINE 64u
/* The cache's registers (watch.c; sim/layout.py): the L3's block, and the four harts' L2s' */
#define CCACHE0_BASE 0x02010000ull
#define CCACHE0_SIZE 0x1000ull
#define PL2CACHE0_BASE 0x10104000ull
#define PL2CACHE0_STRIDE 0x4000ull
#define PL2CACHE0_SIZE (4 * PL2CACHE0_STRIDE)
/* and the registers the simulator models, as offsets in their block (sim/cache/registers.py) */
#define CCACHE0_FLUSH64 0x200
#define CCACHE0_FLUSH32 0x240
#define PL2CACHE0_CFLUSH64 0x200
#define PL2CACHE0_FLUSHCOUNT 0x208
#define LINES_PER_PAGE (PAGE / LINE)
/* A watched page is mapped at its address plus WATCH_ALIAS, where the engine maps the span
 * again as a device: every access to it calls watch.c (sim/hart/core.py maps it). */
#define WATCH_ALIAS (1ull << 48)
/* The line events of sim/cache/model.py that watch.c marks */
enum { MARK_FLUSHED = 2, MARK_READ_STALE = 3, MARK_FLUSHED_STALE = 4 };

typedef struct {
    uint64_t base;
    uint64_t end;
    int64_t kind;
    CachedRegion *region;
    uint8_t *host; /* the span's host memory (the image's, for counting instructions) */
} Span;

/* A core's state, a part a job. */
typedef struct { /* what the hooks call on the core's engine */
    reg_read_fn reg_read;
    int64_t reg_pc;
    int64_t reg_ra;
    emu_stop_fn emu_stop;
    int64_t core; /* the core's number, for the cache model's records */
    ctl_fn ctl;   /* uc_ctl: the TLB's flush (watch.c) */
    emu_start_fn emu_start; /* uc_emu_start: a turn, from the turn loop (sched.c) */
    void *uc;     /* the core's engine, for the turn loop */
} EngineCalls;

typedef struct { /* the address space, sorted by base */
    Span *spans;
    int64_t count;
    uint64_t scratch_virtual;  /* the stubs' scratch page (sim/layout.py, STUB_SCRATCH) */
    uint64_t scratch_physical; /* where the engine maps it (0: not mapped) */
    uint8_t *scratch_host;     /* its host memory (for the interpreter, isa.c) */
} SpanTable;

typedef struct { /* the access tlb_fill refused, for the fault message */
    uint64_t address;
    int64_t access;
    int64_t watch; /* refused for a debugger's watchpoint on the page (Debug), not a fault */
} Refusal;

typedef struct { /* when the run stops to let the engine's TLB grow (fill.c) */
    uint64_t fills;   /* how often tlb_fill ran */
    uint64_t refills; /* fills of region pages the TLB had held before */
    uint64_t grow_at; /* stop the run when refills reaches it (0: never) */
    int64_t grow;     /* the run stopped so that the TLB can grow */
} TlbGrowth;

typedef struct { /* the cycle model and the turn's length (turns.c) */
    int64_t counting;       /* count_block is hooked */
    uint64_t cycles;        /* instructions begun, counted a block at a time */
    int64_t budget_on;      /* the turn has an exact length */
    uint64_t remaining;     /* instructions left in the turn */
    int64_t partial;        /* the run stopped before a block that would overrun the turn */
    uint64_t block_address; /* that block */
    uint64_t block_size;
    uint64_t uncounted_start; /* the loader's stubs (sim/isa/rewrite.py): their instructions */
    uint64_t uncounted_end;   /* stand for the one they replace, which counted */
    uint64_t current_address; /* the block running now (counted whole as it began) */
    uint64_t current_size;
    uint64_t *breakpoints;    /* a debugger's breakpoints (sim/debug/): the run stops before */
    int64_t breakpoint_count; /* the instruction at one (0: none, and nothing is checked) */
    uint64_t breakpoint_hit;  /* the breakpoint the run stopped for (0: none), in block_address */
    int64_t stop_asked;       /* Python stops the engine from outside (to ask where the core
                               * is, a pause, the end): the run stops before the next block,
                               * uncounted (sim/hart/core.py) */
    uint64_t block_keys[BLOCK_CACHE]; /* instructions of recent blocks, by address and size */
    uint32_t block_counts[BLOCK_CACHE];
} Turn;

typedef struct { /* the instructions run here rather than by the engine (isa.c) */
    reg_write_fn reg_write;
    translate_fn translate;  /* uc_vmem_translate: through the engine's TLB and tlb_fill */
    trap_fn on_trap;         /* Python: an exception the native code does not take */
    int64_t illegal_past;    /* at an illegal instruction the engine's pc is this far past it (probed) */
    int64_t interpret;       /* after an emulated instruction, go on interpreting while code is hot */
    int64_t probing;         /* the probe of the engine's pc: record it, and stop */
    uint64_t probed_pc;
    uint64_t traps;          /* illegal-instruction traps this code ran */
    uint64_t interpreted;    /* instructions the interpreter ran after them */
    uint64_t episodes;       /* times it went on interpreting after a trap */
    uint64_t finished_turns; /* turns whose last instructions it ran (isa_finish_turn) */
    uint64_t python_calls;   /* exceptions handed to Python (on_trap): the turn loop goes back to it */
    uint8_t *scratch;        /* the interpreter's memory (isa.c, Scratch): Python allocates it */
    uint32_t page_generation;  /* a page translation of another generation is out of date */
    uint32_t code_generation;  /* so is a decoded instruction */
} IsaState;

typedef struct { /* the cache's registers (watch.c): what a thread did to them */
    uint64_t line_flushes;  /* stores to CCACHE0_FLUSH64 or FLUSH32 */
    uint64_t l2_flushes;    /* stores to a PL2CACHE0_CFLUSH64 */
    uint64_t fault_address; /* an access the simulator does not model: its address, */
    int64_t fault_size;     /* its size (0: none), */
    int64_t fault_write;    /* and whether it was a store, */
    uint64_t fault_pc;      /* and the access's pc (events.c, core_access_pc) */
    uint64_t fault_value;   /* a line flush's: the value stored (no memory of the thread's) */
    uint64_t low_half;      /* the engine hands a device an 8-byte store as two 4-byte ones, */
    uint64_t low_at;        /* low half first: the low half, its address (0: none), */
    uint64_t low_pc;        /* and its pc (core_access_pc) */
    int64_t retranslate;    /* a region became watched whole: every core's TLB must go */
} Device;

typedef struct { /* a debugger's watchpoints (sim/debug/): their pages refuse the accesses watched */
    uint64_t *pages;      /* page addresses, sorted */
    uint8_t *kinds;       /* per page: 1 reads watched, 2 writes watched */
    int64_t count;        /* (0: none, and nothing is checked) */
} Debug;

typedef struct { /* the profile of the core's run (profile.c, sim/observe/profile.py): Python's tables */
    int64_t on;
    uint64_t *block_keys;  /* a block's address ^ size << 48 (0: an empty slot) */
    uint64_t *block_runs;  /* times it ran */
    uint8_t *block_kinds;  /* what its last instruction does to the call stack */
    int64_t block_capacity, blocks;
    uint64_t *pc_keys;     /* instructions the interpreter ran (isa.c), by pc */
    uint64_t *pc_runs;
    int64_t pc_capacity, pcs;
    uint64_t *node_parent; /* the call tree: node 0 the root, each node after its parent */
    uint64_t *node_function;
    uint64_t *node_self;   /* instructions run in the node itself */
    uint64_t *node_entered;
    int64_t *node_index;   /* (parent, function) -> node + 1, open-addressed (2 x capacity) */
    int64_t node_capacity, nodes;
    uint64_t *stack_node;  /* the shadow call stack */
    uint64_t *stack_return;
    int64_t stack_capacity, depth, lost;
    const uint64_t *functions; /* every function's first instruction, sorted (tail calls) */
    int64_t function_count;
    int64_t last_kind;     /* what the last block's last instruction does to the stack */
    uint64_t last_end;     /* and where that block ended */
    uint64_t *cache_keys;  /* cache events (fill.c): pc << 1 | kind */
    uint64_t *cache_runs;
    int64_t cache_capacity, caches;
    uint64_t dropped;      /* what a full table had no room for */
    /* timed (timing.c): the cycles of each block and instruction above, and where the
     * clock was at the last of them (profile_pc and profile_block charge the cycles since) */
    uint64_t *block_cycles;
    uint64_t *pc_cycles;
    uint64_t last_now;
    int64_t last_slot;     /* the slot the last cycles went to (-1: none), */
    int64_t last_block;    /* in block_cycles (1) or pc_cycles (0) */
    uint64_t *node_cycles; /* each call tree node's own cycles */
    int64_t last_node;     /* the node the last cycles went to */
} Profile;

/* The pages of the thread's code the loader changed (code.c): the Zba and Zbb it rewrote
 * into jumps to stubs, the instructions it made trap (sim/isa/rewrite.py, stand_in.py),
 * the stubs. The engine runs the image as changed; a load or store of the thread's reaches
 * these pages as the compiler and linker wrote them. */
typedef struct {
    uint64_t base;         /* the address of the first page, */
    uint64_t end;          /* past the last */
    uint8_t *bytes;        /* the pages as written (relocated), */
    uint8_t *image;        /* and as the engine runs them (the image's memory there) */
    uint8_t *changed;      /* per page: the loader changed a byte of it */
    const uint64_t *slots; /* the addresses of the instructions it changed (4 bytes each), sorted */
    int64_t slot_count;
    uint64_t stubs;        /* the stub area's addresses: the loader's own, not the thread's code */
    uint64_t stubs_end;
} Original;

struct Core;
/* A cluster's cores, for lr/sc (reserve.c): a store to a line another core's lr reserved,
 * or a write to it past the cache, clears that reservation, so that its sc fails. */
#define RESERVING_CORES 4
typedef struct {
    struct Core *cores[RESERVING_CORES];
} Reservations;

/* The door for time (latency.c): where an access's bytes came from, and what that cost. */
enum { LEVEL_DRAM = 0, LEVEL_L1 = 1, LEVEL_L2 = 2, LEVEL_L3 = 3, /* (tile_access's answers) */
       LEVEL_UNCACHED = 4, LEVEL_FLUSH = 5, LEVEL_INVALIDATE = 6, LEVELS = 7 };
typedef struct {
    const uint32_t *latency;  /* cycles an access at each LEVEL_* takes (0: no timing model) */
    const uint32_t *per_line; /* and per line it moves */
    uint64_t cycles;          /* what this core's accesses took, summed */
    uint64_t accesses[LEVELS];
} MemoryTime;
uint64_t access_took(struct Core *core, int level, uint64_t lines);

/* The timing model (timing.c, docs/timing.md): a core's clock in the X280's cycles, from its
 * pipeline, vector unit and memory. Python allocates it (timing_size bytes) and reads the
 * head (sim/native/hooks.py, TimingHead); the rest is the model's own. */
enum {
#define P(name) TP_##name,
#include "timing.def"
#undef P
    TP_COUNT
};
enum { /* where a core's cycles went (Timing.went; sim/native/hooks.py's WENT names them) */
    WENT_ISSUE = 0, WENT_LOAD_USE, WENT_DEPENDENCY, WENT_L2, WENT_L3, WENT_DRAM, WENT_UNCACHED,
    WENT_VECTOR, WENT_BRANCH, WENT_DIVIDE, WENT_CALLS, WENT_FLUSH, WENT_KINDS
};
typedef struct { /* a cluster's: what its cores share (the tile) */
    Tile tile;                       /* its caches, tags only: which level holds a line */
    uint64_t uncached_at[TILE_HARTS]; /* each hart's clock at its last uncached read, plus one, */
    uint64_t uncached_from[TILE_HARTS]; /* and at the first of that stretch of them, plus one */
} TimingTile;
#define TIMING_REGISTERS 64 /* x0-x31, f0-f31 */
#define TIMING_BHT_MAX 65536
#define TIMING_BTB_MAX 256
#define TIMING_RAS_MAX 64
#define TIMING_QUEUE_MAX 64
typedef struct {
    /* the head: Python's (sim/native/hooks.py, TimingHead) */
    int64_t on;
    const uint32_t *param;     /* TP_*: sim/timing/x280.py */
    TimingTile *shared;        /* the cluster's tile */
    int64_t hart;              /* the core's hart in the tile */
    uint64_t now;              /* the cycle its last instruction issued in: its clock */
    uint64_t instructions;     /* instructions the model timed */
    uint64_t went[WENT_KINDS]; /* where the cycles went: they sum to now */
    uint64_t branches, mispredicts, loads, misses[4], vector_ops, engine_blocks, engine_instructions;
    /* the model's own */
    uint32_t slots;            /* instructions issued in cycle NOW (0, 1, 2) */
    uint32_t pipes;            /* the pipes they took: 1 A, 2 B */
    uint64_t ready[TIMING_REGISTERS];  /* when each register's value is ready */
    uint8_t why[TIMING_REGISTERS];     /* WENT_* a wait for it counts as */
    uint64_t memory_free;      /* the L1D's one line fill ends (a miss is not overlapped) */
    uint8_t memory_why;
    uint64_t divider_free;     /* the integer divider and the FP divider are not pipelined */
    uint64_t fp_divider_free;
    uint64_t vready[32];       /* when each vector register's first results are ready (a consumer chains), */
    uint64_t vdone[32];        /* and its last, */
    uint8_t vwhy[32];          /* and what its producer waited on (WENT_*) */
    uint64_t sequencer_free[3]; /* the vector unit's arithmetic, load and store sequencers: free again, */
    uint64_t sequencer_begun[3]; /* and when each began its last instruction */
    uint64_t queue[TIMING_QUEUE_MAX]; /* when each of the last instructions left the vector command queue */
    uint8_t sequencer_why[3];  /* what keeps each sequencer busy (WENT_VECTOR, or a memory level) */
    uint64_t uncached;         /* the uncached accesses of the instruction running (timing_uncached), */
    uint64_t uncached_lines;   /* the lines among them, */
    uint64_t uncached_line;    /* and the last line, plus one */
    uint64_t queued;           /* vector instructions queued so far */
    uint64_t vset_ready;       /* the last vsetvli's vtype and vl reach the vector unit */
    uint64_t last_cost;        /* the cycles the last instruction or block timed took (profile.c) */
    uint64_t mark_now, mark_instructions; /* the clock and count as its last turn began (sched.c) */
    uint64_t queue_last;       /* the cycle the last left it */
    uint8_t bht[TIMING_BHT_MAX]; /* two-bit counters */
    uint64_t btb_pc[TIMING_BTB_MAX], btb_target[TIMING_BTB_MAX];
    uint64_t ras[TIMING_RAS_MAX];
    uint64_t ras_top;
    uint64_t pending_pc;       /* the engine's last block ended in a branch or jump at this pc (0: none), */
    uint64_t pending_next;     /* whose fall-through is this, */
    uint32_t pending_insn;     /* and this the instruction */
} Timing;
uint64_t timing_size(void);
void timing_took(struct Core *core, int level, uint64_t lines);
void timing_uncached(struct Core *core, uint64_t address);
void timing_block(struct Core *core, uint64_t address, uint32_t size);
void timing_drain(struct Core *core);
void timing_call(struct Core *core, uint64_t number);
void timing_invalidated(Timing *t, uint64_t address, uint64_t size);
void timing_waited(Timing *t, uint64_t until);

typedef struct Core {
    EngineCalls engine;
    SpanTable table;
    Refusal refused;
    TlbGrowth tlb;
    Turn turn;
    IsaState isa;
    Device device;
    Debug debug;
    Profile profile;
    uint64_t reserved;          /* the line its last lr reserved, an address over LINE, plus one (0: none) */
    uint64_t reserved_at;       /* its instruction count at that lr */
    uint64_t announced;         /* the reservation the other cores' TLBs know of (reserve.c) */
    Reservations *reservations; /* the cluster's cores, where another core or a stand-in may store (0: none) */
    Original *original;         /* the thread's code as written, where the loader changed it (0: nowhere) */
    struct Calls *calls;        /* the kmx calls answered in C (calls.c; 0: none) */
    uint64_t site_pc;           /* the pc of the access being made, where it is known (the
                                 * interpreter's, Python's call's; 0: the engine's, events.c) */
    MemoryTime memory;          /* the door for time (latency.c) */
    Timing *timing;             /* the timing model (timing.c; 0: off, each instruction a cycle) */
} Core;

/* The kmx calls calls.c answers, for one cluster's thread (sim/kmx/traps.py fills it in). */
#define CALL_EVENTS 256
#define CALL_SITES 64
#define CLUSTER_CORES 4 /* sim/layout.py's CORES_PER_CLUSTER */
typedef struct {
    int64_t core;      /* the core's number */
    uint64_t number;   /* the call's (kmx.h's KMX_CALL_*) */
    uint64_t argument; /* its a0 */
    uint64_t pc;       /* the ecall's */
    uint64_t ra;
    uint64_t times;    /* the same call, at the same site, this many times in a row */
} CallEvent;
typedef struct {
    uint64_t pc, ra;
} CallSite;
typedef struct Calls {
    int64_t on;               /* answer in C (0: every call goes to Python; a listener hears them) */
    int64_t ecall_past;       /* at an ecall the engine's pc is this far past it (probed) */
    int64_t cluster;          /* kmx_cluster */
    const uint64_t *words;    /* kmx_word */
    int64_t word_count;
    int64_t region_count;
    const uint64_t *addresses; /* per region ID: its address */
    CachedRegion **regions;          /* and its lines in the cache */
    Core **cores;              /* the cluster's cores (each forgets its translations) */
    int64_t core_count;
    int64_t story;             /* the cache's story hears invalidates and flushes: queue them */
    uint64_t generation;       /* raised at each change of a line's state (CachedRegion.generation) */
    uint64_t looked;           /* the generation when the story last looked at the lines */
    CallSite sites[CALL_SITES]; /* call sites whose source line Python knows */
    int64_t site_count;
    CallEvent events[CALL_EVENTS]; /* answered here, not yet told to the story */
    int64_t event_count;
    uint64_t answered;         /* calls answered here */
    /* kmx_barrier: one count for calls.c and Python alike (sim/machine/cluster.py's
     * Cluster.barrier reads and writes these) */
    int64_t barrier_arrivals;    /* cores that arrived since it last released */
    uint64_t barrier_generation; /* its releases (the first: the start code's, kmx_runtime/process.c) */
    uint64_t barrier_waiting;    /* a bit a core (its number): blocked in it */
    int64_t exited;              /* cores that returned: no barrier completes now (Python's, which
                                  * finds the deadlock) */
    struct Group *loop;          /* the turn loop that runs the cluster's cores (sched.c; 0: none) */
    uint64_t loop_bits[CLUSTER_CORES]; /* each core's bit in its Group.ready */
} Calls;
int calls_answer(void *uc, Core *core);
void region_drop(CachedRegion *r, int forget);
void region_invalidated(CachedRegion *r);
void region_forget_translations(Calls *c, const CachedRegion *r);

void profile_block(Core *core, uint64_t address, uint32_t size, uint64_t count);
void profile_enter(Core *core, uint64_t address);
void profile_pc(Core *core, uint64_t pc);
void profile_cache(Core *core, void *uc, int kind);
int profile_is_function(const Core *core, uint64_t address);

int at_breakpoint(const Turn *turn, uint64_t pc);
int debugger_watches(const Debug *debug, uint64_t page); /* fill.c */

Span *find_span(Core *core, uint64_t address);
/* route.c: what ADDRESS is; SCRATCH is the stubs' scratch page's address in its space */
enum { ROUTE_NONE, ROUTE_SCRATCH, ROUTE_DEVICE, ROUTE_UNCACHED, ROUTE_WATCHED, ROUTE_SPAN };
typedef struct {
    int kind;
    Span *span;      /* the span the address belongs to (ROUTE_UNCACHED, _WATCHED, _SPAN) */
    uint64_t cached; /* the address in that span's own window */
} Route;
__attribute__((visibility("hidden"))) Route route(Core *core, uint64_t address, uint64_t scratch);
int64_t sorted_find(const uint64_t *values, int64_t count, uint64_t key); /* spans.c: KEY's index in VALUES (sorted), or -1 */
int64_t sorted_floor(const uint64_t *values, int64_t count, uint64_t key); /* the last at most KEY, or -1 */

/* events.c */
#define ACCESS_LOADS 0x100  /* an access loads, */
#define ACCESS_STORES 0x200 /* stores (an AMO does both), */
#define ACCESS_VECTOR -1    /* or is a vector unit's (decode.c, memory_access) */
CacheEvent *cache_event(CachedRegion *r, Core *core, int kind, uint64_t offset, uint64_t size, uint64_t address,
                 uint64_t access_size, int stores);
uint64_t core_access_pc(Core *core, uint64_t address, uint64_t size, int stores);
void cache_events_free(CacheEvents *q);
void *realloc(void *pointer, size_t size); /* (the process's libc) */
void free(void *pointer);

/* watch.c */
enum { CLEAN_IN_DRAM = 0, CLEAN_COPY = 1, CLEAN_LOADED = 2 }; /* where a page's clean bytes are */
int clean_place(const CachedRegion *r, uint64_t page);
int page_watched(const CachedRegion *r, uint64_t page);
int read_before_invalidate(CachedRegion *r, uint64_t page, uint64_t first_line, uint64_t end_line, Core *core);
int read_line_before_invalidate(CachedRegion *r, uint64_t line, Core *core);
void watch_read(CachedRegion *r, Core *core, uint64_t offset, uint64_t size);
void watch_write(CachedRegion *r, Core *core, uint64_t offset, uint64_t size);
int device_holds(uint64_t address);
typedef struct {
    CachedRegion *region;
    Core *core;
} Watch; /* what a region's device callbacks get */
uint64_t uncached_device_read(void *uc, uint64_t offset, unsigned size, void *data);
void uncached_device_write(void *uc, uint64_t offset, unsigned size, uint64_t value, void *data);
uint8_t dram_byte(const CachedRegion *r, uint64_t offset);
void dram_store(CachedRegion *r, uint64_t offset, uint64_t size, const uint8_t *bytes, Core *thread);
void lines_dropped(CachedRegion *r);
int64_t region_dirty_lines(const CachedRegion *r, uint64_t first, uint64_t end, int64_t *out);
void region_write_back(CachedRegion *r, const int64_t *lines, int64_t count);
void region_put_clean(const CachedRegion *r, const int64_t *lines, int64_t count, uint8_t *into);

/* code.c */
int original_changed(const Original *o, uint64_t address);
void original_read(const Original *o, uint64_t address, uint64_t size, uint8_t *out);
void original_write(Original *o, uint64_t address, uint64_t size, const uint8_t *in);

/* reserve.c */
void reservation_turn_ended(Core *core);
void reserve(Core *core, uint64_t address);
int reservation_held(Core *core, uint64_t address);
int reserved_elsewhere(const Core *core, uint64_t page);
void reservations_stored(Reservations *r, int64_t by, uint64_t address, uint64_t size);
typedef struct {
    uint8_t *host; /* a span's memory that is not a region's, */
    uint64_t base; /* at this address, */
    Core *core;    /* reached by this core */
} SpanWatch; /* what an image's, a stack's or the heap's device callbacks get (reserve.c) */
uint64_t span_load(Core *core, uint8_t *host, uint64_t base, uint64_t offset, unsigned size);
void span_store(Core *core, uint8_t *host, uint64_t base, uint64_t offset, unsigned size, uint64_t value);
uint64_t span_device_read(void *uc, uint64_t offset, unsigned size, void *data);
void span_device_write(void *uc, uint64_t offset, unsigned size, uint64_t value, void *data);

/* noc.c: DRAM past the cache, as a Tensix core's NoC reaches it (sim/noc/) */
void noc_read(const CachedRegion *r, uint64_t offset, uint64_t size, uint8_t *out);
int noc_holds(const CachedRegion *r, uint64_t offset, uint64_t size, uint64_t value);

/* unicorn's RISC-V register numbers (riscv.h; sim/native/hooks.py checks them) */
#define UC_REG_X0 1
#define UC_REG_FFLAGS 41
#define UC_REG_FRM 42
#define UC_REG_F0 158
#define UC_REG_PC 190

/* softfloat.c */
enum { RM_RNE = 0, RM_RTZ = 1, RM_RDN = 2, RM_RUP = 3, RM_RMM = 4, RM_DYN = 7, RM_ROD = 8 /* (vfncvt.rod's) */ };
enum { FP_HALF, FP_SINGLE, FP_DOUBLE, FP_BFLOAT /* (bfloat16: Zvfbfmin's conversions) */ };
enum { FFLAG_NX = 1, FFLAG_UF = 2, FFLAG_OF = 4, FFLAG_DZ = 8, FFLAG_NV = 16 };
#define HALF_NAN 0x7E00u
uint64_t fp_add(int format, uint64_t a, uint64_t b, int rm, uint32_t *flags);
uint64_t fp_sub(int format, uint64_t a, uint64_t b, int rm, uint32_t *flags);
uint64_t fp_mul(int format, uint64_t a, uint64_t b, int rm, uint32_t *flags);
uint64_t fp_div(int format, uint64_t a, uint64_t b, int rm, uint32_t *flags);
uint64_t fp_sqrt(int format, uint64_t a, int rm, uint32_t *flags);
uint64_t fp_fma(int format, uint64_t a, uint64_t b, uint64_t c, int negate_product, int negate_addend, int rm, uint32_t *flags);
int fp_compare(int format, uint64_t a, uint64_t b, int which, uint32_t *flags);
uint64_t fp_min_max(int format, uint64_t a, uint64_t b, int max, uint32_t *flags);
uint32_t fp_class(int format, uint64_t a);
uint64_t fp_convert(int from, int to, uint64_t a, int rm, uint32_t *flags);
uint64_t integer_to_fp(int format, uint64_t magnitude, int negative, int rm, uint32_t *flags);
uint64_t fp_to_integer(int format, uint64_t a, int bits, int is_signed, int rm, uint32_t *flags);
uint64_t fp_rsqrt7(int format, uint64_t a, uint32_t *flags);
uint64_t fp_rec7(int format, uint64_t a, int rm, uint32_t *flags);
uint16_t half_add(uint16_t a, uint16_t b, int rm, uint32_t *flags);
uint16_t half_sub(uint16_t a, uint16_t b, int rm, uint32_t *flags);
uint16_t half_mul(uint16_t a, uint16_t b, int rm, uint32_t *flags);
uint16_t half_div(uint16_t a, uint16_t b, int rm, uint32_t *flags);
uint16_t half_sqrt(uint16_t a, int rm, uint32_t *flags);
uint16_t half_fma(uint16_t a, uint16_t b, uint16_t c, int negate_product, int negate_addend, int rm, uint32_t *flags);
int half_compare(uint16_t a, uint16_t b, int which, uint32_t *flags);
uint16_t half_min_max(uint16_t a, uint16_t b, int max, uint32_t *flags);
uint32_t half_class(uint16_t h);
uint32_t half_to_single(uint16_t h, uint32_t *flags);
uint64_t half_to_double(uint16_t h, uint32_t *flags);
uint16_t single_to_half(uint32_t s, int rm, uint32_t *flags);
uint16_t double_to_half(uint64_t d, int rm, uint32_t *flags);
uint16_t integer_to_half(uint64_t magnitude, int negative, int rm, uint32_t *flags);
uint64_t half_to_integer(uint16_t h, int bits, int is_signed, int rm, uint32_t *flags);

/* A host thread's cores taking turns (sched.c; sim/machine/schedule.py's Schedule, its Python side). */
enum { PLAN_ROUND_ROBIN = 0, PLAN_RANDOM = 1, PLAN_REPLAY = 2 };
enum { LOOP_STOPPED = 0, LOOP_FULL = 1, LOOP_TURN = 2, LOOP_IDLE = 3, LOOP_AGENT = 4 };
typedef struct { /* a Tensix stand-in's noc.wait (sim/noc/agent.py): until DRAM holds VALUE */
    CachedRegion *region;  /* (0: it does not wait) */
    uint64_t offset; /* in the region's span */
    uint64_t size;   /* 1, 2, 4 or 8 bytes, */
    uint64_t value;  /* little-endian */
} AgentWait;
#define MT_N 624
typedef struct Group {
    int64_t strategy;         /* PLAN_* */
    uint64_t quantum;         /* a turn's instructions while several cores are ready */
    uint32_t mt[MT_N];        /* random: CPython's Mersenne Twister, as random.Random seeded it */
    int64_t mt_index;
    int64_t *script;          /* replay: rows of (core's index, instructions); an index of -1 */
    int64_t script_length;    /* is a turn of a core not in the group */
    int64_t script_at;
    int64_t last;             /* the index of the core that had the last turn (-1: none) */
    int64_t *record;          /* the turns chosen: rows of (core's index, instructions; 0: no limit) */
    int64_t record_length;
    int64_t record_capacity;
    uint64_t instructions;    /* run by the group's cores */
    int64_t count;            /* the cores, in turn order (sim/machine/schedule.py, key) */
    Core **cores;
    uint64_t *pcs;            /* where each is (the loop keeps them; Python reads them back) */
    uint64_t ready;           /* a bit a core: ready to run (Python says) */
    int64_t stop;             /* Python asks the loop to go back to it, between turns */
    int64_t running;          /* the index of the core whose turn runs now (-1: none) */
    int64_t turn_core;        /* LOOP_TURN: the core whose turn Python finishes, */
    int64_t turn_count;       /* its count, */
    int64_t turn_error;       /* its engine's error (uc_err), */
    uint64_t turn_cycles;     /* and its cycles as the turn began */
    uint64_t agents;          /* a bit an index: a Tensix stand-in's, not a core's (LOOP_AGENT:
                               * Python runs its step; every step is one turn, recorded as 1) */
    int64_t agents_live;      /* stand-ins that have not returned: no core's turn is without limit */
    AgentWait *waits;         /* per index: a stand-in waiting in noc.wait, ready once DRAM holds it */
    uint64_t turn_python;     /* the running core's isa.python_calls as its turn began */
    int64_t ended;            /* a call answered in C ended the running turn (calls.c: kmx_barrier) */
    const uint64_t **clocks;  /* timed (timing.c): per index, its clock (a core's Timing.now, a
                               * stand-in's): the core furthest behind runs next (0: not timed) */
    const uint64_t *agent_costs; /* timed: per index, the cycles a stand-in's next step costs (its
                               * noc call's, sim.timing.model.noc_call_cycles) */
    const uint64_t *agent_wake; /* timed: per index, when a stand-in's next step waits (noc.wait,
                               * its start), its cluster's participants, whose clocks it catches up with */
} Group;
uint64_t isa_finish_turn(void *uc, Core *core);
uint64_t isa_run_block(void *uc, Core *core, uint64_t address, uint32_t size);
int turn_left_python(const Core *core, uint64_t python);
int64_t group_choose(Group *g, uint64_t ready, uint64_t *count);
int64_t group_run(Group *g);
uint64_t group_waits_met(const Group *g);

#endif
