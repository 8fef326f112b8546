/* float.c: the vector unit's floating point (RVV 1.0, chapter 13; OPFVV, OPFVF): ops.def's
 * FLOAT, FLOAT_CMP, FLOAT_REDUCE, FLOAT_WIDEN, FLOAT_OTHER and FLOAT_UNARY rows, and the
 * SF_FLOAT ones (SiFive's, in custom-2).
 *
 * Every operation is softfloat.c's, exact IEEE in binary16 (Zvfh), binary32 and binary64
 * for SEW 16, 32 and 64, rounded by frm and raising fflags as the scalar instructions do;
 * sums and products in every format, and binary32 multiply-adds, under RNE go through the
 * host's binary64 where that is provably the same answer (a FLOAT row's HOST column,
 * hostfloat.h), the reductions' sums too.
 * Done: the single-width arithmetic (vfadd, vfsub, vfrsub, vfmul, vfdiv, vfrdiv, vfmin,
 * vfmax, the sign injections, vfsqrt, vfclass), the eight fused multiply-adds, the
 * comparisons, vfmerge and vfmv (v.f, f.s, s.f), vfslide1up and vfslide1down, the
 * reductions (ordered and unordered, and their widening forms), the widening arithmetic
 * (vfwadd, vfwsub and their .w forms, vfwmul, the widening multiply-adds) and every
 * conversion (single-width, widening and narrowing, between integers and floats and
 * between float widths, with the rtz and rod forms), and the two estimates, vfrec7 and
 * vfrsqrt7 (softfloat.c, from the spec's tables). Zvfbfmin's two conversions between
 * bfloat16 and binary32 (vfwcvtbf16.f.f.v, vfncvtbf16.f.f.w), and SiFive's
 * Xsfvfnrclipxfqf, binary32 to int8 or uint8 with a scale, rounding and a clip
 * (sf.vfnrclip.x.f.qf, sf.vfnrclip.xu.f.qf: vector_float_clip says what it does).
 *
 * Choices where RVV leaves them to the implementation: an unordered sum (vfredusum,
 * vfwredusum) adds in element order, like the ordered one (what QEMU does too, so that both
 * give the same bits); tail and masked-off elements are undisturbed, as everywhere in the
 * unit. A source group that overlaps the destination is read whole before anything is
 * written.
 */
#include "vector.h"
#include "hostfloat.h"


/* The FLOAT rows' HOST column: FUNCT6 in format FMT through the host under RNE, 1 and
 * *OUT, or 0 for softfloat. */
static int host_fast(int funct6, int fmt, uint64_t a, uint64_t b, uint64_t c, uint32_t *flags, uint64_t *out) {
    (void)fmt; (void)a; (void)b; (void)c; (void)flags; (void)out;
    switch (funct6) {
#define FLOAT(f6, name, forms, exact, soft, host) case f6: return host;
#include "rows.h"
    }
    return 0;
}

/* The FLOAT rows' SOFT column: FUNCT6 on A (vs2's element) and B (vs1's or f[rs1]), with C
 * (vd's element, for the multiply-adds), in format FMT; 0 for a funct6 no row has. */
static int float_binary(int funct6, int fmt, uint64_t a, uint64_t b, uint64_t c, int rm, uint32_t *flags,
                        uint64_t sign, uint64_t *out) {
    (void)c; (void)sign;
    if (rm == RM_RNE && host_fast(funct6, fmt, a, b, c, flags, out))
        return 1;
    switch (funct6) {
#define FLOAT(f6, name, forms, exact, soft, host) case f6: *out = soft; return 1;
#include "rows.h"
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

/* -- single width ------------------------------------------------------------------------------ */

/* The unmasked loops of a FLOAT row with a HOST column, under RNE, one a row and format
 * (so that the compiler need not switch on funct6 or the format at every element).
 * Elements the host cannot answer go to the row's softfloat column. */
#define HOST_LOOP(name, suffix, T, FMT, soft, host)                                          \
    static void host_loop_##name##suffix(VectorUnit *v, int vd, int vs2, int vs1, int vf, uint64_t scalar, uint32_t *flags) { \
        T *d = (T *)v->reg[vd];                                                              \
        const T *first = (const T *)v->reg[vs2], *second = (const T *)v->reg[vs1];           \
        const int fmt = FMT, rm = RM_RNE;                                                    \
        const uint64_t sign = (uint64_t)1 << (8 * sizeof(T) - 1);                           \
        (void)fmt; (void)rm; (void)sign;                                                     \
        for (uint64_t i = v->vstart; i < v->vl; i++) { /* (each element read before it is written) */ \
            uint64_t a = first[i], b = vf ? scalar : second[i], c = d[i], result, *out = &result; \
            (void)a; (void)b; (void)c; (void)out;                                            \
            if (!(host)) /* (the row's own softfloat column: no second try of the host's) */ \
                result = soft;                                                               \
            d[i] = (T)result;                                                                \
        }                                                                                    \
    }
#define FLOAT(f6, name, forms, exact, soft, host)                                            \
    HOST_LOOP(name, _16, lane16_t, FP_HALF, soft, host)                                      \
    HOST_LOOP(name, _32, lane32_t, FP_SINGLE, soft, host)                                    \
    HOST_LOOP(name, _64, lane64_t, FP_DOUBLE, soft, host)
#include "rows.h"

/* The loop above of FUNCT6's row in FMT: 1, or 0 for a row without a host column. */
static int host_loop(VectorUnit *v, int funct6, int fmt, int vd, int vs2, int vs1, int vf, uint64_t scalar,
                     uint32_t *flags) {
    switch (funct6) {
#define FLOAT(f6, name, forms, exact, soft, host)                                            \
    case f6:                                                                                 \
        if (sizeof #host == sizeof "0")                                                      \
            return 0;                                                                        \
        if (fmt == FP_HALF)                                                                  \
            host_loop_##name##_16(v, vd, vs2, vs1, vf, scalar, flags);                       \
        else if (fmt == FP_SINGLE)                                                           \
            host_loop_##name##_32(v, vd, vs2, vs1, vf, scalar, flags);                       \
        else                                                                                 \
            host_loop_##name##_64(v, vd, vs2, vs1, vf, scalar, flags);                       \
        return 1;
#include "rows.h"
    }
    return 0;
}

int vector_float_arith(Op *o) {
    Hart *h = o->h;
    VectorUnit *v = o->v;
    int sew = o->sew, bytes = o->bytes, fmt = float_format(sew), vf = !o->vv, vm = o->vm, vd = o->vd, vs2 = o->vs2, vs1 = o->vs1;
    if (fmt < 0 || !group_regs(vs2, o->lmul) || (!vf && !group_regs(vs1, o->lmul)) || !group_regs(vd, o->lmul) ||
        (!vm && vd == 0))
        return NOT_HERE;
    uint64_t scalar = vf ? float_scalar(h, vs1, sew) : 0, sign = (uint64_t)1 << (sew - 1);
    if (o->rm == RM_RNE && vm && host_loop(v, o->funct6, fmt, vd, vs2, vs1, vf, scalar, &h->flags)) {
        v->vstart = 0;
        return RAN;
    }
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t a = element(v, vs2, i, bytes), b = vf ? scalar : element(v, vs1, i, bytes);
        uint64_t c = element(v, vd, i, bytes), out;
        if (!float_binary(o->funct6, fmt, a, b, c, o->rm, &h->flags, sign, &out))
            return NOT_HERE;
        set_element(v, vd, i, bytes, out);
    }
    v->vstart = 0;
    return RAN;
}

/* -- comparisons ----------------------------------------------------------------------------- */

static int float_compare(int funct6, int fmt, uint64_t a, uint64_t b, uint32_t *flags) {
    switch (funct6) {
#define FLOAT_CMP(f6, name, forms, body) case f6: return (body) ? 1 : 0;
#include "rows.h"
    }
    return 0;
}

/* A mask destination: one register, apart from the sources but for the lowest. */
int vector_float_compare(Op *o) {
    Hart *h = o->h;
    VectorUnit *v = o->v, saved_a, saved_b;
    int sew = o->sew, bytes = o->bytes, lmul = o->lmul, fmt = float_format(sew), vf = !o->vv;
    int vm = o->vm, vd = o->vd, vs2 = o->vs2, vs1 = o->vs1;
    int sregs = group_regs(vs2, lmul);
    if (fmt < 0 || !sregs || (!vf && !group_regs(vs1, lmul)))
        return NOT_HERE;
    if (!legal_overlap(vd, 1, 1, vs2, sregs, sew, lmul) || /* (a mask may be written over v0) */
        (!vf && !legal_overlap(vd, 1, 1, vs1, sregs, sew, lmul)))
        return NOT_HERE;
    uint64_t scalar = vf ? float_scalar(h, vs1, sew) : 0;
    VectorUnit *a_file = source_group(v, &saved_a, &vs2, sregs, vd, 1);
    VectorUnit *b_file = vf ? v : source_group(v, &saved_b, &vs1, sregs, vd, 1);
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t b = vf ? scalar : element(b_file, vs1, i, bytes);
        set_mask_bit(v, vd, i, float_compare(o->funct6, fmt, element(a_file, vs2, i, bytes), b, &h->flags));
    }
    v->vstart = 0;
    return RAN;
}

/* -- reductions -------------------------------------------------------------------------- */

/* vfredmin (funct6 0x05), vfredmax (0x07) and the sums, ordered or not, single-width or
 * widening (0x31, 0x33): all in element order. */
int vector_float_reduce(Op *o) {
    Hart *h = o->h;
    VectorUnit *v = o->v;
    int sew = o->sew, widening = o->funct6 >= 0x30, rm = o->rm;
    int fmt = float_format(sew), wide = widening ? float_format(2 * sew) : fmt;
    if (fmt < 0 || wide < 0 || !group_regs(o->vs2, o->lmul) || v->vstart) /* (a reduction needs vstart 0) */
        return NOT_HERE;
    if (v->vl == 0)
        return RAN;
    int bytes = sew / 8, acc_bytes = widening ? 2 * bytes : bytes;
    uint64_t acc = element(v, o->vs1, 0, acc_bytes);
    for (uint64_t i = 0; i < v->vl; i++) {
        if (!active(v, o->vm, i))
            continue;
        uint64_t x = element(v, o->vs2, i, bytes);
        if (widening)
            x = fp_convert(fmt, wide, x, rm, &h->flags);
        switch (o->funct6) {
        case 0x05: acc = fp_min_max(wide, acc, x, 0, &h->flags); break; /* vfredmin */
        case 0x07: acc = fp_min_max(wide, acc, x, 1, &h->flags); break; /* vfredmax */
        default: { /* the sums, in element order */
            uint64_t sum;
            acc = rm == RM_RNE && host_add(wide, acc, x, 0, &sum, &h->flags) ? sum : fp_add(wide, acc, x, rm, &h->flags);
            break;
        }
        }
    }
    set_element(v, o->vd, 0, acc_bytes, acc);
    v->vstart = 0;
    return RAN;
}

/* -- widening arithmetic ----------------------------------------------------------------------- */

/* The FLOAT_WIDEN row of FUNCT6: its single-width row's funct6, and whether vs2 is wide. */
static int widened_single(int funct6, int *wide_vs2) {
    switch (funct6) {
#define FLOAT_WIDEN(f6, name, forms, wide_vs2_, single) case f6: *wide_vs2 = wide_vs2_; return single;
#include "rows.h"
    }
    return -1;
}

/* vd (and vs2 of the .w forms) are 2 * SEW. */
int vector_float_widen(Op *o) {
    Hart *h = o->h;
    VectorUnit *v = o->v, saved_a, saved_b;
    int sew = o->sew, bytes = o->bytes, lmul = o->lmul, fmt = float_format(sew), vf = !o->vv, rm = o->rm;
    int vm = o->vm, vd = o->vd, vs2 = o->vs2, vs1 = o->vs1, wide_vs2;
    int op = widened_single(o->funct6, &wide_vs2);
    int wide = float_format(2 * sew);
    int dregs = group_regs(vd, 2 * lmul), regs2 = group_regs(vs2, wide_vs2 ? 2 * lmul : lmul);
    int regs1 = vf ? 1 : group_regs(vs1, lmul);
    if (fmt < 0 || wide < 0 || 2 * lmul > 64 || !dregs || !regs2 || !regs1 || (!vm && vd == 0) ||
        !legal_overlap(vd, dregs, 2 * sew, vs2, regs2, wide_vs2 ? 2 * sew : sew, wide_vs2 ? 2 * lmul : lmul) ||
        (!vf && !legal_overlap(vd, dregs, 2 * sew, vs1, regs1, sew, lmul)))
        return NOT_HERE;
    uint64_t scalar = vf ? float_scalar(h, vs1, sew) : 0;
    VectorUnit *a_file = wide_vs2 ? v : source_group(v, &saved_a, &vs2, regs2, vd, dregs);
    VectorUnit *b_file = vf ? v : source_group(v, &saved_b, &vs1, regs1, vd, dregs);
    /* (f[rs1] widened once, at the first active element: its flags, a signalling NaN's
     * NV, are raised only when an element uses it) */
    uint64_t b_wide = 0;
    int widened = 0;
    uint64_t wide_sign = ((uint64_t)1 << (sew - 1)) << sew;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t a = wide_vs2 ? element(a_file, vs2, i, 2 * bytes)
                              : fp_convert(fmt, wide, element(a_file, vs2, i, bytes), rm, &h->flags);
        if (vf && !widened) {
            b_wide = fp_convert(fmt, wide, scalar, rm, &h->flags);
            widened = 1;
        }
        uint64_t b = vf ? b_wide : fp_convert(fmt, wide, element(b_file, vs1, i, bytes), rm, &h->flags);
        uint64_t c = element(v, vd, i, 2 * bytes), out;
        float_binary(op, wide, a, b, c, rm, &h->flags, wide_sign, &out);
        set_element(v, vd, i, 2 * bytes, out);
    }
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

/* Element by element, vs2's group (FROM_BITS-bit elements, EMUL FROM_EMUL eighths) converted
 * by convert_one into vd's (TO_BITS, TO_EMUL), after the checks of RVV 1.0 5.2 and 5.3: each
 * group legal and aligned, a masked one not writing v0, the overlap only where the spec
 * allows it for a wider or narrower destination. */
static int convert_groups(Op *o, int from_float, int from_bits, int from_emul, int is_signed, int to_float,
                          int to_bits, int to_emul, int rm) {
    Hart *h = o->h;
    VectorUnit *v = o->v;
    int vm = o->vm, vd = o->vd, vs2 = o->vs2;
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

/* The conversion vs1 names (its FLOAT_UNARY row): bits 4-3 the kind (0 single width, 1
 * widening, 2 narrowing), bits 2-0 the operation (0, 1 float to integer; 6, 7 the same
 * rounding toward zero; 2, 3 integer to float; 4 float to float, 5 rounding to odd),
 * bit 0 of an integer's signedness. */
int vector_float_convert(Op *o) {
    int sew = o->sew, lmul = o->lmul, code = o->vs1, rm = o->rm;
    int kind = code >> 3, op = code & 7;
    int from_bits = kind == 2 ? 2 * sew : sew, to_bits = kind == 1 ? 2 * sew : sew;
    int from_emul = kind == 2 ? 2 * lmul : lmul, to_emul = kind == 1 ? 2 * lmul : lmul;
    int from_float, to_float, is_signed = op & 1;
    if (from_bits > 64 || to_bits > 64) /* (at SEW 64, a widening or narrowing one's other EEW is past ELEN) */
        return NOT_HERE;
    switch (op) {
    case 0: case 1: case 6: case 7: /* float to integer (6, 7: rtz) */
        from_float = float_format(from_bits);
        to_float = -1;
        if (op >= 6)
            rm = RM_RTZ;
        if (from_float < 0)
            return NOT_HERE;
        break;
    case 2: case 3: /* integer to float */
        from_float = -1;
        to_float = float_format(to_bits);
        if (to_float < 0)
            return NOT_HERE;
        break;
    default: /* 4: float to float; 5: the same, rounding to odd */
        from_float = float_format(from_bits);
        to_float = float_format(to_bits);
        if (op == 5)
            rm = RM_ROD;
        is_signed = 0;
        if (from_float < 0 || to_float < 0)
            return NOT_HERE;
        break;
    }
    return convert_groups(o, from_float, from_bits, from_emul, is_signed, to_float, to_bits, to_emul, rm);
}

/* Zvfbfmin: vfwcvtbf16.f.f.v (vs1 13), bfloat16 to binary32, exact; vfncvtbf16.f.f.w
 * (vs1 29), binary32 to bfloat16, rounded by frm. The bfloat16 side has EEW 16, so SEW
 * must be 16 (another is reserved); the binary32 side has EEW 32 and EMUL 2 * LMUL, with
 * the widening and narrowing conversions' rules (vfwcvt.f.f.v's and vfncvt.f.f.w's). */
int vector_bf16_convert(Op *o) {
    int widening = o->vs1 == 13, lmul = o->lmul;
    if (o->sew != 16)
        return NOT_HERE;
    if (widening)
        return convert_groups(o, FP_BFLOAT, 16, lmul, 0, FP_SINGLE, 32, 2 * lmul, o->rm);
    return convert_groups(o, FP_SINGLE, 32, 2 * lmul, 0, FP_BFLOAT, 16, lmul, o->rm);
}

/* Xsfvfnrclipxfqf (SiFive): sf.vfnrclip.x.f.qf (funct6 0x23) and sf.vfnrclip.xu.f.qf (0x22),
 * vd[i] = clip(round(vs2[i] * f[rs1])): each binary32 element of vs2 times the binary32 in
 * f[rs1] (NaN-boxed, as the F extension reads a single), the product rounded to binary32
 * by frm as vfmul.vf rounds it, then converted to an integer rounded by frm and clipped to
 * int8 [-128, 127] or uint8 [0, 255], as a RISC-V conversion to a narrower integer
 * saturates: a NaN becomes 127 or 255. The flags are those two steps' (NV, OF, UF, NX of
 * the product; NX of an inexact conversion, NV of a NaN or a value the clip changed, and
 * not NX then); vxsat is not touched. SEW is the destination's, 8 (another is reserved);
 * vs2 has EEW 32 and EMUL 4 * LMUL, so LMUL is 1/8 to 2; vd may overlap vs2 only in vs2's
 * lowest-numbered register, as any narrowing instruction's destination (RVV 1.0, 5.2).
 * The encoding, the operands, the LMULs and that frm rounds are LLVM's and GCC's; the
 * rounded product, a NaN's value, the flags and the overlap rule are the simulator's
 * choices where those say nothing (docs/simulator.md, bfloat16 and the clip). */
int vector_float_clip(Op *o) {
    Hart *h = o->h;
    VectorUnit *v = o->v;
    int lmul = o->lmul, vm = o->vm, vd = o->vd, vs2 = o->vs2, rm = o->rm, is_signed = o->funct6 & 1;
    if (o->sew != 8 || 4 * lmul > 64)
        return NOT_HERE;
    int sregs = group_regs(vs2, 4 * lmul), dregs = group_regs(vd, lmul);
    if (!sregs || !dregs || (!vm && vd == 0) || !legal_overlap(vd, dregs, 8, vs2, sregs, 32, 4 * lmul))
        return NOT_HERE;
    uint64_t scale = S(h, o->vs1);
    VectorUnit saved;
    VectorUnit *src = source_group(v, &saved, &vs2, sregs, vd, dregs);
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, vm, i))
            continue;
        uint64_t product = fp_mul(FP_SINGLE, element(src, vs2, i, 4), scale, rm, &h->flags);
        set_element(v, vd, i, 1, fp_to_integer(FP_SINGLE, product, 8, is_signed, rm, &h->flags));
    }
    v->vstart = 0;
    return RAN;
}

/* -- the rest --------------------------------------------------------------------------------- */

/* VFUNARY1: vfsqrt (vs1 0), vfrsqrt7 (4), vfrec7 (5), vfclass (16). */
int vector_float_unary(Op *o) {
    Hart *h = o->h;
    VectorUnit *v = o->v;
    int sew = o->sew, bytes = o->bytes, fmt = float_format(sew), vs1 = o->vs1, rm = o->rm;
    if (fmt < 0 || !group_regs(o->vd, o->lmul) || !group_regs(o->vs2, o->lmul) || (!o->vm && o->vd == 0))
        return NOT_HERE;
    for (uint64_t i = v->vstart; i < v->vl; i++) {
        if (!active(v, o->vm, i))
            continue;
        uint64_t x = element(v, o->vs2, i, bytes);
        set_element(v, o->vd, i, bytes, vs1 == 0 ? fp_sqrt(fmt, x, rm, &h->flags)
                                      : vs1 == 4 ? fp_rsqrt7(fmt, x, &h->flags)
                                      : vs1 == 5 ? fp_rec7(fmt, x, rm, &h->flags) : fp_class(fmt, x));
    }
    v->vstart = 0;
    return RAN;
}

/* vfmv.f.s: f[rd] = vs2[0], NaN-boxed. */
int vector_float_to_f(Op *o) {
    int sew = o->sew;
    if (float_format(sew) < 0 || !o->vm)
        return NOT_HERE;
    uint64_t x = element(o->v, o->vs2, 0, o->bytes);
    set_f(o->h, o->vd, sew == 64 ? x : x | ~width_mask(sew));
    o->v->vstart = 0;
    return RAN;
}

/* vfmv.s.f: vd[0] = f[rs1] (when vstart < vl). */
int vector_float_to_element(Op *o) {
    VectorUnit *v = o->v;
    if (float_format(o->sew) < 0 || !o->vm || o->vs2 != 0)
        return NOT_HERE;
    if (v->vstart < v->vl)
        set_element(v, o->vd, 0, o->bytes, float_scalar(o->h, o->vs1, o->sew));
    v->vstart = 0;
    return RAN;
}

/* vfmerge.vfm (VM 0: vd[i] = v0's bit ? f[rs1] : vs2[i]), vfmv.v.f (VM 1, vs2 0). */
int vector_float_merge(Op *o) {
    VectorUnit *v = o->v;
    int vm = o->vm, vd = o->vd, vs2 = o->vs2, bytes = o->bytes;
    if (float_format(o->sew) < 0 || !group_regs(vd, o->lmul) || !group_regs(vs2, o->lmul) || (vm && vs2 != 0) ||
        (!vm && vd == 0))
        return NOT_HERE;
    uint64_t f = float_scalar(o->h, o->vs1, o->sew);
    for (uint64_t i = v->vstart; i < v->vl; i++)
        set_element(v, vd, i, bytes, vm || mask_bit(v, 0, i) ? f : element(v, vs2, i, bytes));
    v->vstart = 0;
    return RAN;
}

/* vfslide1up, vfslide1down: permute.c's slides with f[rs1]. */
int vector_float_slide1(Op *o) {
    if (float_format(o->sew) < 0 || (!o->vm && o->vd == 0))
        return NOT_HERE;
    return slide_one(o, float_scalar(o->h, o->vs1, o->sew), 0);
}

/* For tests (tests/isa/test_softfloat.py): the host's way of FUNCT6 on A, B, C in format
 * FMT, if it takes the case: 1, OUT[0] the result and OUT[1] the flags; else 0. */
int vector_host_fast(int funct6, int fmt, uint64_t a, uint64_t b, uint64_t c, uint64_t out[2]) {
    uint32_t flags = 0;
    int taken = host_fast(funct6, fmt, a, b, c, &flags, &out[0]);
    out[1] = flags;
    return taken;
}

/* The FLOAT rows' SOFT column alone. */
static uint64_t soft_only(int funct6, int fmt, uint64_t a, uint64_t b, uint64_t c, int rm, uint32_t *flags) {
    uint64_t sign = (uint64_t)1 << (fmt == FP_HALF ? 15 : fmt == FP_SINGLE ? 31 : 63);
    (void)c; (void)sign;
    switch (funct6) {
#define FLOAT(f6, name, forms, exact, soft, host) case f6: return soft;
#include "rows.h"
    }
    return 0;
}

/* For tests (tests/isa/test_softfloat.py): FUNCT6 on every binary16 A and every STRIDE-th
 * B from FIRST_B, the host's way against softfloat's where the host answers. Returns how
 * many the host answered, or -1 at the first that differs (A, B, and the two answers,
 * each its bits | its flags << 32, in FOUND). */
int64_t vector_host_sweep(int funct6, uint32_t first_b, uint32_t stride, uint64_t found[4]) {
    int64_t answered = 0;
    for (uint64_t a = 0; a < 65536; a++)
        for (uint64_t b = first_b; b < 65536; b += stride) {
            uint32_t host_flags = 0, soft_flags = 0;
            uint64_t host;
            if (!host_fast(funct6, FP_HALF, a, b, 0, &host_flags, &host))
                continue;
            uint64_t soft = soft_only(funct6, FP_HALF, a, b, 0, RM_RNE, &soft_flags);
            if (host != soft || host_flags != soft_flags) {
                found[0] = a;
                found[1] = b;
                found[2] = host | (uint64_t)host_flags << 32;
                found[3] = soft | (uint64_t)soft_flags << 32;
                return -1;
            }
            answered++;
        }
    return answered;
}
