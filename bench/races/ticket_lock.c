/* A broken ticket lock: a core draws its ticket with a plain load and store instead of
   an atomic fetch-and-add, so two cores can draw the same ticket and hold the lock at
   once. Each core takes the lock word 0 times and keeps the tickets it drew; after a
   barrier core 0 counts the tickets drawn twice (result word 1) beside the counter the
   lock guards (word 0). A wait gives up after a while (word 2 counts those), so that a
   broken run still ends. */
#include "kmx.h"

#define MOST 64
static volatile uint32_t next_ticket, now_serving, counter, gave_up;
static uint32_t drawn[2][MOST];

static uint32_t lock(void) {
    uint32_t mine = next_ticket; /* __atomic_fetch_add(&next_ticket, 1, __ATOMIC_ACQUIRE) belongs here */
    next_ticket = mine + 1;
    for (uint32_t spins = 0; now_serving < mine; spins++) {
        if (spins == 100000) {
            gave_up = gave_up + 1;
            break;
        }
    }
    return mine;
}

static void unlock(void) { now_serving = now_serving + 1; }

int kmx_main(int core) {
    uint32_t n = kmx_word(0);
    for (uint32_t i = 0; i < n && i < MOST; i++) {
        drawn[core & 1][i] = lock();
        counter = counter + 1;
        unlock();
    }
    kmx_barrier();
    if (core == 0) {
        uint32_t twice = 0;
        for (uint32_t i = 0; i < n && i < MOST; i++)
            for (uint32_t j = 0; j < n && j < MOST; j++)
                twice += drawn[0][i] == drawn[1][j];
        uint32_t out[3] = {counter, twice, gave_up};
        kmx_result(0, out, 3);
    }
    return 0;
}
