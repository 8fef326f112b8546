/* mask.c: the vector unit's mask instructions (RVV 1.0, chapter 15): ops.def's MUL_MASK
 * rows (vmand.mm ... vmxnor.mm), vcpop.m, vfirst.m, vmsbf.m, vmsif.m, vmsof.m, viota.m
 * and vid.v. */
#include "vector.h"

/* The MUL_MASK row's body of funct6 on the bits A (vs2's) and B (vs1's). */
static int mask_op(int funct6, int a, int b) {
    switch (funct6) {
#define MUL_MASK(f6, name, forms, body) case f6: return (body) & 1;
#include "rows.h"
    }
    return 0;
}

int vector_mask_logic(Op *o) {
    VectorUnit *v = o->v;
    if (!o->vm)
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++)
        set_mask_bit(v, o->vd, i, mask_op(o->funct6, mask_bit(v, o->vs2, i), mask_bit(v, o->vs1, i)));
    v->vstart = 0;
    return RAN;
}

/* vcpop.m (vs1 16): the active set bits of the mask vs2, into x[rd]; vfirst.m (17): the
 * first one's index, or -1. */
int vector_mask_count(Op *o) {
    VectorUnit *v = o->v;
    if (v->vstart)
        return NOT_HERE;
    uint64_t count = 0;
    int64_t first = -1;
    for (uint64_t i = 0; i < v->vl; i++) {
        if (active(v, o->vm, i) && mask_bit(v, o->vs2, i)) {
            count++;
            if (first < 0)
                first = (int64_t)i;
        }
    }
    set_x(o->h, o->vd, o->vs1 == 16 ? count : (uint64_t)first, 0);
    return RAN;
}

/* vmsbf.m, vmsof.m, vmsif.m (vs1 1, 2, 3): the mask of the active elements before vs2's
 * first set bit (among the active ones), of that bit alone, or up to it. */
int vector_set_first(Op *o) {
    VectorUnit *v = o->v;
    int which = o->vs1, vm = o->vm, vd = o->vd, vs2 = o->vs2;
    if (v->vstart || vd == vs2 || clashes_with_mask(vm, vd))
        return NOT_HERE;
    int found = 0;
    for (uint64_t i = 0; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        int bit = mask_bit(v, vs2, i);
        set_mask_bit(v, vd, i, which == 1 ? !found && !bit : which == 2 ? !found && bit : !found);
        found |= bit;
    }
    return RAN;
}

/* viota.m: vd[i] = the number of set bits of the mask vs2 among the active elements
 * before i. */
int vector_iota(Op *o) {
    VectorUnit *v = o->v;
    int regs = group_regs(o->vd, o->lmul);
    if (!regs || v->vstart || groups_overlap(o->vd, regs, o->vs2, 1) || clashes_with_mask(o->vm, o->vd))
        return NOT_HERE;
    uint64_t count = 0;
    for (uint64_t i = 0; i < v->vl; i++) {
        if (!active(v, o->vm, i))
            continue;
        set_element(v, o->vd, i, o->bytes, count & width_mask(o->sew));
        count += (uint64_t)mask_bit(v, o->vs2, i);
    }
    return RAN;
}

/* vid.v: vd[i] = i. */
int vector_id(Op *o) {
    VectorUnit *v = o->v;
    if (!group_regs(o->vd, o->lmul) || o->vs2 != 0 || clashes_with_mask(o->vm, o->vd))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++)
        if (active(v, o->vm, i))
            set_element(v, o->vd, i, o->bytes, i & width_mask(o->sew));
    v->vstart = 0;
    return RAN;
}
