/* A first X280 thread: it says hello, doubles the word Python gave it, and hands the
 * double back. */
#include "kmx.h"

int kmx_main(int core) {
    kmx_print("hello from core %d\n", core);
    const uint32_t word = kmx_word(0);
    kmx_print("Python gave me %u\n", word);
    const uint32_t doubled = 2 * word;
    kmx_result(0, &doubled, 1);
    return 0;
}
