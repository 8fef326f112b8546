/* alu: registers only, no memory: xorshift64 (13, 7, 17) and a running sum. */
#include "kernels.h"

BENCH_KERNEL uint64_t alu(uint64_t iterations, uint64_t seed) {
    uint64_t x = seed, sum = 0;
    for (uint64_t i = 0; i < iterations; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sum += x;
    }
    return sum;
}
