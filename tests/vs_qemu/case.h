/* One case of the differential test: the registers before, and the code to run. */
#include <stdint.h>
#define CODE_WORDS 24
typedef struct {
    uint64_t x[32];
    uint64_t f[32];
    uint64_t fcsr;
    uint32_t code[CODE_WORDS]; /* ends with ret (0x00008067) */
} Case;
typedef struct {
    uint64_t x[32];
    uint64_t f[32];
    uint64_t fcsr;
} State;
void vs_run(State *state, const uint32_t *code);
