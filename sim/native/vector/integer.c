/* integer.c: the vector unit's integer arithmetic (RVV 1.0, chapter 11): ops.def's INT,
 * INT_CMP, MUL, MUL_REDUCE and MUL_WIDEN rows, each expanded from its body into typed
 * loops, and the ones with functions of their own: add-with-carry, vmerge and vmv.v, the
 * integer extensions and the widening reductions. */
#include "vector.h"

/* The high SEW bits of the 2*SEW-bit product of A and B, each signed or not. */
static uint64_t mul_high(uint64_t a, uint64_t b, int sew, int signed_a, int signed_b) {
    if (!signed_a && !signed_b)
        return (uint64_t)(((unsigned __int128)a * b) >> sew) & width_mask(sew);
    __int128 x = signed_a ? (__int128)sext_bits(a, sew) : (__int128)a; /* (|x * y| < 2^127) */
    __int128 y = signed_b ? (__int128)sext_bits(b, sew) : (__int128)b;
    return (uint64_t)((x * y) >> sew) & width_mask(sew);
}

/* -- single width: vd[i] = body ------------------------------------------------------------ */

#define INT(f6, name, forms, body) ELEMENTWISE_FUNCTION(name, body)
#define MUL(f6, name, forms, body) ELEMENTWISE_FUNCTION(name, body)
#include "rows.h"

/* -- comparisons: the mask bit vd[i] = body --------------------------------------------------- */

/* (Each element is read before its mask bit is written: vd may be vs2's or vs1's lowest
 * register, whose bytes the bits overwrite, but only those of elements already read.) */
#define COMPARE_LOOP(SEW_, T, ST, BODY)                                                      \
    do {                                                                                     \
        TYPES(SEW_, T, ST)                                                                   \
        const T *s2_ = (const T *)v->reg[o->vs2], *s1_ = (const T *)v->reg[o->vs1];         \
        for (uint64_t i_ = v->vstart; i_ < v->vl; i_++) {                                    \
            if (!active(v, o->vm, i_))                                                       \
                continue;                                                                    \
            uint64_t a = s2_[i_], b = o->vv ? s1_[i_] : o->scalar;                           \
            int64_t sa_ = (ST)a, sb_ = (ST)b;                                                \
            (void)sa_; (void)sb_;                                                            \
            set_mask_bit(v, o->vd, i_, (BODY) ? 1 : 0);                                      \
        }                                                                                    \
    } while (0)

static int compare_ok(const Op *o) {
    int regs = regs_of(o->lmul);
    return group_regs(o->vs2, o->lmul) && (!o->vv || group_regs(o->vs1, o->lmul)) &&
           !clashes_with_mask(o->vm, o->vs2) && !(o->vv && clashes_with_mask(o->vm, o->vs1)) &&
           narrower_dest_ok(o->vd, 1, o->vs2, regs) && (!o->vv || narrower_dest_ok(o->vd, 1, o->vs1, regs));
}

#define INT_CMP(f6, name, forms, body)                                                       \
    int op_##name(Op *o) {                                                                   \
        if (!compare_ok(o))                                                                  \
            return NOT_HERE;                                                                 \
        VectorUnit *v = o->v;                                                                \
        BY_SEW(o, COMPARE_LOOP, body)                                                        \
        v->vstart = 0;                                                                       \
        return RAN;                                                                          \
    }
#include "rows.h"

/* -- reductions: vd[0] = vs1[0] folded with the active vs2[i] -------------------------------- */

#define REDUCE_LOOP(SEW_, T, ST, BODY)                                                       \
    do {                                                                                     \
        TYPES(SEW_, T, ST)                                                                   \
        const T *s2_ = (const T *)v->reg[o->vs2];                                            \
        uint64_t acc = ((const T *)v->reg[o->vs1])[0];                                       \
        for (uint64_t i_ = 0; i_ < v->vl; i_++) {                                            \
            if (!active(v, o->vm, i_))                                                       \
                continue;                                                                    \
            uint64_t x = s2_[i_];                                                            \
            int64_t sx_ = (ST)x, sacc_ = (ST)acc;                                            \
            (void)sx_; (void)sacc_;                                                          \
            acc = (T)(BODY);                                                                 \
        }                                                                                    \
        ((T *)v->reg[o->vd])[0] = (T)acc;                                                    \
    } while (0)

#define MUL_REDUCE(f6, name, forms, body)                                                    \
    int op_##name(Op *o) {                                                                   \
        VectorUnit *v = o->v;                                                                \
        if (!group_regs(o->vs2, o->lmul) || v->vstart || clashes_with_mask(o->vm, o->vs2) || \
            clashes_with_mask(o->vm, o->vs1))                                                \
            return NOT_HERE;                                                                 \
        if (v->vl == 0)                                                                      \
            return RAN;                                                                      \
        BY_SEW(o, REDUCE_LOOP, body)                                                         \
        return RAN;                                                                          \
    }
#include "rows.h"

/* -- widening: vd[i] of 2*SEW bits ------------------------------------------------------------ */

/* The row's body of funct6 on the extended operands; a is vs2's element (2*SEW bits for
 * the .w forms), b vs1's or x, sa and sb them sign-extended mod 2^64, c vd's old element. */
static uint64_t widening_op(int funct6, uint64_t a, uint64_t b, uint64_t sa, uint64_t sb, uint64_t c) {
    switch (funct6) {
#define MUL_WIDEN(f6, name, forms, wide_vs2, body) case f6: return body;
#include "rows.h"
    }
    return 0;
}

static int wide_vs2_of(int funct6) {
    switch (funct6) {
#define MUL_WIDEN(f6, name, forms, wide_vs2, body) case f6: return wide_vs2;
#include "rows.h"
    }
    return 0;
}

/* vwaddu ... vwmaccsu (OPMVV and OPMVX funct6 0x30-0x3F): results of 2*SEW bits in a
 * group of 2*LMUL. */
int vector_widening(Op *o) {
    VectorUnit *v = o->v;
    int sew = o->sew, bytes = o->bytes, lmul = o->lmul, vv = o->vv, vm = o->vm, vd = o->vd, vs2 = o->vs2, vs1 = o->vs1;
    int wide_vs2 = wide_vs2_of(o->funct6), muladd = o->funct6 >= 0x3C, narrow_regs = regs_of(lmul);
    if (sew > 32 || lmul > 32) /* (2*SEW <= ELEN, 2*LMUL <= 8) */
        return NOT_HERE;
    int dest_regs = group_regs(vd, 2 * lmul);
    if (!dest_regs || !group_regs(vs2, wide_vs2 ? 2 * lmul : lmul) || (vv && !group_regs(vs1, lmul)))
        return NOT_HERE;
    if (clashes_with_mask(vm, vd) || clashes_with_mask(vm, vs2) || (vv && clashes_with_mask(vm, vs1)))
        return NOT_HERE;
    if ((!wide_vs2 && !wider_dest_ok(vd, dest_regs, vs2, lmul)) || (vv && !wider_dest_ok(vd, dest_regs, vs1, lmul)))
        return NOT_HERE;
    /* (one EEW a source: a wide vs2 apart from vs1; vd, which the multiply-adds read, apart
     * from vs2 and vs1) */
    if (wide_vs2 && vv && groups_overlap(vs2, dest_regs, vs1, narrow_regs))
        return NOT_HERE;
    if (muladd &&
        (groups_overlap(vd, dest_regs, vs2, narrow_regs) || (vv && groups_overlap(vd, dest_regs, vs1, narrow_regs))))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t a = element(v, vs2, i, wide_vs2 ? 2 * bytes : bytes);
        uint64_t b = vv ? element(v, vs1, i, bytes) : o->x & width_mask(sew);
        uint64_t sa = (uint64_t)sext_bits(a, sew), sb = (uint64_t)sext_bits(b, sew), c = element(v, vd, i, 2 * bytes);
        set_element(v, vd, i, 2 * bytes, widening_op(o->funct6, a, b, sa, sb, c) & width_mask(2 * sew));
    }
    v->vstart = 0;
    return RAN;
}

/* vwredsumu, vwredsum (OPIVV funct6 0x30, 0x31): vd[0] = vs1[0] + the active vs2[i]
 * extended, in 2*SEW bits. */
int vector_widening_reduction(Op *o) {
    VectorUnit *v = o->v;
    int sew = o->sew, bytes = o->bytes, vm = o->vm, vs2 = o->vs2, vs1 = o->vs1, regs = group_regs(vs2, o->lmul);
    if (sew > 32 || !regs || v->vstart || clashes_with_mask(vm, vs2) || clashes_with_mask(vm, vs1) ||
        groups_overlap(vs1, 1, vs2, regs)) /* (vs1 is read at 2*SEW, vs2 at SEW) */
        return NOT_HERE;
    if (v->vl == 0)
        return RAN;
    uint64_t acc = element(v, vs1, 0, 2 * bytes);
    for (uint64_t i = 0; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t x = element(v, vs2, i, bytes);
        acc += o->funct6 == 0x31 ? (uint64_t)sext_bits(x, sew) : x;
    }
    set_element(v, o->vd, 0, 2 * bytes, acc & width_mask(2 * sew));
    return RAN;
}

/* -- the rest -------------------------------------------------------------------------------- */

/* vadc, vmadc, vsbc, vmsbc (OPIV* funct6 0x10-0x13): with v0's bit the carry or borrow in
 * when VM is 0 (vadc and vsbc must have it); vmadc and vmsbc write the carry or borrow out
 * as a mask. */
int vector_carry(Op *o) {
    VectorUnit *v = o->v;
    int sew = o->sew, bytes = o->bytes, lmul = o->lmul, vv = o->vv, vm = o->vm, vd = o->vd, vs2 = o->vs2, vs1 = o->vs1;
    int to_mask = o->funct6 & 1, subtract = o->funct6 >= 0x12, regs = regs_of(lmul);
    uint64_t m = width_mask(sew);
    if (!to_mask && (vm || vd == 0))
        return NOT_HERE;
    if (!group_regs(vs2, lmul) || (vv && !group_regs(vs1, lmul)) || (!to_mask && !group_regs(vd, lmul)))
        return NOT_HERE;
    if (clashes_with_mask(vm, vs2) || (vv && clashes_with_mask(vm, vs1)))
        return NOT_HERE;
    if (to_mask && (!narrower_dest_ok(vd, 1, vs2, regs) || (vv && !narrower_dest_ok(vd, 1, vs1, regs))))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        uint64_t a = element(v, vs2, i, bytes), b = vv ? element(v, vs1, i, bytes) : o->scalar;
        unsigned __int128 c = vm ? 0 : (unsigned)mask_bit(v, 0, i);
        unsigned __int128 wide = subtract ? (unsigned __int128)a - b - c : (unsigned __int128)a + b + c;
        if (to_mask) /* (the carry out is bit SEW; a borrow makes the 128-bit difference negative) */
            set_mask_bit(v, vd, i, subtract ? (int)(wide >> 127) : (int)(wide >> sew) & 1);
        else
            set_element(v, vd, i, bytes, (uint64_t)wide & m);
    }
    v->vstart = 0;
    return RAN;
}

/* vmerge (VM 0: vd[i] = v0's bit ? b : vs2[i]) and vmv.v (VM 1, vs2 0: vd[i] = b), every
 * element of the body. */
int vector_merge(Op *o) {
    VectorUnit *v = o->v;
    int bytes = o->bytes, vm = o->vm, vv = o->vv;
    if (!group_regs(o->vd, o->lmul) || !group_regs(o->vs2, o->lmul) || (vv && !group_regs(o->vs1, o->lmul)))
        return NOT_HERE;
    if (clashes_with_mask(vm, o->vd) || clashes_with_mask(vm, o->vs2) || (vv && clashes_with_mask(vm, o->vs1)) ||
        (vm && o->vs2 != 0))
        return NOT_HERE;
    if (vm && !vv) { /* vmv.v.x, vmv.v.i: a fill */
        BY_SEW(o, ELEMENTWISE_LOOP, b)
    } else {
        for (uint64_t i = v->vstart; i < v->vl; i++) {
            uint64_t b = vv ? element(v, o->vs1, i, bytes) : o->scalar;
            set_element(v, o->vd, i, bytes, vm || mask_bit(v, 0, i) ? b : element(v, o->vs2, i, bytes));
        }
    }
    v->vstart = 0;
    return RAN;
}

/* vzext.vf2/4/8, vsext.vf2/4/8 (OPMVV funct6 0x12, vs1 says which): vs2's elements of
 * SEW/f bits (EMUL LMUL/f) extended to SEW. */
int vector_extend(Op *o) {
    VectorUnit *v = o->v;
    int which = o->vs1, sew = o->sew, bytes = o->bytes, lmul = o->lmul, vm = o->vm, vd = o->vd, vs2 = o->vs2;
    int factor = which <= 3 ? 8 : which <= 5 ? 4 : 2, is_signed = which & 1, from = sew / factor;
    int source_emul = lmul / factor; /* (0 when below 1/8) */
    int dest_regs = group_regs(vd, lmul);
    if (from < 8 || !dest_regs || !group_regs(vs2, source_emul))
        return NOT_HERE;
    if (clashes_with_mask(vm, vd) || clashes_with_mask(vm, vs2) || !wider_dest_ok(vd, dest_regs, vs2, source_emul))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t x = element(v, vs2, i, from / 8);
        set_element(v, vd, i, bytes, is_signed ? (uint64_t)sext_bits(x, from) & width_mask(sew) : x);
    }
    v->vstart = 0;
    return RAN;
}
