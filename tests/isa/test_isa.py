"""The instructions the engine would run unlike the X280 (sim.isa.stand_in): fence.i makes a core run
what memory holds, and the counters count the core's own instructions. (Issue 11, items
3 and 5.)"""

from __future__ import annotations

import pytest

from tests.threads import program_for, run_to_end

CODE_BY_ANOTHER_CORE = r"""
#include "kmx.h"
/* Code written at run time into a static buffer; each core calls it after fence.i. */
static uint32_t code[16] __attribute__((aligned(64)));
typedef int (*fn)(void);
static void put(int value) {
    code[0] = 0x00000513u | ((uint32_t)value << 20); /* li a0, value */
    code[1] = 0x00008067u;                           /* ret */
}
int kmx_main(int core) {
    uint32_t out[2];
    if (core == 1) { put(1); __asm__ volatile("fence.i" ::: "memory"); }
    kmx_barrier();
    if (core == 1) out[0] = ((fn)code)();   /* core 1 runs (and translates) it */
    kmx_barrier();
    if (core == 0) put(2);                  /* core 0 writes other code there */
    kmx_barrier();
    if (core == 1) {
        __asm__ volatile("fence.i" ::: "memory");
        out[1] = ((fn)code)();              /* what memory holds now */
        kmx_result(0, out, 2);
    }
    return 0;
}
"""

CODE_BY_A_KMX_CALL = r"""
#include "kmx.h"
static uint16_t code[16] __attribute__((aligned(64)));
typedef int (*fn)(void);
int kmx_main(int core) {
    uint32_t out[2];
    /* li a0, 7; c.addi a0, 1; c.ret: returns 8 */
    code[0] = 0x0513; code[1] = 0x0070; code[2] = 0x0505; code[3] = 0x8082;
    __asm__ volatile("fence.i" ::: "memory");
    out[0] = ((fn)code)();
    /* kmx_region stores region 0's size, 0x8082 (c.ret), over the c.addi */
    kmx_region(0, (uint64_t*)&code[2]);
    __asm__ volatile("fence.i" ::: "memory");
    out[1] = ((fn)code)();
    kmx_result(0, out, 2);
    return 0;
}
"""


def test_after_fence_i_a_core_runs_the_code_another_core_wrote(tmp_path):
    program = program_for(CODE_BY_ANOTHER_CORE, tmp_path, cores=2)
    result, _ = run_to_end(program)
    assert result.words[:2].tolist() == [1, 2]


def test_after_fence_i_a_core_runs_the_code_a_kmx_call_wrote(tmp_path):
    result, _ = run_to_end(program_for(CODE_BY_A_KMX_CALL, tmp_path, regions={"r": 0x8082}))
    assert result.words[:2].tolist() == [8, 7]


COUNTERS = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t c, i0, i1, m, t, k;
    __asm__ volatile("rdcycle %0" : "=r"(c));
    __asm__ volatile("rdinstret %0\n\trdinstret %1" : "=r"(i0), "=r"(i1));
    __asm__ volatile("csrr %0, minstret" : "=r"(m));
    volatile uint64_t x = 0;
    for (int n = 0; n < 100000; n++) x += n;
    __asm__ volatile("rdtime %0" : "=r"(t));
    k = kmx_cycles();
    uint64_t out[6] = {c, i0, i1, m, t, k};
    kmx_result(0, (const uint32_t*)out, 12);
    return 0;
}
"""


def _counters(tmp_path):
    result, _ = run_to_end(program_for(COUNTERS, tmp_path))
    return result.words[:12].view("<u8").tolist()


def test_the_counters_count_the_cores_own_instructions_the_same_every_run(tmp_path):
    first = _counters(tmp_path)
    assert _counters(tmp_path) == first
    cycle, instret0, instret1, minstret, time, kmx = first
    assert instret1 == instret0 + 1 and minstret == instret1 + 1  # one instruction apart
    assert 0 < cycle < instret0 < kmx
    assert kmx > 100_000  # the loop ran
    # rdtime is the 50 MHz timer of a 1 GHz core: 20 instructions a tick
    assert (kmx - 200) // 20 <= time <= kmx // 20


def test_the_counters_of_each_core_are_its_own(tmp_path):
    source = COUNTERS.replace("int kmx_main(int core) {", "int kmx_main(int core) {\n    if (core) return 0;")
    alone, _ = run_to_end(program_for(source, tmp_path))
    together, _ = run_to_end(program_for(source, tmp_path, cores=4))
    # core 0 runs the same instructions whatever the others do (plus the one branch), from
    # its first reading on (the C library's start does a little more for several cores):
    # the cycle and instruction counters, and kmx_cycles (rdtime ticks slower)
    def since_first(words):
        c, i0, i1, m, _t, k = words[:12].view("<u8").tolist()
        return [i0 - c, i1 - c, m - c, k - c]
    assert since_first(together.words) == since_first(alone.words)


@pytest.mark.parametrize(
    "insn, what",
    [
        (0x0000100F, "fence.i"),
        (0xC0002573, "cycle"),  # rdcycle a0
        (0xC02025F3, "instret"),  # rdinstret a1
        (0xC0102673, "time"),  # rdtime a2
        (0xB0002573, "mcycle"),
        (0xB0202573, "minstret"),
    ],
)
def test_the_loader_finds_what_the_simulator_runs(insn, what):
    from komorebi.sim.isa import stand_in as isa

    code = (0x00000013).to_bytes(4, "little") + insn.to_bytes(4, "little") + (0x4501).to_bytes(2, "little")
    found = isa.find_trapped(code, 0x100)
    assert list(found) == [0x104]
    trapped = found[0x104]
    assert (trapped.counter or "fence.i") == what
    assert isa.trapped(trapped.replacement) is not None or trapped.fence_i


def test_a_counter_write_is_not_taken_for_a_read():
    from komorebi.sim.isa import stand_in as isa

    assert isa.trapped(0xC0029073) is None  # csrrw x0, cycle, t0: a write, left to the engine


def test_data_among_the_code_is_left_as_it_is(tmp_path):
    """A table an assembler put in .text, whose words look like rdcycle and fence.i, is
    data: the loader leaves it alone."""
    source = r"""
#include "kmx.h"
extern const uint32_t table[2];
__asm__(".section .text\n.globl table\n.type table, @object\n.p2align 2\n"
        "table:\n.4byte 0xC0002573, 0x0000100F\n.size table, 8\n.text\n");
int kmx_main(int core) {
    kmx_result(0, table, 2);
    return 0;
}
"""
    result, _ = run_to_end(program_for(source, tmp_path))
    assert result.words[:2].tolist() == [0xC0002573, 0x0000100F]
