/* stream: the loop of lesson 35's thread (tutorial/35_sharing_memory/thread/triple.c). */
#include "kernels.h"

BENCH_KERNEL void stream(const uint32_t* numbers, uint32_t* tripled, uint64_t count) {
    for (uint64_t i = 0; i < count; i++) {
        tripled[i] = 3 * numbers[i];
    }
}

void stream_fill(uint32_t* numbers, uint64_t count) {
    for (uint64_t i = 0; i < count; i++) {
        numbers[i] = (uint32_t)i;
    }
}
