/* vector.h: the X280's vector unit, RVV 1.0 with VLEN 512 and ELEN 64, run in C. Included
 * by isa.c, whose Hart, decoder and memory helpers it uses (a unit of isa.c's, in a file of
 * its own); the state of each core's unit lives in its Scratch (isa.c, VectorUnit).
 *
 * Done: vsetvli, vsetivli, vsetvl; the vector CSRs (vstart, vxsat, vxrm, vcsr, vl, vtype,
 * vlenb); every load and store: unit-stride, strided, indexed (ordered and unordered),
 * fault-only-first, each with segments, and mask and whole-register ones. The whole integer
 * side: the arithmetic, comparisons, merges and moves (.vv, .vx, .vi), add-with-carry,
 * multiplication and division, the multiply-adds, the widening and narrowing arithmetic,
 * vzext and vsext, the fixed point (saturating, averaging, vsmul, the scaling shifts and
 * vnclip, rounding by vxrm and setting vxsat), the integer and widening reductions,
 * vmv.x.s and vmv.s.x, the mask logic, vcpop.m, vfirst.m, vmsbf/vmsif/vmsof.m, viota.m and
 * vid.v; the slides, vrgather, vrgatherei16, vcompress and vmv<nr>r.v. (vector_int.h has
 * the widening, narrowing, fixed-point and add-with-carry arithmetic, the extensions, the
 * widening reductions, vcompress, vrgatherei16, viota and vmsbf/vmsif/vmsof.) The floating
 * point is vector_fp.h's. An encoding RVV 1.0 reserves (by its overlap, EMUL, alignment,
 * v0 and vstart rules) is NOT_HERE, as an instruction not simulated is: Python reports it.
 *
 * Policies: tail and masked-off elements are left undisturbed, also where the spec allows
 * agnostic ones (which must then be deterministic: undisturbed is, and it is what QEMU
 * does by default). Element accesses go through host_of, so through the engine's TLB and
 * the fill hook: the cache model and the checker see every one, at the instruction's pc.
 */

#define VLEN 512
#define VLENB (VLEN / 8)
#define VILL (1ull << 63)

/* CSR numbers */
#define CSR_VSTART 0x008
#define CSR_VXSAT 0x009
#define CSR_VXRM 0x00A
#define CSR_VCSR 0x00F
#define CSR_VL 0xC20
#define CSR_VTYPE 0xC21
#define CSR_VLENB 0xC22

static VectorUnit *unit(Hart *h) {
    VectorUnit *v = &h->scratch->vector;
    if (!v->ready) { /* as at reset: vtype illegal, vl 0 */
        v->vtype = VILL;
        v->vl = 0;
        v->refused = -1;
        v->ready = 1;
    }
    return v;
}

static int sew_bits(uint64_t vtype) { return 8 << ((vtype >> 3) & 7); }

/* LMUL in eighths (1/8 is 1, 8 is 64); 0 for the reserved encoding. */
static int lmul_eighths(uint64_t vtype) {
    int m = (int)(vtype & 7);
    return m < 4 ? 8 << m : m == 4 ? 0 : 8 >> (8 - m);
}

static uint64_t vlmax(uint64_t vtype) { return (uint64_t)lmul_eighths(vtype) * VLEN / (8 * (uint64_t)sew_bits(vtype)); }

static int legal_vtype(uint64_t vtype) {
    int vsew = (int)((vtype >> 3) & 7), vlmul = (int)(vtype & 7);
    if (vsew > 3 || vlmul == 4 || (vtype >> 8) != 0)
        return 0;
    if (vlmul >= 5 && sew_bits(vtype) > (64 >> (8 - vlmul))) /* SEW <= LMUL * ELEN */
        return 0;
    return 1;
}

/* vsetvl*: the new vl (and vtype), as RVV 1.0 says; vl = min(AVL, VLMAX). */
static uint64_t vset(Hart *h, uint64_t vtype, uint64_t avl, int avl_is_x0, int rd_is_x0) {
    VectorUnit *v = unit(h);
    v->vstart = 0;
    if (!legal_vtype(vtype)) {
        v->vtype = VILL;
        v->vl = 0;
        return 0;
    }
    uint64_t max = vlmax(vtype);
    uint64_t vl = !avl_is_x0 ? (avl < max ? avl : max) : !rd_is_x0 ? max : (v->vl < max ? v->vl : max);
    v->vtype = vtype;
    v->vl = vl;
    return vl;
}

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

static int mask_bit(VectorUnit *v, int reg, uint64_t i) { return (v->reg[reg][i >> 3] >> (i & 7)) & 1; }

static void set_mask_bit(VectorUnit *v, int reg, uint64_t i, int bit) {
    uint8_t *byte = &v->reg[reg][i >> 3];
    *byte = (uint8_t)((*byte & ~(1u << (i & 7))) | ((unsigned)bit << (i & 7)));
}

static int active(VectorUnit *v, int vm, uint64_t i) { return vm || mask_bit(v, 0, i); }

static int64_t sext_bits(uint64_t x, int bits) { return bits >= 64 ? (int64_t)x : (int64_t)(x << (64 - bits)) >> (64 - bits); }

static uint64_t width_mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

/* The registers a group of EMUL (in eighths) takes: 1 for a fractional one. */
static int regs_of(int emul_eighths) { return emul_eighths <= 8 ? 1 : emul_eighths / 8; }

/* The registers of a group of EMUL (in eighths) at BASE: 0 when EMUL is below 1/8 or past 8,
 * BASE is not aligned to it or the group runs past v31 (reserved encodings). */
static int group_regs(int base, int emul_eighths) {
    int regs = regs_of(emul_eighths);
    if (emul_eighths < 1 || emul_eighths > 64 || base % regs || base + regs > 32)
        return 0;
    return regs;
}

/* -- the spec's overlap rules (RVV 1.0, 5.2 and 5.3) ------------------------------------------ */

static int groups_overlap(int a, int a_regs, int b, int b_regs) { return a < b + b_regs && b < a + a_regs; }

/* A destination group (VD, DEST_REGS registers) of a wider EEW than its source's (VS, of
 * EMUL SOURCE_EMUL eighths) may overlap it only when the source's EMUL is at least 1 and the
 * overlap is in the destination's highest-numbered part (5.2). */
static int wider_dest_ok(int vd, int dest_regs, int vs, int source_emul) {
    int source_regs = regs_of(source_emul);
    return !groups_overlap(vd, dest_regs, vs, source_regs) || (source_emul >= 8 && vs == vd + dest_regs - source_regs);
}

/* A destination of a narrower EEW than its source's (a mask's is 1) may overlap it only in
 * the source's lowest-numbered part (5.2). */
static int narrower_dest_ok(int vd, int dest_regs, int vs, int source_regs) {
    return !groups_overlap(vd, dest_regs, vs, source_regs) || vd == vs;
}

/* Masked (VM 0), v0 is the mask: a group of data elements (a destination, or a source read
 * at another EEW than the mask's 1) that starts at v0 is a reserved encoding. (Groups are
 * aligned: one includes v0 only when it starts there.) */
static int clashes_with_mask(int vm, int group) { return !vm && group == 0; }

/* -- CSRs ---------------------------------------------------------------------------- */

static int is_vector_csr(uint32_t csr) {
    return csr == CSR_VSTART || csr == CSR_VXSAT || csr == CSR_VXRM || csr == CSR_VCSR || csr == CSR_VL ||
           csr == CSR_VTYPE || csr == CSR_VLENB;
}

static int vector_csr(Hart *h, const Decoded *d) {
    VectorUnit *v = unit(h);
    uint32_t insn = d->insn, csr = insn >> 20, f3 = bits(insn, 14, 12);
    int immediate = f3 >= 5;
    uint64_t source = immediate ? d->rs1 : X(h, d->rs1, 0);
    int writes = (f3 & 3) == 1 || d->rs1 != 0; /* csrrw(i) always; csrrs/c(i) when rs1/uimm is not 0 */
    uint64_t old;
    switch (csr) {
    case CSR_VSTART: old = v->vstart; break;
    case CSR_VXSAT: old = v->vxsat; break;
    case CSR_VXRM: old = v->vxrm; break;
    case CSR_VCSR: old = v->vxrm << 1 | v->vxsat; break;
    case CSR_VL: old = v->vl; break;
    case CSR_VTYPE: old = v->vtype; break;
    default: old = VLENB; break;
    }
    if (writes && (csr == CSR_VL || csr == CSR_VTYPE || csr == CSR_VLENB))
        return NOT_HERE; /* read-only: an illegal instruction */
    if (writes) {
        uint64_t value = (f3 & 3) == 1 ? source : (f3 & 3) == 2 ? old | source : old & ~source;
        switch (csr) {
        case CSR_VSTART: v->vstart = value & (VLEN - 1); break;
        case CSR_VXSAT: v->vxsat = value & 1; break;
        case CSR_VXRM: v->vxrm = value & 3; break;
        case CSR_VCSR: v->vxsat = value & 1; v->vxrm = (value >> 1) & 3; break;
        }
    }
    set_x(h, d->rd, old, 0);
    return RAN;
}

/* -- loads and stores ------------------------------------------------------------------ */

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

/* An element access the memory refused: element I, at ADDRESS, is kept for the fault's
 * report (sim/hart/core.py). */
/* A vector load's or store's width field as its EEW (the decoder gives OP_VLOAD and
 * OP_VSTORE only the widths 0, 5, 6 and 7). */
static int memory_eew(int width) { return width == 0 ? 8 : width == 5 ? 16 : width == 6 ? 32 : 64; }

static int refused_at(VectorUnit *v, uint64_t i, uint64_t address) {
    v->vstart = i; /* (as a trap leaves it: run again, the instruction goes on from there) */
    v->refused = (int64_t)i;
    v->refused_address = address;
    return REFUSED;
}

static int vector_memory(Hart *h, const Decoded *d, int store) {
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
    int offset_emul = lmul * eew / sew; /* (the data's EMUL, or the index's; 0 below 1/8) */
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

/* -- arithmetic -------------------------------------------------------------------------- */

enum { OPIVV = 0, OPFVV = 1, OPMVV = 2, OPIVI = 3, OPIVX = 4, OPFVF = 5, OPMVX = 6, OPCFG = 7 };

static int vset_instruction(Hart *h, const Decoded *d) {
    uint32_t insn = d->insn;
    uint64_t vl;
    if (!(insn >> 31)) /* vsetvli */
        vl = vset(h, bits(insn, 30, 20), X(h, d->rs1, 0), d->rs1 == 0, d->rd == 0);
    else if (bits(insn, 31, 30) == 3) /* vsetivli */
        vl = vset(h, bits(insn, 29, 20), d->rs1, 0, d->rd == 0);
    else if (bits(insn, 31, 25) == 0x40) /* vsetvl */
        vl = vset(h, X(h, d->rs2, 0), X(h, d->rs1, 0), d->rs1 == 0, d->rd == 0);
    else
        return NOT_HERE;
    set_x(h, d->rd, vl, 0);
    return RAN;
}

#include "vector_int.h"

/* An integer operation of OPIVV, OPIVX or OPIVI on SEW-bit A (vs2's element) and B:
 * *OUT, or a mask bit in *BIT (COMPARE). Returns 0 for a funct6 not done here. */
static int integer_op(int funct6, int sew, uint64_t a, uint64_t b, uint64_t *out, int *compare) {
    uint64_t m = width_mask(sew);
    int64_t sa = sext_bits(a, sew), sb = sext_bits(b, sew);
    unsigned shift = (unsigned)(b & (uint64_t)(sew - 1));
    *compare = 0;
    switch (funct6) {
    case 0x00: *out = (a + b) & m; return 1;                 /* vadd */
    case 0x02: *out = (a - b) & m; return 1;                 /* vsub */
    case 0x03: *out = (b - a) & m; return 1;                 /* vrsub */
    case 0x04: *out = a < b ? a : b; return 1;               /* vminu */
    case 0x05: *out = (uint64_t)(sa < sb ? sa : sb) & m; return 1; /* vmin */
    case 0x06: *out = a > b ? a : b; return 1;               /* vmaxu */
    case 0x07: *out = (uint64_t)(sa > sb ? sa : sb) & m; return 1; /* vmax */
    case 0x09: *out = a & b; return 1;                       /* vand */
    case 0x0A: *out = a | b; return 1;                       /* vor */
    case 0x0B: *out = a ^ b; return 1;                       /* vxor */
    case 0x25: *out = (a << shift) & m; return 1;            /* vsll */
    case 0x28: *out = a >> shift; return 1;                  /* vsrl */
    case 0x29: *out = (uint64_t)(sa >> shift) & m; return 1; /* vsra */
    case 0x18: *compare = 1; *out = a == b; return 1;        /* vmseq */
    case 0x19: *compare = 1; *out = a != b; return 1;        /* vmsne */
    case 0x1A: *compare = 1; *out = a < b; return 1;         /* vmsltu */
    case 0x1B: *compare = 1; *out = sa < sb; return 1;       /* vmslt */
    case 0x1C: *compare = 1; *out = a <= b; return 1;        /* vmsleu */
    case 0x1D: *compare = 1; *out = sa <= sb; return 1;      /* vmsle */
    case 0x1E: *compare = 1; *out = a > b; return 1;         /* vmsgtu */
    case 0x1F: *compare = 1; *out = sa > sb; return 1;       /* vmsgt */
    }
    return 0;
}

static int legal_integer(int funct3, int funct6) {
    switch (funct6) { /* which of .vv, .vx, .vi each has */
    case 0x00: case 0x09: case 0x0A: case 0x0B: case 0x18: case 0x19: case 0x1C: case 0x1D:
    case 0x25: case 0x28: case 0x29: case 0x17: return 1;
    case 0x02: case 0x04: case 0x05: case 0x06: case 0x07: case 0x1A: case 0x1B: return funct3 != OPIVI;
    case 0x03: case 0x1E: case 0x1F: return funct3 != OPIVV;
    }
    return 0;
}

/* vslide1up (UP) and vslide1down, and their floating-point twins: vs2's elements one
 * place up (down), X into the place left free. */
static int slide1(VectorUnit *v, int up, int vm, int vd, int vs2, int bytes, uint64_t x) {
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

/* vmv<nr>r.v: NR whole registers, whatever vtype says. */
static int whole_move(VectorUnit *v, int vd, int vs2, int nr) {
    if (nr > 8 || (nr & (nr - 1)) || vd % nr || vs2 % nr)
        return NOT_HERE;
    __builtin_memmove(v->reg[vd], v->reg[vs2], (size_t)nr * VLENB);
    v->vstart = 0;
    return RAN;
}

/* The permutations of OPIVV, OPIVX, OPIVI: vslideup, vslidedown, vrgather. OFFSET is
 * x[rs1] or the immediate (vs1's group for vrgather.vv). */
static int permute(VectorUnit *v, int funct6, int funct3, int vm, int vd, int vs2, int vs1, uint64_t offset) {
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype), regs = group_regs(vd, lmul);
    uint64_t max = vlmax(v->vtype);
    if (!regs || !group_regs(vs2, lmul) || (funct3 == OPIVV && !group_regs(vs1, lmul)))
        return NOT_HERE;
    if ((funct6 != 0x0F) && vd < vs2 + regs && vs2 < vd + regs) /* (vd may not overlap vs2) */
        return NOT_HERE;
    if (clashes_with_mask(vm, vd) || clashes_with_mask(vm, vs2) || (funct3 == OPIVV && clashes_with_mask(vm, vs1)))
        return NOT_HERE;
    if (funct6 == 0x0E) { /* vslideup: vd[i] = vs2[i - offset], for offset <= i < vl */
        uint64_t start = v->vstart > offset ? v->vstart : offset;
        for (uint64_t i = start; i < v->vl; i++)
            if (active(v, vm, i))
                set_element(v, vd, i, bytes, element(v, vs2, i - offset, bytes));
    } else if (funct6 == 0x0F) { /* vslidedown: vd[i] = vs2[i + offset], 0 past VLMAX */
        for (uint64_t i = v->vstart; i < v->vl; i++)
            if (active(v, vm, i))
                set_element(v, vd, i, bytes, offset < max && i + offset < max ? element(v, vs2, i + offset, bytes) : 0);
    } else { /* vrgather: vd[i] = vs2[index], 0 for an index past VLMAX */
        if (funct3 == OPIVV && vd < vs1 + regs && vs1 < vd + regs)
            return NOT_HERE;
        for (uint64_t i = v->vstart; i < v->vl; i++) {
            if (!active(v, vm, i))
                continue;
            uint64_t index = funct3 == OPIVV ? element(v, vs1, i, bytes) : offset;
            set_element(v, vd, i, bytes, index < max ? element(v, vs2, index, bytes) : 0);
        }
    }
    v->vstart = 0;
    return RAN;
}

/* The fixed-point operation of OPIV* FUNCT6 (vector_int.h), -1 for none; FUNCT3 has it. */
static int fixed_point_op(int funct3, int funct6) {
    switch (funct6) {
    case 0x20: return FX_SADDU;
    case 0x21: return FX_SADD;
    case 0x22: return funct3 != OPIVI ? FX_SSUBU : -1;
    case 0x23: return funct3 != OPIVI ? FX_SSUB : -1;
    case 0x27: return funct3 != OPIVI ? FX_SMUL : -1;
    case 0x2A: return FX_SSRL;
    case 0x2B: return FX_SSRA;
    }
    return -1;
}

static int vector_integer(Hart *h, const Decoded *d, int funct3) {
    VectorUnit *v = unit(h);
    uint32_t insn = d->insn;
    int funct6 = (int)(insn >> 26), vm = (int)bits(insn, 25, 25), vs2 = d->rs2, vs1 = d->rs1, vd = d->rd;
    int vv = funct3 == OPIVV;
    if (funct3 == OPIVI && funct6 == 0x27 && vm) /* vmv<nr>r.v */
        return whole_move(v, vd, vs2, vs1 + 1);
    if (v->vtype & VILL)
        return NOT_HERE;
    if ((funct6 == 0x0E || funct6 == 0x0F) && funct3 != OPIVV) /* vslideup, vslidedown */
        return permute(v, funct6, funct3, vm, vd, vs2, vs1, funct3 == OPIVX ? X(h, vs1, 0) : (uint64_t)vs1);
    if (funct6 == 0x0C) /* vrgather */
        return permute(v, funct6, funct3, vm, vd, vs2, vs1,
                       funct3 == OPIVX ? X(h, vs1, 0) : funct3 == OPIVI ? (uint64_t)vs1 : 0);
    if (funct6 == 0x0E) /* vrgatherei16.vv */
        return gather_ei16(v, vm, vd, vs2, vs1);
    if (funct6 == 0x30 || funct6 == 0x31) /* vwredsumu.vs, vwredsum.vs */
        return vv ? widening_reduction(v, funct6, vm, vd, vs2, vs1) : NOT_HERE;
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype), regs = regs_of(lmul);
    uint64_t m = width_mask(sew);
    int unsigned_immediate = funct6 == 0x25 || (funct6 >= 0x28 && funct6 <= 0x2F); /* (the shifts') */
    uint64_t scalar = funct3 == OPIVX ? X(h, vs1, 0) & m
                    : funct3 == OPIVI ? (unsigned_immediate ? (uint64_t)vs1 : (uint64_t)sext_bits(vs1, 5) & m) : 0;
    if (funct6 >= 0x10 && funct6 <= 0x13) /* vadc, vmadc, vsbc, vmsbc */
        return vector_carry(v, funct3, funct6, vm, vd, vs2, vs1, scalar);
    if (funct6 >= 0x2C && funct6 <= 0x2F) /* vnsrl, vnsra, vnclipu, vnclip */
        return vector_narrowing(v, funct6, vv, vm, vd, vs2, vs1, scalar);
    int fixed = fixed_point_op(funct3, funct6);
    if (fixed >= 0)
        return vector_fixed(v, fixed, vv, vm, vd, vs2, vs1, scalar);
    if (!legal_integer(funct3, funct6))
        return NOT_HERE;
    if (!group_regs(vs2, lmul) || (vv && !group_regs(vs1, lmul)))
        return NOT_HERE;
    if (clashes_with_mask(vm, vs2) || (vv && clashes_with_mask(vm, vs1)) || (funct6 == 0x17 && vm && vs2 != 0))
        return NOT_HERE;
    int compares = funct6 >= 0x18 && funct6 <= 0x1F;
    if (compares ? !narrower_dest_ok(vd, 1, vs2, regs) || (vv && !narrower_dest_ok(vd, 1, vs1, regs))
                 : !group_regs(vd, lmul) || clashes_with_mask(vm, vd))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        uint64_t b = vv ? element(v, vs1, i, bytes) : scalar;
        if (funct6 == 0x17) { /* vmerge (vm 0) and vmv.v (vm 1, vs2 0) */
            set_element(v, vd, i, bytes, vm || mask_bit(v, 0, i) ? b : element(v, vs2, i, bytes));
            continue;
        }
        if (!active(v, vm, i))
            continue;
        uint64_t out;
        int compare;
        integer_op(funct6, sew, element(v, vs2, i, bytes), b, &out, &compare);
        if (compare)
            set_mask_bit(v, vd, i, (int)out);
        else
            set_element(v, vd, i, bytes, out);
    }
    v->vstart = 0;
    return RAN;
}

/* The high SEW bits of the 2*SEW-bit product of A and B, each signed or not. */
static uint64_t mul_high(uint64_t a, uint64_t b, int sew, int signed_a, int signed_b) {
    if (!signed_a && !signed_b)
        return (uint64_t)(((unsigned __int128)a * b) >> sew) & width_mask(sew);
    __int128 x = signed_a ? (__int128)sext_bits(a, sew) : (__int128)a; /* (|x * y| < 2^127) */
    __int128 y = signed_b ? (__int128)sext_bits(b, sew) : (__int128)b;
    return (uint64_t)((x * y) >> sew) & width_mask(sew);
}

static int vector_multiply(Hart *h, const Decoded *d, int funct3) {
    VectorUnit *v = unit(h);
    uint32_t insn = d->insn;
    int funct6 = (int)(insn >> 26), vm = (int)bits(insn, 25, 25), vs2 = d->rs2, vs1 = d->rs1, vd = d->rd;
    if (v->vtype & VILL)
        return NOT_HERE;
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype);
    uint64_t m = width_mask(sew);
    int vv = funct3 == OPMVV;
    if (vv && funct6 <= 0x07) { /* integer reductions: vd[0] = op(vs1[0], vs2[active]) */
        if (!group_regs(vs2, lmul) || v->vstart || clashes_with_mask(vm, vs2) || clashes_with_mask(vm, vs1))
            return NOT_HERE;
        if (v->vl == 0)
            return RAN;
        uint64_t acc = element(v, vs1, 0, bytes);
        for (uint64_t i = 0; i < v->vl; i++) {
            if (!active(v, vm, i))
                continue;
            uint64_t x = element(v, vs2, i, bytes);
            int64_t sx = sext_bits(x, sew), sacc = sext_bits(acc, sew);
            switch (funct6) {
            case 0: acc = (acc + x) & m; break;
            case 1: acc &= x; break;
            case 2: acc |= x; break;
            case 3: acc ^= x; break;
            case 4: acc = x < acc ? x : acc; break;
            case 5: acc = (uint64_t)(sx < sacc ? sx : sacc) & m; break;
            case 6: acc = x > acc ? x : acc; break;
            default: acc = (uint64_t)(sx > sacc ? sx : sacc) & m; break;
            }
        }
        set_element(v, vd, 0, bytes, acc);
        return RAN;
    }
    if (funct6 >= 0x08 && funct6 <= 0x0B) /* vaaddu, vaadd, vasubu, vasub */
        return vector_fixed(v, FX_AADDU + (funct6 - 0x08), vv, vm, vd, vs2, vs1, vv ? 0 : X(h, vs1, 0) & m);
    if (funct6 >= 0x30) /* the widening arithmetic */
        return vector_widening(v, funct6, vv, vm, vd, vs2, vs1, vv ? 0 : X(h, vs1, 0));
    if (vv && funct6 == 0x12) /* vzext, vsext */
        return vector_extend(v, vs1, vm, vd, vs2);
    if (vv && funct6 == 0x17) /* vcompress.vm */
        return vector_compress(v, vm, vd, vs2, vs1);
    if (vv && funct6 == 0x14 && vs1 >= 1 && vs1 <= 3) /* vmsbf.m, vmsof.m, vmsif.m */
        return set_first(v, vs1, vm, vd, vs2);
    if (vv && funct6 == 0x14 && vs1 == 0x10) /* viota.m */
        return vector_iota(v, vm, vd, vs2);
    if (funct6 == 0x10) { /* vmv.x.s, vcpop.m, vfirst.m (OPMVV); vmv.s.x (OPMVX) */
        if (funct3 == OPMVX) {
            if (vs2 != 0 || !vm)
                return NOT_HERE;
            if (v->vstart < v->vl)
                set_element(v, vd, 0, bytes, X(h, vs1, 0) & m);
            v->vstart = 0;
            return RAN;
        }
        if (vs1 == 0) {
            if (!vm)
                return NOT_HERE;
            set_x(h, vd, (uint64_t)sext_bits(element(v, vs2, 0, bytes), sew), 0);
            v->vstart = 0;
            return RAN;
        }
        if (vs1 == 0x10 || vs1 == 0x11) {
            if (v->vstart)
                return NOT_HERE;
            uint64_t count = 0;
            int64_t first = -1;
            for (uint64_t i = 0; i < v->vl; i++) {
                if (active(v, vm, i) && mask_bit(v, vs2, i)) {
                    count++;
                    if (first < 0)
                        first = (int64_t)i;
                }
            }
            set_x(h, vd, vs1 == 0x10 ? count : (uint64_t)first, 0);
            return RAN;
        }
        return NOT_HERE;
    }
    if (funct3 == OPMVX && (funct6 == 0x0E || funct6 == 0x0F)) { /* vslide1up, vslide1down */
        if (!group_regs(vd, lmul) || !group_regs(vs2, lmul))
            return NOT_HERE;
        int regs = group_regs(vd, lmul);
        if ((funct6 == 0x0E && vd < vs2 + regs && vs2 < vd + regs) || clashes_with_mask(vm, vd) ||
            clashes_with_mask(vm, vs2))
            return NOT_HERE;
        return slide1(v, funct6 == 0x0E, vm, vd, vs2, bytes, X(h, vs1, 0) & m);
    }
    if (funct3 == OPMVV && funct6 == 0x14 && vs1 == 0x11) { /* vid.v */
        if (!group_regs(vd, lmul) || vs2 != 0 || clashes_with_mask(vm, vd))
            return NOT_HERE;
        for (uint64_t i = v->vstart; i < v->vl; i++)
            if (active(v, vm, i))
                set_element(v, vd, i, bytes, i & m);
        v->vstart = 0;
        return RAN;
    }
    if (funct3 == OPMVV && funct6 >= 0x18 && funct6 <= 0x1F) { /* mask logic */
        if (!vm)
            return NOT_HERE;
        for (uint64_t i = v->vstart; i < v->vl; i++) {
            int a = mask_bit(v, vs2, i), b = mask_bit(v, vs1, i), out;
            switch (funct6) {
            case 0x18: out = a & !b; break; /* vmandn */
            case 0x19: out = a & b; break;
            case 0x1A: out = a | b; break;
            case 0x1B: out = a ^ b; break;
            case 0x1C: out = a | !b; break; /* vmorn */
            case 0x1D: out = !(a & b); break;
            case 0x1E: out = !(a | b); break;
            default: out = !(a ^ b); break;
            }
            set_mask_bit(v, vd, i, out);
        }
        v->vstart = 0;
        return RAN;
    }
    int muladd = funct6 == 0x2D || funct6 == 0x2F || funct6 == 0x29 || funct6 == 0x2B;
    int simple = funct6 >= 0x20 && funct6 <= 0x27;
    if (!muladd && !simple)
        return NOT_HERE;
    if (!group_regs(vd, lmul) || !group_regs(vs2, lmul) || (vv && !group_regs(vs1, lmul)))
        return NOT_HERE;
    if (clashes_with_mask(vm, vd) || clashes_with_mask(vm, vs2) || (vv && clashes_with_mask(vm, vs1)))
        return NOT_HERE;
    uint64_t scalar = vv ? 0 : X(h, vs1, 0) & m;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t a = element(v, vs2, i, bytes), b = vv ? element(v, vs1, i, bytes) : scalar;
        uint64_t c = element(v, vd, i, bytes), out;
        int64_t sa = sext_bits(a, sew), sb = sext_bits(b, sew);
        int64_t min = (int64_t)(~0ull << (sew - 1));
        switch (funct6) {
        case 0x20: out = b ? a / b : m; break;                                      /* vdivu */
        case 0x21: out = b == 0 ? m : (sa == min && sb == -1) ? a : (uint64_t)(sa / sb); break; /* vdiv */
        case 0x22: out = b ? a % b : a; break;                                      /* vremu */
        case 0x23: out = b == 0 ? a : (sa == min && sb == -1) ? 0 : (uint64_t)(sa % sb); break; /* vrem */
        case 0x24: out = mul_high(a, b, sew, 0, 0); break;                          /* vmulhu */
        case 0x25: out = a * b; break;                                              /* vmul */
        case 0x26: out = mul_high(a, b, sew, 1, 0); break;                          /* vmulhsu */
        case 0x27: out = mul_high(a, b, sew, 1, 1); break;                          /* vmulh */
        case 0x2D: out = b * a + c; break;                                          /* vmacc */
        case 0x2F: out = c - b * a; break;                                          /* vnmsac */
        case 0x29: out = b * c + a; break;                                          /* vmadd */
        default: out = a - b * c; break;                                            /* vnmsub */
        }
        set_element(v, vd, i, bytes, out & m);
    }
    v->vstart = 0;
    return RAN;
}

#include "vector_fp.h"

/* A vector instruction (OP-V, a vector load or store, a vector CSR): RAN, NOT_HERE or
 * REFUSED, as run_one. */
#include "vector_fast.h"

static int vector_instruction(Hart *h, const Decoded *d, uint32_t opcode, uint32_t funct3);

static int vector_run(Hart *h, const Decoded *d) {
    uint32_t insn = d->insn, opcode = insn & 0x7F, funct3 = bits(insn, 14, 12);
    if (opcode == 0x73)
        return vector_csr(h, d);
    int done = vector_instruction(h, d, opcode, funct3);
    if (done == RAN) /* every vector instruction that completes leaves vstart 0 (RVV 1.0 3.7) */
        unit(h)->vstart = 0;
    return done;
}

static int vector_instruction(Hart *h, const Decoded *d, uint32_t opcode, uint32_t funct3) {
    if (vector_fast(h, d) == RAN)
        return RAN; /* (the fast path goes to the general code at any refusal: none is left) */
    if (opcode == 0x07 || opcode == 0x27) {
        int done = vector_memory(h, d, opcode == 0x27);
        if (done == RAN) /* (a refusal it went on from, as a fault-only-first load's, is no fault) */
            h->core->refused.access = 0;
        return done;
    }
    switch (funct3) {
    case OPCFG: return vset_instruction(h, d);
    case OPIVV: case OPIVX: case OPIVI: return vector_integer(h, d, (int)funct3);
    case OPMVV: case OPMVX: return vector_multiply(h, d, (int)funct3);
    case OPFVV: case OPFVF: return vector_float(h, d, (int)funct3);
    }
    return NOT_HERE;
}
