/* hdot: a half-precision dot product, accumulated in half precision (Zfh's flh and
 * fmadd.h in the card's build), over blocks of 64 so that the sum stays in range. */
#include "kernels.h"

BENCH_KERNEL uint64_t hdot(const _Float16* a, const _Float16* b, uint64_t count) {
    uint64_t total = 0;
    for (uint64_t i = 0; i + 64 <= count; i += 64) {
        _Float16 sum = 0;
        for (uint64_t j = i; j < i + 64; j++) {
            sum += a[j] * b[j];
        }
        uint16_t bits;
        __builtin_memcpy(&bits, &sum, 2);
        total = total * 31 + bits;
    }
    return total;
}

/* Multiples of 1/16 in [-1, 1): every product a[j] * b[j] is exact in half precision, so a
 * fused multiply-add (fmadd.h; RV64GC's sum in float, rounded once) and a multiply then an
 * ordered sum (the vector unit's vfmul.vv and vfredosum.vs) round the same sums the same way. */
void hdot_fill(_Float16* a, _Float16* b, uint64_t count) {
    uint64_t state = 11;
    for (uint64_t i = 0; i < count; i++) {
        a[i] = (_Float16)((float)(lcg_next(&state) >> 59) / 16.0f - 1.0f);
        b[i] = (_Float16)((float)(lcg_next(&state) >> 59) / 16.0f - 1.0f);
    }
}
