/* The static riscv64 Linux program of bench/vs_qemu.py and bench/vector.py, for
 * qemu-riscv64:
 *
 *     vs_qemu.elf stream|alu|chase|matmul|popcount|hdot|saxpy|dot|bytecopy SIZE [STEPS]
 *
 * SIZE: stream's count of uint32, alu's iterations, chase's count of indices, matmul's N,
 * popcount's count of uint64, hdot's count of halves, saxpy's and dot's count of floats,
 * bytecopy's count of bytes;
 * STEPS: chase's steps. Data lives in malloc'd memory. Prints "CHECKSUM NANOSECONDS": the
 * kernel's checksum (as the komorebi thread computes it) and the kernel's time alone,
 * by clock_gettime(CLOCK_MONOTONIC) around it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"

#define ALU_SEED 0x9E3779B97F4A7C15ull /* as in sim_driver.inc */

static struct timespec started;
static uint64_t spent;

static void begin(void) { clock_gettime(CLOCK_MONOTONIC, &started); }

static void end(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    spent = (uint64_t)(now.tv_sec - started.tv_sec) * 1000000000ull + (uint64_t)now.tv_nsec - (uint64_t)started.tv_nsec;
}

static void* allocate(uint64_t bytes) {
    void* p = calloc(1, bytes);
    if (p == NULL) {
        fprintf(stderr, "out of memory (%llu bytes)\n", (unsigned long long)bytes);
        exit(2);
    }
    return p;
}

static uint64_t run_stream(uint64_t count) {
    uint32_t* numbers = allocate(4 * count);
    uint32_t* tripled = allocate(4 * count);
    stream_fill(numbers, count);
    begin();
    stream(numbers, tripled, count);
    end();
    return checksum32(tripled, count);
}

static uint64_t run_alu(uint64_t iterations) {
    begin();
    uint64_t sum = alu(iterations, ALU_SEED);
    end();
    return sum;
}

static uint64_t run_chase(uint64_t count, uint64_t steps) {
    uint32_t* next = allocate(4 * count);
    chase_fill(next, count);
    begin();
    uint64_t at = chase(next, steps);
    end();
    return at;
}

static uint64_t run_matmul(uint64_t n) {
    float* a = allocate(4 * n * n);
    float* b = allocate(4 * n * n);
    float* c = allocate(4 * n * n);
    matmul_fill(a, b, n);
    begin();
    matmul(a, b, c, n);
    end();
    return checksum32((const uint32_t*)c, n * n);
}

static uint64_t run_popcount(uint64_t count) {
    uint64_t* words = allocate(8 * count);
    popcount_fill(words, count);
    begin();
    uint64_t bits = popcount(words, count);
    end();
    return bits;
}

static uint64_t run_hdot(uint64_t count) {
    _Float16* a = allocate(2 * count);
    _Float16* b = allocate(2 * count);
    hdot_fill(a, b, count);
    begin();
    uint64_t total = hdot(a, b, count);
    end();
    return total;
}

static uint64_t run_saxpy(uint64_t count) {
    float* x = allocate(4 * count);
    float* y = allocate(4 * count);
    saxpy_fill(x, y, count);
    begin();
    saxpy(SAXPY_A, x, y, count);
    end();
    return checksum32((const uint32_t*)y, count);
}

static uint64_t run_dot(uint64_t count) {
    float* x = allocate(4 * count);
    float* y = allocate(4 * count);
    dot_fill(x, y, count);
    begin();
    float sum = dot(x, y, count);
    end();
    return float_bits(sum);
}

static uint64_t run_bytecopy(uint64_t count) {
    uint8_t* from = allocate(count);
    uint8_t* to = allocate(count);
    bytecopy_fill(from, count);
    begin();
    bytecopy(from, to, count);
    end();
    return checksum32((const uint32_t*)to, count / 4);
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s stream|alu|chase|matmul|popcount|hdot|saxpy|dot|bytecopy SIZE [STEPS]\n", argv[0]);
        return 2;
    }
    const char* kernel = argv[1];
    uint64_t size = strtoull(argv[2], NULL, 10);
    uint64_t steps = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
    uint64_t check;
    if (strcmp(kernel, "stream") == 0) check = run_stream(size);
    else if (strcmp(kernel, "alu") == 0) check = run_alu(size);
    else if (strcmp(kernel, "chase") == 0) check = run_chase(size, steps);
    else if (strcmp(kernel, "matmul") == 0) check = run_matmul(size);
    else if (strcmp(kernel, "popcount") == 0) check = run_popcount(size);
    else if (strcmp(kernel, "hdot") == 0) check = run_hdot(size);
    else if (strcmp(kernel, "saxpy") == 0) check = run_saxpy(size);
    else if (strcmp(kernel, "dot") == 0) check = run_dot(size);
    else if (strcmp(kernel, "bytecopy") == 0) check = run_bytecopy(size);
    else {
        fprintf(stderr, "no kernel %s\n", kernel);
        return 2;
    }
    printf("%llu %llu\n", (unsigned long long)check, (unsigned long long)spent);
    return 0;
}
