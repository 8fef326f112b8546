/* A thread that runs a script of memory operations on region 0 ("data"), for the
   model-based test of the cache against a plain write-back cache (tests/cache/
   test_cache_vs_reference.py). Region 1 ("script") holds the script, region 2 ("ctl")
   the hand-over with a Tensix stand-in, region 3 ("log") what the reads saw: the thread
   reaches those three only through the uncached alias, so that their lines are never
   in the cache and only "data" is.

   An operation is four uint32: what, an offset in "data", and a 64-bit value (low word
   first). SYNC hands over to the stand-in: the thread stores the step's number in ctl
   word 0 and waits until the stand-in stores it in ctl word 1. */
#include "kmx.h"
#include "kmx_cache.h"

enum { END, READ, WRITE, READ_BYTE, WRITE_BYTE, FLUSH, INVALIDATE, LINE_FLUSH, WRITE_PAGE, READ_PAGE, SYNC };

int kmx_main(int core) {
    (void)core;
    uint8_t* data = (uint8_t*)kmx_region(0, 0);
    const volatile uint32_t* script = (const volatile uint32_t*)kmx_region_uncached(1);
    volatile uint32_t* ctl = (volatile uint32_t*)kmx_region_uncached(2);
    volatile uint64_t* log = (volatile uint64_t*)kmx_region_uncached(3);
    uint64_t logged = 0;
    for (uint64_t at = 0;; at += 4) {
        uint32_t what = script[at], offset = script[at + 1];
        uint64_t value = script[at + 2] | (uint64_t)script[at + 3] << 32;
        switch (what) {
        case END:
            return 0;
        case READ:
            log[logged++] = *(volatile uint64_t*)(data + offset);
            break;
        case WRITE:
            *(volatile uint64_t*)(data + offset) = value;
            break;
        case READ_BYTE:
            log[logged++] = *(volatile uint8_t*)(data + offset);
            break;
        case WRITE_BYTE:
            *(volatile uint8_t*)(data + offset) = (uint8_t)value;
            break;
        case FLUSH:
            kmx_flush(0);
            break;
        case INVALIDATE:
            kmx_invalidate(0);
            break;
        case LINE_FLUSH:
            kmx_cache_flush_line(data + offset);
            break;
        case WRITE_PAGE:
            for (uint32_t i = 0; i < 4096; i += 8)
                *(volatile uint64_t*)(data + offset + i) = value + i;
            break;
        case READ_PAGE: {
            uint64_t sum = 0;
            for (uint32_t i = 0; i < 4096; i += 8)
                sum = sum * 31 + *(volatile uint64_t*)(data + offset + i);
            log[logged++] = sum;
            break;
        }
        case SYNC:
            ctl[0] = (uint32_t)value;
            while (ctl[1] != (uint32_t)value)
                ;
            break;
        }
    }
}
