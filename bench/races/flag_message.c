/* Message passing through a flag without an atomic or a fence: core 0 fills a message of
   32 words and raises a flag; core 1 waits for the flag and sums the message. The writer
   raises the flag before it fills the message (with plain stores the compiler and the
   core may as well reorder them; here the program says so), so the reader can see the
   flag before the message is complete. The fix: fill, then
   __atomic_store_n(&flag, 1, __ATOMIC_RELEASE), and read it with __ATOMIC_ACQUIRE. */
#include "kmx.h"

#define WORDS 32
static volatile uint32_t message[WORDS];
static volatile uint32_t flag;

int kmx_main(int core) {
    if (core == 0) {
        flag = 1;
        for (int i = 0; i < WORDS; i++)
            message[i] = i + 1;
    } else if (core == 1) {
        while (!flag) {
        }
        uint32_t sum = 0;
        for (int i = 0; i < WORDS; i++)
            sum += message[i];
        kmx_result(0, &sum, 1);
    }
    kmx_barrier();
    return 0;
}
