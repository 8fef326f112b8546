/* One case of the vector differential test: the registers (x, f, v, vl, vtype, fcsr and
 * vcsr) and a block of memory before, and the code to run. */
#include <stdint.h>
#define V_CODE_WORDS 24
#define V_MEMORY 4608
typedef struct {
    uint64_t x[32];
    uint64_t f[32];
    uint64_t fcsr; /* with vcsr from bit 8 (run_v.S) */
    uint64_t vl, vtype;
    uint8_t v[32 * 64];
    uint8_t memory[V_MEMORY];
} VState;
typedef struct {
    VState state;
    uint32_t code[V_CODE_WORDS]; /* ends with ret */
} VCase;
void vs_run_v(VState *state, const uint32_t *code);
