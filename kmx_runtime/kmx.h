/* kmx.h: the C API of an X280 thread under komorebi.
 *
 * A thread is a C program whose entry point is kmx_main(core). Every kmx_ call is an
 * `ecall` with the call number in a7 and the arguments in a0..a2; the simulator answers it
 * and puts the result in a0. The numbers below are shared with sim/kmx/traps.py
 * (tests/kmx/test_traps.py checks that the two agree).
 */
#ifndef KMX_H
#define KMX_H

#define KMX_CALL_EXIT 1
#define KMX_CALL_REGION 2
#define KMX_CALL_INVALIDATE 3
#define KMX_CALL_FLUSH 4
#define KMX_CALL_RESULT 5
#define KMX_CALL_WORD 6
#define KMX_CALL_WORD_COUNT 7
#define KMX_CALL_SUBMIT 8
#define KMX_CALL_PRINT 9
#define KMX_CALL_CYCLES 10
#define KMX_CALL_CLUSTER 11
#define KMX_CALL_BARRIER 12
#define KMX_CALL_ASSERT 13 /* (the C library's assert: kmx_runtime/process.c) */
#define KMX_CALL_REGION_UNCACHED 14

#define KMX_MAX_REGIONS 16
#define KMX_MAX_WORDS 64
#define KMX_RESULT_WORDS 48

#ifndef __ASSEMBLER__

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kmx calls are real functions (not inlined), so that a fault inside one has a frame
 * of its own and the simulator can name the caller's source line. */
#define KMX_API static __attribute__((noinline, unused))

/* One system call. The "memory" clobber makes the compiler finish every store before the
 * call and reload after it: the simulator reads and writes the thread's memory here. */
static inline uint64_t kmx__call(uint64_t number, uint64_t arg0, uint64_t arg1,
                                 uint64_t arg2) {
    register uint64_t a0 __asm__("a0") = arg0;
    register uint64_t a1 __asm__("a1") = arg1;
    register uint64_t a2 __asm__("a2") = arg2;
    register uint64_t a7 __asm__("a7") = number;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
    return a0;
}

/* The thread's entry point: each core of the thread runs it with its number, 0..cores-1.
 * Its return value is the thread's code (0 for success). */
int kmx_main(int core);

/* Region ID (0 for the first name in Python's `regions`, 1 for the second, ...) as memory;
 * its size in bytes goes to *bytes (when bytes is not null). 0 for an unknown ID. */
KMX_API void* kmx_region(uint64_t id, uint64_t* bytes) {
    return (void*)kmx__call(KMX_CALL_REGION, id, (uint64_t)bytes, 0);
}

/* Region ID through the uncached alias of the cluster's DRAM (kmx_region's address less
 * 0x4000_0000_0000): loads and stores there reach DRAM past the cache, which does not see
 * them, nor they what the cache holds. Never mix it with kmx_region's address on one
 * line. 0 for an unknown ID. */
KMX_API void* kmx_region_uncached(uint64_t id) {
    return (void*)kmx__call(KMX_CALL_REGION_UNCACHED, id, 0, 0);
}

/* Drop the cluster's cached copy of region ID, so that the next read sees DRAM. Lines the
 * thread wrote and did not flush are dropped too: those writes are lost. */
KMX_API void kmx_invalidate(uint64_t id) {
    kmx__call(KMX_CALL_INVALIDATE, id, 0, 0);
}

/* Write the lines of region ID that the thread wrote back to DRAM; they stay cached. */
KMX_API void kmx_flush(uint64_t id) { kmx__call(KMX_CALL_FLUSH, id, 0, 0); }

/* Set result words index .. index+count-1 (of 48) from words[0..count-1]. */
KMX_API void kmx_result(uint64_t index, const uint32_t* words, uint64_t count) {
    kmx__call(KMX_CALL_RESULT, index, (uint64_t)words, count);
}

/* Argument word INDEX (of the `words` Python gave the thread) and how many there are. */
KMX_API uint32_t kmx_word(uint64_t index) {
    return (uint32_t)kmx__call(KMX_CALL_WORD, index, 0, 0);
}
KMX_API uint64_t kmx_word_count(void) {
    return kmx__call(KMX_CALL_WORD_COUNT, 0, 0, 0);
}

/* Hand the current 48 result words to Python now; the thread goes on. */
KMX_API void kmx_submit(void) { kmx__call(KMX_CALL_SUBMIT, 0, 0, 0); }

/* This core's cycle count, the cluster's number (0..3), and a meeting of all the
 * thread's cores. */
KMX_API uint64_t kmx_cycles(void) { return kmx__call(KMX_CALL_CYCLES, 0, 0, 0); }
KMX_API int kmx_cluster(void) { return (int)kmx__call(KMX_CALL_CLUSTER, 0, 0, 0); }
KMX_API void kmx_barrier(void) { kmx__call(KMX_CALL_BARRIER, 0, 0, 0); }

/* printf for a thread: %d %i %u %x %X %p %s %c %%, the l/ll/z lengths, width and zero
 * padding; at most 16 arguments. Python prints the text prefixed by cluster and core. */
void kmx_print(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif /* __ASSEMBLER__ */
#endif /* KMX_H */
