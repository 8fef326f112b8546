/* softfloat.c: IEEE 754 binary16, binary32 and binary64 arithmetic exactly, in integers:
 * Zfh's half precision and the vector unit's floating point at SEW 16, 32 and 64
 * (vector/float.c). (The engine's own F and D, the simulator's build of it runs as the
 * X280 does: sim/build/engine.py.) A fourth format, bfloat16 (binary32's sign and 8-bit
 * exponent with 7 fraction bits), is there for Zvfbfmin's conversions to and from
 * binary32: fp_convert rounds to it and widens from it like any other format.
 *
 * Every operation works on exact values: a finite number is sign * mant * 2^exp with an
 * integer mant. Sums are formed in 128 bits with both operands' leading bits at bit 125;
 * what shifts out below is kept as a sticky bit ORed into the last (softfloat's "jamming"),
 * which with 70 and more bits below the result's rounding point rounds exactly. Products
 * are exact (at most 106 bits), quotients and square roots carry at least 61 bits and a
 * sticky bit for the remainder. One function rounds an exact value to a format, in each
 * of the five RISC-V rounding modes and round-to-odd (vfncvt.rod), raising the flags as
 * the F extension says (tininess after rounding, as RISC-V detects it). NaN results are
 * the format's canonical NaN. No floating point of the host is used, so the results do
 * not depend on the host's FPU or its rounding mode.
 */
#include "hooks.h"

typedef unsigned __int128 u128;

enum { ZERO, FINITE, INF, QNAN, SNAN };

typedef struct {
    int sign, cls;
    int exp;       /* a FINITE value is mant * 2^exp */
    uint64_t mant;
} Value;

typedef struct {
    int frac, expbits;
    uint64_t canonical_nan;
} Format;

static const Format FORMATS[4] = {
    {10, 5, 0x7E00u},                  /* FP_HALF */
    {23, 8, 0x7FC00000u},              /* FP_SINGLE */
    {52, 11, 0x7FF8000000000000ull},   /* FP_DOUBLE */
    {7, 8, 0x7FC0u},                   /* FP_BFLOAT: bfloat16 (its canonical NaN is binary32's upper half) */
};

static int msb(u128 v) {
    uint64_t high = (uint64_t)(v >> 64);
    return high ? 127 - __builtin_clzll(high) : 63 - __builtin_clzll((uint64_t)v);
}

static uint64_t sign_bit(const Format *f) { return (uint64_t)1 << (f->frac + f->expbits); }
static uint64_t inf_bits(const Format *f) { return (((uint64_t)1 << f->expbits) - 1) << f->frac; }
static uint64_t signed_inf(const Format *f, int sign) { return (sign ? sign_bit(f) : 0) | inf_bits(f); }
static uint64_t signed_zero(const Format *f, int sign) { return sign ? sign_bit(f) : 0; }

static Value unpack(uint64_t bits, const Format *f) {
    Value v;
    int frac = f->frac, expbits = f->expbits;
    int bias = (1 << (expbits - 1)) - 1;
    uint64_t fmask = ((uint64_t)1 << frac) - 1;
    int e = (int)((bits >> frac) & ((1u << expbits) - 1));
    uint64_t m = bits & fmask;
    v.sign = (int)((bits >> (frac + expbits)) & 1);
    v.exp = 0;
    v.mant = 0;
    if (e == (1 << expbits) - 1) {
        v.cls = m == 0 ? INF : (m >> (frac - 1)) & 1 ? QNAN : SNAN;
    } else if (e == 0) {
        v.cls = m ? FINITE : ZERO;
        v.mant = m;
        v.exp = 1 - bias - frac;
    } else {
        v.cls = FINITE;
        v.mant = m | ((uint64_t)1 << frac);
        v.exp = e - bias - frac;
    }
    return v;
}

static int is_nan(Value v) { return v.cls == QNAN || v.cls == SNAN; }

/* MANT >> SHIFT rounded to an integer by RM (for a number of sign SIGN), with STICKY for
 * something below MANT's last bit; *INEXACT says whether anything was dropped. (The
 * result must fit 64 bits.) */
static uint64_t round_shifted(u128 mant, int shift, int sticky, int sign, int rm, int *inexact) {
    uint64_t q;
    int round = 0, rest = sticky;
    if (shift <= 0) {
        q = (uint64_t)(mant << -shift);
    } else if (shift > 128) {
        q = 0;
        rest |= mant != 0;
    } else {
        q = shift == 128 ? 0 : (uint64_t)(mant >> shift);
        u128 half = (u128)1 << (shift - 1);
        u128 below = shift == 128 ? mant : mant & ((half << 1) - 1);
        round = (below & half) != 0;
        rest |= (below & (half - 1)) != 0;
    }
    *inexact = round || rest;
    switch (rm) {
    case RM_RNE: return q + (round && (rest || (q & 1)));
    case RM_RDN: return q + (*inexact && sign);
    case RM_RUP: return q + (*inexact && !sign);
    case RM_RMM: return q + round;
    case RM_ROD: return q | (uint64_t)*inexact;
    default: return q; /* RM_RTZ */
    }
}

/* Round sign * (mant * 2^exp), plus something below it when STICKY, to format F. */
static uint64_t round_to(const Format *f, int sign, u128 mant, int exp, int sticky, int rm, uint32_t *flags) {
    uint64_t s = signed_zero(f, sign);
    if (mant == 0)
        return s; /* (callers give sticky only with a mant of many bits) */
    int emin = 2 - (1 << (f->expbits - 1)); /* the smallest normal is 2^emin */
    int E = msb(mant) + exp;                /* the value is in [2^E, 2^(E+1)) */
    int unit = E < emin ? emin - f->frac : E - f->frac;
    int inexact;
    uint64_t sig = round_shifted(mant, unit - exp, sticky, sign, rm, &inexact);
    if (inexact) {
        *flags |= FFLAG_NX;
        /* Tiny after rounding: below 2^emin even when rounded to the format's precision
         * with an unbounded exponent. Only a value just below 2^emin can round up to it. */
        int ignored;
        if (E < emin - 1 ||
            (E == emin - 1 &&
             round_shifted(mant, emin - 1 - f->frac - exp, sticky, sign, rm, &ignored) < ((uint64_t)2 << f->frac)))
            *flags |= FFLAG_UF;
    }
    uint64_t bits = ((uint64_t)(unit - (emin - f->frac)) << f->frac) + sig;
    if (bits >= inf_bits(f)) {
        *flags |= FFLAG_OF | FFLAG_NX;
        int largest = rm == RM_RTZ || rm == RM_ROD || (rm == RM_RDN && !sign) || (rm == RM_RUP && sign);
        bits = largest ? inf_bits(f) - 1 : inf_bits(f);
    }
    return s | bits;
}

static uint64_t nan_result(const Format *f, uint32_t *flags, int signalling) {
    if (signalling)
        *flags |= FFLAG_NV;
    return f->canonical_nan;
}

/* -- arithmetic ------------------------------------------------------------------------ */

/* The exact zero of x + y when both are zeros, or x - x: +0, or -0 when rounding down. */
static uint64_t exact_zero(const Format *f, int sign_a, int sign_b, int rm) {
    return signed_zero(f, sign_a == sign_b ? sign_a : rm == RM_RDN);
}

/* sa * ma * 2^ea + sb * mb * 2^eb, both nonzero, rounded. */
static uint64_t add_finite(const Format *f, int sa, u128 ma, int ea, int sb, u128 mb, int eb, int rm, uint32_t *flags) {
    int la = 125 - msb(ma), lb = 125 - msb(mb);
    ma <<= la;
    ea -= la;
    mb <<= lb;
    eb -= lb;
    if (ea < eb) {
        u128 tm = ma; ma = mb; mb = tm;
        int te = ea; ea = eb; eb = te;
        int ts = sa; sa = sb; sb = ts;
    }
    int d = ea - eb;
    if (d >= 126)
        mb = 1;
    else if (d > 0)
        mb = (mb >> d) | ((mb & (((u128)1 << d) - 1)) != 0);
    if (sa == sb)
        return round_to(f, sa, ma + mb, ea, 0, rm, flags);
    if (ma == mb)
        return exact_zero(f, 0, 1, rm);
    return ma > mb ? round_to(f, sa, ma - mb, ea, 0, rm, flags) : round_to(f, sb, mb - ma, ea, 0, rm, flags);
}

static uint64_t add_values(const Format *f, Value a, Value b, int rm, uint32_t *flags) {
    if (is_nan(a) || is_nan(b))
        return nan_result(f, flags, a.cls == SNAN || b.cls == SNAN);
    if (a.cls == INF || b.cls == INF) {
        if (a.cls == INF && b.cls == INF && a.sign != b.sign)
            return nan_result(f, flags, 1);
        return signed_inf(f, a.cls == INF ? a.sign : b.sign);
    }
    if (a.cls == ZERO && b.cls == ZERO)
        return exact_zero(f, a.sign, b.sign, rm);
    if (b.cls == ZERO)
        return round_to(f, a.sign, a.mant, a.exp, 0, rm, flags);
    if (a.cls == ZERO)
        return round_to(f, b.sign, b.mant, b.exp, 0, rm, flags);
    return add_finite(f, a.sign, a.mant, a.exp, b.sign, b.mant, b.exp, rm, flags);
}

uint64_t fp_add(int format, uint64_t a, uint64_t b, int rm, uint32_t *flags) {
    const Format *f = &FORMATS[format];
    return add_values(f, unpack(a, f), unpack(b, f), rm, flags);
}

uint64_t fp_sub(int format, uint64_t a, uint64_t b, int rm, uint32_t *flags) {
    const Format *f = &FORMATS[format];
    return add_values(f, unpack(a, f), unpack(b ^ sign_bit(f), f), rm, flags);
}

uint64_t fp_mul(int format, uint64_t a, uint64_t b, int rm, uint32_t *flags) {
    const Format *f = &FORMATS[format];
    Value x = unpack(a, f), y = unpack(b, f);
    int sign = x.sign ^ y.sign;
    if (is_nan(x) || is_nan(y))
        return nan_result(f, flags, x.cls == SNAN || y.cls == SNAN);
    if (x.cls == INF || y.cls == INF) {
        if (x.cls == ZERO || y.cls == ZERO)
            return nan_result(f, flags, 1);
        return signed_inf(f, sign);
    }
    if (x.cls == ZERO || y.cls == ZERO)
        return signed_zero(f, sign);
    return round_to(f, sign, (u128)x.mant * y.mant, x.exp + y.exp, 0, rm, flags);
}

/* (a * b) + c, with NEGATE_PRODUCT and NEGATE_ADDEND for fmsub, fnmsub, fnmadd. */
uint64_t fp_fma(int format, uint64_t a, uint64_t b, uint64_t c, int negate_product, int negate_addend, int rm,
                uint32_t *flags) {
    const Format *f = &FORMATS[format];
    Value x = unpack(a, f), y = unpack(b, f), z = unpack(c ^ (negate_addend ? sign_bit(f) : 0), f);
    int sign = x.sign ^ y.sign ^ negate_product;
    int inf_zero = (x.cls == INF && y.cls == ZERO) || (x.cls == ZERO && y.cls == INF);
    if (inf_zero) /* invalid even when the addend is a quiet NaN */
        return nan_result(f, flags, 1);
    if (is_nan(x) || is_nan(y) || is_nan(z))
        return nan_result(f, flags, x.cls == SNAN || y.cls == SNAN || z.cls == SNAN);
    if (x.cls == INF || y.cls == INF) {
        if (z.cls == INF && z.sign != sign)
            return nan_result(f, flags, 1);
        return signed_inf(f, sign);
    }
    if (z.cls == INF)
        return signed_inf(f, z.sign);
    if (x.cls == ZERO || y.cls == ZERO) {
        if (z.cls == ZERO)
            return exact_zero(f, sign, z.sign, rm);
        return round_to(f, z.sign, z.mant, z.exp, 0, rm, flags);
    }
    u128 mp = (u128)x.mant * y.mant;
    int ep = x.exp + y.exp;
    if (z.cls == ZERO)
        return round_to(f, sign, mp, ep, 0, rm, flags);
    return add_finite(f, sign, mp, ep, z.sign, z.mant, z.exp, rm, flags);
}

uint64_t fp_div(int format, uint64_t a, uint64_t b, int rm, uint32_t *flags) {
    const Format *f = &FORMATS[format];
    Value x = unpack(a, f), y = unpack(b, f);
    int sign = x.sign ^ y.sign;
    if (is_nan(x) || is_nan(y))
        return nan_result(f, flags, x.cls == SNAN || y.cls == SNAN);
    if (x.cls == INF)
        return y.cls == INF ? nan_result(f, flags, 1) : signed_inf(f, sign);
    if (y.cls == INF)
        return signed_zero(f, sign);
    if (y.cls == ZERO) {
        if (x.cls == ZERO)
            return nan_result(f, flags, 1);
        *flags |= FFLAG_DZ;
        return signed_inf(f, sign);
    }
    if (x.cls == ZERO)
        return signed_zero(f, sign);
    int la = 63 - msb(x.mant), lb = 63 - msb(y.mant); /* both to [2^63, 2^64) */
    uint64_t ma = x.mant << la, mb = y.mant << lb;
    /* q = ma * 2^62 / mb, in (2^61, 2^63), a bit at a time (no 128-bit division: the
     * hooks link no compiler runtime) */
    u128 r = ma;
    uint64_t q = 0;
    for (int i = 0; i <= 62; i++) {
        q <<= 1;
        if (r >= mb) {
            q |= 1;
            r -= mb;
        }
        r <<= 1;
    }
    return round_to(f, sign, q, (x.exp - la) - (y.exp - lb) - 62, r != 0, rm, flags);
}

static u128 isqrt(u128 n, int *exact) {
    u128 root = 0, bit = (u128)1 << 126;
    while (bit > n)
        bit >>= 2;
    while (bit) {
        if (n >= root + bit) {
            n -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    *exact = n == 0;
    return root;
}

uint64_t fp_sqrt(int format, uint64_t a, int rm, uint32_t *flags) {
    const Format *f = &FORMATS[format];
    Value x = unpack(a, f);
    if (is_nan(x))
        return nan_result(f, flags, x.cls == SNAN);
    if (x.cls == ZERO)
        return a;
    if (x.sign)
        return nan_result(f, flags, 1);
    if (x.cls == INF)
        return a;
    int shift = 124 - msb(x.mant); /* the leading bit to 124 or 125, the exponent even */
    if ((x.exp - shift) & 1)
        shift++;
    int exact;
    u128 root = isqrt((u128)x.mant << shift, &exact); /* (at least 2^62) */
    return round_to(f, 0, root, (x.exp - shift) / 2, !exact, rm, flags);
}

/* -- comparisons, signs, classes -------------------------------------------------------- */

static int bits_nan(const Format *f, uint64_t x) { return (x & inf_bits(f)) == inf_bits(f) && (x & (((uint64_t)1 << f->frac) - 1)); }
static int bits_snan(const Format *f, uint64_t x) { return bits_nan(f, x) && !((x >> (f->frac - 1)) & 1); }

/* WHICH: 2 feq, 1 flt, 0 fle (the scalar funct3). NaNs: false; NV for a signalling one
 * (feq) or any (flt, fle). */
int fp_compare(int format, uint64_t a, uint64_t b, int which, uint32_t *flags) {
    const Format *f = &FORMATS[format];
    if (bits_nan(f, a) || bits_nan(f, b)) {
        if (which != 2 || bits_snan(f, a) || bits_snan(f, b))
            *flags |= FFLAG_NV;
        return 0;
    }
    uint64_t s = sign_bit(f);
    /* the values' order as signed integers (-0 and +0 equal) */
    int64_t x = (int64_t)(a & (s - 1)), y = (int64_t)(b & (s - 1));
    x = a & s ? -x : x;
    y = b & s ? -y : y;
    return which == 2 ? x == y : which == 1 ? x < y : x <= y;
}

/* F 2.2 and Zfh: fmin/fmax. One NaN: the other; two: the canonical NaN; -0 < +0. */
uint64_t fp_min_max(int format, uint64_t a, uint64_t b, int max, uint32_t *flags) {
    const Format *f = &FORMATS[format];
    Value x = unpack(a, f), y = unpack(b, f);
    if (x.cls == SNAN || y.cls == SNAN)
        *flags |= FFLAG_NV;
    if (is_nan(x) && is_nan(y))
        return f->canonical_nan;
    if (is_nan(x))
        return b;
    if (is_nan(y))
        return a;
    uint64_t s = sign_bit(f);
    if (x.sign != y.sign) /* (covers -0 and +0) */
        return (x.sign ? !max : max) ? a : b;
    uint64_t ma = a & (s - 1), mb = b & (s - 1);
    int a_smaller = x.sign ? ma > mb : ma < mb;
    return (max ? !a_smaller : a_smaller) ? a : b;
}

uint32_t fp_class(int format, uint64_t a) {
    const Format *f = &FORMATS[format];
    Value v = unpack(a, f);
    int subnormal = v.cls == FINITE && !(a & inf_bits(f));
    switch (v.cls) {
    case INF: return v.sign ? 1u << 0 : 1u << 7;
    case ZERO: return v.sign ? 1u << 3 : 1u << 4;
    case SNAN: return 1u << 8;
    case QNAN: return 1u << 9;
    default: return v.sign ? (subnormal ? 1u << 2 : 1u << 1) : (subnormal ? 1u << 5 : 1u << 6);
    }
}

/* -- conversions ------------------------------------------------------------------------ */

/* A value of format FROM in format TO (wider: exact; narrower: rounded by RM). */
uint64_t fp_convert(int from, int to, uint64_t a, int rm, uint32_t *flags) {
    const Format *f = &FORMATS[to];
    Value v = unpack(a, &FORMATS[from]);
    switch (v.cls) {
    case SNAN: return nan_result(f, flags, 1);
    case QNAN: return f->canonical_nan;
    case INF: return signed_inf(f, v.sign);
    case ZERO: return signed_zero(f, v.sign);
    }
    return round_to(f, v.sign, v.mant, v.exp, 0, rm, flags);
}

uint64_t integer_to_fp(int format, uint64_t magnitude, int negative, int rm, uint32_t *flags) {
    return round_to(&FORMATS[format], negative, magnitude, 0, 0, rm, flags);
}

/* A value to an integer of BITS (8 to 64), SIGNED or not, rounded by RM; out of range and
 * NaN saturate and raise NV, as RISC-V says. Returns the integer as 64 bits (a signed one
 * sign-extended). */
uint64_t fp_to_integer(int format, uint64_t a, int bits, int is_signed, int rm, uint32_t *flags) {
    Value v = unpack(a, &FORMATS[format]);
    uint64_t max_u = bits == 64 ? ~0ull : ((uint64_t)1 << bits) - 1, max_s = max_u >> 1;
    uint64_t min_s = ~max_s; /* (-2^(bits-1), sign-extended) */
    if (is_nan(v) || (v.cls == INF && !v.sign)) {
        *flags |= FFLAG_NV;
        return is_signed ? max_s : max_u;
    }
    if (v.cls == INF) {
        *flags |= FFLAG_NV;
        return is_signed ? min_s : 0;
    }
    if (v.cls == ZERO)
        return 0;
    int E = msb(v.mant) + v.exp, inexact = 0;
    uint64_t magnitude = E >= 64 ? ~0ull : round_shifted(v.mant, -v.exp, 0, v.sign, rm, &inexact);
    int too_big = E >= 64 || (is_signed ? magnitude > max_s + (uint64_t)v.sign : (!v.sign && magnitude > max_u));
    if (too_big) {
        *flags |= FFLAG_NV;
        return is_signed ? (v.sign ? min_s : max_s) : (v.sign ? 0 : max_u);
    }
    if (!is_signed && v.sign && magnitude) {
        *flags |= FFLAG_NV;
        return 0;
    }
    if (inexact)
        *flags |= FFLAG_NX;
    return v.sign ? 0 - magnitude : magnitude; /* (unsigned: -2^63 too, without overflow) */
}

/* -- the half-precision names isa.c uses for Zfh ---------------------------------------- */

uint16_t half_add(uint16_t a, uint16_t b, int rm, uint32_t *flags) { return (uint16_t)fp_add(FP_HALF, a, b, rm, flags); }
uint16_t half_sub(uint16_t a, uint16_t b, int rm, uint32_t *flags) { return (uint16_t)fp_sub(FP_HALF, a, b, rm, flags); }
uint16_t half_mul(uint16_t a, uint16_t b, int rm, uint32_t *flags) { return (uint16_t)fp_mul(FP_HALF, a, b, rm, flags); }
uint16_t half_div(uint16_t a, uint16_t b, int rm, uint32_t *flags) { return (uint16_t)fp_div(FP_HALF, a, b, rm, flags); }
uint16_t half_sqrt(uint16_t a, int rm, uint32_t *flags) { return (uint16_t)fp_sqrt(FP_HALF, a, rm, flags); }
uint16_t half_fma(uint16_t a, uint16_t b, uint16_t c, int negate_product, int negate_addend, int rm, uint32_t *flags) {
    return (uint16_t)fp_fma(FP_HALF, a, b, c, negate_product, negate_addend, rm, flags);
}
int half_compare(uint16_t a, uint16_t b, int which, uint32_t *flags) { return fp_compare(FP_HALF, a, b, which, flags); }
uint16_t half_min_max(uint16_t a, uint16_t b, int max, uint32_t *flags) { return (uint16_t)fp_min_max(FP_HALF, a, b, max, flags); }
uint32_t half_class(uint16_t h) { return fp_class(FP_HALF, h); }
uint32_t half_to_single(uint16_t h, uint32_t *flags) { return (uint32_t)fp_convert(FP_HALF, FP_SINGLE, h, RM_RNE, flags); }
uint64_t half_to_double(uint16_t h, uint32_t *flags) { return fp_convert(FP_HALF, FP_DOUBLE, h, RM_RNE, flags); }
uint16_t single_to_half(uint32_t s, int rm, uint32_t *flags) { return (uint16_t)fp_convert(FP_SINGLE, FP_HALF, s, rm, flags); }
uint16_t double_to_half(uint64_t d, int rm, uint32_t *flags) { return (uint16_t)fp_convert(FP_DOUBLE, FP_HALF, d, rm, flags); }
uint16_t integer_to_half(uint64_t magnitude, int negative, int rm, uint32_t *flags) {
    return (uint16_t)integer_to_fp(FP_HALF, magnitude, negative, rm, flags);
}
uint64_t half_to_integer(uint16_t h, int bits, int is_signed, int rm, uint32_t *flags) {
    uint64_t x = fp_to_integer(FP_HALF, h, bits, is_signed, rm, flags);
    return bits == 32 ? (uint64_t)(int64_t)(int32_t)(uint32_t)x : x; /* (an unsigned 32-bit one too) */
}

/* -- the vector unit's estimates (RVV 1.0 13.9, 13.10) --------------------------------- */

/* The spec's tables: 7 bits of the estimate's significand, by the input's exponent parity
 * and its 6 leading significand bits (vfrsqrt7), or its 7 leading bits (vfrec7). */
static const uint8_t RSQRT7[128] = {
    52, 51, 50, 48, 47, 46, 44, 43, 42, 41, 40, 39, 38, 36, 35, 34,
    33, 32, 31, 30, 30, 29, 28, 27, 26, 25, 24, 23, 23, 22, 21, 20,
    19, 19, 18, 17, 16, 16, 15, 14, 14, 13, 12, 12, 11, 10, 10, 9,
    9, 8, 7, 7, 6, 6, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0,
    127, 125, 123, 121, 119, 118, 116, 114, 113, 111, 109, 108, 106, 105, 103, 102,
    100, 99, 97, 96, 95, 93, 92, 91, 90, 88, 87, 86, 85, 84, 83, 82,
    80, 79, 78, 77, 76, 75, 74, 73, 72, 71, 70, 70, 69, 68, 67, 66,
    65, 64, 63, 63, 62, 61, 60, 59, 59, 58, 57, 56, 56, 55, 54, 53,
};
static const uint8_t REC7[128] = {
    127, 125, 123, 121, 119, 117, 116, 114, 112, 110, 109, 107, 105, 104, 102, 100,
    99, 97, 96, 94, 93, 91, 90, 88, 87, 85, 84, 83, 81, 80, 79, 77,
    76, 75, 74, 72, 71, 70, 69, 68, 66, 65, 64, 63, 62, 61, 60, 59,
    58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43,
    42, 41, 40, 40, 39, 38, 37, 36, 35, 35, 34, 33, 32, 31, 31, 30,
    29, 28, 28, 27, 26, 25, 25, 24, 23, 23, 22, 21, 21, 20, 19, 19,
    18, 17, 17, 16, 15, 15, 14, 14, 13, 12, 12, 11, 11, 10, 9, 9,
    8, 8, 7, 7, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0,
};

/* A finite nonzero A's biased exponent and fraction, a subnormal normalized (its exponent
 * then 0 or below), as the spec's estimates take them. */
static void normalized(const Format *f, uint64_t a, int64_t *exp, uint64_t *frac) {
    uint64_t mask = ((uint64_t)1 << f->frac) - 1;
    *exp = (int64_t)((a >> f->frac) & ((1u << f->expbits) - 1));
    *frac = a & mask;
    if (*exp == 0) {
        while (!((*frac >> (f->frac - 1)) & 1)) {
            (*exp)--;
            *frac <<= 1;
        }
        *frac = (*frac << 1) & mask;
    }
}

uint64_t fp_rsqrt7(int format, uint64_t a, uint32_t *flags) {
    const Format *f = &FORMATS[format];
    Value v = unpack(a, f);
    if (is_nan(v) || (v.sign && v.cls != ZERO))
        return nan_result(f, flags, v.cls == SNAN || !is_nan(v));
    if (v.cls == ZERO) {
        *flags |= FFLAG_DZ;
        return signed_inf(f, v.sign);
    }
    if (v.cls == INF)
        return 0;
    int64_t exp, bias = (1 << (f->expbits - 1)) - 1;
    uint64_t frac;
    normalized(f, a, &exp, &frac);
    int index = (int)(((uint64_t)exp & 1) << 6 | frac >> (f->frac - 6));
    uint64_t out_exp = (uint64_t)((3 * bias - 1 - exp) / 2);
    return out_exp << f->frac | (uint64_t)RSQRT7[index] << (f->frac - 7);
}

uint64_t fp_rec7(int format, uint64_t a, int rm, uint32_t *flags) {
    const Format *f = &FORMATS[format];
    Value v = unpack(a, f);
    if (is_nan(v))
        return nan_result(f, flags, v.cls == SNAN);
    if (v.cls == INF)
        return signed_zero(f, v.sign);
    if (v.cls == ZERO) {
        *flags |= FFLAG_DZ;
        return signed_inf(f, v.sign);
    }
    int64_t exp, bias = (1 << (f->expbits - 1)) - 1;
    uint64_t frac;
    normalized(f, a, &exp, &frac);
    if (exp < -1) { /* a subnormal so small that its reciprocal overflows */
        *flags |= FFLAG_OF | FFLAG_NX;
        int largest = rm == RM_RTZ || (rm == RM_RDN && !v.sign) || (rm == RM_RUP && v.sign);
        return (v.sign ? sign_bit(f) : 0) | (largest ? inf_bits(f) - 1 : inf_bits(f));
    }
    int64_t out_exp = 2 * bias - 1 - exp;
    uint64_t out_frac = (uint64_t)REC7[frac >> (f->frac - 7)] << (f->frac - 7);
    if (out_exp <= 0) { /* a subnormal estimate */
        out_frac = (out_frac >> 1) | ((uint64_t)1 << (f->frac - 1));
        if (out_exp < 0)
            out_frac >>= 1;
        out_exp = 0;
    }
    return (v.sign ? sign_bit(f) : 0) | (uint64_t)out_exp << f->frac | out_frac;
}
