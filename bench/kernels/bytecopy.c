/* bytecopy: a loop copying bytes (vle8.v and vse8.v in the card's build). no_builtin keeps
 * clang from making the loop a call to memcpy: the kernels call nothing. */
#include "kernels.h"

BENCH_KERNEL __attribute__((no_builtin)) void bytecopy(const uint8_t* from, uint8_t* to, uint64_t count) {
    for (uint64_t i = 0; i < count; i++) {
        to[i] = from[i];
    }
}

/* Random bytes, eight from each step of the LCG (BYTES is 8-byte aligned). */
void bytecopy_fill(uint8_t* bytes, uint64_t count) {
    uint64_t state = 0x62797465636f7079ull;
    for (uint64_t i = 0; i < count / 8; i++) {
        ((uint64_t*)bytes)[i] = lcg_next(&state);
    }
    for (uint64_t i = count / 8 * 8; i < count; i++) {
        bytes[i] = (uint8_t)(lcg_next(&state) >> 56);
    }
}
