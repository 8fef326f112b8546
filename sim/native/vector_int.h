/* vector_int.h: the vector unit's widening, narrowing and fixed-point integer instructions,
 * add-with-carry, the integer extensions, the widening reductions, vcompress, vrgatherei16,
 * viota and vmsbf/vmsif/vmsof; included by vector.h, whose helpers (element, group_regs,
 * active, ...) they use, and dispatched from its vector_integer and vector_multiply.
 *
 * Each function checks the encoding as RVV 1.0 does before it changes anything, and returns
 * NOT_HERE for a reserved one: an EMUL past 8 or below 1/8, a misaligned group, a
 * destination overlapping a source against 5.2's rules (vector.h's helpers), v0 both the
 * mask and an operand (5.3, and 5.2's "one EEW a source"), a nonzero vstart where the
 * instruction needs 0. Tail and masked-off elements stay undisturbed, as in vector.h.
 */

/* -- fixed point -------------------------------------------------------------------------- */

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

/* roundoff_signed(X, D) and roundoff_unsigned(X, D) of the spec. */
static __int128 roundoff_signed(int vxrm, __int128 x, int d) {
    return (x >> d) + rounding_increment(vxrm, (unsigned __int128)x, d);
}

static unsigned __int128 roundoff_unsigned(int vxrm, unsigned __int128 x, int d) {
    return (x >> d) + rounding_increment(vxrm, x, d);
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

enum { FX_SADDU, FX_SADD, FX_SSUBU, FX_SSUB, FX_SMUL, FX_SSRL, FX_SSRA, FX_AADDU, FX_AADD, FX_ASUBU, FX_ASUB };

/* A single-width fixed-point operation on SEW-bit A (vs2's element) and B. */
static uint64_t fixed_op(VectorUnit *v, int op, int sew, uint64_t a, uint64_t b) {
    int rm = (int)v->vxrm;
    __int128 sa = sext_bits(a, sew), sb = sext_bits(b, sew);
    unsigned __int128 ua = a, ub = b;
    int shift = (int)(b & (uint64_t)(sew - 1));
    switch (op) {
    case FX_SADDU: return clip_unsigned(v, (__int128)(ua + ub), sew);
    case FX_SADD: return clip_signed(v, sa + sb, sew);
    case FX_SSUBU: return clip_unsigned(v, (__int128)ua - (__int128)ub, sew);
    case FX_SSUB: return clip_signed(v, sa - sb, sew);
    case FX_SMUL: return clip_signed(v, roundoff_signed(rm, sa * sb, sew - 1), sew);
    case FX_SSRL: return (uint64_t)roundoff_unsigned(rm, ua, shift) & width_mask(sew);
    case FX_SSRA: return (uint64_t)roundoff_signed(rm, sa, shift) & width_mask(sew);
    case FX_AADDU: return (uint64_t)roundoff_unsigned(rm, ua + ub, 1) & width_mask(sew);
    case FX_AADD: return (uint64_t)roundoff_signed(rm, sa + sb, 1) & width_mask(sew);
    case FX_ASUBU: return (uint64_t)roundoff_signed(rm, (__int128)ua - (__int128)ub, 1) & width_mask(sew);
    default: return (uint64_t)roundoff_signed(rm, sa - sb, 1) & width_mask(sew);
    }
}

/* vsaddu, vsadd, vssubu, vssub, vsmul, vssrl, vssra (OPIV*) and vaaddu, vaadd, vasubu,
 * vasub (OPMV*) as OP: vd[i] = op(vs2[i], vs1[i] or SCALAR). */
static int vector_fixed(VectorUnit *v, int op, int vv, int vm, int vd, int vs2, int vs1, uint64_t scalar) {
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype);
    if (!group_regs(vd, lmul) || !group_regs(vs2, lmul) || (vv && !group_regs(vs1, lmul)))
        return NOT_HERE;
    if (clashes_with_mask(vm, vd) || clashes_with_mask(vm, vs2) || (vv && clashes_with_mask(vm, vs1)))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++)
        if (active(v, vm, i))
            set_element(v, vd, i, bytes,
                        fixed_op(v, op, sew, element(v, vs2, i, bytes), vv ? element(v, vs1, i, bytes) : scalar));
    v->vstart = 0;
    return RAN;
}

/* -- widening and narrowing ----------------------------------------------------------------- */

/* vwaddu, vwadd, vwsubu, vwsub (.vv .vx, and .wv .wx with vs2 of 2*SEW), vwmulu, vwmulsu,
 * vwmul, vwmaccu, vwmacc, vwmaccus (.vx only), vwmaccsu: OPMVV and OPMVX funct6 0x30-0x3F,
 * results of 2*SEW bits in a group of 2*LMUL. X is x[rs1]. */
static int vector_widening(VectorUnit *v, int funct6, int vv, int vm, int vd, int vs2, int vs1, uint64_t x) {
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype);
    int wide_vs2 = funct6 >= 0x34 && funct6 <= 0x37, muladd = funct6 >= 0x3C, narrow_regs = regs_of(lmul);
    if (funct6 == 0x39 || (funct6 == 0x3E && vv) || sew > 32 || lmul > 32) /* (2*SEW <= ELEN, 2*LMUL <= 8) */
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
        uint64_t b = vv ? element(v, vs1, i, bytes) : x & width_mask(sew);
        uint64_t sa = (uint64_t)sext_bits(a, sew), sb = (uint64_t)sext_bits(b, sew), c = element(v, vd, i, 2 * bytes);
        uint64_t out; /* (arithmetic mod 2^64 of the extended operands, then 2*SEW bits of it) */
        switch (funct6) {
        case 0x30: out = a + b; break;       /* vwaddu */
        case 0x31: out = sa + sb; break;     /* vwadd */
        case 0x32: out = a - b; break;       /* vwsubu */
        case 0x33: out = sa - sb; break;     /* vwsub */
        case 0x34: out = a + b; break;       /* vwaddu.w */
        case 0x35: out = a + sb; break;      /* vwadd.w */
        case 0x36: out = a - b; break;       /* vwsubu.w */
        case 0x37: out = a - sb; break;      /* vwsub.w */
        case 0x38: out = a * b; break;       /* vwmulu */
        case 0x3A: out = sa * b; break;      /* vwmulsu: signed vs2, unsigned vs1 */
        case 0x3B: out = sa * sb; break;     /* vwmul */
        case 0x3C: out = c + b * a; break;   /* vwmaccu */
        case 0x3D: out = c + sb * sa; break; /* vwmacc */
        case 0x3E: out = c + b * sa; break;  /* vwmaccus: unsigned x, signed vs2 */
        default: out = c + sb * a; break;    /* vwmaccsu: signed vs1 or x, unsigned vs2 */
        }
        set_element(v, vd, i, 2 * bytes, out & width_mask(2 * sew));
    }
    v->vstart = 0;
    return RAN;
}

/* vnsrl, vnsra, vnclipu, vnclip (.wv .wx .wi; OPIV* funct6 0x2C-0x2F): vs2 of 2*SEW shifted
 * right by vs1[i] or SCALAR (its low log2(2*SEW) bits) into SEW bits. */
static int vector_narrowing(VectorUnit *v, int funct6, int vv, int vm, int vd, int vs2, int vs1, uint64_t scalar) {
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype), rm = (int)v->vxrm;
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
        uint64_t a = element(v, vs2, i, 2 * bytes), out;
        int shift = (int)((vv ? element(v, vs1, i, bytes) : scalar) & (uint64_t)(2 * sew - 1));
        __int128 sa = sext_bits(a, 2 * sew);
        switch (funct6) {
        case 0x2C: out = (a >> shift) & width_mask(sew); break;                      /* vnsrl */
        case 0x2D: out = (uint64_t)(sa >> shift) & width_mask(sew); break;           /* vnsra */
        case 0x2E: out = clip_unsigned(v, (__int128)roundoff_unsigned(rm, a, shift), sew); break; /* vnclipu */
        default: out = clip_signed(v, roundoff_signed(rm, sa, shift), sew); break;   /* vnclip */
        }
        set_element(v, vd, i, bytes, out);
    }
    v->vstart = 0;
    return RAN;
}

/* vzext.vf2/4/8, vsext.vf2/4/8 (OPMVV funct6 0x12, WHICH is the vs1 field): vs2's elements
 * of SEW/f bits (EMUL LMUL/f) extended to SEW. */
static int vector_extend(VectorUnit *v, int which, int vm, int vd, int vs2) {
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype);
    if (which < 2 || which > 7)
        return NOT_HERE;
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

/* -- add with carry ------------------------------------------------------------------------ */

/* vadc, vmadc, vsbc, vmsbc (OPIV* funct6 0x10-0x13): with v0's bit the carry or borrow in
 * when VM is 0 (vadc and vsbc must have it); vmadc and vmsbc write the carry or borrow out
 * as a mask. */
static int vector_carry(VectorUnit *v, int funct3, int funct6, int vm, int vd, int vs2, int vs1, uint64_t scalar) {
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype), vv = funct3 == OPIVV;
    int to_mask = funct6 & 1, subtract = funct6 >= 0x12, regs = regs_of(lmul);
    uint64_t m = width_mask(sew);
    if ((subtract && funct3 == OPIVI) || (!to_mask && (vm || vd == 0)))
        return NOT_HERE;
    if (!group_regs(vs2, lmul) || (vv && !group_regs(vs1, lmul)) || (!to_mask && !group_regs(vd, lmul)))
        return NOT_HERE;
    if (clashes_with_mask(vm, vs2) || (vv && clashes_with_mask(vm, vs1)))
        return NOT_HERE;
    if (to_mask && (!narrower_dest_ok(vd, 1, vs2, regs) || (vv && !narrower_dest_ok(vd, 1, vs1, regs))))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        uint64_t a = element(v, vs2, i, bytes), b = vv ? element(v, vs1, i, bytes) : scalar;
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

/* -- reductions, permutations, mask instructions --------------------------------------------- */

/* vwredsumu, vwredsum (OPIVV funct6 0x30, 0x31): vd[0] = vs1[0] + the active vs2[i]
 * extended, in 2*SEW bits. */
static int widening_reduction(VectorUnit *v, int funct6, int vm, int vd, int vs2, int vs1) {
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype), regs = group_regs(vs2, lmul);
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
        acc += funct6 == 0x31 ? (uint64_t)sext_bits(x, sew) : x;
    }
    set_element(v, vd, 0, 2 * bytes, acc & width_mask(2 * sew));
    return RAN;
}

/* vrgatherei16.vv (OPIVV funct6 0x0E): vd[i] = vs2[vs1[i]], vs1's elements of 16 bits
 * (EMUL 16/SEW*LMUL); 0 for an index past VLMAX. */
static int gather_ei16(VectorUnit *v, int vm, int vd, int vs2, int vs1) {
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype);
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

/* vcompress.vm (OPMVV funct6 0x17): the vs2[i] whose bit in the mask vs1 is set, packed
 * from vd[0]; the rest of vd is tail, undisturbed. */
static int vector_compress(VectorUnit *v, int vm, int vd, int vs2, int vs1) {
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype), regs = group_regs(vd, lmul);
    if (!vm || v->vstart || !regs || !group_regs(vs2, lmul))
        return NOT_HERE;
    if (groups_overlap(vd, regs, vs2, regs) || groups_overlap(vd, regs, vs1, 1) || groups_overlap(vs2, regs, vs1, 1))
        return NOT_HERE;
    uint64_t n = 0;
    for (uint64_t i = 0; i < v->vl; i++)
        if (mask_bit(v, vs1, i))
            set_element(v, vd, n++, bytes, element(v, vs2, i, bytes));
    return RAN;
}

/* viota.m (OPMVV funct6 0x14, vs1 0x10): vd[i] = the number of set bits of the mask vs2
 * among the active elements before i. */
static int vector_iota(VectorUnit *v, int vm, int vd, int vs2) {
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype), regs = group_regs(vd, lmul);
    if (!regs || v->vstart || groups_overlap(vd, regs, vs2, 1) || clashes_with_mask(vm, vd))
        return NOT_HERE;
    uint64_t count = 0;
    for (uint64_t i = 0; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        set_element(v, vd, i, bytes, count & width_mask(sew));
        count += (uint64_t)mask_bit(v, vs2, i);
    }
    return RAN;
}

/* vmsbf.m, vmsof.m, vmsif.m (OPMVV funct6 0x14, vs1 1, 2, 3): the mask of the active elements
 * before vs2's first set bit (among the active ones), of that bit alone, or up to it. */
static int set_first(VectorUnit *v, int which, int vm, int vd, int vs2) {
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
