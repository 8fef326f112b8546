/* An X280 thread that counts the set bits of a region of words and takes the dot product
 * of two regions of half-precision numbers, with the X280's own instructions: Zbb's cpop
 * and Zfh's flh and fmadd.h. The loops are kept scalar: the vector unit would take them. */
#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    uint64_t words_bytes, a_bytes;
    const uint64_t* words = (const uint64_t*)kmx_region(0, &words_bytes);
    const _Float16* a = (const _Float16*)kmx_region(1, &a_bytes);
    const _Float16* b = (const _Float16*)kmx_region(2, 0);
    if (words == 0 || a == 0 || b == 0) {
        return 1;
    }
    kmx_invalidate(0);
    kmx_invalidate(1);
    kmx_invalidate(2);
    uint64_t bits = 0;
#pragma clang loop vectorize(disable)
    for (uint64_t i = 0; i < words_bytes / 8; i++) {
        bits += (uint64_t)__builtin_popcountll(words[i]);
    }
    _Float16 dot = 0;
#pragma clang loop vectorize(disable)
    for (uint64_t i = 0; i < a_bytes / 2; i++) {
        dot += a[i] * b[i];
    }
    uint16_t dot_bits;
    __builtin_memcpy(&dot_bits, &dot, 2);
    const uint32_t out[3] = {(uint32_t)bits, (uint32_t)(bits >> 32), dot_bits};
    kmx_result(0, out, 3);
    return 0;
}
