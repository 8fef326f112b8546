"""A thread's own code, read as data, is what the compiler wrote (sim/native/code.c,
sim/image/original.py): the loader's rewrites for the engine (Zba and Zbb into jumps to
stubs, the stand-ins' traps) are the engine's alone. A function copied into a buffer runs
there after fence.i; a load, a kmx call's read and a checksum see the compiled bytes; a
store into the code runs after fence.i."""

from __future__ import annotations

import numpy as np
import pytest

from tests import qemu
from tests.isa.test_vs_qemu_vector import QEMU_CPU
from tests.threads import machine_cluster, program_for, run_to_end

SH1ADD_A0_A0_A1 = 0x20B52533
ADD_A0_A0_A1 = 0x00B50533


def run(tmp_path, source="code_as_data.c", words=(0,)):
    return run_to_end(program_for(source, tmp_path, words=words), 600)


def test_a_copied_function_runs_after_fence_i_and_the_code_reads_as_compiled(tmp_path):
    result, loaded = run(tmp_path)
    assert [int(w) for w in result.words[:5]] == [16, 16, SH1ADD_A0_A0_A1, 0, SH1ADD_A0_A0_A1]
    image = machine_cluster(loaded, 1).image
    assert image.stubs.sites, "the loader rewrote nothing: the test tests nothing"


def test_code_stored_over_runs_after_fence_i(tmp_path):
    result, _ = run(tmp_path, words=(1,))
    assert [int(w) for w in result.words[5:7]] == [12, ADD_A0_A0_A1]


CHECKSUM = """
#include "kmx.h"
extern const uint8_t __executable_start[], etext[];
int kmx_main(int core) {
    (void)core;
    const volatile uint8_t* code = (const volatile uint8_t*)(void*)kmx_main;
    uint32_t sum = 0;
    for (int i = 0; i < 4096; i++)
        sum = sum * 31 + code[i];
    uint32_t out[1] = {sum};
    kmx_result(0, out, 1);
    return 0;
}
"""


def test_a_checksum_of_the_code_is_the_compiled_codes(tmp_path):
    result, loaded = run(tmp_path, source=CHECKSUM)
    cluster = machine_cluster(loaded, 1)
    image = cluster.image
    start = next(s for s, _, name in image.symbols if name == "kmx_main")
    written = np.zeros(4096, np.uint8)
    image.place_as_written(written, cluster.image_base, start)
    expected = 0
    for byte in written.tolist():
        expected = (expected * 31 + byte) % 2**32
    assert int(result.words[0]) == expected
    changed, _ = image.changes()
    assert any(start <= offset < start + 4096 for offset in changed), "no changed instruction in the sum"


@pytest.mark.slow  # (its first build of the C library for Linux takes about a minute)
@qemu.needed
def test_qemu_runs_the_copy_the_same(tmp_path):
    """The reference: the same function and copy, built for Linux, under qemu-riscv64."""
    source = tmp_path / "copy.c"
    source.write_text("""
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
__asm__(".text\\n.globl twice_plus\\n.type twice_plus,@function\\n.p2align 2\\n"
        "twice_plus:\\n\\tsh1add a0, a0, a1\\n\\tret\\n.size twice_plus, .-twice_plus\\n");
long twice_plus(long a, long b);
int main(void) {
    /* (Linux keeps static data from running: a page that may) */
    unsigned char* copy = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memcpy(copy, (const void*)twice_plus, 8);
    __asm__ volatile("fence.i" ::: "memory");
    long (*copied)(long, long) = (long (*)(long, long))(void*)copy;
    printf("%ld %ld\\n", twice_plus(4, 8), copied(4, 8));
    return 0;
}
""")
    program = qemu.build(tmp_path / "copy", [source], "-mcpu=sifive_x280")
    assert qemu.run(program, QEMU_CPU).decode().split() == ["16", "16"]
