/* fixed.c: the vector unit's fixed point (RVV 1.0, chapter 12): ops.def's FIXED and
 * MUL_FIXED rows (vsaddu, vsadd, vssubu, vssub, vsmul, vssrl, vssra; vaaddu, vaadd,
 * vasubu, vasub) in typed loops, and the NARROW rows (vnsrl, vnsra, vnclipu, vnclip),
 * rounding by vxrm and setting vxsat. */
#include "vector.h"

/* The increment that rounds off the D low bits of X (0 <= D < 128) by vxrm (RVV 1.0, 3.8):
 * 0 round-to-nearest-up, 1 round-to-nearest-even, 2 round-down, 3 round-to-odd. */
static unsigned rounding_increment(int vxrm, unsigned __int128 x, int d) {
    if (d == 0)
        return 0;
    unsigned half = (unsigned)(x >> (d - 1)) & 1, lsb = (unsigned)(x >> d) & 1;
    unsigned below = d > 1 && (x & (((unsigned __int128)1 << (d - 1)) - 1)) != 0;
    switch (vxrm & 3) {
    case 0: return half;
    case 1: return half & (below | lsb);
    case 2: return 0;
    default: return (!lsb) & (half | below);
    }
}

/* roundoff_signed(X, D) and roundoff_unsigned(X, D) of the spec, by V's vxrm. */
static __int128 roundoff_signed(VectorUnit *v, __int128 x, int d) {
    return (x >> d) + rounding_increment((int)v->vxrm, (unsigned __int128)x, d);
}

static unsigned __int128 roundoff_unsigned(VectorUnit *v, unsigned __int128 x, int d) {
    return (x >> d) + rounding_increment((int)v->vxrm, x, d);
}

/* X clipped to BITS bits, signed or not; vxsat set when it did not fit. */
static uint64_t clip_signed(VectorUnit *v, __int128 x, int bits) {
    __int128 max = ((__int128)1 << (bits - 1)) - 1, min = -max - 1;
    if (x > max || x < min) {
        v->vxsat = 1;
        x = x > max ? max : min;
    }
    return (uint64_t)x & width_mask(bits);
}

static uint64_t clip_unsigned(VectorUnit *v, __int128 x, int bits) {
    __int128 max = ((__int128)1 << bits) - 1;
    if (x > max || x < 0) {
        v->vxsat = 1;
        x = x > max ? max : 0;
    }
    return (uint64_t)x;
}

#define FIXED(f6, name, forms, body) ELEMENTWISE_FUNCTION(name, body)
#define MUL_FIXED(f6, name, forms, body) ELEMENTWISE_FUNCTION(name, body)
#include "rows.h"

/* The NARROW row's body of funct6: A (2*SEW bits; SA signed) shifted right by S into SEW. */
static uint64_t narrowing_op(VectorUnit *v, int funct6, int SEW, uint64_t a, __int128 sa, int s) {
    switch (funct6) {
#define NARROW(f6, name, forms, body) case f6: return (body) & width_mask(SEW);
#include "rows.h"
    }
    return 0;
}

/* vnsrl, vnsra, vnclipu, vnclip (.wv .wx .wi): vs2 of 2*SEW shifted right by vs1[i] or the
 * scalar (its low log2(2*SEW) bits) into SEW bits. */
#define NARROW(f6, name, forms, body)                                                        \
    int op_##name(Op *o) { return narrowing(o); }
static int narrowing(Op *o) {
    VectorUnit *v = o->v;
    int sew = o->sew, bytes = o->bytes, lmul = o->lmul, vv = o->vv, vm = o->vm, vd = o->vd, vs2 = o->vs2, vs1 = o->vs1;
    if (sew > 32 || lmul > 32)
        return NOT_HERE;
    int dest_regs = group_regs(vd, lmul), wide_regs = group_regs(vs2, 2 * lmul);
    if (!dest_regs || !wide_regs || (vv && !group_regs(vs1, lmul)))
        return NOT_HERE;
    if (clashes_with_mask(vm, vd) || clashes_with_mask(vm, vs2) || (vv && clashes_with_mask(vm, vs1)))
        return NOT_HERE;
    if (!narrower_dest_ok(vd, dest_regs, vs2, wide_regs) || (vv && groups_overlap(vs2, wide_regs, vs1, regs_of(lmul))))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t a = element(v, vs2, i, 2 * bytes);
        int shift = (int)((vv ? element(v, vs1, i, bytes) : o->scalar) & (uint64_t)(2 * sew - 1));
        set_element(v, vd, i, bytes, narrowing_op(v, o->funct6, sew, a, sext_bits(a, 2 * sew), shift));
    }
    v->vstart = 0;
    return RAN;
}
#include "rows.h"
