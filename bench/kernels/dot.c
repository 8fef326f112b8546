/* dot: a float32 dot product, summed in order (a reduction: vfmul.vv and the ordered
 * vfredosum.vs in the card's build, fmadd.s in RV64GC's). */
#include "kernels.h"

#define DOT_SEED 0x646f742121212121ull

BENCH_KERNEL float dot(const float* x, const float* y, uint64_t count) {
    float sum = 0.0f;
    for (uint64_t i = 0; i < count; i++) {
        sum += x[i] * y[i];
    }
    return sum;
}

/* Multiples of 1/16 in [-8, 8), the same in every build: every product x[i] * y[i] is
 * exact, so a fused multiply-add (RV64GC's fmadd.s) and a multiply then an ordered sum
 * (the vector unit's vfmul and vfredosum) round the same sums the same way.
 * Picked from a table, so that making 128 MiB of them takes few floating-point
 * instructions (which the engine runs in helpers, slowly). */
void dot_fill(float* x, float* y, uint64_t count) {
    float values[256];
    for (int k = 0; k < 256; k++) {
        values[k] = (float)k / 16.0f - 8.0f;
    }
    uint64_t state = DOT_SEED;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t random = lcg_next(&state);
        x[i] = values[random >> 56];
        y[i] = values[(random >> 48) & 0xff];
    }
}
