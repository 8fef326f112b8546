/* tests/vs_qemu/intrinsics.c's one function: every class's results, CLASS_BYTES each. */
#include <stdint.h>
#define CLASS_BYTES 4096
#define CLASSES 10 /* the last, binary16, only WITH_ZVFH */
void intrinsics(uint8_t *out);
