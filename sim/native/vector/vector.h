/* vector.h: the X280's vector unit, RVV 1.0 with VLEN 512 and ELEN 64, run in C: what its
 * files share. The unit runs inside isa.c's interpreter, on its Hart (hart.h); each core's
 * unit lives in its Scratch (VectorUnit).
 *
 *   ops.def     the OP-V arithmetic, one row an operation: its funct6, name, forms and
 *               body (the table unit.c dispatches by, and Python names instructions by)
 *   unit.c      vsetvli, vsetivli, vsetvl, the vector CSRs, and the dispatch: an OP-V
 *               instruction's row, its operands (Op), then the row's function
 *   memory.c    every load and store: unit-stride (a page at a time), strided, indexed,
 *               fault-only-first, segments, whole registers and masks
 *   integer.c   the integer arithmetic, comparisons, multiplications and divisions,
 *               multiply-adds, reductions, widening arithmetic, add-with-carry, merges
 *               and the integer extensions
 *   fixed.c     the fixed point (saturating, averaging, vsmul, the scaling shifts, vnclip)
 *               and the narrowing shifts, with vxrm's rounding and vxsat
 *   float.c     the floating point: binary16 (Zvfh), binary32 and binary64 by SEW,
 *               through softfloat.c; sums and products (and binary32 multiply-adds)
 *               under RNE through the host where provably the same (hostfloat.h)
 *   mask.c      the mask logic, vcpop, vfirst, vmsbf/vmsif/vmsof, viota and vid
 *   permute.c   the slides, vrgather, vrgatherei16, vcompress, vmv<nr>r and the moves
 *               between an element and a scalar register
 *
 * Every function checks the encoding as RVV 1.0 does before it changes anything, and
 * returns NOT_HERE for a reserved one (by its overlap, EMUL, alignment, v0 and vstart
 * rules), as for an instruction not simulated: Python reports it. Policies: tail and
 * masked-off elements are left undisturbed, also where the spec allows agnostic ones
 * (which must then be deterministic: undisturbed is, and it is what QEMU does by default).
 * Element accesses go through host_of (hart.h), so through the engine's TLB and the fill
 * hook: the cache model and the checker see every one, at the instruction's pc.
 */
#ifndef KOMOREBI_VECTOR_H
#define KOMOREBI_VECTOR_H
#include "../hart.h"

#pragma GCC visibility push(hidden) /* (the library's own, as hart.h's) */

#define VLEN 512
#define VLENB (VLEN / 8)
#define VILL (1ull << 63)

enum { OPIVV = 0, OPFVV = 1, OPMVV = 2, OPIVI = 3, OPIVX = 4, OPFVF = 5, OPMVX = 6, OPCFG = 7 };

/* An OP-V instruction's operands, as unit.c decoded them for the row's function. */
typedef struct {
    Hart *h;
    VectorUnit *v;
    int funct3, funct6, vm, vd, vs2, vs1;
    int vv;          /* the second operand is vs1's group (.vv, .vs, .mm), not a scalar */
    int sew, bytes, lmul; /* SEW in bits and bytes, LMUL in eighths */
    uint64_t x;      /* .vx: x[rs1]; .vi: the immediate, sign-extended unless the row's is unsigned */
    uint64_t scalar; /* x cut to SEW bits */
    int rm;          /* OPF: the rounding mode (RNE for an EXACT row while frm is reserved) */
} Op;

typedef int (*Handler)(Op *o);

/* Every row's function (ops.def): op_<name> for the rows whose body is the table's, the
 * named one for the others. */
#define INT(f6, name, forms, body) int op_##name(Op *o);
#define FIXED(f6, name, forms, body) int op_##name(Op *o);
#define INT_CMP(f6, name, forms, body) int op_##name(Op *o);
#define NARROW(f6, name, forms, body) int op_##name(Op *o);
#define INT_OTHER(f6, name, forms, run) int run(Op *o);
#define MUL(f6, name, forms, body) int op_##name(Op *o);
#define MUL_FIXED(f6, name, forms, body) int op_##name(Op *o);
#define MUL_REDUCE(f6, name, forms, body) int op_##name(Op *o);
#define MUL_MASK(f6, name, forms, body) int vector_mask_logic(Op *o);
#define MUL_WIDEN(f6, name, forms, wide_vs2, body) int vector_widening(Op *o);
#define MUL_OTHER(f6, name, forms, run) int run(Op *o);
#define MUL_UNARY(f6, vs1, name, run) int run(Op *o);
#define FLOAT(f6, name, forms, exact, soft, host) int vector_float_arith(Op *o);
#define FLOAT_CMP(f6, name, forms, body) int vector_float_compare(Op *o);
#define FLOAT_REDUCE(f6, name, forms, exact) int vector_float_reduce(Op *o);
#define FLOAT_WIDEN(f6, name, forms, wide_vs2, single) int vector_float_widen(Op *o);
#define FLOAT_OTHER(f6, name, forms, exact, run) int run(Op *o);
#define FLOAT_UNARY(f6, vs1, name, exact, run) int run(Op *o);
#define SF_FLOAT(f6, name, forms, exact, run) int run(Op *o);
#include "rows.h"

/* The core's unit, reset (vtype illegal, vl 0) before its first vector instruction. */
static inline VectorUnit *unit(Hart *h) {
    VectorUnit *v = &h->scratch->vector;
    if (!v->ready) {
        v->vtype = VILL;
        v->vl = 0;
        v->refused = -1;
        v->ready = 1;
    }
    return v;
}
/* permute.c: a slide by one with X in the place left free (vector_slide1's, the float one's) */
int slide_one(Op *o, uint64_t x, int mask_rule);
/* memory.c: a vector load (STORE 0) or store */
int vector_memory(Hart *h, const Decoded *d, int store);

/* -- vtype -------------------------------------------------------------------------------- */

static inline int sew_bits(uint64_t vtype) { return 8 << ((vtype >> 3) & 7); }

/* X / SEW for X >= 0, as a shift (SEW is a power of 2; a division would cost more than the
 * rest of a short instruction). */
static inline int over_sew(int x, uint64_t vtype) { return x >> (3 + ((vtype >> 3) & 7)); }

/* LMUL in eighths (1/8 is 1, 8 is 64); 0 for the reserved encoding. */
static inline int lmul_eighths(uint64_t vtype) {
    int m = (int)(vtype & 7);
    return m < 4 ? 8 << m : m == 4 ? 0 : 8 >> (8 - m);
}

/* VLMAX = LMUL * VLEN / SEW. (Every factor is a power of 2: shifts, not a division, which
 * would be most of a short instruction's time.) */
static inline uint64_t vlmax(uint64_t vtype) {
    return ((uint64_t)lmul_eighths(vtype) * (VLEN / 8)) >> ((vtype >> 3) & 7) >> 3;
}

/* -- elements ------------------------------------------------------------------------------- */

/* Element I (of WIDTH bytes) of the register group starting at BASE. (A switch of fixed
 * sizes: each is one load or store, where a memcpy of WIDTH bytes would be a call.) */
static inline uint64_t element(VectorUnit *v, int base, uint64_t i, int width) {
    const uint8_t *p = &v->reg[0][0] + (uint64_t)base * VLENB + i * (uint64_t)width;
    switch (width) {
    case 1: return *p;
    case 2: { uint16_t x; __builtin_memcpy(&x, p, 2); return x; }
    case 4: { uint32_t x; __builtin_memcpy(&x, p, 4); return x; }
    default: { uint64_t x; __builtin_memcpy(&x, p, 8); return x; }
    }
}

static inline void set_element(VectorUnit *v, int base, uint64_t i, int width, uint64_t x) {
    uint8_t *p = &v->reg[0][0] + (uint64_t)base * VLENB + i * (uint64_t)width;
    switch (width) {
    case 1: *p = (uint8_t)x; break;
    case 2: { uint16_t y = (uint16_t)x; __builtin_memcpy(p, &y, 2); break; }
    case 4: { uint32_t y = (uint32_t)x; __builtin_memcpy(p, &y, 4); break; }
    default: __builtin_memcpy(p, &x, 8); break;
    }
}

static inline int mask_bit(VectorUnit *v, int reg, uint64_t i) { return (v->reg[reg][i >> 3] >> (i & 7)) & 1; }

static inline void set_mask_bit(VectorUnit *v, int reg, uint64_t i, int bit) {
    uint8_t *byte = &v->reg[reg][i >> 3];
    *byte = (uint8_t)((*byte & ~(1u << (i & 7))) | ((unsigned)bit << (i & 7)));
}

static inline int active(VectorUnit *v, int vm, uint64_t i) { return vm || mask_bit(v, 0, i); }

static inline int64_t sext_bits(uint64_t x, int bits) {
    return bits >= 64 ? (int64_t)x : (int64_t)(x << (64 - bits)) >> (64 - bits);
}

static inline uint64_t width_mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

/* -- register groups and the spec's overlap rules (RVV 1.0, 5.2 and 5.3) -------------------- */

/* The registers a group of EMUL (in eighths) takes: 1 for a fractional one. */
static inline int regs_of(int emul_eighths) { return emul_eighths <= 8 ? 1 : emul_eighths / 8; }

/* The registers of a group of EMUL (in eighths) at BASE: 0 when EMUL is below 1/8 or past 8,
 * BASE is not aligned to it or the group runs past v31 (reserved encodings). */
static inline int group_regs(int base, int emul_eighths) {
    int regs = regs_of(emul_eighths); /* (1, 2, 4 or 8 for every EMUL an encoding makes: a mask, not %) */
    if (emul_eighths < 1 || emul_eighths > 64 || ((regs & (regs - 1)) ? base % regs : base & (regs - 1)) ||
        base + regs > 32)
        return 0;
    return regs;
}

static inline int groups_overlap(int a, int a_regs, int b, int b_regs) { return a < b + b_regs && b < a + a_regs; }

/* A destination group (VD, DEST_REGS registers) of a wider EEW than its source's (VS, of
 * EMUL SOURCE_EMUL eighths) may overlap it only when the source's EMUL is at least 1 and the
 * overlap is in the destination's highest-numbered part (5.2). */
static inline int wider_dest_ok(int vd, int dest_regs, int vs, int source_emul) {
    int source_regs = regs_of(source_emul);
    return !groups_overlap(vd, dest_regs, vs, source_regs) || (source_emul >= 8 && vs == vd + dest_regs - source_regs);
}

/* A destination of a narrower EEW than its source's (a mask's is 1) may overlap it only in
 * the source's lowest-numbered part (5.2). */
static inline int narrower_dest_ok(int vd, int dest_regs, int vs, int source_regs) {
    return !groups_overlap(vd, dest_regs, vs, source_regs) || vd == vs;
}

/* Masked (VM 0), v0 is the mask: a group of data elements (a destination, or a source read
 * at another EEW than the mask's 1) that starts at v0 is a reserved encoding. (Groups are
 * aligned: one includes v0 only when it starts there.) */
static inline int clashes_with_mask(int vm, int group) { return !vm && group == 0; }

/* The checks of a single-width operation's groups: vd, vs2 and (.vv) vs1 of LMUL, none of
 * them v0 when masked. */
static inline int single_width_ok(const Op *o) {
    return group_regs(o->vd, o->lmul) && group_regs(o->vs2, o->lmul) && (!o->vv || group_regs(o->vs1, o->lmul)) &&
           !clashes_with_mask(o->vm, o->vd) && !clashes_with_mask(o->vm, o->vs2) &&
           !(o->vv && clashes_with_mask(o->vm, o->vs1));
}

/* -- the typed loops of the table's bodies ------------------------------------------------------ */

/* Element types that may alias the register file's bytes. */
typedef uint16_t __attribute__((may_alias)) lane16_t;
typedef uint32_t __attribute__((may_alias)) lane32_t;
typedef uint64_t __attribute__((may_alias)) lane64_t;

/* LOOP(SEW, T, ST, BODY) for the SEW of O: T its element type, ST the signed one. */
#define BY_SEW(o, LOOP, BODY)                                                                \
    switch ((o)->sew) {                                                                      \
    case 8: LOOP(8, uint8_t, int8_t, BODY); break;                                           \
    case 16: LOOP(16, lane16_t, int16_t, BODY); break;                                       \
    case 32: LOOP(32, lane32_t, int32_t, BODY); break;                                       \
    default: LOOP(64, lane64_t, int64_t, BODY); break;                                       \
    }

/* The names a body uses (ops.def), inside a typed loop. */
#define SA sa_
#define SB sb_
#define SX sx_
#define SACC sacc_
#define SH (b & (uint64_t)(SEW - 1))
#define ONES ((uint64_t)(T_)~(T_)0)
#define SMIN ((int64_t)(ST_)((uint64_t)1 << (SEW - 1)))

#define TYPES(SEW_, T, ST)                                                                   \
    enum { SEW = SEW_ };                                                                     \
    typedef T T_;                                                                            \
    typedef ST ST_;

/* op_NAME: vd[i] = BODY for each active element of [vstart, vl): the unmasked .vv and
 * .vx loops the compiler can vectorise, and a masked one. */
#define ELEMENTWISE_FUNCTION(name, BODY)                                                     \
    int op_##name(Op *o) {                                                                   \
        if (!single_width_ok(o))                                                             \
            return NOT_HERE;                                                                 \
        VectorUnit *v = o->v;                                                                \
        BY_SEW(o, ELEMENTWISE_LOOP, BODY)                                                    \
        v->vstart = 0;                                                                       \
        return RAN;                                                                          \
    }

#define ELEMENTWISE_BODY(T, ST, B, BODY, OUT)                                                \
    {                                                                                        \
        uint64_t a = s2_[i_], b = (B), c = dst_[i_];                                         \
        int64_t sa_ = (ST)a, sb_ = (ST)b;                                                    \
        (void)c; (void)sa_; (void)sb_;                                                       \
        OUT = (T)(BODY);                                                                     \
    }

/* Unmasked, 64 bytes of elements at a time (one host vector register's worth): each
 * chunk's elements are all read, then all written. The same as an element at a time,
 * since a single-width operation's groups are the same or apart (aligned to LMUL), and the
 * compiler makes each chunk a few vector instructions with no check of whether vd's group
 * overlaps a source's; a loop written straight into vd would check at run time, and took
 * the element-at-a-time way whenever the operation writes a group it reads, as
 * vand.vx v10, v10, a4 does. */
#define ELEMENTWISE_CHUNKS(T, ST, B, BODY)                                                   \
    for (; i_ + 64 / sizeof(T) <= n_; i_ += 64 / sizeof(T)) {                                \
        T chunk_[64 / sizeof(T)];                                                            \
        const uint64_t at_ = i_;                                                             \
        for (unsigned k_ = 0; k_ < 64 / sizeof(T); k_++) {                                   \
            uint64_t i_ = at_ + k_;                                                          \
            ELEMENTWISE_BODY(T, ST, B, BODY, chunk_[k_])                                     \
        }                                                                                    \
        for (unsigned k_ = 0; k_ < 64 / sizeof(T); k_++)                                     \
            dst_[at_ + k_] = chunk_[k_];                                                     \
    }                                                                                        \
    for (; i_ < n_; i_++) ELEMENTWISE_BODY(T, ST, B, BODY, dst_[i_])

#define ELEMENTWISE_LOOP(SEW_, T, ST, BODY)                                                  \
    do {                                                                                     \
        TYPES(SEW_, T, ST)                                                                   \
        T *dst_ = (T *)v->reg[o->vd];                                                        \
        const T *s2_ = (const T *)v->reg[o->vs2], *s1_ = (const T *)v->reg[o->vs1];         \
        const uint64_t scalar_ = o->scalar, n_ = v->vl;                                      \
        uint64_t i_ = v->vstart;                                                             \
        if (o->vm && o->vv) {                                                                \
            ELEMENTWISE_CHUNKS(T, ST, s1_[i_], BODY);                                        \
        } else if (o->vm) {                                                                  \
            ELEMENTWISE_CHUNKS(T, ST, scalar_, BODY);                                        \
        } else {                                                                             \
            for (; i_ < n_; i_++)                                                            \
                if (mask_bit(v, 0, i_)) ELEMENTWISE_BODY(T, ST, o->vv ? s1_[i_] : scalar_, BODY, dst_[i_]) \
        }                                                                                    \
    } while (0)

#pragma GCC visibility pop
#endif
