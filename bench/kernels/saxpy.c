/* saxpy: y[i] = a * x[i] + y[i] over float32 (vfmacc.vf in the card's build). */
#include "kernels.h"

#define SAXPY_SEED 0x7361787079212121ull

BENCH_KERNEL void saxpy(float a, const float* x, float* y, uint64_t count) {
    for (uint64_t i = 0; i < count; i++) {
        y[i] = a * x[i] + y[i];
    }
}

/* Multiples of 1/16 in [-8, 8), the same in every build: with SAXPY_A, a * x[i] is exact,
 * so a fused multiply-add (fmadd.s, vfmacc) and a multiply then an add give the same y.
 * Picked from a table, so that making 128 MiB of them takes few floating-point
 * instructions (which the engine runs in helpers, slowly). */
void saxpy_fill(float* x, float* y, uint64_t count) {
    float values[256];
    for (int k = 0; k < 256; k++) {
        values[k] = (float)k / 16.0f - 8.0f;
    }
    uint64_t state = SAXPY_SEED;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t random = lcg_next(&state);
        x[i] = values[random >> 56];
        y[i] = values[(random >> 48) & 0xff];
    }
}
