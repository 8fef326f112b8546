/* bench/timing.py --speed: a scalar loop (xorshift64 and a sum, registers only); word 1 set: the
 * sum through sh1add (Zba), word 0 the iterations. Result words: the sum, the cycles. */
#include "kmx.h"
int kmx_main(int core) {
    uint64_t n = kmx_word(0), mode = kmx_word(1);
    uint64_t x = 88172645463325252ull, sum = 0;
    uint64_t t0 = kmx_cycles();
    if (mode) {
        for (uint64_t i = 0; i < n; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            uint64_t y; __asm__ volatile("sh1add %0, %1, %2" : "=r"(y) : "r"(x), "r"(sum));
            sum = y;
        }
    } else {
        for (uint64_t i = 0; i < n; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            sum = (x << 1) + sum;
        }
    }
    uint64_t t1 = kmx_cycles();
    uint32_t w[2] = {(uint32_t)sum, (uint32_t)(t1 - t0)}; kmx_result(0, w, 2);
    return 0;
}
