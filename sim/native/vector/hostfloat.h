/* hostfloat.h: binary32 additions, multiplications and fused multiply-adds in the host's
 * binary64, for the vector unit's commonest case (float.c): round to nearest even,
 * normal operands, a normal result. Where the host cannot be proven to give softfloat.c's
 * exact answer and flags, these return 0 and the caller uses softfloat.c.
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
