/* permute.c: the vector unit's permutations (RVV 1.0, chapter 16): the slides (vslideup,
 * vslidedown, vslide1up, vslide1down and the float ones' shared loop), vrgather,
 * vrgatherei16, vcompress, vmv<nr>r.v, and the moves between element 0 and x registers. */
#include "vector.h"

/* vslideup (funct6 0x0E: vd[i] = vs2[i - offset], for offset <= i < vl) and vslidedown
 * (0x0F: vd[i] = vs2[i + offset], 0 past VLMAX), the offset x[rs1] or the immediate. */
int vector_slide(Op *o) {
    VectorUnit *v = o->v;
    int bytes = o->bytes, vm = o->vm, vd = o->vd, vs2 = o->vs2, regs = group_regs(vd, o->lmul);
    uint64_t max = vlmax(v->vtype), offset = o->x;
    if (!regs || !group_regs(vs2, o->lmul) || clashes_with_mask(vm, vd) || clashes_with_mask(vm, vs2))
        return NOT_HERE;
    if (o->funct6 == 0x0E) {
        if (groups_overlap(vd, regs, vs2, regs)) /* (vslideup's vd may not overlap vs2) */
            return NOT_HERE;
        uint64_t start = v->vstart > offset ? v->vstart : offset;
        for (uint64_t i = start; i < v->vl; i++)
            if (active(v, vm, i))
                set_element(v, vd, i, bytes, element(v, vs2, i - offset, bytes));
    } else {
        for (uint64_t i = v->vstart; i < v->vl; i++)
            if (active(v, vm, i))
                set_element(v, vd, i, bytes, offset < max && i + offset < max ? element(v, vs2, i + offset, bytes) : 0);
    }
    v->vstart = 0;
    return RAN;
}

/* vrgather (.vv, .vx, .vi): vd[i] = vs2[index], 0 for an index past VLMAX; the index is
 * vs1[i], or x[rs1] or the immediate for every element. */
int vector_gather(Op *o) {
    VectorUnit *v = o->v;
    int bytes = o->bytes, vm = o->vm, vd = o->vd, vs2 = o->vs2, vs1 = o->vs1, vv = o->vv;
    int regs = group_regs(vd, o->lmul);
    uint64_t max = vlmax(v->vtype);
    if (!regs || !group_regs(vs2, o->lmul) || (vv && !group_regs(vs1, o->lmul)))
        return NOT_HERE;
    if (groups_overlap(vd, regs, vs2, regs) || (vv && groups_overlap(vd, regs, vs1, regs)))
        return NOT_HERE;
    if (clashes_with_mask(vm, vd) || clashes_with_mask(vm, vs2) || (vv && clashes_with_mask(vm, vs1)))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t index = vv ? element(v, vs1, i, bytes) : o->x;
        set_element(v, vd, i, bytes, index < max ? element(v, vs2, index, bytes) : 0);
    }
    v->vstart = 0;
    return RAN;
}

/* vrgatherei16.vv: vd[i] = vs2[vs1[i]], vs1's elements of 16 bits (EMUL 16/SEW*LMUL); 0
 * for an index past VLMAX. */
int vector_gather_ei16(Op *o) {
    VectorUnit *v = o->v;
    int sew = o->sew, bytes = o->bytes, lmul = o->lmul, vm = o->vm, vd = o->vd, vs2 = o->vs2, vs1 = o->vs1;
    int regs = group_regs(vd, lmul), index_regs = group_regs(vs1, lmul * 16 / sew);
    uint64_t max = vlmax(v->vtype);
    if (!regs || !index_regs || !group_regs(vs2, lmul))
        return NOT_HERE;
    if (groups_overlap(vd, regs, vs2, regs) || groups_overlap(vd, regs, vs1, index_regs) ||
        (sew != 16 && groups_overlap(vs2, regs, vs1, index_regs))) /* (vs1 is read at 16 bits, vs2 at SEW) */
        return NOT_HERE;
    if (clashes_with_mask(vm, vd) || clashes_with_mask(vm, vs2) || clashes_with_mask(vm, vs1))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t index = element(v, vs1, i, 2);
        set_element(v, vd, i, bytes, index < max ? element(v, vs2, index, bytes) : 0);
    }
    v->vstart = 0;
    return RAN;
}

/* vslide1up (funct6 0x0E) and vslide1down, and the float ones (float.c): vs2's elements
 * one place up (down), X into the place left free. MASK_RULE: a masked one whose vs2 is v0
 * is reserved (the integer ones refuse it; the float ones never have, and still do not). */
int slide_one(Op *o, uint64_t x, int mask_rule) {
    VectorUnit *v = o->v;
    int bytes = o->bytes, vm = o->vm, vd = o->vd, vs2 = o->vs2, up = o->funct6 == 0x0E, regs = group_regs(vd, o->lmul);
    if (!regs || !group_regs(vs2, o->lmul) || (up && groups_overlap(vd, regs, vs2, regs)) ||
        clashes_with_mask(vm, vd) || (mask_rule && clashes_with_mask(vm, vs2)))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t out = up ? (i == 0 ? x : element(v, vs2, i - 1, bytes))
                          : (i + 1 == v->vl ? x : element(v, vs2, i + 1, bytes));
        set_element(v, vd, i, bytes, out);
    }
    v->vstart = 0;
    return RAN;
}

int vector_slide1(Op *o) { return slide_one(o, o->scalar, 1); }

/* vcompress.vm: the vs2[i] whose bit in the mask vs1 is set, packed from vd[0]; the rest of
 * vd is tail, undisturbed. */
int vector_compress(Op *o) {
    VectorUnit *v = o->v;
    int bytes = o->bytes, vd = o->vd, vs2 = o->vs2, vs1 = o->vs1, regs = group_regs(vd, o->lmul);
    if (!o->vm || v->vstart || !regs || !group_regs(vs2, o->lmul))
        return NOT_HERE;
    if (groups_overlap(vd, regs, vs2, regs) || groups_overlap(vd, regs, vs1, 1) || groups_overlap(vs2, regs, vs1, 1))
        return NOT_HERE;
    uint64_t n = 0;
    for (uint64_t i = 0; i < v->vl; i++)
        if (mask_bit(v, vs1, i))
            set_element(v, vd, n++, bytes, element(v, vs2, i, bytes));
    return RAN;
}

/* vmv<nr>r.v (OPIVI funct6 0x27, VM 1, the immediate nr - 1): NR whole registers,
 * whatever vtype says (unit.c runs it with vtype illegal too). */
int vector_whole_move(Op *o) {
    int nr = o->vs1 + 1;
    if (!o->vm || nr > 8 || (nr & (nr - 1)) || o->vd % nr || o->vs2 % nr)
        return NOT_HERE;
    __builtin_memmove(o->v->reg[o->vd], o->v->reg[o->vs2], (size_t)nr * VLENB);
    o->v->vstart = 0;
    return RAN;
}

/* vmv.s.x: vd[0] = x[rs1] (when vstart < vl). */
int vector_move_to_element(Op *o) {
    VectorUnit *v = o->v;
    if (o->vs2 != 0 || !o->vm)
        return NOT_HERE;
    if (v->vstart < v->vl)
        set_element(v, o->vd, 0, o->bytes, o->scalar);
    v->vstart = 0;
    return RAN;
}

/* vmv.x.s: x[rd] = vs2[0], sign-extended. */
int vector_move_to_x(Op *o) {
    if (!o->vm)
        return NOT_HERE;
    set_x(o->h, o->vd, (uint64_t)sext_bits(element(o->v, o->vs2, 0, o->bytes), o->sew), 0);
    o->v->vstart = 0;
    return RAN;
}
