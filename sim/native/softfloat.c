/* softfloat.c: IEEE 754 half precision (Zfh) exactly, in integers, and the F and D
 * instructions the engine runs unlike the X280 (fmin, fmax with a signalling NaN).
 *
 * Every operation works on exact values: a finite number is sign * mant * 2^exp with an
 * integer mant (a half's significand has 11 bits, so a product has 22, and a fused
 * multiply-add's exact sum at most 90: it fits an unsigned __int128). One function rounds
 * an exact value to a half, in each of the five RISC-V rounding modes, raising the flags
 * as the F extension says (tininess after rounding, as RISC-V detects it). Division and
 * square root carry enough quotient bits and a sticky bit for the remainder. NaN results
 * are the canonical NaN (0x7e00). No floating point of the host is used, so the results
 * do not depend on the host's FPU or its rounding mode.
 */
#include "hooks.h"

typedef unsigned __int128 u128;

enum { ZERO, FINITE, INF, QNAN, SNAN };

typedef struct {
    int sign, cls;
    int exp;       /* a FINITE value is mant * 2^exp */
    uint64_t mant;
} Value;

static int msb(u128 v) {
    uint64_t high = (uint64_t)(v >> 64);
    return high ? 127 - __builtin_clzll(high) : 63 - __builtin_clzll((uint64_t)v);
}

/* A binary format: FRAC fraction bits, EXPBITS exponent bits. */
static Value unpack(uint64_t bits, int frac, int expbits) {
    Value v;
    int bias = (1 << (expbits - 1)) - 1;
    uint64_t fmask = ((uint64_t)1 << frac) - 1;
    int e = (int)((bits >> frac) & ((1u << expbits) - 1));
    uint64_t f = bits & fmask;
    v.sign = (int)((bits >> (frac + expbits)) & 1);
    v.exp = 0;
    v.mant = 0;
    if (e == (1 << expbits) - 1) {
        v.cls = f == 0 ? INF : (f >> (frac - 1)) & 1 ? QNAN : SNAN;
    } else if (e == 0) {
        v.cls = f ? FINITE : ZERO;
        v.mant = f;
        v.exp = 1 - bias - frac;
    } else {
        v.cls = FINITE;
        v.mant = f | ((uint64_t)1 << frac);
        v.exp = e - bias - frac;
    }
    return v;
}

static Value unpack_h(uint16_t h) { return unpack(h, 10, 5); }
static Value unpack_s(uint32_t s) { return unpack(s, 23, 8); }
static Value unpack_d(uint64_t d) { return unpack(d, 52, 11); }

static int is_nan(Value v) { return v.cls == QNAN || v.cls == SNAN; }

/* MANT >> SHIFT rounded to an integer by RM (for a number of sign SIGN), with STICKY for
 * something below MANT's last bit; *INEXACT says whether anything was dropped. */
static uint64_t round_shifted(u128 mant, int shift, int sticky, int sign, int rm, int *inexact) {
    uint64_t q;
    int round = 0, rest = sticky;
    if (shift <= 0) {
        q = (uint64_t)(mant << -shift);
    } else if (shift >= 120) {
        q = 0;
        rest |= mant != 0;
    } else {
        q = (uint64_t)(mant >> shift);
        u128 below = mant & (((u128)1 << shift) - 1), half = (u128)1 << (shift - 1);
        round = (below & half) != 0;
        rest |= (below & (half - 1)) != 0;
    }
    *inexact = round || rest;
    switch (rm) {
    case RM_RNE: return q + (round && (rest || (q & 1)));
    case RM_RDN: return q + (*inexact && sign);
    case RM_RUP: return q + (*inexact && !sign);
    case RM_RMM: return q + round;
    default: return q; /* RM_RTZ */
    }
}

/* Round sign * (mant * 2^exp), plus something below it when STICKY, to a half. */
static uint16_t round_h(int sign, u128 mant, int exp, int sticky, int rm, uint32_t *flags) {
    uint16_t s = sign ? 0x8000 : 0;
    if (mant == 0)
        return s; /* (callers give sticky only with a mant of many bits) */
    int E = msb(mant) + exp; /* the value is in [2^E, 2^(E+1)) */
    int unit = E - 10 < -24 ? -24 : E - 10;
    int inexact;
    uint64_t sig = round_shifted(mant, unit - exp, sticky, sign, rm, &inexact);
    if (inexact) {
        *flags |= FFLAG_NX;
        /* Tiny after rounding: below 2^-14 even when rounded to 11 bits with an unbounded
         * exponent. Only a value just below 2^-14 (E = -15) can round up to it. */
        int ignored;
        if (E < -15 || (E == -15 && round_shifted(mant, -25 - exp, sticky, sign, rm, &ignored) < 2048))
            *flags |= FFLAG_UF;
    }
    uint32_t bits = ((uint32_t)(unit + 24) << 10) + (uint32_t)sig;
    if (bits >= 0x7C00) {
        *flags |= FFLAG_OF | FFLAG_NX;
        int largest = rm == RM_RTZ || (rm == RM_RDN && !sign) || (rm == RM_RUP && sign);
        bits = largest ? 0x7BFF : 0x7C00;
    }
    return s | (uint16_t)bits;
}

static uint16_t nan_result(uint32_t *flags, int signalling) {
    if (signalling)
        *flags |= FFLAG_NV;
    return HALF_NAN;
}

/* -- arithmetic ------------------------------------------------------------------------ */

static uint16_t add_values(Value a, Value b, int rm, uint32_t *flags) {
    if (is_nan(a) || is_nan(b))
        return nan_result(flags, a.cls == SNAN || b.cls == SNAN);
    if (a.cls == INF || b.cls == INF) {
        if (a.cls == INF && b.cls == INF && a.sign != b.sign)
            return nan_result(flags, 1);
        return (a.cls == INF ? a.sign : b.sign) ? 0xFC00 : 0x7C00;
    }
    if (a.cls == ZERO && b.cls == ZERO)
        return a.sign == b.sign ? (a.sign ? 0x8000 : 0) : (rm == RM_RDN ? 0x8000 : 0);
    if (b.cls == ZERO)
        return round_h(a.sign, a.mant, a.exp, 0, rm, flags);
    if (a.cls == ZERO)
        return round_h(b.sign, b.mant, b.exp, 0, rm, flags);
    int exp = a.exp < b.exp ? a.exp : b.exp;
    u128 ma = (u128)a.mant << (a.exp - exp), mb = (u128)b.mant << (b.exp - exp);
    if (a.sign == b.sign)
        return round_h(a.sign, ma + mb, exp, 0, rm, flags);
    if (ma == mb)
        return rm == RM_RDN ? 0x8000 : 0;
    return ma > mb ? round_h(a.sign, ma - mb, exp, 0, rm, flags) : round_h(b.sign, mb - ma, exp, 0, rm, flags);
}

uint16_t half_add(uint16_t a, uint16_t b, int rm, uint32_t *flags) {
    return add_values(unpack_h(a), unpack_h(b), rm, flags);
}

uint16_t half_sub(uint16_t a, uint16_t b, int rm, uint32_t *flags) {
    return add_values(unpack_h(a), unpack_h(b ^ 0x8000), rm, flags);
}

uint16_t half_mul(uint16_t a, uint16_t b, int rm, uint32_t *flags) {
    Value x = unpack_h(a), y = unpack_h(b);
    int sign = x.sign ^ y.sign;
    if (is_nan(x) || is_nan(y))
        return nan_result(flags, x.cls == SNAN || y.cls == SNAN);
    if (x.cls == INF || y.cls == INF) {
        if (x.cls == ZERO || y.cls == ZERO)
            return nan_result(flags, 1);
        return sign ? 0xFC00 : 0x7C00;
    }
    if (x.cls == ZERO || y.cls == ZERO)
        return sign ? 0x8000 : 0;
    return round_h(sign, (u128)x.mant * y.mant, x.exp + y.exp, 0, rm, flags);
}

/* (a * b) + c, with NEGATE_PRODUCT and NEGATE_ADDEND for fmsub, fnmsub, fnmadd. */
uint16_t half_fma(uint16_t a, uint16_t b, uint16_t c, int negate_product, int negate_addend, int rm,
                  uint32_t *flags) {
    Value x = unpack_h(a), y = unpack_h(b), z = unpack_h(c ^ (negate_addend ? 0x8000 : 0));
    int sign = x.sign ^ y.sign ^ negate_product;
    int inf_zero = (x.cls == INF && y.cls == ZERO) || (x.cls == ZERO && y.cls == INF);
    if (inf_zero) /* invalid even when the addend is a quiet NaN */
        return nan_result(flags, 1);
    if (is_nan(x) || is_nan(y) || is_nan(z))
        return nan_result(flags, x.cls == SNAN || y.cls == SNAN || z.cls == SNAN);
    if (x.cls == INF || y.cls == INF) {
        if (z.cls == INF && z.sign != sign)
            return nan_result(flags, 1);
        return sign ? 0xFC00 : 0x7C00;
    }
    if (z.cls == INF)
        return z.sign ? 0xFC00 : 0x7C00;
    Value p;
    p.sign = sign;
    if (x.cls == ZERO || y.cls == ZERO) {
        p.cls = ZERO;
        p.mant = 0;
        p.exp = 0;
        if (z.cls == ZERO)
            return p.sign == z.sign ? (p.sign ? 0x8000 : 0) : (rm == RM_RDN ? 0x8000 : 0);
        return round_h(z.sign, z.mant, z.exp, 0, rm, flags);
    }
    u128 mp = (u128)x.mant * y.mant;
    int ep = x.exp + y.exp;
    if (z.cls == ZERO)
        return round_h(sign, mp, ep, 0, rm, flags);
    int exp = ep < z.exp ? ep : z.exp;
    u128 ma = mp << (ep - exp), mb = (u128)z.mant << (z.exp - exp);
    if (sign == z.sign)
        return round_h(sign, ma + mb, exp, 0, rm, flags);
    if (ma == mb)
        return rm == RM_RDN ? 0x8000 : 0;
    return ma > mb ? round_h(sign, ma - mb, exp, 0, rm, flags) : round_h(z.sign, mb - ma, exp, 0, rm, flags);
}

uint16_t half_div(uint16_t a, uint16_t b, int rm, uint32_t *flags) {
    Value x = unpack_h(a), y = unpack_h(b);
    int sign = x.sign ^ y.sign;
    if (is_nan(x) || is_nan(y))
        return nan_result(flags, x.cls == SNAN || y.cls == SNAN);
    if (x.cls == INF)
        return y.cls == INF ? nan_result(flags, 1) : (sign ? 0xFC00 : 0x7C00);
    if (y.cls == INF)
        return sign ? 0x8000 : 0;
    if (y.cls == ZERO) {
        if (x.cls == ZERO)
            return nan_result(flags, 1);
        *flags |= FFLAG_DZ;
        return sign ? 0xFC00 : 0x7C00;
    }
    if (x.cls == ZERO)
        return sign ? 0x8000 : 0;
    u128 n = (u128)x.mant << 40;
    u128 q = n / y.mant, r = n % y.mant;
    return round_h(sign, q, x.exp - y.exp - 40, r != 0, rm, flags);
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

uint16_t half_sqrt(uint16_t a, int rm, uint32_t *flags) {
    Value x = unpack_h(a);
    if (is_nan(x))
        return nan_result(flags, x.cls == SNAN);
    if (x.cls == ZERO)
        return a;
    if (x.sign)
        return nan_result(flags, 1);
    if (x.cls == INF)
        return a;
    u128 m = x.mant;
    int e = x.exp;
    if (e & 1) {
        m <<= 1;
        e -= 1;
    }
    int exact;
    u128 root = isqrt(m << 60, &exact);
    return round_h(0, root, (e - 60) / 2, !exact, rm, flags);
}

/* -- comparisons, signs, classes -------------------------------------------------------- */

/* A half as a signed integer in the order of the values (-0 and +0 equal). */
static int32_t order_h(uint16_t h) {
    int32_t magnitude = h & 0x7FFF;
    return h & 0x8000 ? -magnitude : magnitude;
}

static int h_is_nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF); }
static int h_is_snan(uint16_t h) { return h_is_nan(h) && !(h & 0x200); }

int half_compare(uint16_t a, uint16_t b, int which, uint32_t *flags) {
    /* WHICH: 2 feq, 1 flt, 0 fle (funct3) */
    if (h_is_nan(a) || h_is_nan(b)) {
        if (which != 2 || h_is_snan(a) || h_is_snan(b))
            *flags |= FFLAG_NV;
        return 0;
    }
    int32_t x = order_h(a), y = order_h(b);
    return which == 2 ? x == y : which == 1 ? x < y : x <= y;
}

/* F 2.2 and Zfh: fmin/fmax. One NaN: the other; two: the canonical NaN; -0 < +0. */
static uint64_t min_max(uint64_t a, uint64_t b, int max, int frac, int expbits, uint64_t canonical,
                        uint32_t *flags) {
    Value x = unpack(a, frac, expbits), y = unpack(b, frac, expbits);
    if (x.cls == SNAN || y.cls == SNAN)
        *flags |= FFLAG_NV;
    if (is_nan(x) && is_nan(y))
        return canonical;
    if (is_nan(x))
        return b;
    if (is_nan(y))
        return a;
    uint64_t sign_bit = (uint64_t)1 << (frac + expbits);
    if (x.sign != y.sign) /* (covers -0 and +0) */
        return (x.sign ? !max : max) ? a : b;
    uint64_t ma = a & (sign_bit - 1), mb = b & (sign_bit - 1);
    int a_smaller = x.sign ? ma > mb : ma < mb;
    return (max ? !a_smaller : a_smaller) ? a : b;
}

uint16_t half_min_max(uint16_t a, uint16_t b, int max, uint32_t *flags) {
    return (uint16_t)min_max(a, b, max, 10, 5, HALF_NAN, flags);
}

uint32_t single_min_max(uint32_t a, uint32_t b, int max, uint32_t *flags) {
    return (uint32_t)min_max(a, b, max, 23, 8, 0x7FC00000u, flags);
}

uint64_t double_min_max(uint64_t a, uint64_t b, int max, uint32_t *flags) {
    return min_max(a, b, max, 52, 11, 0x7FF8000000000000ull, flags);
}

uint32_t half_class(uint16_t h) {
    Value v = unpack_h(h);
    int subnormal = v.cls == FINITE && !(h & 0x7C00);
    switch (v.cls) {
    case INF: return v.sign ? 1u << 0 : 1u << 7;
    case ZERO: return v.sign ? 1u << 3 : 1u << 4;
    case SNAN: return 1u << 8;
    case QNAN: return 1u << 9;
    default: return v.sign ? (subnormal ? 1u << 2 : 1u << 1) : (subnormal ? 1u << 5 : 1u << 6);
    }
}

/* -- conversions ------------------------------------------------------------------------ */

static uint64_t widen(Value v, int frac, int expbits, uint64_t canonical, uint32_t *flags) {
    int bias = (1 << (expbits - 1)) - 1;
    uint64_t sign = (uint64_t)v.sign << (frac + expbits);
    uint64_t inf = (((uint64_t)1 << expbits) - 1) << frac;
    switch (v.cls) {
    case SNAN: *flags |= FFLAG_NV; return canonical;
    case QNAN: return canonical;
    case INF: return sign | inf;
    case ZERO: return sign;
    }
    int p = msb(v.mant);
    uint64_t biased = (uint64_t)(p + v.exp + bias); /* a half is normal in any wider format */
    uint64_t fraction = (v.mant << (frac - p)) & (((uint64_t)1 << frac) - 1);
    return sign | biased << frac | fraction;
}

uint32_t half_to_single(uint16_t h, uint32_t *flags) {
    return (uint32_t)widen(unpack_h(h), 23, 8, 0x7FC00000u, flags);
}

uint64_t half_to_double(uint16_t h, uint32_t *flags) {
    return widen(unpack_h(h), 52, 11, 0x7FF8000000000000ull, flags);
}

static uint16_t narrow(Value v, int rm, uint32_t *flags) {
    switch (v.cls) {
    case SNAN: return nan_result(flags, 1);
    case QNAN: return HALF_NAN;
    case INF: return v.sign ? 0xFC00 : 0x7C00;
    case ZERO: return v.sign ? 0x8000 : 0;
    }
    return round_h(v.sign, v.mant, v.exp, 0, rm, flags);
}

uint16_t single_to_half(uint32_t s, int rm, uint32_t *flags) { return narrow(unpack_s(s), rm, flags); }
uint16_t double_to_half(uint64_t d, int rm, uint32_t *flags) { return narrow(unpack_d(d), rm, flags); }

uint16_t integer_to_half(uint64_t magnitude, int negative, int rm, uint32_t *flags) {
    return round_h(negative, magnitude, 0, 0, rm, flags);
}

/* A half to an integer of BITS (32 or 64), SIGNED or not, rounded by RM; out of range and
 * NaN saturate and raise NV, as RISC-V says. Returns the value as 64 bits (a 32-bit result
 * sign-extended, also an unsigned one). */
uint64_t half_to_integer(uint16_t h, int bits, int is_signed, int rm, uint32_t *flags) {
    Value v = unpack_h(h);
    uint64_t max_u = bits == 64 ? ~0ull : 0xFFFFFFFFull;
    int64_t max_s = bits == 64 ? INT64_MAX : INT32_MAX, min_s = bits == 64 ? INT64_MIN : INT32_MIN;
    uint64_t result;
    if (is_nan(v) || (v.cls == INF && !v.sign)) {
        *flags |= FFLAG_NV;
        result = is_signed ? (uint64_t)max_s : max_u;
    } else if (v.cls == INF) {
        *flags |= FFLAG_NV;
        result = is_signed ? (uint64_t)min_s : 0;
    } else {
        uint64_t magnitude = 0;
        int inexact = 0;
        if (v.cls == FINITE)
            magnitude = round_shifted(v.mant, -v.exp, 0, v.sign, rm, &inexact); /* (at most 65504) */
        if (is_signed) {
            result = v.sign ? (uint64_t)-(int64_t)magnitude : magnitude; /* (in range: |h| <= 65504) */
        } else if (v.sign && magnitude) {
            *flags |= FFLAG_NV;
            result = 0;
            inexact = 0;
        } else {
            result = magnitude;
        }
        if (inexact)
            *flags |= FFLAG_NX;
    }
    if (bits == 32)
        result = (uint64_t)(int64_t)(int32_t)(uint32_t)result;
    return result;
}
