/* vector_fp.h: the vector unit's floating point (OPFVV, OPFVF), included by vector.h.
 *
 * Every operation is softfloat.c's, exact IEEE in binary16 (Zvfh), binary32 and binary64
 * for SEW 16, 32 and 64, rounded by frm and raising fflags as the scalar instructions do;
 * binary32 sums, products and multiply-adds under RNE go through the host's binary64
 * where that is provably the same answer (hostfloat.h).
 * Done: the single-width arithmetic (vfadd, vfsub, vfrsub, vfmul, vfdiv, vfrdiv, vfmin,
 * vfmax, the sign injections, vfsqrt, vfclass), the eight fused multiply-adds, the
 * comparisons, vfmerge and vfmv (v.f, f.s, s.f), vfslide1up and vfslide1down, the
 * reductions (ordered and unordered, and their widening forms), the widening arithmetic
 * (vfwadd, vfwsub and their .w forms, vfwmul, the widening multiply-adds) and every
 * conversion (single-width, widening and narrowing, between integers and floats and
 * between float widths, with the rtz and rod forms), and the two estimates, vfrec7 and
 * vfrsqrt7 (softfloat.c, from the spec's tables).
 *
 * Choices where RVV leaves them to the implementation: an unordered sum (vfredusum,
 * vfwredusum) adds in element order, like the ordered one (what QEMU does too, so that both
 * give the same bits); tail and masked-off elements are undisturbed, as everywhere in the
 * unit. A source group that overlaps the destination is read whole before anything is
 * written.
 */

#include "hostfloat.h"

/* The binary32 operations of float_binary the host does (hostfloat.h) under RNE: 1 and
 * *OUT, or 0 for softfloat. */
static int single_fast(int funct6, uint32_t a, uint32_t b, uint32_t c, uint32_t *flags, uint32_t *out) {
    switch (funct6) {
    case 0x00: return single_add(a, b, 0, out, flags);
    case 0x02: return single_add(a, b, 1, out, flags);
    case 0x27: return single_add(b, a, 1, out, flags);
    case 0x24: return single_mul(a, b, out, flags);
    case 0x28: return single_fma(b, c, a, 0, 0, out, flags);
    case 0x29: return single_fma(b, c, a, 1, 1, out, flags);
    case 0x2A: return single_fma(b, c, a, 0, 1, out, flags);
    case 0x2B: return single_fma(b, c, a, 1, 0, out, flags);
    case 0x2C: return single_fma(b, a, c, 0, 0, out, flags);
    case 0x2D: return single_fma(b, a, c, 1, 1, out, flags);
    case 0x2E: return single_fma(b, a, c, 0, 1, out, flags);
    case 0x2F: return single_fma(b, a, c, 1, 0, out, flags);
    }
    return 0;
}

static int float_format(int sew) { return sew == 16 ? FP_HALF : sew == 32 ? FP_SINGLE : sew == 64 ? FP_DOUBLE : -1; }

/* f register N as a SEW-bit float (NaN-boxed below 64 bits, as H and S read them). */
static uint64_t float_scalar(Hart *h, int n, int sew) {
    return sew == 16 ? H(h, n) : sew == 32 ? S(h, n) : F(h, n);
}

/* Whether a destination group (VD, DREGS registers of DEEW-bit elements) may overlap a
 * source group (VS, SREGS of SEEW-bit ones, SEMUL in eighths), as RVV 1.0 section 5.2 says
 * (vector.h's rules, by which of the two is wider). */
static int legal_overlap(int vd, int dregs, int deew, int vs, int sregs, int seew, int semul) {
    if (deew == seew)
        return 1;
    return deew < seew ? narrower_dest_ok(vd, dregs, vs, sregs) : wider_dest_ok(vd, dregs, vs, semul);
}

/* A copy of the group at BASE (REGS registers) when it overlaps the destination, so that
 * the elements are read as they were before the instruction: returns the register file
 * to read it from (V's own, or SAVED's) and the register number there. */
static VectorUnit *source_group(VectorUnit *v, VectorUnit *saved, int *base, int regs, int vd, int dregs) {
    if (!groups_overlap(*base, regs, vd, dregs))
        return v;
    __builtin_memcpy(saved->reg[0], v->reg[*base], (size_t)regs * VLENB);
    *base = 0;
    return saved;
}

/* One single-width operation of funct6 on A (vs2's element) and B (vs1's or f[rs1]), with
 * C (vd's element, for the multiply-adds); 0 for a funct6 that is none of them. */
static int float_binary(int funct6, int fmt, uint64_t a, uint64_t b, uint64_t c, int rm, uint32_t *flags,
                        uint64_t sign, uint64_t *out) {
    uint32_t single;
    if (fmt == FP_SINGLE && rm == RM_RNE && single_fast(funct6, (uint32_t)a, (uint32_t)b, (uint32_t)c, flags, &single)) {
        *out = single;
        return 1;
    }
    switch (funct6) {
    case 0x00: *out = fp_add(fmt, a, b, rm, flags); return 1;            /* vfadd */
    case 0x02: *out = fp_sub(fmt, a, b, rm, flags); return 1;            /* vfsub */
    case 0x27: *out = fp_sub(fmt, b, a, rm, flags); return 1;            /* vfrsub */
    case 0x04: *out = fp_min_max(fmt, a, b, 0, flags); return 1;         /* vfmin */
    case 0x06: *out = fp_min_max(fmt, a, b, 1, flags); return 1;         /* vfmax */
    case 0x08: *out = (a & ~sign) | (b & sign); return 1;                /* vfsgnj */
    case 0x09: *out = (a & ~sign) | (~b & sign); return 1;               /* vfsgnjn */
    case 0x0A: *out = a ^ (b & sign); return 1;                          /* vfsgnjx */
    case 0x20: *out = fp_div(fmt, a, b, rm, flags); return 1;            /* vfdiv */
    case 0x21: *out = fp_div(fmt, b, a, rm, flags); return 1;            /* vfrdiv */
    case 0x24: *out = fp_mul(fmt, a, b, rm, flags); return 1;            /* vfmul */
    case 0x28: *out = fp_fma(fmt, b, c, a, 0, 0, rm, flags); return 1;   /* vfmadd: vs1 * vd + vs2 */
    case 0x29: *out = fp_fma(fmt, b, c, a, 1, 1, rm, flags); return 1;   /* vfnmadd: -(vs1 * vd) - vs2 */
    case 0x2A: *out = fp_fma(fmt, b, c, a, 0, 1, rm, flags); return 1;   /* vfmsub: vs1 * vd - vs2 */
    case 0x2B: *out = fp_fma(fmt, b, c, a, 1, 0, rm, flags); return 1;   /* vfnmsub: -(vs1 * vd) + vs2 */
    case 0x2C: *out = fp_fma(fmt, b, a, c, 0, 0, rm, flags); return 1;   /* vfmacc: vs1 * vs2 + vd */
    case 0x2D: *out = fp_fma(fmt, b, a, c, 1, 1, rm, flags); return 1;   /* vfnmacc: -(vs1 * vs2) - vd */
    case 0x2E: *out = fp_fma(fmt, b, a, c, 0, 1, rm, flags); return 1;   /* vfmsac: vs1 * vs2 - vd */
    case 0x2F: *out = fp_fma(fmt, b, a, c, 1, 0, rm, flags); return 1;   /* vfnmsac: -(vs1 * vs2) + vd */
    }
    return 0;
}

/* The unmasked binary32 loop of float_binary's single_fast operations under RNE, typed:
 * 1, or 0 for a funct6 it does not take. (Elements the host cannot answer go to softfloat.) */
static int single_loop(VectorUnit *v, int funct6, int vd, int vs2, int vs1, int vf, uint32_t scalar, uint32_t *flags) {
    switch (funct6) {
    case 0x00: case 0x02: case 0x27: case 0x24:
    case 0x28: case 0x29: case 0x2A: case 0x2B: case 0x2C: case 0x2D: case 0x2E: case 0x2F: break;
    default: return 0;
    }
    uint32_t *d = (uint32_t *)v->reg[vd];
    const uint32_t *a = (const uint32_t *)v->reg[vs2], *b = (const uint32_t *)v->reg[vs1];
    for (uint64_t i = v->vstart; i < v->vl; i++) { /* (each element read before it is written) */
        uint32_t x = a[i], y = vf ? scalar : b[i], c = d[i], out;
        if (!single_fast(funct6, x, y, c, flags, &out)) {
            uint64_t wide;
            float_binary(funct6, FP_SINGLE, x, y, c, RM_RNE, flags, 0x80000000u, &wide);
            out = (uint32_t)wide;
        }
        d[i] = out;
    }
    return 1;
}

/* The comparisons: a mask bit, or -1 for a funct6 that is none. */
static int float_compare(int funct6, int fmt, uint64_t a, uint64_t b, uint32_t *flags) {
    switch (funct6) {
    case 0x18: return fp_compare(fmt, a, b, 2, flags);   /* vmfeq */
    case 0x19: return fp_compare(fmt, a, b, 0, flags);   /* vmfle */
    case 0x1B: return fp_compare(fmt, a, b, 1, flags);   /* vmflt */
    case 0x1C: return !fp_compare(fmt, a, b, 2, flags);  /* vmfne */
    case 0x1D: return fp_compare(fmt, b, a, 1, flags);   /* vmfgt: a > b */
    case 0x1F: return fp_compare(fmt, b, a, 0, flags);   /* vmfge */
    }
    return -1;
}

/* Which funct6 have which forms: 1 .vv only, 2 .vf only, 3 both. */
static int float_forms(int funct6) {
    switch (funct6) {
    case 0x00: case 0x02: case 0x04: case 0x06: case 0x08: case 0x09: case 0x0A: case 0x20: case 0x24:
    case 0x28: case 0x29: case 0x2A: case 0x2B: case 0x2C: case 0x2D: case 0x2E: case 0x2F:
    case 0x18: case 0x19: case 0x1B: case 0x1C:
    case 0x30: case 0x32: case 0x34: case 0x36: case 0x38: case 0x3C: case 0x3D: case 0x3E: case 0x3F:
        return 3;
    case 0x21: case 0x27: case 0x1D: case 0x1F: return 2;
    }
    return 0;
}

/* -- reductions -------------------------------------------------------------------------- */

static int float_reduce(Hart *h, VectorUnit *v, int funct6, int vm, int vd, int vs2, int vs1, int rm) {
    int sew = sew_bits(v->vtype), lmul = lmul_eighths(v->vtype), widening = funct6 >= 0x30;
    int fmt = float_format(sew), wide = widening ? float_format(2 * sew) : fmt;
    if (fmt < 0 || wide < 0 || !group_regs(vs2, lmul) || v->vstart) /* (a reduction needs vstart 0) */
        return NOT_HERE;
    if (v->vl == 0)
        return RAN;
    int bytes = sew / 8, acc_bytes = widening ? 2 * bytes : bytes;
    uint64_t acc = element(v, vs1, 0, acc_bytes);
    for (uint64_t i = 0; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t x = element(v, vs2, i, bytes);
        if (widening)
            x = fp_convert(fmt, wide, x, rm, &h->flags);
        switch (funct6) {
        case 0x05: acc = fp_min_max(wide, acc, x, 0, &h->flags); break; /* vfredmin */
        case 0x07: acc = fp_min_max(wide, acc, x, 1, &h->flags); break; /* vfredmax */
        default: { /* the sums, in element order */
            uint32_t single;
            if (wide == FP_SINGLE && rm == RM_RNE && single_add((uint32_t)acc, (uint32_t)x, 0, &single, &h->flags))
                acc = single;
            else
                acc = fp_add(wide, acc, x, rm, &h->flags);
            break;
        }
        }
    }
    set_element(v, vd, 0, acc_bytes, acc);
    v->vstart = 0;
    return RAN;
}

/* -- conversions (VFUNARY0) ----------------------------------------------------------------- */

/* X of FROM_BITS (an integer, SIGNED or not, when FROM_FLOAT is -1; else a float of format
 * FROM_FLOAT) to TO_BITS (an integer when TO_FLOAT is -1), rounded by RM. */
static uint64_t convert_one(uint64_t x, int from_float, int from_bits, int is_signed, int to_float, int to_bits,
                            int rm, uint32_t *flags) {
    if (from_float >= 0 && to_float >= 0)
        return fp_convert(from_float, to_float, x, rm, flags);
    if (from_float >= 0)
        return fp_to_integer(from_float, x, to_bits, is_signed, rm, flags) & width_mask(to_bits);
    int negative = is_signed && sext_bits(x, from_bits) < 0;
    uint64_t magnitude = negative ? 0 - (uint64_t)sext_bits(x, from_bits) : x & width_mask(from_bits);
    return integer_to_fp(to_float, magnitude, negative, rm, flags);
}

static int float_convert(Hart *h, VectorUnit *v, int vm, int vd, int vs2, int code, int rm) {
    int sew = sew_bits(v->vtype), lmul = lmul_eighths(v->vtype);
    int kind = code >> 3, op = code & 7; /* kind 0: single width, 1: widening, 2: narrowing */
    int from_bits = kind == 2 ? 2 * sew : sew, to_bits = kind == 1 ? 2 * sew : sew;
    int from_emul = kind == 2 ? 2 * lmul : lmul, to_emul = kind == 1 ? 2 * lmul : lmul;
    int from_float, to_float, is_signed = op & 1;
    if (kind > 2 || (op == 4 && kind == 0) || (op == 5 && kind != 2)) /* (vfcvt.f.f and rod exist only wider or narrower) */
        return NOT_HERE;
    switch (op) {
    case 0: case 1: case 6: case 7: /* float to integer (6, 7: rtz) */
        from_float = float_format(from_bits);
        to_float = -1;
        if (op >= 6)
            rm = RM_RTZ;
        break;
    case 2: case 3: /* integer to float */
        from_float = -1;
        to_float = float_format(to_bits);
        break;
    default: /* 4: float to float; 5: the same, rounding to odd (narrowing only) */
        from_float = float_format(from_bits);
        to_float = float_format(to_bits);
        if (op == 5)
            rm = RM_ROD;
        is_signed = 0;
        break;
    }
    if ((op <= 1 || op >= 6) && from_float < 0)
        return NOT_HERE;
    if ((op == 2 || op == 3) && to_float < 0)
        return NOT_HERE;
    if ((op == 4 || op == 5) && (from_float < 0 || to_float < 0))
        return NOT_HERE;
    int sregs = group_regs(vs2, from_emul), dregs = group_regs(vd, to_emul);
    if (from_emul > 64 || to_emul > 64 || !sregs || !dregs || (!vm && vd == 0) ||
        !legal_overlap(vd, dregs, to_bits, vs2, sregs, from_bits, from_emul))
        return NOT_HERE;
    VectorUnit saved;
    VectorUnit *src = source_group(v, &saved, &vs2, sregs, vd, dregs);
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t x = element(src, vs2, i, from_bits / 8);
        set_element(v, vd, i, to_bits / 8, convert_one(x, from_float, from_bits, is_signed, to_float, to_bits, rm, &h->flags));
    }
    v->vstart = 0;
    return RAN;
}

/* -- the rest --------------------------------------------------------------------------------- */

static int vector_float(Hart *h, const Decoded *d, int funct3) {
    VectorUnit *v = unit(h);
    uint32_t insn = d->insn;
    int funct6 = (int)(insn >> 26), vm = (int)bits(insn, 25, 25), vs2 = d->rs2, vs1 = d->rs1, vd = d->rd;
    if (v->vtype & VILL)
        return NOT_HERE;
    int sew = sew_bits(v->vtype), bytes = sew / 8, lmul = lmul_eighths(v->vtype), fmt = float_format(sew);
    int vf = funct3 == OPFVF;
    int rm = rounding(h, RM_DYN);
    /* (the conversions that round toward zero or to odd whatever frm says, or are exact) */
    int fixed = funct6 == 0x12 && (vs1 == 6 || vs1 == 7 || vs1 == 10 || vs1 == 11 || vs1 == 12 || vs1 == 14 ||
                                   vs1 == 15 || vs1 == 21 || vs1 == 22 || vs1 == 23);
    int exact = fixed || (funct6 == 0x13 && vs1 == 4) || funct6 == 0x04 || funct6 == 0x06 || (funct6 >= 0x08 && funct6 <= 0x0A) || funct6 == 0x0E ||
                funct6 == 0x0F || funct6 == 0x10 || funct6 == 0x17 || (funct6 >= 0x18 && funct6 <= 0x1F) ||
                funct6 == 0x05 || funct6 == 0x07 || (funct6 == 0x13 && vs1 == 16);
    if (rm < 0) { /* frm holds a reserved rounding mode: an instruction that rounds is illegal */
        if (!exact)
            return NOT_HERE;
        rm = RM_RNE;
    }
    if (funct6 == 0x12 && !vf) /* VFUNARY0: the conversions (SEW 8 is an integer side's) */
        return float_convert(h, v, vm, vd, vs2, vs1, rm);
    if (fmt < 0)
        return NOT_HERE;
    uint64_t sign = (uint64_t)1 << (sew - 1);
    if (funct6 == 0x10) { /* vfmv.f.s (.vv, vs1 0) and vfmv.s.f (.vf, vs2 0) */
        if (!vm)
            return NOT_HERE;
        if (!vf && vs1 == 0) {
            uint64_t x = element(v, vs2, 0, bytes);
            set_f(h, vd, sew == 64 ? x : x | ~width_mask(sew)); /* NaN-boxed */
            v->vstart = 0;
            return RAN;
        }
        if (vf && vs2 == 0) {
            if (v->vstart < v->vl)
                set_element(v, vd, 0, bytes, float_scalar(h, vs1, sew));
            v->vstart = 0;
            return RAN;
        }
        return NOT_HERE;
    }
    int regs = group_regs(vd, lmul);
    if (funct6 == 0x17 && vf) { /* vfmerge.vfm (vm 0), vfmv.v.f (vm 1, vs2 0) */
        if (!regs || !group_regs(vs2, lmul) || (vm && vs2 != 0) || (!vm && vd == 0))
            return NOT_HERE;
        uint64_t f = float_scalar(h, vs1, sew);
        for (uint64_t i = v->vstart; i < v->vl; i++)
            set_element(v, vd, i, bytes, vm || mask_bit(v, 0, i) ? f : element(v, vs2, i, bytes));
        v->vstart = 0;
        return RAN;
    }
    if (funct6 == 0x13 && !vf) { /* VFUNARY1: vfsqrt (0), vfrsqrt7 (4), vfrec7 (5), vfclass (16) */
        if (!regs || !group_regs(vs2, lmul) || (vs1 != 0 && vs1 != 4 && vs1 != 5 && vs1 != 16) || (!vm && vd == 0))
            return NOT_HERE;
        for (uint64_t i = v->vstart; i < v->vl; i++) {
            if (!active(v, vm, i))
                continue;
            uint64_t x = element(v, vs2, i, bytes);
            set_element(v, vd, i, bytes, vs1 == 0 ? fp_sqrt(fmt, x, rm, &h->flags)
                                         : vs1 == 4 ? fp_rsqrt7(fmt, x, &h->flags)
                                         : vs1 == 5 ? fp_rec7(fmt, x, rm, &h->flags) : fp_class(fmt, x));
        }
        v->vstart = 0;
        return RAN;
    }
    if ((funct6 == 0x0E || funct6 == 0x0F) && vf) { /* vfslide1up, vfslide1down */
        if (!regs || !group_regs(vs2, lmul) || (funct6 == 0x0E && groups_overlap(vd, regs, vs2, regs)) || (!vm && vd == 0))
            return NOT_HERE;
        return slide1(v, funct6 == 0x0E, vm, vd, vs2, bytes, float_scalar(h, vs1, sew));
    }
    if (!vf && (funct6 == 0x01 || funct6 == 0x03 || funct6 == 0x05 || funct6 == 0x07 || funct6 == 0x31 || funct6 == 0x33))
        return float_reduce(h, v, funct6, vm, vd, vs2, vs1, rm);
    int forms = float_forms(funct6);
    if (!(forms & (vf ? 2 : 1)))
        return NOT_HERE;
    uint64_t scalar = vf ? float_scalar(h, vs1, sew) : 0;
    VectorUnit saved_a, saved_b;
    if (funct6 >= 0x30) { /* widening: vd (and vs2 of the .w forms) are 2 * SEW */
        int wide = float_format(2 * sew), wide_vs2 = funct6 == 0x34 || funct6 == 0x36;
        int dregs = group_regs(vd, 2 * lmul), regs2 = group_regs(vs2, wide_vs2 ? 2 * lmul : lmul);
        int regs1 = vf ? 1 : group_regs(vs1, lmul);
        if (wide < 0 || 2 * lmul > 64 || !dregs || !regs2 || !regs1 || (!vm && vd == 0) ||
            !legal_overlap(vd, dregs, 2 * sew, vs2, regs2, wide_vs2 ? 2 * sew : sew, wide_vs2 ? 2 * lmul : lmul) ||
            (!vf && !legal_overlap(vd, dregs, 2 * sew, vs1, regs1, sew, lmul)))
            return NOT_HERE;
        VectorUnit *a_file = wide_vs2 ? v : source_group(v, &saved_a, &vs2, regs2, vd, dregs);
        VectorUnit *b_file = vf ? v : source_group(v, &saved_b, &vs1, regs1, vd, dregs);
        /* (f[rs1] widened once, at the first active element: its flags, a signalling NaN's
         * NV, are raised only when an element uses it) */
        uint64_t b_wide = 0;
        int widened = 0;
        uint64_t wide_sign = sign << sew;
        for (uint64_t i = v->vstart; i < v->vl; i++) {
            if (!active(v, vm, i))
                continue;
            uint64_t a = wide_vs2 ? element(a_file, vs2, i, 2 * bytes) : fp_convert(fmt, wide, element(a_file, vs2, i, bytes), rm, &h->flags);
            if (vf && !widened) {
                b_wide = fp_convert(fmt, wide, scalar, rm, &h->flags);
                widened = 1;
            }
            uint64_t b = vf ? b_wide : fp_convert(fmt, wide, element(b_file, vs1, i, bytes), rm, &h->flags);
            uint64_t c = element(v, vd, i, 2 * bytes), out;
            int op = funct6 == 0x30 || funct6 == 0x34 ? 0x00 : funct6 == 0x32 || funct6 == 0x36 ? 0x02
                   : funct6 == 0x38 ? 0x24 : funct6 - 0x3C + 0x2C; /* (the single-width funct6 of each) */
            float_binary(op, wide, a, b, c, rm, &h->flags, wide_sign, &out);
            set_element(v, vd, i, 2 * bytes, out);
        }
        v->vstart = 0;
        return RAN;
    }
    if (!group_regs(vs2, lmul) || (!vf && !group_regs(vs1, lmul)))
        return NOT_HERE;
    int compare = funct6 >= 0x18 && funct6 <= 0x1F;
    if (compare) { /* a mask destination: one register, apart from the sources but for the lowest */
        int sregs = group_regs(vs2, lmul);
        if (!legal_overlap(vd, 1, 1, vs2, sregs, sew, lmul) || /* (a mask may be written over v0) */
            (!vf && !legal_overlap(vd, 1, 1, vs1, sregs, sew, lmul)))
            return NOT_HERE;
        VectorUnit *a_file = source_group(v, &saved_a, &vs2, sregs, vd, 1);
        VectorUnit *b_file = vf ? v : source_group(v, &saved_b, &vs1, sregs, vd, 1);
        for (uint64_t i = v->vstart; i < v->vl; i++) {
            if (!active(v, vm, i))
                continue;
            uint64_t b = vf ? scalar : element(b_file, vs1, i, bytes);
            set_mask_bit(v, vd, i, float_compare(funct6, fmt, element(a_file, vs2, i, bytes), b, &h->flags));
        }
        v->vstart = 0;
        return RAN;
    }
    if (!regs || (!vm && vd == 0))
        return NOT_HERE;
    if (fmt == FP_SINGLE && rm == RM_RNE && vm && single_loop(v, funct6, vd, vs2, vs1, vf, (uint32_t)scalar, &h->flags)) {
        v->vstart = 0;
        return RAN;
    }
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t a = element(v, vs2, i, bytes), b = vf ? scalar : element(v, vs1, i, bytes);
        uint64_t c = element(v, vd, i, bytes), out;
        if (!float_binary(funct6, fmt, a, b, c, rm, &h->flags, sign, &out))
            return NOT_HERE;
        set_element(v, vd, i, bytes, out);
    }
    v->vstart = 0;
    return RAN;
}

/* For tests (tests/test_softfloat.py): the host's way of FUNCT6 on binary32 A, B, C, if it
 * takes the case: 1, OUT[0] the result and OUT[1] the flags; else 0. */
int vector_single_fast(int funct6, uint32_t a, uint32_t b, uint32_t c, uint32_t out[2]) {
    out[1] = 0;
    return single_fast(funct6, a, b, c, &out[1], &out[0]);
}
