/* lr/sc across turns (tests/hart/test_reservations.py). Core 0 takes a reservation of a
   word with lr.d, says so, waits until core 1 says it is done, then runs sc.d: result
   words 0 (1: the sc failed) and 1 (the word after). Core 1, once the reservation is
   taken, does what kmx_word(0) says to the word's line:
     0  nothing (a turn switch alone: the sc succeeds)
     1  stores 99, then 5: the same value as before (A-B-A: the sc fails)
     2  loads it (the sc succeeds)
     3  stores to the next line (not the reservation's: the sc succeeds)
     4  stores 5 with a vector store (the sc fails)
   The word is where kmx_word(1) says: 0 a global (the image), 1 the heap, 2 core 0's
   stack, 3 region 0. */
#include <stdlib.h>

#include "kmx.h"

static volatile uint64_t global_words[16] __attribute__((aligned(64))) = {5};
static volatile uint64_t* volatile word;
static volatile uint32_t reserved, done;

static uint64_t load_reserved(volatile uint64_t* p) {
    uint64_t v;
    __asm__ volatile("lr.d %0, (%1)" : "=r"(v) : "r"(p) : "memory");
    return v;
}

static uint64_t store_conditional(volatile uint64_t* p, uint64_t v) {
    uint64_t failed;
    __asm__ volatile("sc.d %0, %2, (%1)" : "=r"(failed) : "r"(p), "r"(v) : "memory");
    return failed;
}

int kmx_main(int core) {
    if (core == 0) {
        volatile uint64_t stack_words[16] __attribute__((aligned(64))) = {5};
        uint32_t where = kmx_word(1);
        volatile uint64_t* p = where == 0   ? global_words
                               : where == 1 ? (volatile uint64_t*)aligned_alloc(64, 128)
                               : where == 2 ? stack_words
                                            : (volatile uint64_t*)kmx_region(0, 0);
        if (where == 1 || where == 3)
            p[0] = 5;
        word = p;
        uint64_t seen = load_reserved(p);
        reserved = 1;
        while (!done)
            ;
        uint32_t out[2] = {(uint32_t)store_conditional(p, seen + 1), (uint32_t)p[0]};
        kmx_result(0, out, 2);
        if (where == 3)
            kmx_flush(0);
    } else {
        while (!reserved)
            ;
        volatile uint64_t* p = word;
        switch (kmx_word(0)) {
        case 1:
            p[0] = 99;
            p[0] = 5;
            break;
        case 2:
            (void)p[0];
            break;
        case 3:
            p[8] = 7;
            break;
        case 4: {
            uint64_t five = 5;
            __asm__ volatile("vsetivli zero, 1, e64, m1, ta, ma\n\tvle64.v v1, (%0)\n\tvse64.v v1, (%1)"
                             :: "r"(&five), "r"(p) : "memory");
            break;
        }
        }
        done = 1;
    }
    return 0;
}
