/* hostfloat.h: floating-point additions, multiplications and (binary32) fused
 * multiply-adds in the host's binary64, for the vector unit's commonest case (float.c):
 * round to nearest even, finite operands, a normal result. Where the host cannot be proven
 * to give softfloat.c's exact answer and flags, these return 0 and the caller uses
 * softfloat.c. host_add, host_mul and host_fma take any format (ops.def's HOST column);
 * the binary16 and binary64 ones are further down.
 *
 * Why the answers are exact: a binary32 product is exact in binary64 (48 bits); a sum of
 * two binary32 whose exponents differ by at most 28 is too. Otherwise the sum (or a fused
 * multiply-add's) is the exact value rounded once to 53 bits, s, and rounding s to 24 bits
 * gives the exact value's rounding unless s is itself halfway between two binary32 (then
 * the double rounding could have made the tie): that case goes to softfloat.c. A normal
 * binary32 result is never tiny, so no underflow; an overflow goes to softfloat.c. The
 * host must round to nearest even, as every C program starts (nothing here changes it),
 * and must not contract a * b + c into one fused operation: hence the pragma.
 */
#pragma STDC FP_CONTRACT OFF

static inline float as_float(uint32_t x) { float f; __builtin_memcpy(&f, &x, 4); return f; }
static inline uint32_t float_bits(float f) { uint32_t x; __builtin_memcpy(&x, &f, 4); return x; }
static inline uint64_t double_bits(double d) { uint64_t x; __builtin_memcpy(&x, &d, 8); return x; }
static inline double as_double_bits(uint64_t x) { double d; __builtin_memcpy(&d, &x, 8); return d; }
static inline int single_normal(uint32_t x) { uint32_t e = (x >> 23) & 0xFF; return e != 0 && e != 0xFF; }

/* S (the exact value when EXACT, else it rounded once to binary64) to binary32: 1 and the
 * result in *OUT, NX raised in *FLAGS when it is inexact; 0 when softfloat must say. */
static inline int single_of_double(double s, int exact, uint32_t *out, uint32_t *flags) {
    double magnitude = __builtin_fabs(s);
    if (!(magnitude >= 0x1p-126 && magnitude <= 0x1.fffffep127)) /* zero, tiny, huge or NaN */
        return 0;
    uint64_t dropped = double_bits(s) & ((1ull << 29) - 1); /* the 29 bits binary32 drops */
    if (!exact && dropped == 1ull << 28)
        return 0;
    float f = (float)s;
    if (__builtin_isinf(f))
        return 0;
    if (!exact || dropped)
        *flags |= FFLAG_NX;
    *out = float_bits(f);
    return 1;
}

/* A + B (SUBTRACT: A - B). */
static inline int single_add(uint32_t a, uint32_t b, int subtract, uint32_t *out, uint32_t *flags) {
    if (!single_normal(a) || !single_normal(b))
        return 0;
    int ea = (int)((a >> 23) & 0xFF), eb = (int)((b >> 23) & 0xFF);
    double x = as_float(a), y = as_float(b);
    double s = subtract ? x - y : x + y;
    return single_of_double(s, ea - eb <= 28 && eb - ea <= 28, out, flags);
}

static inline int single_mul(uint32_t a, uint32_t b, uint32_t *out, uint32_t *flags) {
    if (!single_normal(a) || !single_normal(b))
        return 0;
    double p = (double)as_float(a) * (double)as_float(b);
    return single_of_double(p, 1, out, flags);
}

/* (A * B) + C, the product negated when NEGATE_PRODUCT, C when NEGATE_ADDEND. */
static inline int single_fma(uint32_t a, uint32_t b, uint32_t c, int negate_product, int negate_addend,
                             uint32_t *out, uint32_t *flags) {
    if (!single_normal(a) || !single_normal(b) || !single_normal(c))
        return 0;
    double p = (double)as_float(a) * (double)as_float(b); /* exact */
    double z = as_float(c);
    if (negate_product)
        p = -p;
    if (negate_addend)
        z = -z;
    double s = p + z;
    double t = s - p; /* Knuth's TwoSum: e is exactly p + z - s */
    double e = (p - (s - t)) + (z - t);
    return single_of_double(s, e == 0, out, flags);
}

/* -- binary16 (Zvfh) -------------------------------------------------------------------------

   A sum or a product of two finite binary16 is exact in binary64: a product has at most 22
   significant bits, and a sum spans at most 2^16 down to 2^-24, 41 bits. So the host's
   answer is the exact value, and rounding it once to binary16 (here, in integers, to
   nearest even) is the correctly rounded result. A result below binary16's smallest normal
   (where underflow is a question) or past its largest finite one goes to softfloat; an
   exact zero is the host's, whose sign IEEE's rules give (x + -x is +0 under RNE). */

static inline double half_value(uint16_t x) { /* (finite X) */
    double magnitude = (x & 0x7C00) ? as_double_bits((uint64_t)(((x >> 10) & 0x1F) - 15 + 1023) << 52 |
                                                     (uint64_t)(x & 0x3FF) << 42)
                                    : (double)(x & 0x3FF) * 0x1p-24; /* (a subnormal) */
    return (x & 0x8000) ? -magnitude : magnitude;
}

static inline int half_finite(uint16_t x) { return (x & 0x7C00) != 0x7C00; }

/* S, an exact value, rounded to binary16: 1 and *OUT (NX in *FLAGS when inexact), or 0. */
static inline int half_of_exact(double s, uint64_t *out, uint32_t *flags) {
    uint64_t bits = double_bits(s), sign = bits >> 63;
    if (s == 0) {
        *out = sign << 15;
        return 1;
    }
    int e = (int)((bits >> 52) & 0x7FF) - 1023;
    if (e < -14 || e > 15) /* tiny or too big: softfloat's */
        return 0;
    uint64_t m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    uint64_t kept = m >> 42, rest = m & ((1ull << 42) - 1), tie = 1ull << 41;
    if (rest > tie || (rest == tie && (kept & 1)))
        kept++;
    if (kept == 1u << 11) {
        kept >>= 1;
        if (++e > 15) /* rounded up past the largest finite: an overflow */
            return 0;
    }
    if (rest)
        *flags |= FFLAG_NX;
    *out = sign << 15 | (uint64_t)(e + 15) << 10 | (kept & 0x3FF);
    return 1;
}

static inline int host_half_add(uint16_t a, uint16_t b, int subtract, uint64_t *out, uint32_t *flags) {
    if (!half_finite(a) || !half_finite(b))
        return 0;
    double x = half_value(a), y = half_value(b);
    return half_of_exact(subtract ? x - y : x + y, out, flags);
}

static inline int host_half_mul(uint16_t a, uint16_t b, uint64_t *out, uint32_t *flags) {
    if (!half_finite(a) || !half_finite(b))
        return 0;
    return half_of_exact(half_value(a) * half_value(b), out, flags);
}

/* -- binary64 ------------------------------------------------------------------------------

   The host's binary64 sum and product are IEEE's, correctly rounded to nearest even; what
   softfloat adds is the flags. Inexact is whether the rounding lost anything: for a sum
   the error Knuth's TwoSum gives exactly, for a product the error Dekker's TwoProduct gives
   exactly (both without a fused multiply-add, so on any host) while nothing in them
   overflows or underflows: so operands below 2^995 in magnitude and a product of at least
   2^-969 (= 2^(-1022 + 53)) and below 2^1023 (Veltkamp's halves may round up by 2^-26 of
   themselves: their product near the top of the range would overflow, and the error come
   out infinite; a review found exact products there flagged inexact). A result that is not a normal number (tiny, infinite, or a
   NaN) goes to softfloat, as do NaN and infinite operands. */

static inline double as_double(uint64_t x) { return as_double_bits(x); }
static inline int double_finite(uint64_t x) { return ((x >> 52) & 0x7FF) != 0x7FF; }

static inline int host_double_add(uint64_t a, uint64_t b, int subtract, uint64_t *out, uint32_t *flags) {
    if (!double_finite(a) || !double_finite(b))
        return 0;
    double x = as_double(a), y = subtract ? -as_double(b) : as_double(b);
    double s = x + y;
    if (s == 0 && (x == 0 || x == -y)) { /* an exact zero: its sign is the host's, IEEE's */
        *out = double_bits(s);
        return 1;
    }
    double magnitude = __builtin_fabs(s);
    if (!(magnitude >= 0x1p-1022 && magnitude <= 0x1.fffffffffffffp1023))
        return 0;
    double t = s - x; /* TwoSum: e is exactly x + y - s */
    double e = (x - (s - t)) + (y - t);
    if (e != 0)
        *flags |= FFLAG_NX;
    *out = double_bits(s);
    return 1;
}

static inline void split_half(double a, double *high, double *low) { /* Veltkamp's: 26 and 27 bits */
    double c = 134217729.0 * a; /* 2^27 + 1 */
    *high = c - (c - a);
    *low = a - *high;
}

static inline int host_double_mul(uint64_t a, uint64_t b, uint64_t *out, uint32_t *flags) {
    if (!double_finite(a) || !double_finite(b))
        return 0;
    double x = as_double(a), y = as_double(b), p = x * y;
    if (x == 0 || y == 0) { /* an exact zero, signed as the host signs it */
        *out = double_bits(p);
        return 1;
    }
    double magnitude = __builtin_fabs(p);
    if (!(magnitude >= 0x1p-969 && magnitude < 0x1p1023) || __builtin_fabs(x) >= 0x1p995 ||
        __builtin_fabs(y) >= 0x1p995)
        return 0;
    double xh, xl, yh, yl;
    split_half(x, &xh, &xl);
    split_half(y, &yh, &yl);
    double e = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl; /* exactly x * y - p */
    if (e != 0)
        *flags |= FFLAG_NX;
    *out = double_bits(p);
    return 1;
}

/* -- any format: ops.def's HOST column ---------------------------------------------------- */

static inline int host_add(int fmt, uint64_t a, uint64_t b, int subtract, uint64_t *out, uint32_t *flags) {
    uint32_t single;
    switch (fmt) {
    case FP_HALF: return host_half_add((uint16_t)a, (uint16_t)b, subtract, out, flags);
    case FP_SINGLE:
        if (!single_add((uint32_t)a, (uint32_t)b, subtract, &single, flags))
            return 0;
        *out = single;
        return 1;
    default: return host_double_add(a, b, subtract, out, flags);
    }
}

static inline int host_mul(int fmt, uint64_t a, uint64_t b, uint64_t *out, uint32_t *flags) {
    uint32_t single;
    switch (fmt) {
    case FP_HALF: return host_half_mul((uint16_t)a, (uint16_t)b, out, flags);
    case FP_SINGLE:
        if (!single_mul((uint32_t)a, (uint32_t)b, &single, flags))
            return 0;
        *out = single;
        return 1;
    default: return host_double_mul(a, b, out, flags);
    }
}

/* (binary32 only: a binary16 or binary64 fused multiply-add is softfloat's) */
static inline int host_fma(int fmt, uint64_t a, uint64_t b, uint64_t c, int negate_product, int negate_addend,
                           uint64_t *out, uint32_t *flags) {
    uint32_t single;
    if (fmt != FP_SINGLE ||
        !single_fma((uint32_t)a, (uint32_t)b, (uint32_t)c, negate_product, negate_addend, &single, flags))
        return 0;
    *out = single;
    return 1;
}
