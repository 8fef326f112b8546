/* core_portme.h: komorebi's port of EEMBC CoreMark to an X280 thread.
 *
 * Our own port layer, written from CoreMark's porting documentation (barebones_porting.md
 * and the interface coremark.h expects). CoreMark's own sources are NOT in this repository:
 * bench/coremark/run.py copies them, with this file and core_portme.c, into a build folder
 * outside the repository (README.md here says how to fetch them).
 *
 * The thread: one core runs CoreMark's main() from kmx_main (core_portme.c), times it with
 * kmx_cycles(), prints through the thread's printf, and hands the figures back to Python
 * as result words (KMX_COREMARK_WORD_* below).
 *
 * Configuration comes from defines, each with a default here:
 *   ITERATIONS             iterations of the benchmark (required: no default; 0 asks
 *                          CoreMark to choose, which takes >= 10 simulated seconds)
 *   TOTAL_DATA_SIZE        2000 (coremark.h's default: the "2K" run the CRCs are known for)
 *   PERFORMANCE_RUN / VALIDATION_RUN / PROFILE_RUN   which standard seeds (performance)
 *   KMX_COREMARK_HZ        the core clock time_in_secs divides by (1 GHz: tt-bh-linux
 *                          x280.dts clock-frequency, docs/simulator.md "The counters")
 *   COMPILER_FLAGS         the flags the thread was built with, as a string
 * run.py writes them into kmx_coremark_config.h beside this file (a thread's build takes
 * no -D flags from Python); -D in KMX_CFLAGS works too.
 */
#ifndef CORE_PORTME_H
#define CORE_PORTME_H

#include <stddef.h>
#include <stdint.h>

#if defined(__has_include)
#if __has_include("kmx_coremark_config.h")
#include "kmx_coremark_config.h"
#endif
#endif

#ifndef ITERATIONS
#error "ITERATIONS is not defined: run.py writes it into kmx_coremark_config.h (or -DITERATIONS=N in KMX_CFLAGS)"
#endif

/* What the platform has. The X280 has the F and D extensions, and the thread's C library
 * has printf with every conversion (docs/c-library.md): CoreMark's ee_printf is printf
 * (coremark.h maps it when HAS_PRINTF is 1). Time is kmx_cycles(), not <time.h>. */
#define HAS_FLOAT 1
#define HAS_TIME_H 0
#define USE_CLOCK 0
#define HAS_STDIO 1
#define HAS_PRINTF 1

/* main() takes no arguments (a thread has no command line) and returns int. */
#define MAIN_HAS_NOARGC 1
#define MAIN_HAS_NORETURN 0

/* The timer: kmx_cycles(), the core's 64-bit cycle count (docs/c-api.md). */
typedef uint64_t CORETIMETYPE;
typedef uint64_t CORE_TICKS;

#ifndef KMX_COREMARK_HZ
#define KMX_COREMARK_HZ 1000000000ull
#endif
#define EE_TICKS_PER_SEC KMX_COREMARK_HZ

/* Data types: RV64 (LP64). ee_ptr_int must hold a pointer: 64 bits here. */
typedef int16_t ee_s16;
typedef uint16_t ee_u16;
typedef int32_t ee_s32;
typedef float ee_f32;
typedef uint8_t ee_u8;
typedef uint32_t ee_u32;
typedef uintptr_t ee_ptr_int;
typedef size_t ee_size_t;

/* Round an address up to a multiple of 4 (the matrix benchmark's 32-bit values). */
#define align_mem(x) (void *)(4 + (((ee_ptr_int)(x)-1) & ~(ee_ptr_int)3))

/* Seeds come from volatile variables (core_portme.c), so the compiler cannot know them. */
#ifndef SEED_METHOD
#define SEED_METHOD SEED_VOLATILE
#endif

/* The data block is a static array (in the thread's image, in the cluster's DRAM,
 * reached through the cache). */
#ifndef MEM_METHOD
#define MEM_METHOD MEM_STATIC
#endif

/* One context: a thread's other cores are not used. */
#ifndef MULTITHREAD
#define MULTITHREAD 1
#define USE_PTHREAD 0
#define USE_FORK 0
#define USE_SOCKET 0
#endif

extern ee_u32 default_num_contexts;

typedef struct CORE_PORTABLE_S {
    ee_u8 portable_id;
} core_portable;

void portable_init(core_portable *p, int *argc, char *argv[]);
void portable_fini(core_portable *p);

/* The strings CoreMark's report prints. */
#ifndef COMPILER_VERSION
#if defined(__clang__)
#define COMPILER_VERSION "clang " __clang_version__
#elif defined(__GNUC__)
#define COMPILER_VERSION "GCC " __VERSION__
#else
#define COMPILER_VERSION "unknown"
#endif
#endif
#ifndef COMPILER_FLAGS
#define COMPILER_FLAGS "komorebi's default thread flags (-O2)"
#endif
#ifndef MEM_LOCATION
#define MEM_LOCATION "STATIC (thread image, cluster DRAM, cached)"
#endif

/* The standard runs: a data size of 2000 is the performance run unless told otherwise. */
#if !defined(PROFILE_RUN) && !defined(PERFORMANCE_RUN) && !defined(VALIDATION_RUN)
#if (TOTAL_DATA_SIZE == 1200)
#define PROFILE_RUN 1
#elif (TOTAL_DATA_SIZE == 2000)
#define PERFORMANCE_RUN 1
#else
#define VALIDATION_RUN 1
#endif
#endif

/* The result words the thread ends with (kmx_result; Python: ThreadResult.words).
 * 64-bit counts are two words, low then high. run.py reads them by these numbers. */
#define KMX_COREMARK_MAGIC 0x434d4b31u /* "CMK1" */
#define KMX_COREMARK_WORD_MAGIC 0
#define KMX_COREMARK_WORD_CYCLES_LO 1 /* kmx_cycles() from start_time to stop_time */
#define KMX_COREMARK_WORD_CYCLES_HI 2
#define KMX_COREMARK_WORD_INSTRET_LO 3 /* rdinstret over the same span */
#define KMX_COREMARK_WORD_INSTRET_HI 4
#define KMX_COREMARK_WORD_ITERATIONS 5 /* the iterations timed */
#define KMX_COREMARK_WORD_SEED1 6
#define KMX_COREMARK_WORD_SEED2 7
#define KMX_COREMARK_WORD_SEED3 8
#define KMX_COREMARK_WORD_SIZE 9 /* data size per algorithm */
#define KMX_COREMARK_WORD_CRC 10 /* crcfinal */
#define KMX_COREMARK_WORD_CRCLIST 11
#define KMX_COREMARK_WORD_CRCMATRIX 12
#define KMX_COREMARK_WORD_CRCSTATE 13
#define KMX_COREMARK_WORD_FINISHED 14 /* 1 once main() reached portable_fini */
#define KMX_COREMARK_WORD_HZ_LO 15 /* KMX_COREMARK_HZ */
#define KMX_COREMARK_WORD_HZ_HI 16
#define KMX_COREMARK_WORD_COUNT 17

#endif /* CORE_PORTME_H */
