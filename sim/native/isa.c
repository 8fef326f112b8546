/* isa.c: isa_trap, the engine's interrupt hook. The X280's instructions that the engine
 * (QEMU 5.0's RV64GC) lacks, Zba, Zbb and Zfh (with Zfhmin), reach it as illegal
 * instructions and run here, in C; so do the stand-ins the loader put in place of lr and
 * sc (sim/isa/stand_in.py, reserve.c). Every other exception (an ecall, a fault, an instruction the X280 lacks) goes to Python
 * (core->isa.on_trap).
 *
 * After an emulated instruction the hook goes on interpreting the code that follows, in
 * C, while it stays hot: up to an instruction the interpreter does not know (an ecall, a
 * CSR, an atomic, F and D arithmetic), until STAY instructions have passed without one
 * the engine lacks, or the turn's budget or EPISODE instructions run out. A loop with a
 * Zba instruction in it (clang puts sh1add and sh2add in address arithmetic) then runs
 * here whole instead of trapping at every pass. The interpreter counts the instructions
 * it runs into the cycle model and the turns (hooks.h, Turn) exactly as the block hook
 * does, and reaches memory the way the engine does: through uc_vmem_translate, so through
 * the engine's TLB and tlb_fill (fill.c), which the cache model and the checker see.
 *
 * The Hart, the decoded instructions and the memory access are hart.h's, which the vector
 * unit (vector/, vector_run) shares; decode.c decodes the instructions, from the table of
 * the scalar instructions (scalar.def).
 */
#include "hart.h"

#define UC_PROT_READ_ 1
#define UC_PROT_WRITE_ 2
#define ILLEGAL 2
#define ECALL 8

/* The interpreter's loops and the trap's way in start at a cache line: the loops' speed
 * went by some 10% with where the linker put them against the lines, which any change to
 * the code before them moved. */
#define LINE_ALIGNED __attribute__((aligned(64)))

#define STAY 256          /* instructions without one the engine lacks before going back to it */
#define EPISODE (1 << 20) /* the most the interpreter runs at a time (a stop is seen between) */

uint64_t isa_scratch_size(void) { return sizeof(Scratch); }

/* A core's vector unit, for Python (the fault report, the tests): its 32 registers (2048
 * bytes) into REGS unless it is NULL, and vl, vtype, vstart, vxrm, vxsat, the refused
 * element and its address into CSRS. Before its first vector instruction the unit is as
 * at reset. */
void isa_vector_state(const void *scratch, uint8_t *regs, uint64_t csrs[7]) {
    const VectorUnit *v = &((const Scratch *)scratch)->vector;
    if (regs)
        __builtin_memcpy(regs, v->reg, sizeof v->reg);
    uint64_t reset[7] = {0, 1ull << 63, 0, 0, 0, (uint64_t)-1, 0};
    uint64_t now[7] = {v->vl, v->vtype, v->vstart, v->vxrm, v->vxsat, (uint64_t)v->refused, v->refused_address};
    __builtin_memcpy(csrs, v->ready ? now : reset, sizeof now);
}

/* Write what changed back to the engine; it goes on at NEXT_PC (its pc is REPORTED now). */
static void write_back(Hart *h, uint64_t next_pc, uint64_t reported) {
    Core *core = h->core;
    for (int n = 1; n < 32; n++)
        if (h->x_dirty >> n & 1)
            core->isa.reg_write(h->uc, UC_REG_X0 + n, &h->x[n]);
    for (int n = 0; n < 32; n++)
        if (h->f_dirty >> n & 1)
            core->isa.reg_write(h->uc, UC_REG_F0 + n, &h->f[n]);
    if (h->flags) {
        uint64_t fflags = 0;
        core->engine.reg_read(h->uc, UC_REG_FFLAGS, &fflags);
        fflags |= h->flags;
        core->isa.reg_write(h->uc, UC_REG_FFLAGS, &fflags);
    }
    if (next_pc != reported || h->engine_pc_moved) {
        /* (a 4-byte instruction run alone leaves the pc where the engine has it) */
        core->isa.reg_write(h->uc, UC_REG_PC, &next_pc);
    }
}

/* -- memory ----------------------------------------------------------------------------- */

/* The host address of ADDRESS (an access that stays inside its page), through the
 * engine's TLB (and so tlb_fill, which may refuse: 0). */
__attribute__((noinline)) uint8_t *host_miss(Hart *h, uint64_t address, int write) {
    uint64_t page = address & ~(uint64_t)(PAGE - 1);
    PageEntry *e = &h->scratch->pages[(address / PAGE) & (PAGE_CACHE - 1)];
    Core *core = h->core;
    /* tlb_fill records a store's pc and ra, and the checker walks the frames from fp to
     * name the user's line: the engine's must be the instruction's own, not where the
     * engine trapped (ra, sp and fp: what the explaining reads). */
    uint64_t pc = h->pc;
    if (pc != h->engine_pc) { /* (not when the engine is there already: a write would make it leave the
                                * block it is about to run, which then runs nothing: isa_run_block) */
        core->isa.reg_write(h->uc, UC_REG_PC, &pc);
        h->engine_pc = pc;
        h->engine_pc_moved = 1;
    }
    static const int explained[] = {1, 2, 8};
    for (int i = 0; i < 3; i++)
        if (h->x_dirty >> explained[i] & 1)
            core->isa.reg_write(h->uc, UC_REG_X0 + explained[i], &h->x[explained[i]]);
    uint64_t paddr = 0;
    if (core->isa.translate(h->uc, address, write ? UC_PROT_WRITE_ : UC_PROT_READ_, &paddr) != 0)
        return 0;
    Route to = route(core, paddr, core->table.scratch_physical);
    uint64_t ppage = paddr & ~(uint64_t)(PAGE - 1);
    uint8_t *host;
    switch (to.kind) {
    case ROUTE_WATCHED: case ROUTE_UNCACHED: /* a watched page, or a region's uncached alias: */
        if (!to.span->region) {               /* not kept, each access goes to watch.c */
            if (to.kind == ROUTE_UNCACHED)    /* (or, another core's reservation on the page of */
                return 0;                     /* an image, a stack or the heap, to reserve.c) */
            h->watched = 0;
            h->watched_host = to.span->host;
            h->watched_base = to.span->base;
            h->watched_delta = (to.cached & ~(uint64_t)(PAGE - 1)) - page; /* (ADDRESS's alias: uncached, or none) */
            h->watched_uncached = 0;
            return WATCHED;
        }
        h->watched = to.span->region;
        h->watched_base = to.span->base - (to.kind == ROUTE_UNCACHED ? UNCACHED_OFFSET : 0);
        h->watched_uncached = to.kind == ROUTE_UNCACHED;
        return WATCHED;
    case ROUTE_SCRATCH: /* the stubs' scratch page (fill.c) */
        if (!core->table.scratch_host)
            return 0;
        host = core->table.scratch_host;
        break;
    case ROUTE_SPAN:
        host = to.span->host + (ppage - to.span->base);
        break;
    default: /* nothing, or the cache's registers: the engine does those */
        return 0;
    }
    if (core->tlb.grow)
        h->stop = 1;
    if (core->debug.count && debugger_watches(&core->debug, page))
        return host + (address - page); /* (not kept: each access of a watched page asks tlb_fill) */
    e->page = page + 1;
    e->host = host;
    e->generation = core->isa.page_generation;
    e->writable = write;
    return e->host + (address - page);
}


/* An access to a watched page (host_of gave WATCHED): the bytes, and watch.c told. */
__attribute__((noinline)) int watched_load(Hart *h, uint64_t address, int size, uint64_t *value) {
    uint64_t offset = address - h->watched_base, v = 0;
    if (!h->watched) { /* a page of no region's: another's reservation, or changed code (reserve.c) */
        *value = span_load(h->core, h->watched_host, h->watched_base, offset + h->watched_delta, (unsigned)size);
        return 1;
    }
    h->core->site_pc = h->pc; /* (what the cache model saw is at this instruction: events.c) */
    if (h->watched_uncached) {
        Watch watch = {h->watched, h->core};
        *value = uncached_device_read(h->uc, offset, (unsigned)size, &watch);
        h->page_generation = h->core->isa.page_generation; /* (a region watched now: watch.c) */
        h->core->site_pc = 0;
        return 1;
    }
    __builtin_memcpy(&v, h->watched->view + offset, size);
    watch_read(h->watched, h->core, offset, size);
    h->core->site_pc = 0;
    *value = v;
    return 1;
}

__attribute__((noinline)) int watched_store(Hart *h, uint64_t address, int size, uint64_t value) {
    uint64_t offset = address - h->watched_base;
    if (!h->watched) { /* a page of no region's: another's reservation, or changed code (reserve.c) */
        span_store(h->core, h->watched_host, h->watched_base, offset + h->watched_delta, (unsigned)size, value);
        return 1;
    }
    h->core->site_pc = h->pc;
    if (h->watched_uncached) {
        Watch watch = {h->watched, h->core};
        uncached_device_write(h->uc, offset, (unsigned)size, value, &watch);
        h->page_generation = h->core->isa.page_generation;
        h->core->site_pc = 0;
        return 1;
    }
    __builtin_memcpy(h->watched->view + offset, &value, size);
    watch_write(h->watched, h->core, offset, size);
    h->core->site_pc = 0;
    return 1;
}

/* Across two pages: a byte at a time (both pages first, so that a refusal changes nothing). */
__attribute__((noinline)) int load_split(Hart *h, uint64_t address, int size, uint64_t *value) {
    uint64_t v = 0;
    for (int i = 0; i < size; i++) {
        uint8_t *p = host_of(h, address + i, 0);
        if (!p)
            return 0;
        uint64_t b = 0;
        if (p == WATCHED)
            watched_load(h, address + i, 1, &b);
        else
            b = *p;
        v |= b << (8 * i);
    }
    *value = v;
    return 1;
}

__attribute__((noinline)) int store_split(Hart *h, uint64_t address, int size, uint64_t value) {
    for (int i = 0; i < size; i++)
        if (!host_of(h, address + i, 1))
            return 0;
    for (int i = 0; i < size; i++) {
        uint8_t *p = host_of(h, address + i, 1);
        if (p == WATCHED)
            watched_store(h, address + i, 1, (value >> (8 * i)) & 0xFF);
        else
            *p = (uint8_t)(value >> (8 * i));
    }
    return 1;
}

/* -- fetching ------------------------------------------------------------------------- */

/* The instruction at PC, decoded (0: not in the thread's code, or cut short there). */
static __attribute__((noinline)) Decoded *fetch_miss(Hart *h, uint64_t pc);

static AI Decoded *fetch(Hart *h, uint64_t pc) {
    Decoded *d = &h->scratch->code[(pc >> 1) & (CODE_CACHE - 1)];
    if (__builtin_expect(d->pc == pc && d->generation == h->code_generation, 1))
        return d;
    return fetch_miss(h, pc);
}

static __attribute__((noinline)) Decoded *fetch_miss(Hart *h, uint64_t pc) {
    Decoded *d = &h->scratch->code[(pc >> 1) & (CODE_CACHE - 1)];
    uint32_t generation = h->code_generation;
    Span *span = find_span(h->core, pc);
    if (!span || span->kind != SPAN_IMAGE || pc + 2 > span->end)
        return 0;
    const uint8_t *code = span->host + (pc - span->base);
    uint16_t low = (uint16_t)(code[0] | code[1] << 8);
    if ((low & 3) == 3) {
        if (pc + 4 > span->end)
            return 0;
        uint32_t insn = low | (uint32_t)(code[2] | code[3] << 8) << 16;
        decode(d, insn, 4);
    } else {
        decode(d, expand(low), 2); /* (0, an instruction of none of the rows, when it expands to none) */
    }
    d->pc = pc;
    d->generation = generation;
    return d;
}

/* -- running ---------------------------------------------------------------------------- */



static uint64_t orc_b(uint64_t v) {
    uint64_t out = 0;
    for (int i = 0; i < 8; i++)
        if ((v >> (8 * i)) & 0xFF)
            out |= (uint64_t)0xFF << (8 * i);
    return out;
}

static uint64_t rotate_right(uint64_t v, unsigned n) { n &= 63; return n ? (v >> n) | (v << (64 - n)) : v; }
static uint32_t rotate_right32(uint32_t v, unsigned n) { n &= 31; return n ? (v >> n) | (v << (32 - n)) : v; }
static uint64_t w(uint64_t v) { return (uint64_t)(int64_t)(int32_t)(uint32_t)v; }

static int64_t divide(int64_t a, int64_t b) { return b == 0 ? -1 : (a == INT64_MIN && b == -1) ? a : a / b; }
static int64_t remainder_of(int64_t a, int64_t b) { return b == 0 ? a : (a == INT64_MIN && b == -1) ? 0 : a % b; }

/* An AMO of SIZE (4 or 8) bytes, FUNCT5 (its bits 31:27) at ADDRESS with B: *OLD is the memory's
 * value before (sign-extended for a word). NOT_HERE unless the address is aligned and its
 * page plain memory the core may write (the engine then runs it: a misaligned AMO's fault,
 * a watched page's accesses, a refusal); the read-modify-write is one host atomic (clusters
 * 2 and 3 may run at once on D7: docs/simulator.md). */
/* What AMO FUNCT5 leaves in memory that held SEEN, given X (both SIZE bytes, zero-extended). */
static inline uint64_t amo_result(unsigned funct5, uint64_t seen, uint64_t x, int size) {
    int64_t s = size == 4 ? (int64_t)(int32_t)seen : (int64_t)seen, t = size == 4 ? (int64_t)(int32_t)x : (int64_t)x;
    switch (funct5) {
    case 0: return seen + x;
    case 1: return x;
    case 4: return seen ^ x;
    case 8: return seen | x;
    case 12: return seen & x;
    case 16: return s < t ? seen : x;
    case 20: return s > t ? seen : x;
    case 24: return seen < x ? seen : x;
    default: return seen > x ? seen : x;
    }
}

static __attribute__((noinline)) int amo(Hart *h, uint64_t address, int size, unsigned funct5, uint64_t b,
                                         uint64_t *old) {
    if (address & (uint64_t)(size - 1))
        return NOT_HERE;
    uint8_t *p = host_of(h, address, 1);
    if (!p || p == WATCHED)
        return NOT_HERE;
    if (size == 4) {
        uint32_t *m = (uint32_t *)p, seen = __atomic_load_n(m, __ATOMIC_RELAXED), want;
        do
            want = (uint32_t)amo_result(funct5, seen, (uint32_t)b, 4);
        while (!__atomic_compare_exchange_n(m, &seen, want, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
        *old = w(seen);
    } else {
        uint64_t *m = (uint64_t *)p, seen = __atomic_load_n(m, __ATOMIC_RELAXED), want;
        do
            want = amo_result(funct5, seen, b, 8);
        while (!__atomic_compare_exchange_n(m, &seen, want, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
        *old = seen;
    }
    return RAN;
}

/* Run D at h->pc: RAN (and *NEXT is the pc after it), NOT_HERE (the engine runs it, or
 * it is illegal), or REFUSED (the memory refused an access: core->refused says which). */
static AI int run_one(Hart *h, const Decoded *d, uint64_t *next, int eager) {
    uint64_t pc = h->pc;
    *next = pc + d->length;
    int rm;
    uint64_t a, b, v;
#define RS1 X(h, d->rs1, eager)
#define RS2 X(h, d->rs2, eager)
#define RD(value) set_x(h, d->rd, (value), eager)
#define ROUNDING() do { rm = rounding(h, d->rm); if (rm < 0) return NOT_HERE; } while (0)
    switch (d->op) {
    case OP_LUI: RD((uint64_t)d->imm); break;
    case OP_AUIPC: RD(pc + (uint64_t)d->imm); break;
    case OP_JAL: RD(pc + d->length); *next = pc + (uint64_t)d->imm; break;
    case OP_JALR: a = RS1; RD(pc + d->length); *next = (a + (uint64_t)d->imm) & ~(uint64_t)1; break;
    case OP_BEQ: if (RS1 == RS2) *next = pc + (uint64_t)d->imm; break;
    case OP_BNE: if (RS1 != RS2) *next = pc + (uint64_t)d->imm; break;
    case OP_BLT: if ((int64_t)RS1 < (int64_t)RS2) *next = pc + (uint64_t)d->imm; break;
    case OP_BGE: if ((int64_t)RS1 >= (int64_t)RS2) *next = pc + (uint64_t)d->imm; break;
    case OP_BLTU: if (RS1 < RS2) *next = pc + (uint64_t)d->imm; break;
    case OP_BGEU: if (RS1 >= RS2) *next = pc + (uint64_t)d->imm; break;
    case OP_LB: if (!load(h, RS1 + d->imm, 1, &v)) return REFUSED; RD((uint64_t)sext(v, 8)); break;
    case OP_LH: if (!load(h, RS1 + d->imm, 2, &v)) return REFUSED; RD((uint64_t)sext(v, 16)); break;
    case OP_LW: if (!load(h, RS1 + d->imm, 4, &v)) return REFUSED; RD(w(v)); break;
    case OP_LD: if (!load(h, RS1 + d->imm, 8, &v)) return REFUSED; RD(v); break;
    case OP_LBU: if (!load(h, RS1 + d->imm, 1, &v)) return REFUSED; RD(v); break;
    case OP_LHU: if (!load(h, RS1 + d->imm, 2, &v)) return REFUSED; RD(v); break;
    case OP_LWU: if (!load(h, RS1 + d->imm, 4, &v)) return REFUSED; RD(v); break;
    case OP_SB: if (!store(h, RS1 + d->imm, 1, RS2)) return REFUSED; break;
    case OP_SH: if (!store(h, RS1 + d->imm, 2, RS2)) return REFUSED; break;
    case OP_SW: if (!store(h, RS1 + d->imm, 4, RS2)) return REFUSED; break;
    case OP_SD: if (!store(h, RS1 + d->imm, 8, RS2)) return REFUSED; break;
    case OP_AMO_W: case OP_AMO_D:
        a = RS1;
        b = RS2;
        if (amo(h, a, d->op == OP_AMO_W ? 4 : 8, d->rs3, b, &v) != RAN)
            return NOT_HERE;
        RD(v);
        break;
    case OP_LR_W: case OP_LR_D: /* the reservation is ours (reserve.c) */
        a = RS1;
        if (a & (d->op == OP_LR_W ? 3u : 7u))
            return MISALIGNED;
        if (!(d->op == OP_LR_W ? load(h, a, 4, &v) : load(h, a, 8, &v)))
            return REFUSED;
        reserve(h->core, a);
        RD(d->op == OP_LR_W ? w(v) : v);
        break;
    case OP_SC_W: case OP_SC_D: {
        a = RS1;
        if (a & (d->op == OP_SC_W ? 3u : 7u))
            return MISALIGNED;
        int held = reservation_held(h->core, a);
        if (held && !(d->op == OP_SC_W ? store(h, a, 4, RS2) : store(h, a, 8, RS2)))
            return REFUSED;
        RD((uint64_t)!held);
        break;
    }
    case OP_ADDI: RD(RS1 + (uint64_t)d->imm); break;
    case OP_SLTI: RD((int64_t)RS1 < d->imm); break;
    case OP_SLTIU: RD(RS1 < (uint64_t)d->imm); break;
    case OP_XORI: RD(RS1 ^ (uint64_t)d->imm); break;
    case OP_ORI: RD(RS1 | (uint64_t)d->imm); break;
    case OP_ANDI: RD(RS1 & (uint64_t)d->imm); break;
    case OP_SLLI: RD(RS1 << (d->imm & 63)); break;
    case OP_SRLI: RD(RS1 >> (d->imm & 63)); break;
    case OP_SRAI: RD((uint64_t)((int64_t)RS1 >> (d->imm & 63))); break;
    case OP_ADD: RD(RS1 + RS2); break;
    case OP_SUB: RD(RS1 - RS2); break;
    case OP_SLL: RD(RS1 << (RS2 & 63)); break;
    case OP_SLT: RD((int64_t)RS1 < (int64_t)RS2); break;
    case OP_SLTU: RD(RS1 < RS2); break;
    case OP_XOR: RD(RS1 ^ RS2); break;
    case OP_SRL: RD(RS1 >> (RS2 & 63)); break;
    case OP_SRA: RD((uint64_t)((int64_t)RS1 >> (RS2 & 63))); break;
    case OP_OR: RD(RS1 | RS2); break;
    case OP_AND: RD(RS1 & RS2); break;
    case OP_ADDIW: RD(w(RS1 + (uint64_t)d->imm)); break;
    case OP_SLLIW: RD(w((uint32_t)RS1 << (d->imm & 31))); break;
    case OP_SRLIW: RD(w((uint32_t)RS1 >> (d->imm & 31))); break;
    case OP_SRAIW: RD((uint64_t)(int64_t)((int32_t)RS1 >> (d->imm & 31))); break;
    case OP_ADDW: RD(w(RS1 + RS2)); break;
    case OP_SUBW: RD(w(RS1 - RS2)); break;
    case OP_SLLW: RD(w((uint32_t)RS1 << (RS2 & 31))); break;
    case OP_SRLW: RD(w((uint32_t)RS1 >> (RS2 & 31))); break;
    case OP_SRAW: RD((uint64_t)(int64_t)((int32_t)RS1 >> (RS2 & 31))); break;
    case OP_MUL: RD(RS1 * RS2); break;
    case OP_MULH: RD((uint64_t)(((__int128)(int64_t)RS1 * (__int128)(int64_t)RS2) >> 64)); break;
    case OP_MULHSU: RD((uint64_t)(((__int128)(int64_t)RS1 * (__int128)(unsigned __int128)RS2) >> 64)); break;
    case OP_MULHU: RD((uint64_t)(((unsigned __int128)RS1 * RS2) >> 64)); break;
    case OP_DIV: RD((uint64_t)divide((int64_t)RS1, (int64_t)RS2)); break;
    case OP_DIVU: b = RS2; RD(b ? RS1 / b : ~0ull); break;
    case OP_REM: RD((uint64_t)remainder_of((int64_t)RS1, (int64_t)RS2)); break;
    case OP_REMU: a = RS1; b = RS2; RD(b ? a % b : a); break;
    case OP_MULW: RD(w(RS1 * RS2)); break;
    case OP_DIVW: {
        int32_t x = (int32_t)RS1, y = (int32_t)RS2;
        RD((uint64_t)(int64_t)(y == 0 ? -1 : (x == INT32_MIN && y == -1) ? x : x / y));
        break;
    }
    case OP_DIVUW: { uint32_t x = (uint32_t)RS1, y = (uint32_t)RS2; RD(w(y ? x / y : ~0u)); break; }
    case OP_REMW: {
        int32_t x = (int32_t)RS1, y = (int32_t)RS2;
        RD((uint64_t)(int64_t)(y == 0 ? x : (x == INT32_MIN && y == -1) ? 0 : x % y));
        break;
    }
    case OP_REMUW: { uint32_t x = (uint32_t)RS1, y = (uint32_t)RS2; RD(w(y ? x % y : x)); break; }
    case OP_FLW: if (!load(h, RS1 + d->imm, 4, &v)) return REFUSED; set_s(h, d->rd, (uint32_t)v); break;
    case OP_FLD: if (!load(h, RS1 + d->imm, 8, &v)) return REFUSED; set_f(h, d->rd, v); break;
    case OP_FSW: if (!store(h, RS1 + d->imm, 4, F(h, d->rs2))) return REFUSED; break;
    case OP_FSD: if (!store(h, RS1 + d->imm, 8, F(h, d->rs2))) return REFUSED; break;
    /* Zba */
    case OP_SH1ADD: RD(RS2 + (RS1 << 1)); break;
    case OP_SH2ADD: RD(RS2 + (RS1 << 2)); break;
    case OP_SH3ADD: RD(RS2 + (RS1 << 3)); break;
    case OP_ADD_UW: RD(RS2 + (uint32_t)RS1); break;
    case OP_SH1ADD_UW: RD(RS2 + ((uint64_t)(uint32_t)RS1 << 1)); break;
    case OP_SH2ADD_UW: RD(RS2 + ((uint64_t)(uint32_t)RS1 << 2)); break;
    case OP_SH3ADD_UW: RD(RS2 + ((uint64_t)(uint32_t)RS1 << 3)); break;
    case OP_SLLI_UW: RD((uint64_t)(uint32_t)RS1 << (d->imm & 63)); break;
    /* Zbb */
    case OP_ANDN: RD(RS1 & ~RS2); break;
    case OP_ORN: RD(RS1 | ~RS2); break;
    case OP_XNOR: RD(~(RS1 ^ RS2)); break;
    case OP_CLZ: a = RS1; RD(a ? (uint64_t)__builtin_clzll(a) : 64); break;
    case OP_CLZW: { uint32_t x = (uint32_t)RS1; RD(x ? (uint64_t)__builtin_clz(x) : 32); break; }
    case OP_CTZ: a = RS1; RD(a ? (uint64_t)__builtin_ctzll(a) : 64); break;
    case OP_CTZW: { uint32_t x = (uint32_t)RS1; RD(x ? (uint64_t)__builtin_ctz(x) : 32); break; }
    case OP_CPOP: RD((uint64_t)__builtin_popcountll(RS1)); break;
    case OP_CPOPW: RD((uint64_t)__builtin_popcount((uint32_t)RS1)); break;
    case OP_MAX: a = RS1; b = RS2; RD((int64_t)a > (int64_t)b ? a : b); break;
    case OP_MAXU: a = RS1; b = RS2; RD(a > b ? a : b); break;
    case OP_MIN: a = RS1; b = RS2; RD((int64_t)a < (int64_t)b ? a : b); break;
    case OP_MINU: a = RS1; b = RS2; RD(a < b ? a : b); break;
    case OP_SEXT_B: RD((uint64_t)sext(RS1, 8)); break;
    case OP_SEXT_H: RD((uint64_t)sext(RS1, 16)); break;
    case OP_ZEXT_H: RD(RS1 & 0xFFFF); break;
    case OP_ROL: RD(rotate_right(RS1, 64 - (RS2 & 63))); break;
    case OP_ROLW: RD(w(rotate_right32((uint32_t)RS1, 32 - (RS2 & 31)))); break;
    case OP_ROR: RD(rotate_right(RS1, RS2 & 63)); break;
    case OP_RORI: RD(rotate_right(RS1, d->imm & 63)); break;
    case OP_RORIW: RD(w(rotate_right32((uint32_t)RS1, d->imm & 31))); break;
    case OP_RORW: RD(w(rotate_right32((uint32_t)RS1, RS2 & 31))); break;
    case OP_ORC_B: RD(orc_b(RS1)); break;
    case OP_REV8: RD(__builtin_bswap64(RS1)); break;
    /* Zfh */
    case OP_FLH: if (!load(h, RS1 + d->imm, 2, &v)) return REFUSED; set_h(h, d->rd, (uint16_t)v); break;
    case OP_FSH: if (!store(h, RS1 + d->imm, 2, F(h, d->rs2))) return REFUSED; break;
    case OP_FADD_H: ROUNDING(); set_h(h, d->rd, half_add(H(h, d->rs1), H(h, d->rs2), rm, &h->flags)); break;
    case OP_FSUB_H: ROUNDING(); set_h(h, d->rd, half_sub(H(h, d->rs1), H(h, d->rs2), rm, &h->flags)); break;
    case OP_FMUL_H: ROUNDING(); set_h(h, d->rd, half_mul(H(h, d->rs1), H(h, d->rs2), rm, &h->flags)); break;
    case OP_FDIV_H: ROUNDING(); set_h(h, d->rd, half_div(H(h, d->rs1), H(h, d->rs2), rm, &h->flags)); break;
    case OP_FSQRT_H: ROUNDING(); set_h(h, d->rd, half_sqrt(H(h, d->rs1), rm, &h->flags)); break;
    case OP_FSGNJ_H: set_h(h, d->rd, (uint16_t)((H(h, d->rs1) & 0x7FFF) | (H(h, d->rs2) & 0x8000))); break;
    case OP_FSGNJN_H: set_h(h, d->rd, (uint16_t)((H(h, d->rs1) & 0x7FFF) | (~H(h, d->rs2) & 0x8000))); break;
    case OP_FSGNJX_H: set_h(h, d->rd, (uint16_t)(H(h, d->rs1) ^ (H(h, d->rs2) & 0x8000))); break;
    case OP_FMIN_H: set_h(h, d->rd, half_min_max(H(h, d->rs1), H(h, d->rs2), 0, &h->flags)); break;
    case OP_FMAX_H: set_h(h, d->rd, half_min_max(H(h, d->rs1), H(h, d->rs2), 1, &h->flags)); break;
    case OP_FEQ_H: RD((uint64_t)half_compare(H(h, d->rs1), H(h, d->rs2), 2, &h->flags)); break;
    case OP_FLT_H: RD((uint64_t)half_compare(H(h, d->rs1), H(h, d->rs2), 1, &h->flags)); break;
    case OP_FLE_H: RD((uint64_t)half_compare(H(h, d->rs1), H(h, d->rs2), 0, &h->flags)); break;
    case OP_FCLASS_H: RD(half_class(H(h, d->rs1))); break;
    case OP_FMV_X_H: RD((uint64_t)sext(F(h, d->rs1), 16)); break;
    case OP_FMV_H_X: set_h(h, d->rd, (uint16_t)RS1); break;
    case OP_FCVT_W_H: ROUNDING(); RD(half_to_integer(H(h, d->rs1), 32, 1, rm, &h->flags)); break;
    case OP_FCVT_WU_H: ROUNDING(); RD(half_to_integer(H(h, d->rs1), 32, 0, rm, &h->flags)); break;
    case OP_FCVT_L_H: ROUNDING(); RD(half_to_integer(H(h, d->rs1), 64, 1, rm, &h->flags)); break;
    case OP_FCVT_LU_H: ROUNDING(); RD(half_to_integer(H(h, d->rs1), 64, 0, rm, &h->flags)); break;
    case OP_FCVT_H_W: {
        ROUNDING();
        int64_t x = (int32_t)RS1;
        set_h(h, d->rd, integer_to_half(x < 0 ? (uint64_t)-x : (uint64_t)x, x < 0, rm, &h->flags));
        break;
    }
    case OP_FCVT_H_WU: ROUNDING(); set_h(h, d->rd, integer_to_half((uint32_t)RS1, 0, rm, &h->flags)); break;
    case OP_FCVT_H_L: {
        ROUNDING();
        int64_t x = (int64_t)RS1;
        set_h(h, d->rd, integer_to_half(x < 0 ? 0 - (uint64_t)x : (uint64_t)x, x < 0, rm, &h->flags));
        break;
    }
    case OP_FCVT_H_LU: ROUNDING(); set_h(h, d->rd, integer_to_half(RS1, 0, rm, &h->flags)); break;
    case OP_FCVT_S_H: ROUNDING(); set_s(h, d->rd, half_to_single(H(h, d->rs1), &h->flags)); break;
    case OP_FCVT_D_H: ROUNDING(); set_f(h, d->rd, half_to_double(H(h, d->rs1), &h->flags)); break;
    case OP_FCVT_H_S: ROUNDING(); set_h(h, d->rd, single_to_half(S(h, d->rs1), rm, &h->flags)); break;
    case OP_FCVT_H_D: ROUNDING(); set_h(h, d->rd, double_to_half(F(h, d->rs1), rm, &h->flags)); break;
    case OP_FMADD_H: ROUNDING(); set_h(h, d->rd, half_fma(H(h, d->rs1), H(h, d->rs2), H(h, d->rs3), 0, 0, rm, &h->flags)); break;
    case OP_FMSUB_H: ROUNDING(); set_h(h, d->rd, half_fma(H(h, d->rs1), H(h, d->rs2), H(h, d->rs3), 0, 1, rm, &h->flags)); break;
    case OP_FNMSUB_H: ROUNDING(); set_h(h, d->rd, half_fma(H(h, d->rs1), H(h, d->rs2), H(h, d->rs3), 1, 0, rm, &h->flags)); break;
    case OP_FNMADD_H: ROUNDING(); set_h(h, d->rd, half_fma(H(h, d->rs1), H(h, d->rs2), H(h, d->rs3), 1, 1, rm, &h->flags)); break;
    case OP_VECTOR: case OP_VLOAD: case OP_VSTORE: case OP_VCSR: return vector_run(h, d);
    default: return NOT_HERE;
    }
    return RAN;
#undef RS1
#undef RS2
#undef RD
#undef ROUNDING
}

/* Where the interpreter's loop is: what it has counted, its steps, the instructions since
 * the last one the engine lacks, and its limits. */
typedef struct {
    uint64_t ran, steps, cold, limit;
    uint64_t uncounted_start, uncounted_end; /* (a stub's instructions count as none) */
} Loop;

static AI int uncounted(const Loop *l, uint64_t pc) { return pc - l->uncounted_start < l->uncounted_end - l->uncounted_start; }

/* One instruction at h->pc with every check between instructions made: 1 to go on, 0 to
 * stop (before it, or after it when it asked for a stop). EAGER (a constant): the x
 * registers were all read at the start. */
static AI int careful_step(Hart *h, Loop *l, int exact, int eager, int timed) {
    Core *core = h->core;
    Turn *turn = &core->turn;
    /* (a turn that ends on the jump into a stub ends after the stub, as in the engine:
     * the stub is the one instruction it stands for) */
    if (!(l->ran < l->limit || uncounted(l, h->pc)) || l->steps >= EPISODE)
        return 0;
    if (__builtin_expect(turn->breakpoint_count != 0, 0) && at_breakpoint(turn, h->pc))
        return 0; /* the engine goes on there, and its block hook stops before it */
    Decoded *d = fetch(h, h->pc);
    if (!d || d->op == OP_UNKNOWN)
        return 0;
    if (__builtin_expect(core->profile.on != 0, 0) && (d->op == OP_JALR || (d->op == OP_JAL &&
            (d->rd == 1 || d->rd == 5 || profile_is_function(core, h->pc + (uint64_t)d->imm)))))
        return 0; /* the engine runs calls, returns and tail calls, so that profile.c follows them */
    uint64_t next, a = 0, b = 0;
    if (timed) { /* (its operands before it runs: an access's address, a divide's) */
        a = X(h, d->rs1, eager);
        b = X(h, d->rs2, eager);
    }
    int done = run_one(h, d, &next, eager);
    h->x[0] = 0;
    if (__builtin_expect(done != RAN, 0))
        return 0; /* the engine runs it (and faults there, when the memory refused) */
    if (timed)
        timing_step(h, d, next, a, b);
    int counted = !uncounted(l, h->pc);
    l->ran += counted;
    if (__builtin_expect(core->profile.on != 0, 0) && counted)
        profile_pc(core, h->pc);
    h->pc = next;
    l->steps++;
    l->cold = d->own || timed ? 0 : l->cold + 1; /* (timed, the interpreter runs all it can) */
    return !((l->cold >= STAY || h->stop) && !exact);
}

static int goes_two_ways(int op) { return op >= OP_JALR && op <= OP_BGEU; }

/* The block that starts at PC: decoded now unless it is in the cache (0: PC's instruction
 * is not one the interpreter runs). */
static __attribute__((noinline)) Block *block_miss(Hart *h, uint64_t pc) {
    Block *b = &h->scratch->blocks[(pc >> 1) & (BLOCK_SLOTS - 1)];
    const Turn *turn = &h->core->turn;
    uint64_t at = pc;
    int count = 0, counts = 0, entries = 0, last_own = -1, two_way = 0;
    while (count < BLOCK_MAX) {
        Decoded *d = fetch(h, at);
        if (!d || d->op == OP_UNKNOWN)
            break;
        int stub = at - turn->uncounted_start < turn->uncounted_end - turn->uncounted_start;
        if (d->own)
            last_own = count;
        if (!(d->op == OP_JAL && d->rd == 0) || h->timing) { /* (a plain jump: counted, no entry, unless timed) */
            b->counted[entries] = (uint8_t)counts;
            b->insn[entries] = *d;
            b->insn[entries].stub = (uint8_t)stub;
            entries++;
        }
        count++;
        counts += !stub;
        if (goes_two_ways(d->op)) {
            two_way = 1;
            break;
        }
        at = d->op == OP_JAL ? at + (uint64_t)d->imm : at + d->length;
    }
    if (!count)
        return 0;
    b->pc = pc;
    b->exit = at;
    b->two_way = (uint8_t)two_way;
    b->count = (uint8_t)count;
    b->counts = (uint8_t)counts;
    b->entries = (uint8_t)entries;
    b->last_own = (int8_t)last_own;
    b->generation = h->code_generation;
    return b;
}

static AI Block *block_at(Hart *h, uint64_t pc) {
    Block *b = &h->scratch->blocks[(pc >> 1) & (BLOCK_SLOTS - 1)];
    if (__builtin_expect(b->pc == pc && b->generation == h->code_generation, 1))
        return b;
    return block_miss(h, pc);
}

/* The interpreter's loop: at most LIMIT counted instructions from h->pc (see interpret),
 * an instruction at a time with every check between them. Returns those counted. */
static AI uint64_t run_loop(Hart *h, uint64_t limit, int exact, int eager, int timed) {
    Turn *turn = &h->core->turn;
    Loop l = {0, 0, 0, limit, turn->uncounted_start, turn->uncounted_end};
    while (careful_step(h, &l, exact, eager, timed))
        ;
    return l.ran;
}

/* The same loop a block at a time (not EXACT; the x registers all read at the start). A
 * block runs whole, its instructions one after another, when every check the careful loop
 * makes between them would let it: no breakpoint and no profile (checked once a block),
 * the turn's count and EPISODE not reached inside it, and not STAY instructions without
 * one the engine lacks before its end. The instructions of the loader's stubs
 * (sim/isa/rewrite.py: the RV64GC a Zba or Zbb instruction jumps to, the jump counting as
 * the one instruction) count as none, as in the careful loop, which also runs them when
 * the turn's count is reached (a turn that ends on the jump into a stub ends after the
 * stub): a block whose counted instructions fit in the turn runs whole, its stubs too.
 * Anything else goes to the careful loop, an instruction at a time. So the same
 * instructions run, counted the same, in the same order, and the loop stops at the same
 * pc: only the bookkeeping is once a block. */
static AI uint64_t run_blocks_as(Hart *h, uint64_t limit, int timed) {
    Core *core = h->core;
    Turn *turn = &core->turn;
    Loop l = {0, 0, 0, limit, turn->uncounted_start, turn->uncounted_end};
    for (;;) {
        /* (the careful loop takes the first instruction after a stop was asked, and the last
         * few before a limit, without making a block there) */
        int room = l.ran + BLOCK_MAX <= l.limit && l.steps + BLOCK_MAX <= EPISODE && l.cold + BLOCK_MAX < STAY;
        Block *b = room && !h->stop && turn->breakpoint_count == 0 && core->profile.on == 0 ? block_at(h, h->pc) : 0;
        if (b && l.ran + b->counts <= l.limit && l.steps + b->count <= EPISODE && l.cold + b->count < STAY) {
            const Decoded *d = b->insn, *end = b->insn + b->entries;
            uint64_t next = b->exit;
            for (; d < end; d++) {
                h->pc = d->pc;
                uint64_t a = 0, b2 = 0;
                if (timed) {
                    a = h->x[d->rs1];
                    b2 = h->x[d->rs2];
                }
                int done = run_one(h, d, &next, 1);
                h->x[0] = 0;
                if (timed && done == RAN)
                    timing_step(h, d, next, a, b2);
                if (__builtin_expect(done != RAN, 0)) { /* stopped before it, as the careful loop */
                    l.ran += b->counted[d - b->insn];
                    return l.ran;
                }
                if (__builtin_expect(h->stop, 0)) { /* stopped after it */
                    h->pc = next;
                    l.ran += b->counted[d - b->insn] + !d->stub;
                    return l.ran;
                }
            }
            h->pc = b->two_way ? next : b->exit;
            l.ran += b->counts;
            l.steps += b->count;
            l.cold = timed ? 0 : b->last_own >= 0 ? (uint64_t)(b->count - 1 - b->last_own) : l.cold + b->count;
            continue;
        }
        if (!careful_step(h, &l, 0, 1, timed))
            break;
    }
    return l.ran;
}

/* (the loop compiled twice, TIMED a constant in each: the default's has no timing in it) */
static LINE_ALIGNED uint64_t run_blocks(Hart *h, uint64_t limit) { return run_blocks_as(h, limit, 0); }
static __attribute__((noinline)) uint64_t run_blocks_timed(Hart *h, uint64_t limit) { return run_blocks_as(h, limit, 1); }

/* Go on from h->pc while the code stays hot; returns the pc to go on at, and counts what
 * ran. The first instruction was counted by the block hook with its block. EXACT: the
 * rest of a turn, outside the engine (isa_finish_turn): up to the turn's remaining count,
 * hot or not, stopping only before an instruction the interpreter does not run; it reads
 * and writes back only the registers it uses (a turn's rest is a few instructions). */
static LINE_ALIGNED uint64_t interpret(Hart *h, int exact) {
    Core *core = h->core;
    Turn *turn = &core->turn;
    uint64_t limit = EPISODE;
    if (turn->budget_on && turn->remaining < limit)
        limit = turn->remaining;
    uint64_t ran;
    if (exact) {
        ran = h->timing ? run_loop(h, limit, 1, 0, 1) : run_loop(h, limit, 1, 0, 0);
    } else {
        for (int n = 1; n < 32; n++) /* all of them, so each access is one load */
            X(h, n, 0);
        h->x_dirty = ~1u; /* (all are written back) */
        ran = h->timing ? run_blocks_timed(h, limit) : run_blocks(h, limit);
    }
    if (turn->counting)
        turn->cycles += ran;
    if (turn->budget_on) {
        turn->remaining -= ran;
        if (turn->remaining == 0 && !exact) { /* the turn is over: the engine stops at this pc */
            turn->partial = 0;
            core->engine.emu_stop(h->uc);
        }
    }
    core->isa.interpreted += ran;
    core->isa.episodes++;
    return h->pc;
}

/* A Hart for CORE's engine UC, at PC, its registers read from the engine as needed. */
static void start_hart(Hart *h, void *uc, Core *core, uint64_t pc) {
    h->core = core;
    h->uc = uc;
    h->scratch = (Scratch *)core->isa.scratch;
    h->x_have = 1; /* x0 */
    h->x[0] = 0;
    h->x_dirty = h->f_have = h->f_dirty = 0;
    h->flags = 0;
    h->frm = -1;
    h->pc = pc;
    h->engine_pc_moved = 0;
    h->engine_pc = pc ^ 1; /* (not known: the trap's callers say, isa_run_block) */
    h->stop = 0;
    h->page_generation = core->isa.page_generation;
    h->code_generation = core->isa.code_generation;
    h->timing = core->timing;
}

/* The rest of CORE's turn (hooks.h, Turn: remaining, with budget_on), from the engine's pc
 * in the block that the block hook stopped before because the turn ends inside it: run
 * here, in C, as far as the interpreter can, so that no block is translated anew for the
 * turn's last instructions. The engine is not running. Returns the instructions still
 * to run (0: the turn is over); those go to the engine (sim/hart/core.py). */
uint64_t isa_finish_turn(void *uc, Core *core) {
    Turn *turn = &core->turn;
    if (!turn->budget_on || !turn->remaining || !core->isa.interpret) /* (KMX_INTERPRET=0: the engine's, as it traps) */
        return turn->remaining;
    uint64_t pc = 0;
    core->engine.reg_read(uc, UC_REG_PC, &pc);
    if (core->profile.on) { /* (the block hook had not entered the block: a call into it is followed here, */
        profile_enter(core, pc); /* once: what runs on from here, here or in the engine, is inside it) */
        core->profile.last_kind = 0;
    }
    Hart h;
    start_hart(&h, uc, core, pc);
    uint64_t next = interpret(&h, 1);
    write_back(&h, next, pc);
    core->isa.finished_turns++;
    return turn->remaining;
}

LINE_ALIGNED void isa_trap(void *uc, uint32_t number, Core *core) {
    if (core->timing) /* (the engine block's uncached accesses so far are its own, not the trapped instruction's) */
        timing_drain(core);
    if (number == ECALL && core->timing)
        timing_call(core, 0);
    if (number == ECALL && core->calls && calls_answer(uc, core))
        return; /* (a kmx call that needs no Python: calls.c) */
    if (number != ILLEGAL) {
        core->isa.python_calls++;
        core->isa.on_trap(number);
        return;
    }
    uint64_t reported = 0;
    core->engine.reg_read(uc, UC_REG_PC, &reported);
    if (core->isa.probing) {
        core->isa.probed_pc = reported;
        core->engine.emu_stop(uc);
        return;
    }
    Hart h;
    start_hart(&h, uc, core, reported - (uint64_t)core->isa.illegal_past);
    Decoded *d = fetch(&h, h.pc);
    uint64_t next, a = 0, b = 0;
    if (h.timing && d) {
        a = X(&h, d->rs1, 0);
        b = X(&h, d->rs2, 0);
    }
    int done = d && d->op > OP_OWN ? run_one(&h, d, &next, 0) : NOT_HERE;
    if (h.timing && done == RAN)
        timing_step(&h, d, next, a, b);
    if (done == NOT_HERE) { /* an ecall's kin, a stand-in Python runs, or a fault */
        if (h.engine_pc_moved) {
            core->isa.reg_write(uc, UC_REG_PC, &reported);
        }
        core->isa.python_calls++;
        core->isa.on_trap(number);
        return;
    }
    if (done == REFUSED || done == MISALIGNED) { /* flh, fsh, lr, sc: a load's or a store's fault */
        if (h.engine_pc_moved)
            core->isa.reg_write(uc, UC_REG_PC, &reported);
        core->isa.python_calls++;
        int store = d->op == OP_FSH || d->op == OP_VSTORE || d->op == OP_SC_W || d->op == OP_SC_D;
        core->isa.on_trap(done == MISALIGNED ? (store ? 6 : 4) : store ? 7 : 5);
        return;
    }
    core->isa.traps++;
    h.pc = next;
    if (core->isa.interpret)
        next = interpret(&h, 0);
    write_back(&h, next, reported);
}

/* Timed (core->timing): the engine is about to run the block at ADDRESS of SIZE bytes
 * (turns.c). The interpreter runs from there instead, as far as it can, so that the
 * timing model sees each instruction's operands and accesses; the engine goes on where it
 * stopped (Unicorn leaves the block when a hook writes the pc). Returns the instructions
 * it ran: 0 when the block holds one it does not run (a floating-point operation of F or
 * D, a CSR, an ecall, a fence): then the engine runs the block, and timing_block times it.
 * (Each call decodes the block's instructions to see whether the interpreter runs them
 * all, through the decoded-instruction cache: a block of F or D arithmetic, which the
 * engine runs, pays that at every pass.) */
uint64_t isa_run_block(void *uc, Core *core, uint64_t address, uint32_t size) {
    Hart h;
    start_hart(&h, uc, core, address);
    h.engine_pc = address;
    for (uint64_t at = address; at < address + size;) {
        Decoded *d = fetch(&h, at);
        if (!d || d->op == OP_UNKNOWN)
            return 0;
        at += d->length;
    }
    if (core->profile.on) { /* (the block hook had not entered the block: a call into it is followed here) */
        profile_enter(core, address);
        core->profile.last_kind = 0;
    }
    uint64_t before = core->isa.interpreted;
    uint64_t next = interpret(&h, 0);
    uint64_t ran = core->isa.interpreted - before;
    if (!ran)
        return 0;
    write_back(&h, next, next ^ 1); /* (the pc too, always: so the engine leaves the block) */
    return ran;
}
