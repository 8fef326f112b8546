/* A frame read without an invalidate after its flag: the Tensix side (a stand-in,
   bench/races.py) writes a frame of 64 words into DRAM, then raises a flag. The thread
   invalidates the frame first, reads its first word early (a header, say), then waits
   for the flag and sums the frame. When the stand-in wrote the frame after that early
   read, the cache still holds the frame's old lines and the sum is of old bytes. The
   fix: kmx_invalidate(0) after the flag is seen, before the frame is read. */
#include "kmx.h"

#define WORDS 64

int kmx_main(int core) {
    (void)core;
    const volatile uint32_t* frame = (const volatile uint32_t*)kmx_region(0, 0);
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region(1, 0);
    kmx_invalidate(0);
    uint32_t header = frame[0];
    do {
        kmx_invalidate(1);
    } while (flags[0] != 1);
    uint32_t sum = 0;
    for (int i = 0; i < WORDS; i++)
        sum += frame[i];
    uint32_t out[2] = {sum, header};
    kmx_result(0, out, 2);
    return 0;
}
