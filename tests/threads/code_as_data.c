/* A thread that reads, copies and writes its own code (tests/image/test_code_as_data.py):
   twice_plus is one Zba instruction and a return, which the loader rewrites for the engine
   (sim/isa/rewrite.py); what the thread sees of it must be what the compiler wrote.
   Result words: 0 twice_plus(4, 8); 1 the copy of it in a static buffer, after fence.i;
   2 its first instruction, loaded; 3 the same through kmx_result's own read (word 4 on);
   then kmx_word(0) 1: the first instruction overwritten with add a0, a0, a1, fence.i:
   5 twice_plus(4, 8), 6 the word loaded back. */
#include <string.h>

#include "kmx.h"

__asm__(".text\n.globl twice_plus\n.type twice_plus,@function\n.p2align 2\n"
        "twice_plus:\n\tsh1add a0, a0, a1\n\tret\n.size twice_plus, .-twice_plus\n");
long twice_plus(long a, long b);

static uint8_t copy[64] __attribute__((aligned(64)));

int kmx_main(int core) {
    (void)core;
    uint32_t out[7] = {0};
    memcpy(copy, (const void*)twice_plus, 8);
    __asm__ volatile("fence.i" ::: "memory");
    long (*copied)(long, long) = (long (*)(long, long))(void*)copy;
    out[0] = (uint32_t)twice_plus(4, 8);
    out[1] = (uint32_t)copied(4, 8);
    memcpy(&out[2], (const void*)twice_plus, 4);
    kmx_result(4, (const uint32_t*)(void*)twice_plus, 1);
    if (kmx_word(0)) {
        volatile uint32_t* code = (volatile uint32_t*)(void*)twice_plus;
        code[0] = 0x00B50533; /* add a0, a0, a1 */
        __asm__ volatile("fence.i" ::: "memory");
        out[5] = (uint32_t)twice_plus(4, 8);
        out[6] = code[0];
    }
    kmx_result(0, out, 4);
    kmx_result(5, &out[5], 2);
    return 0;
}
