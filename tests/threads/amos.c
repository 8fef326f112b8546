/* Every AMO of RV64A (add, swap, xor, or, and, min, max, minu, maxu; .w and .d) on each
   core's own words, with values of a xorshift: word 0 rounds. Each core reports a
   checksum of what the AMOs returned and left (words 2 x core and 2 x core + 1): the same
   whatever the turns, since no core touches another's words. */
#include "kmx.h"

static uint64_t wide[4];
static uint32_t narrow[4];

#define AMO(op, width, at, value, out)                                                      \
    __asm__ volatile("amo" op "." width " %0, %2, (%1)" : "=r"(out) : "r"(at), "r"(value) : "memory")

int kmx_main(int core) {
    uint32_t rounds = kmx_word(0);
    uint64_t x = 0x9E3779B97F4A7C15ull * (core + 1), sum = 0, out;
    uint64_t *d = &wide[core];
    uint32_t *s = &narrow[core];
    for (uint32_t i = 0; i < rounds; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        uint64_t v = (i & 1) ? x : (uint64_t)(int64_t)(int32_t)x; /* negatives too */
        AMO("add", "d", d, v, out); sum = sum * 31 + out;
        AMO("xor", "d", d, v >> 3, out); sum = sum * 31 + out;
        AMO("min", "d", d, v, out); sum = sum * 31 + out;
        AMO("maxu", "d", d, v << 1, out); sum = sum * 31 + out;
        AMO("or", "d", d, v >> 40, out); sum = sum * 31 + out;
        AMO("max", "d", d, v ^ 0x8000000000000000ull, out); sum = sum * 31 + out;
        AMO("and", "d", d, v | 0xF0F0, out); sum = sum * 31 + out;
        AMO("minu", "d", d, v + 7, out); sum = sum * 31 + out;
        AMO("swap", "d", d, v, out); sum = sum * 31 + out;
        AMO("add", "w", s, v, out); sum = sum * 31 + out;
        AMO("xor", "w", s, v >> 5, out); sum = sum * 31 + out;
        AMO("min", "w", s, v >> 1, out); sum = sum * 31 + out;
        AMO("max", "w", s, v, out); sum = sum * 31 + out;
        AMO("minu", "w", s, v >> 2, out); sum = sum * 31 + out;
        AMO("maxu", "w", s, v << 3, out); sum = sum * 31 + out;
        AMO("or", "w", s, v >> 9, out); sum = sum * 31 + out;
        AMO("and", "w", s, ~v, out); sum = sum * 31 + out;
        AMO("swap", "w", s, v * 3, out); sum = sum * 31 + out;
        AMO("add", "w", s, 0, out); sum = sum * 31 + out; /* (rd: the word sign-extended) */
    }
    sum = sum * 31 + *d;
    sum = sum * 31 + *s;
    uint32_t words[2] = {(uint32_t)sum, (uint32_t)(sum >> 32)};
    kmx_result(2 * core, words, 2);
    return 0;
}
