/* A missing barrier: each core fills its share of a table, and the last core sums the
   whole table as soon as its own share is done, without waiting for the others. */
#include "kmx.h"

#define N 256
static volatile uint32_t table[N];

int kmx_main(int core) {
    int cores = kmx_word(1);
    for (int i = core; i < N; i += cores)
        table[i] = i + 1;
    /* kmx_barrier() belongs here */
    if (core == cores - 1) {
        uint32_t sum = 0;
        for (int i = 0; i < N; i++)
            sum += table[i];
        kmx_result(0, &sum, 1);
    }
    kmx_barrier();
    return 0;
}
