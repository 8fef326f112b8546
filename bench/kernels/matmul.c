/* matmul: C = A * B in float32, the naive i-j-k loop with a running sum. */
#include "kernels.h"

#define MATMUL_SEED 0x6d61746d756c2121ull

/* Small exact values (multiples of 1/16 in [-8, 8)), the same in every build. */
void matmul_fill(float* a, float* b, uint64_t n) {
    uint64_t state = MATMUL_SEED;
    for (uint64_t i = 0; i < n * n; i++) {
        a[i] = (float)(int)((lcg_next(&state) >> 56) & 0xff) / 16.0f - 8.0f;
        b[i] = (float)(int)((lcg_next(&state) >> 56) & 0xff) / 16.0f - 8.0f;
    }
}

BENCH_KERNEL void matmul(const float* a, const float* b, float* c, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        for (uint64_t j = 0; j < n; j++) {
            float sum = 0.0f;
            for (uint64_t k = 0; k < n; k++) {
                sum += a[i * n + k] * b[k * n + j];
            }
            c[i * n + j] = sum;
        }
    }
}
