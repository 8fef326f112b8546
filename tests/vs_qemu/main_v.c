/* The vector differential test's program for qemu-riscv64: cases on standard input, states out. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "case_v.h"

int main(void) {
    uint32_t *code = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    static VCase c;
    while (fread(&c, sizeof c, 1, stdin) == 1) {
        memcpy(code, c.code, sizeof c.code);
        __builtin___clear_cache((char *)code, (char *)code + sizeof c.code);
        vs_run_v(&c.state, code);
        fwrite(&c.state, sizeof c.state, 1, stdout);
    }
    return 0;
}
