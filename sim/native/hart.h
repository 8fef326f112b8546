/* hart.h: the interpreter's hart (isa.c), shared with the vector unit (vector/): a core's
 * registers while the interrupt hook runs, its decoded instructions and page translations
 * (Scratch, kept in memory Python allocated for the core), and how an instruction reaches
 * the thread's memory (host_of, load, store: through the engine's TLB, so through
 * tlb_fill, which the cache model and the checker see). One header, so that isa.c and
 * each of the vector unit's files see the same Hart.
 */
#ifndef KOMOREBI_HART_H
#define KOMOREBI_HART_H
#include "hooks.h"

/* (What this header declares is the library's own: hidden, so that calls between its files
 * are direct, not through the dynamic linker, and nothing outside can take their names.) */
#pragma GCC visibility push(hidden)

#define CODE_CACHE 4096   /* decoded instructions, by pc (a power of 2) */
#define PAGE_CACHE 16384  /* page translations, by page number (a power of 2) */
#define BLOCK_SLOTS 256   /* the interpreter's blocks, by first pc (a power of 2; hooks.h's BLOCK_CACHE is the engine's) */
#define BLOCK_MAX 32      /* the most instructions a block holds */

typedef struct {
    uint64_t pc;
    uint32_t insn;       /* the 32-bit instruction (a compressed one expanded) */
    uint16_t op;
    uint8_t length;
    uint8_t own;         /* one the engine lacks (so the code is still hot) */
    uint8_t rd, rs1, rs2, rs3;
    uint8_t rm;
    uint8_t stub;        /* (in a block) one of the loader's stubs: it counts as none */
    uint32_t generation;
    int64_t imm;
} Decoded;

/* A block: the instructions from PC on, as they run, up to and including the first that
 * may go two ways (a branch or jalr), up to one the interpreter does not run (excluded),
 * at most BLOCK_MAX (isa.c, run_blocks). A jal goes on at its target (a call too: its
 * entry writes the link), so a jump into one of the loader's stubs, the stub and the jump
 * back are one block with the code around them; a jal that writes no register (a plain
 * jump) does nothing but that, so it has no entry of its own: it is counted, and the block
 * goes on where it goes. The interpreter runs a
 * block's entries one after another without the checks it makes between single
 * instructions, which it makes once a block instead. */
typedef struct {
    uint64_t pc;         /* its first instruction's pc */
    uint64_t exit;       /* the pc after it, unless TWO_WAY */
    uint32_t generation; /* the code_generation it was decoded in (0: empty) */
    uint8_t two_way;     /* its last entry goes two ways (a branch or jalr), and says where */
    uint8_t count;       /* the instructions it stands for, the plain jumps among them */
    uint8_t counts;      /* those that count (not a stub's) */
    uint8_t entries;     /* those in insn (not the plain jumps) */
    int8_t last_own;     /* the instruction (of COUNT) last of those the engine lacks (-1: none) */
    uint8_t counted[BLOCK_MAX]; /* before entry i: the instructions counted */
    Decoded insn[BLOCK_MAX];
} Block;

typedef struct {
    uint64_t page;       /* the page's address + 1 (0: empty) */
    uint8_t *host;
    uint32_t generation;
    uint32_t writable;
} PageEntry;

typedef struct { /* a core's vector unit (vector/) */
    uint8_t reg[32][64];  /* v0-v31, VLEN 512 */
    uint64_t vl, vtype, vstart, vxrm, vxsat;
    uint64_t ready;       /* (0: as Python allocated it, not yet reset) */
    int64_t refused;      /* the element of the last vector access the memory refused (-1: none) */
    uint64_t refused_address; /* and the address it was at */
} VectorUnit;

typedef struct {
    Decoded code[CODE_CACHE];
    Block blocks[BLOCK_SLOTS];
    PageEntry pages[PAGE_CACHE];
    VectorUnit vector;
} Scratch;

/* The hart's registers while the hook runs: read from the engine as needed, written back
 * at the end. */
typedef struct {
    Core *core;
    void *uc;
    Scratch *scratch;
    uint64_t x[32];
    uint64_t f[32];
    uint32_t x_have, x_dirty, f_have, f_dirty;
    uint32_t flags;     /* fflags raised */
    int frm;            /* the dynamic rounding mode (-1: not read yet) */
    uint64_t pc;        /* the instruction running */
    int engine_pc_moved;
    uint64_t engine_pc;  /* where the engine's pc is (host_miss moves it) */
    int stop;           /* the fill hook asked the run to stop (fill.c, maybe_grow) */
    uint32_t page_generation, code_generation;
    CachedRegion *watched;        /* the watched page host_miss last met (watch.c; 0: no region's), */
    uint8_t *watched_host;  /* (no region's: its span's memory, reserve.c, */
    uint64_t watched_delta; /* and the cached address less the address, uncached or not) */
    uint64_t watched_base;  /* its span's address, */
    int watched_uncached;   /* and whether it is the region's uncached alias */
    Timing *timing;         /* the core's timing model (timing.c; 0: off) */
} Hart;

#define WATCHED ((uint8_t *)1) /* host_of's answer for a watched page: an access at a time */

#define AI inline __attribute__((always_inline))

/* x register N. EAGER (a constant where it is called): all were read at the start (the
 * interpreter's way), so each access is one load; else each is read when first used
 * (a single instruction's way). */
static AI uint64_t X(Hart *h, int n, int eager) {
    if (!eager && !(h->x_have >> n & 1)) {
        h->core->engine.reg_read(h->uc, UC_REG_X0 + n, &h->x[n]);
        h->x_have |= 1u << n;
    }
    return h->x[n];
}

static AI void set_x(Hart *h, int n, uint64_t value, int eager) {
    if (eager) { /* (x0 is made 0 again after each instruction) */
        h->x[n] = value;
        return;
    }
    if (n == 0)
        return;
    h->x[n] = value;
    h->x_have |= 1u << n;
    h->x_dirty |= 1u << n;
}

static inline uint64_t F(Hart *h, int n) {
    if (!(h->f_have >> n & 1)) {
        h->core->engine.reg_read(h->uc, UC_REG_F0 + n, &h->f[n]);
        h->f_have |= 1u << n;
    }
    return h->f[n];
}

static inline void set_f(Hart *h, int n, uint64_t value) {
    h->f[n] = value;
    h->f_have |= 1u << n;
    h->f_dirty |= 1u << n;
}

/* A half in f register N, NaN-boxed as the F extension asks: a value whose upper 48
 * bits are not all ones is the canonical NaN. */
static inline uint16_t H(Hart *h, int n) {
    uint64_t v = F(h, n);
    return (v >> 16) == 0xFFFFFFFFFFFFull ? (uint16_t)v : HALF_NAN;
}

static inline void set_h(Hart *h, int n, uint16_t value) { set_f(h, n, 0xFFFFFFFFFFFF0000ull | value); }

/* A single in f register N, NaN-boxed as the F extension asks: a value whose upper 32
 * bits are not all ones is the canonical NaN (as the engine reads them: sim/build/engine.py). */
static inline uint32_t S(Hart *h, int n) {
    uint64_t v = F(h, n);
    return (v >> 32) == 0xFFFFFFFFull ? (uint32_t)v : 0x7FC00000u;
}

static inline void set_s(Hart *h, int n, uint32_t value) { set_f(h, n, 0xFFFFFFFF00000000ull | value); }

/* The rounding mode of an instruction's rm field; -1 when it is reserved (the instruction
 * is illegal). */
static inline int rounding(Hart *h, int rm) {
    if (rm == RM_DYN) {
        if (h->frm < 0) {
            uint64_t frm = 0;
            h->core->engine.reg_read(h->uc, UC_REG_FRM, &frm);
            h->frm = (int)(frm & 7);
        }
        rm = h->frm;
    }
    return rm <= RM_RMM ? rm : -1;
}

/* What running an instruction came to: done, not one the interpreter runs (or illegal),
 * an access the memory refused (core->refused says which), or a misaligned lr or sc. */
enum { RAN, NOT_HERE, REFUSED, MISALIGNED };

static inline uint32_t bits(uint32_t insn, int hi, int lo) { return (insn >> lo) & ((1u << (hi - lo + 1)) - 1); }
static inline int64_t sext(uint64_t value, int bits) { return (int64_t)(value << (64 - bits)) >> (64 - bits); }

/* -- decoding (decode.c, from the table of the scalar instructions, scalar.def) ------------ */

/* The interpreter's operations (isa.c, run_one), which scalar.def's rows name: those the
 * engine runs too, then (past OP_OWN) those it lacks. */
enum {
    OP_UNKNOWN = 0,
    /* RV64I */
    OP_LUI, OP_AUIPC, OP_JAL, OP_JALR, OP_BEQ, OP_BNE, OP_BLT, OP_BGE, OP_BLTU, OP_BGEU,
    OP_LB, OP_LH, OP_LW, OP_LD, OP_LBU, OP_LHU, OP_LWU, OP_SB, OP_SH, OP_SW, OP_SD,
    OP_ADDI, OP_SLTI, OP_SLTIU, OP_XORI, OP_ORI, OP_ANDI, OP_SLLI, OP_SRLI, OP_SRAI,
    OP_ADD, OP_SUB, OP_SLL, OP_SLT, OP_SLTU, OP_XOR, OP_SRL, OP_SRA, OP_OR, OP_AND,
    OP_ADDIW, OP_SLLIW, OP_SRLIW, OP_SRAIW, OP_ADDW, OP_SUBW, OP_SLLW, OP_SRLW, OP_SRAW,
    /* M */
    OP_MUL, OP_MULH, OP_MULHSU, OP_MULHU, OP_DIV, OP_DIVU, OP_REM, OP_REMU,
    OP_MULW, OP_DIVW, OP_DIVUW, OP_REMW, OP_REMUW,
    /* F and D memory */
    OP_FLW, OP_FLD, OP_FSW, OP_FSD,
    /* A: the AMOs */
    OP_AMO_W, OP_AMO_D,
    OP_OWN, /* the ones below: the engine lacks them */
    /* lr and sc: the loader's stand-ins for them (sim/isa/stand_in.py; reserve.c) */
    OP_LR_W, OP_LR_D, OP_SC_W, OP_SC_D,
    /* Zba */
    OP_SH1ADD, OP_SH2ADD, OP_SH3ADD, OP_ADD_UW, OP_SH1ADD_UW, OP_SH2ADD_UW, OP_SH3ADD_UW, OP_SLLI_UW,
    /* Zbb */
    OP_ANDN, OP_ORN, OP_XNOR, OP_CLZ, OP_CLZW, OP_CTZ, OP_CTZW, OP_CPOP, OP_CPOPW,
    OP_MAX, OP_MAXU, OP_MIN, OP_MINU, OP_SEXT_B, OP_SEXT_H, OP_ZEXT_H,
    OP_ROL, OP_ROLW, OP_ROR, OP_RORI, OP_RORIW, OP_RORW, OP_ORC_B, OP_REV8,
    /* Zfh */
    OP_FLH, OP_FSH, OP_FADD_H, OP_FSUB_H, OP_FMUL_H, OP_FDIV_H, OP_FSQRT_H,
    OP_FSGNJ_H, OP_FSGNJN_H, OP_FSGNJX_H, OP_FMIN_H, OP_FMAX_H, OP_FEQ_H, OP_FLT_H, OP_FLE_H,
    OP_FCLASS_H, OP_FMV_X_H, OP_FMV_H_X,
    OP_FCVT_W_H, OP_FCVT_WU_H, OP_FCVT_L_H, OP_FCVT_LU_H,
    OP_FCVT_H_W, OP_FCVT_H_WU, OP_FCVT_H_L, OP_FCVT_H_LU,
    OP_FCVT_S_H, OP_FCVT_H_S, OP_FCVT_D_H, OP_FCVT_H_D,
    OP_FMADD_H, OP_FMSUB_H, OP_FNMSUB_H, OP_FNMADD_H,
    /* V (vector/) */
    OP_VECTOR, OP_VLOAD, OP_VSTORE, OP_VCSR,
};

/* INSN (32 bits) decoded into D, LENGTH bytes long (2: a compressed one's expansion). */
void decode(Decoded *d, uint32_t insn, int length);
/* The compressed instruction C as the 32-bit one it stands for (0: none the X280 has). */
uint32_t expand(uint16_t c);
/* The memory an instruction accesses (decode.c, from scalar.def's ACCESS; hooks.h's ACCESS_*) */
int memory_access(uint32_t insn, const uint64_t x[32], uint64_t *address, int *kind);

/* -- memory (isa.c) ----------------------------------------------------------------------- */

uint8_t *host_miss(Hart *h, uint64_t address, int write);
int watched_load(Hart *h, uint64_t address, int size, uint64_t *value);
int watched_store(Hart *h, uint64_t address, int size, uint64_t value);
int load_split(Hart *h, uint64_t address, int size, uint64_t *value);
int store_split(Hart *h, uint64_t address, int size, uint64_t value);

static inline __attribute__((always_inline)) uint8_t *host_of(Hart *h, uint64_t address, int write) {
    uint64_t page = address & ~(uint64_t)(PAGE - 1);
    PageEntry *e = &h->scratch->pages[(address / PAGE) & (PAGE_CACHE - 1)];
    if (__builtin_expect(e->page == page + 1 && e->generation == h->page_generation &&
                         (!write || e->writable), 1))
        return e->host + (address - page);
    return host_miss(h, address, write);
}

/* Load or store SIZE bytes (1, 2, 4, 8: a constant where it is called, so each is one
 * host load or store) at ADDRESS: 0 when the memory refuses. */
#define ACCESS(T, size)                                                                      \
    static inline __attribute__((always_inline)) int load##size(Hart *h, uint64_t address, uint64_t *value) { \
        if (__builtin_expect((address & (PAGE - 1)) + size > PAGE, 0))                       \
            return load_split(h, address, size, value);                                      \
        uint8_t *p = host_of(h, address, 0);                                                 \
        if (!p)                                                                              \
            return 0;                                                                        \
        if (p == WATCHED)                                                                    \
            return watched_load(h, address, size, value);                                    \
        T v;                                                                                 \
        __builtin_memcpy(&v, p, size);                                                       \
        *value = v;                                                                          \
        return 1;                                                                            \
    }                                                                                        \
    static inline __attribute__((always_inline)) int store##size(Hart *h, uint64_t address, uint64_t value) { \
        if (__builtin_expect((address & (PAGE - 1)) + size > PAGE, 0))                       \
            return store_split(h, address, size, value);                                     \
        uint8_t *p = host_of(h, address, 1);                                                 \
        if (!p)                                                                              \
            return 0;                                                                        \
        if (p == WATCHED)                                                                    \
            return watched_store(h, address, size, value);                                   \
        T v = (T)value;                                                                      \
        __builtin_memcpy(p, &v, size);                                                       \
        return 1;                                                                            \
    }
ACCESS(uint8_t, 1)
ACCESS(uint16_t, 2)
ACCESS(uint32_t, 4)
ACCESS(uint64_t, 8)
#define load(h, a, size, v) load##size(h, a, v)
#define store(h, a, size, v) store##size(h, a, v)

/* -- the vector unit (vector/) -------------------------------------------------------------- */

int vector_run(Hart *h, const Decoded *d); /* an OP-V instruction, a vector load or store, a vector CSR */

/* -- the timing model (timing.c) ------------------------------------------------------------ */

void timing_step(Hart *h, const Decoded *d, uint64_t next, uint64_t a, uint64_t b);
int is_vector_csr(uint32_t csr);

#pragma GCC visibility pop
#endif
