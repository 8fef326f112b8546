/* memory.c: the vector unit's loads and stores (RVV 1.0, chapter 7): unit-stride (and its
 * fault-only-first loads), strided, indexed (ordered and unordered), each with segments,
 * and the mask and whole-register ones. Every element goes through hart.h's load and
 * store, so through the engine's TLB and the fill hook, which the cache model and the
 * checker see; an access the memory refuses leaves vstart at its element (a trap's), for
 * the fault's report (sim/hart/core.py).
 *
 * A unit-stride load or store goes a page of elements at a time first (unit_stride_pages):
 * copied between the register file and the host memory that the engine's TLB gave for
 * that page; an element across a page boundary, a watched page and a page the memory
 * refuses go an element at a time, from where the pages stopped.
 */
#include "vector.h"

static int access_element(Hart *h, uint64_t address, int width, int store, uint64_t *x) {
    switch (width) {
    case 1: return store ? store(h, address, 1, *x) : load(h, address, 1, x);
    case 2: return store ? store(h, address, 2, *x) : load(h, address, 2, x);
    case 4: return store ? store(h, address, 4, *x) : load(h, address, 4, x);
    default: return store ? store(h, address, 8, *x) : load(h, address, 8, x);
    }
}

/* The checks of a segment (NF + 1 fields) or plain load or store of DATA_EMUL (eighths) a
 * field, INDEXED by vs2's group of INDEX_EMUL whose elements are INDEX_BITS wide: 1 when
 * RVV 1.0 allows it (7.8: NFIELDS * EMUL <= 8, the groups within v0-v31; 5.2 for the index
 * group beside the data). */
static int legal_access(VectorUnit *v, int store, int vm, int vd, int nf, int data_emul, int indexed, int vs2,
                        int index_emul, int index_bits) {
    int regs = group_regs(vd, data_emul), fields = nf + 1;
    if (!regs || fields * regs > 8 || vd + fields * regs > 32 || clashes_with_mask(vm, vd))
        return 0;
    if (!indexed)
        return 1;
    int index_regs = group_regs(vs2, index_emul), sew = sew_bits(v->vtype);
    if (!index_regs || clashes_with_mask(vm, vs2))
        return 0;
    for (int f = 0; f < fields; f++) {
        int field = vd + f * regs;
        if (!groups_overlap(field, regs, vs2, index_regs))
            continue;
        if (store) { /* (it reads both: one EEW a source) */
            if (index_bits != sew)
                return 0;
            continue;
        }
        if (fields > 1) /* (a segment load's destination may not overlap the offsets at all) */
            return 0;
        if (index_bits > sew ? !narrower_dest_ok(field, regs, vs2, index_regs)
                             : index_bits < sew && !wider_dest_ok(field, regs, vs2, index_emul))
            return 0;
    }
    return 1;
}

/* A vector load's or store's width field as its EEW (the decoder gives OP_VLOAD and
 * OP_VSTORE only the widths 0, 5, 6 and 7). */
static int memory_eew(int width) { return width == 0 ? 8 : width == 5 ? 16 : width == 6 ? 32 : 64; }

/* An element access the memory refused: element I, at ADDRESS, is kept for the fault's
 * report (sim/hart/core.py). */
static int refused_at(VectorUnit *v, uint64_t i, uint64_t address) {
    v->vstart = i; /* (as a trap leaves it: run again, the instruction goes on from there) */
    v->refused = (int64_t)i;
    v->refused_address = address;
    return REFUSED;
}

static int elements(Hart *h, const Decoded *d, int store) {
    VectorUnit *v = unit(h);
    uint32_t insn = d->insn;
    int nf = (int)bits(insn, 31, 29), mew = (int)bits(insn, 28, 28), mop = (int)bits(insn, 27, 26);
    int vm = (int)bits(insn, 25, 25), lumop = (int)bits(insn, 24, 20), vd = d->rd;
    int width = (int)bits(insn, 14, 12);
    int eew = memory_eew(width);
    int bytes = eew / 8;
    uint64_t base = X(h, d->rs1, 0);
    if (mew)
        return NOT_HERE;
    if (mop == 0 && lumop == 8) { /* whole registers: nf + 1 of them, every byte */
        int regs = nf + 1;
        if (vm != 1 || (regs & (regs - 1)) || vd % regs || (store && width != 0)) /* (vs<nr>r.v: width 0 only) */
            return NOT_HERE;
        uint64_t count = (uint64_t)regs * VLENB / (uint64_t)bytes;
        for (uint64_t i = v->vstart; i < count; i++) {
            uint64_t x = store ? element(v, vd, i, bytes) : 0;
            if (!access_element(h, base + i * (uint64_t)bytes, bytes, store, &x))
                return refused_at(v, i, base + i * (uint64_t)bytes);
            if (!store)
                set_element(v, vd, i, bytes, x);
        }
        v->vstart = 0;
        return RAN;
    }
    if (v->vtype & VILL)
        return NOT_HERE;
    if (mop == 0 && lumop == 11) { /* vlm.v, vsm.v: ceil(vl / 8) bytes */
        if (eew != 8 || nf || vm != 1)
            return NOT_HERE;
        uint64_t count = (v->vl + 7) / 8;
        for (uint64_t i = v->vstart; i < count; i++) {
            uint64_t x = store ? v->reg[vd][i] : 0;
            if (!access_element(h, base + i, 1, store, &x))
                return refused_at(v, i, base + i);
            if (!store)
                v->reg[vd][i] = (uint8_t)x;
        }
        v->vstart = 0;
        return RAN;
    }
    /* Unit-stride (and its fault-only-first loads), strided and indexed (mop 1 unordered, 3
     * ordered: run in order alike), of NF + 1 fields a segment. Indexed ones take EEW for
     * vs2's offsets (zero-extended) and SEW for the data. */
    int first_fault = mop == 0 && lumop == 16 && !store, indexed = mop & 1, fields = nf + 1;
    if (mop == 0 && lumop != 0 && !first_fault)
        return NOT_HERE;
    int sew = sew_bits(v->vtype), lmul = lmul_eighths(v->vtype), vs2 = d->rs2;
    int offset_emul = over_sew(lmul * eew, v->vtype); /* (the data's EMUL, or the index's; 0 below 1/8) */
    int data_emul = indexed ? lmul : offset_emul, data_bytes = indexed ? sew / 8 : bytes;
    if (!legal_access(v, store, vm, vd, nf, data_emul, indexed, vs2, offset_emul, eew))
        return NOT_HERE;
    int regs = regs_of(data_emul);
    uint64_t stride = mop == 2 ? X(h, vs2, 0) : (uint64_t)(fields * data_bytes);
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t address = base + (indexed ? element(v, vs2, i, bytes) : i * stride), x[8];
        for (int f = 0; f < fields; f++) {
            x[f] = store ? element(v, vd + f * regs, i, data_bytes) : 0;
            if (!access_element(h, address + (uint64_t)(f * data_bytes), data_bytes, store, &x[f])) {
                if (first_fault && i > 0) { /* vle*ff: vl is trimmed to the segments before the fault */
                    v->vl = i;
                    v->vstart = 0;
                    h->core->refused.access = 0; /* (nothing faulted: no later fault is this access's) */
                    return RAN;
                }
                return refused_at(v, i, address + (uint64_t)(f * data_bytes));
            }
        }
        if (!store) /* (a segment's fields are written together: none of one that faulted) */
            for (int f = 0; f < fields; f++)
                set_element(v, vd + f * regs, i, data_bytes, x[f]);
    }
    v->vstart = 0;
    return RAN;
}

/* A unit-stride vle<eew>.v or vse<eew>.v a page of elements at a time: RAN, or NOT_HERE
 * with nothing done for any other access, or with vstart at the element to go on from. */
static int unit_stride_pages(Hart *h, VectorUnit *v, const Decoded *d, int store) {
    uint32_t insn = d->insn;
    int vm = (int)bits(insn, 25, 25), width = (int)bits(insn, 14, 12), vd = d->rd;
    if (bits(insn, 31, 26) != 0 || bits(insn, 24, 20) != 0 || (v->vtype & VILL)) /* nf, mew, mop, lumop */
        return NOT_HERE;
    int eew = memory_eew(width);
    int sew = sew_bits(v->vtype), lmul = lmul_eighths(v->vtype);
    if (((lmul * eew) & (sew - 1)) || !group_regs(vd, over_sew(lmul * eew, v->vtype)) || (!vm && vd == 0))
        return NOT_HERE; /* (v0 as data and as the mask: reserved, the general code refuses it) */
    uint64_t bytes = (uint64_t)eew / 8, base = X(h, d->rs1, 0);
    int width_shift = __builtin_ctzll(bytes); /* (a shift, not a division by BYTES) */
    uint8_t *reg = v->reg[vd];
    uint64_t i = v->vstart;
    while (i < v->vl) {
        uint64_t address = base + i * bytes, in_page = PAGE - (address & (PAGE - 1));
        if (in_page < bytes) /* an element across two pages: the general code's */
            break;
        uint64_t n = in_page >> width_shift;
        if (n > v->vl - i)
            n = v->vl - i;
        if (!vm) { /* a page no active element falls in is not touched at all */
            uint64_t k = 0;
            while (k < n && !mask_bit(v, 0, i + k))
                k++;
            if (k == n) {
                i += n;
                continue;
            }
        }
        uint8_t *p = host_of(h, address, store);
        if (!p || p == WATCHED) /* refused: the general code faults, naming the element; */
            break;              /* watched: it goes an element at a time (watch.c) */
        if (vm) {
            if (store)
                __builtin_memcpy(p, reg + i * bytes, n * bytes);
            else
                __builtin_memcpy(reg + i * bytes, p, n * bytes);
        } else {
            for (uint64_t k = 0; k < n; k++) {
                if (!mask_bit(v, 0, i + k))
                    continue;
                if (store)
                    __builtin_memcpy(p + k * bytes, reg + (i + k) * bytes, bytes);
                else
                    __builtin_memcpy(reg + (i + k) * bytes, p + k * bytes, bytes);
            }
        }
        i += n;
    }
    if (i < v->vl) {
        v->vstart = i;
        return NOT_HERE;
    }
    v->vstart = 0;
    return RAN;
}

int vector_memory(Hart *h, const Decoded *d, int store) {
    VectorUnit *v = unit(h);
    if (unit_stride_pages(h, v, d, store) == RAN)
        return RAN;
    int done = elements(h, d, store);
    if (done == RAN) /* (a refusal it went on from, as a fault-only-first load's, is no fault) */
        h->core->refused.access = 0;
    return done;
}
