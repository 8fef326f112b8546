/* core_portme.c: komorebi's port of EEMBC CoreMark to an X280 thread (see core_portme.h).
 *
 * The thread's entry point is kmx_main: core 0 runs CoreMark's main() (core_main.c, which
 * prints its report through the thread's printf), then ends with the figures as result
 * words for Python (bench/coremark/run.py). CoreMark's main() times the benchmark with
 * start_time() and stop_time() below, which read kmx_cycles().
 */
#include <stddef.h>
#include <stdint.h>

#include "coremark.h"
#include "kmx.h"

/* The seeds, read through volatile variables so that the compiler cannot fold them
 * (SEED_VOLATILE). The standard sets: CoreMark knows the CRCs they give, with a
 * TOTAL_DATA_SIZE of 2000, and says so ("Correct operation validated"). */
#if defined(PERFORMANCE_RUN) && PERFORMANCE_RUN
volatile ee_s32 seed1_volatile = 0x0;
volatile ee_s32 seed2_volatile = 0x0;
volatile ee_s32 seed3_volatile = 0x66;
#elif defined(VALIDATION_RUN) && VALIDATION_RUN
volatile ee_s32 seed1_volatile = 0x3415;
volatile ee_s32 seed2_volatile = 0x3415;
volatile ee_s32 seed3_volatile = 0x66;
#elif defined(PROFILE_RUN) && PROFILE_RUN
volatile ee_s32 seed1_volatile = 0x8;
volatile ee_s32 seed2_volatile = 0x8;
volatile ee_s32 seed3_volatile = 0x8;
#else
#error "define one of PERFORMANCE_RUN, VALIDATION_RUN or PROFILE_RUN to 1"
#endif
volatile ee_s32 seed4_volatile = ITERATIONS; /* iterations (0: CoreMark chooses) */
volatile ee_s32 seed5_volatile = 0;          /* algorithms to run (0: all three) */

ee_u32 default_num_contexts = 1;

/* The timer. kmx_cycles() is the core's cycle count (in the default session one cycle an
 * instruction, docs/simulator.md "The counters"); rdinstret its retired instructions, the
 * same count there, and apart from it under a cycle model that charges more than one
 * cycle to an instruction. Both are read at the start and the stop of the timed part. */
static CORE_TICKS start_cycles, stop_cycles;
static uint64_t start_instret, stop_instret;

static inline uint64_t instructions_retired(void) {
    uint64_t count;
    __asm__ volatile("rdinstret %0" : "=r"(count));
    return count;
}

void start_time(void) {
    start_cycles = kmx_cycles();
    start_instret = instructions_retired();
}

void stop_time(void) {
    stop_instret = instructions_retired();
    stop_cycles = kmx_cycles();
}

CORE_TICKS get_time(void) { return stop_cycles - start_cycles; }

secs_ret time_in_secs(CORE_TICKS ticks) {
    return (secs_ret)ticks / (secs_ret)EE_TICKS_PER_SEC;
}

/* The figures main() leaves behind: portable_fini gets &results[0].port, so it can find
 * results[0] (coremark.h's core_results) and keep what Python needs. */
static uint32_t figures[KMX_COREMARK_WORD_COUNT];

void portable_init(core_portable *p, int *argc, char *argv[]) {
    (void)argc;
    (void)argv;
    if (sizeof(ee_ptr_int) < sizeof(ee_u8 *))
        ee_printf("ERROR! ee_ptr_int cannot hold a pointer (core_portme.h)\n");
    if (sizeof(ee_u32) != 4)
        ee_printf("ERROR! ee_u32 is not a 32-bit type (core_portme.h)\n");
    p->portable_id = 1;
}

void portable_fini(core_portable *p) {
    const core_results *results =
        (const core_results *)((const char *)p - offsetof(core_results, port));
    const uint64_t cycles = stop_cycles - start_cycles;
    const uint64_t instret = stop_instret - start_instret;
    const uint64_t hz = EE_TICKS_PER_SEC;
    figures[KMX_COREMARK_WORD_MAGIC] = KMX_COREMARK_MAGIC;
    figures[KMX_COREMARK_WORD_CYCLES_LO] = (uint32_t)cycles;
    figures[KMX_COREMARK_WORD_CYCLES_HI] = (uint32_t)(cycles >> 32);
    figures[KMX_COREMARK_WORD_INSTRET_LO] = (uint32_t)instret;
    figures[KMX_COREMARK_WORD_INSTRET_HI] = (uint32_t)(instret >> 32);
    figures[KMX_COREMARK_WORD_ITERATIONS] = results->iterations;
    figures[KMX_COREMARK_WORD_SEED1] = (uint16_t)results->seed1;
    figures[KMX_COREMARK_WORD_SEED2] = (uint16_t)results->seed2;
    figures[KMX_COREMARK_WORD_SEED3] = (uint16_t)results->seed3;
    figures[KMX_COREMARK_WORD_SIZE] = results->size;
    figures[KMX_COREMARK_WORD_CRC] = results->crc;
    figures[KMX_COREMARK_WORD_CRCLIST] = results->crclist;
    figures[KMX_COREMARK_WORD_CRCMATRIX] = results->crcmatrix;
    figures[KMX_COREMARK_WORD_CRCSTATE] = results->crcstate;
    figures[KMX_COREMARK_WORD_FINISHED] = 1;
    figures[KMX_COREMARK_WORD_HZ_LO] = (uint32_t)hz;
    figures[KMX_COREMARK_WORD_HZ_HI] = (uint32_t)(hz >> 32);
    p->portable_id = 0;
}

/* CoreMark's entry (core_main.c: MAIN_HAS_NOARGC, so main(void)). A thread may have a
 * main of its own, an ordinary function (kmx_runtime/process.c). */
int main(void);

int kmx_main(int core) {
    if (core != 0)
        return 0; /* one context: only core 0 runs the benchmark */
    const int code = main();
    kmx_result(0, figures, KMX_COREMARK_WORD_COUNT);
    return code;
}
