/* The kernels of bench/vs_qemu.py and bench/vector.py, and what prepares and checks their data.
 *
 * Each kernel is a function of its own (noinline), in a file of its own, compiled with the
 * same compiler and flags for both builds: as part of a komorebi thread (sim_driver.inc)
 * and as part of a static riscv64 Linux program for qemu-riscv64 (linux_main.c). The
 * kernels call nothing, so their machine code is the same in both. The preparing and
 * checking functions run outside the timed part. */
#ifndef BENCH_KERNELS_H
#define BENCH_KERNELS_H

#include <stdint.h>

#define BENCH_KERNEL __attribute__((noinline))

/* Kernel numbers: word 0 of the komorebi thread. */
#define KERNEL_STREAM 0
#define KERNEL_ALU 1
#define KERNEL_CHASE 2
#define KERNEL_MATMUL 3
#define KERNEL_POPCOUNT 4
#define KERNEL_HDOT 5
#define KERNEL_SAXPY 6
#define KERNEL_DOT 7
#define KERNEL_BYTECOPY 8
#define KERNEL_STREAM_UNINVALIDATED 9 /* the komorebi thread only: stream without its kmx_invalidate */

/* stream.c: the lesson's loop, tripled[i] = 3 * numbers[i]. */
void stream(const uint32_t* numbers, uint32_t* tripled, uint64_t count);
void stream_fill(uint32_t* numbers, uint64_t count); /* numbers[i] = i, as Python's arange */

/* alu.c: a xorshift loop in registers; returns the sum of its states. */
uint64_t alu(uint64_t iterations, uint64_t seed);

/* chase.c: one random cycle through COUNT indices (Sattolo's shuffle, fixed seed), and a
 * walk of STEPS steps along it from index 0; returns where the walk ends. */
void chase_fill(uint32_t* next, uint64_t count);
uint64_t chase(const uint32_t* next, uint64_t steps);

/* matmul.c: C = A * B, N x N float32, row-major, the naive triple loop. */
void matmul_fill(float* a, float* b, uint64_t n);
void matmul(const float* a, const float* b, float* c, uint64_t n);

/* popcount.c: the set bits of COUNT uint64 (Zbb's cpop on the card). */
void popcount_fill(uint64_t* words, uint64_t count);
uint64_t popcount(const uint64_t* words, uint64_t count);

/* hdot.c: half-precision dot products of blocks of 64 (Zfh on the card), hashed. */
void hdot_fill(_Float16* a, _Float16* b, uint64_t count);
uint64_t hdot(const _Float16* a, const _Float16* b, uint64_t count);

/* saxpy.c: y[i] = a * x[i] + y[i], float32. */
void saxpy_fill(float* x, float* y, uint64_t count);
void saxpy(float a, const float* x, float* y, uint64_t count);

/* dot.c: the dot product of two float32 vectors, summed in order. */
void dot_fill(float* x, float* y, uint64_t count);
float dot(const float* x, const float* y, uint64_t count);

/* bytecopy.c: to[i] = from[i] over COUNT bytes, a loop (not a call to memcpy). */
void bytecopy_fill(uint8_t* bytes, uint64_t count);
void bytecopy(const uint8_t* from, uint8_t* to, uint64_t count);

/* common.c: a checksum of COUNT 32-bit words (FNV-1a over the words). */
uint64_t checksum32(const uint32_t* words, uint64_t count);

/* common.c: a float's bits (a kernel's float result, as its checksum). */
uint64_t float_bits(float value);

/* saxpy's a (exact: a * x[i] is exact for saxpy_fill's x). */
#define SAXPY_A 2.5f

/* common.c: a 64-bit LCG (Knuth's MMIX constants), the one random source. */
uint64_t lcg_next(uint64_t* state);

#endif
