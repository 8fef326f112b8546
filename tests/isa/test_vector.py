"""The vector unit (sim/native/vector/) from C: its loads and
stores go through the cache model and the checker like scalar ones, a bad address is a
ThreadFault at the instruction's line, and vl/vtype behave as RVV 1.0 says. (The vector
code is written by hand, in assembly, with the vector registers it writes clobbered and its
outputs early-clobbered, `=&r`: compiling for the X280, the compiler uses vector registers
itself, and may give an output the register of an input the assembly still reads.)"""

from __future__ import annotations

import numpy as np
import pytest

import komorebi as km
from tests.threads import program_for, run_to_end

STREAM = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    uint32_t *a = (uint32_t *)kmx_region(0, &bytes);
    uint32_t *b = (uint32_t *)kmx_region(1, 0);
    if (kmx_word(0)) kmx_invalidate(0);
    uint64_t n = bytes / 4, vl;
    for (uint64_t i = 0; i < n; i += vl) {
        __asm__ volatile(".option push\n .option arch, +v\n"
            "vsetvli %0, %1, e32, m2, ta, ma\n"
            "vle32.v v2, (%2)\n"
            "vmul.vx v4, v2, %4\n"
            "vse32.v v4, (%3)\n"
            ".option pop\n"
            : "=&r"(vl) : "r"(n - i), "r"(a + i), "r"(b + i), "r"((uint64_t)3) : "memory", "v2", "v3", "v4", "v5");
    }
    if (kmx_word(1)) kmx_flush(1);
    return core;
}
"""


def test_a_vector_stream_computes_what_the_scalar_one_does_and_needs_no_finding(tmp_path):
    program = program_for(STREAM, tmp_path, regions={"a": np.arange(1000, dtype=np.uint32), "b": 4000}, words=[1, 1])
    with km.Session(coherence="strict") as session:
        run = session.load(program)
        run.thread_result(timeout=30)
        run.stop()
        assert (run.thread.read("b").view(np.uint32) == 3 * np.arange(1000, dtype=np.uint32)).all()
        assert run.findings == []


@pytest.mark.parametrize("invalidate, flush, finding", [(0, 1, ("read-before-invalidate", 10)),
                                                          (1, 0, ("unflushed-write", 10))])  # (the asm statement's line)
def test_vector_loads_and_stores_are_seen_by_the_checker_at_their_line(tmp_path, invalidate, flush, finding):
    program = program_for(STREAM, tmp_path, regions={"a": np.arange(1000, dtype=np.uint32), "b": 4000},
                          words=[invalidate, flush])
    with km.Session(coherence="strict") as session:
        run = session.load(program)
        run.thread_result(timeout=30)
        with pytest.warns(km.CoherenceWarning):
            run.stop()
        assert [(f.kind, f.line) for f in run.findings] == [finding]


def test_a_vector_load_past_a_region_is_a_fault_at_its_line(tmp_path):
    source = STREAM.replace("uint64_t n = bytes / 4, vl;", "uint64_t n = bytes / 4 + 4096, vl;")
    program = program_for(source, tmp_path, regions={"a": np.arange(1000, dtype=np.uint32), "b": 4000}, words=[1, 1])
    with pytest.raises(km.ThreadFault) as fault:
        run_to_end(program)
    assert "a load from" in str(fault.value) and fault.value.line == 10


def test_vsetvli_gives_vl_as_rvv_says(tmp_path):
    source = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t vl[4], vlenb, vtype;
    __asm__ volatile(".option push\n .option arch, +v\n"
        "vsetvli %0, %5, e8, m8, ta, ma\n"    /* VLMAX 512 */
        "vsetvli %1, %6, e64, m1, ta, ma\n"   /* VLMAX 8 */
        "vsetvli %2, zero, e16, mf2, ta, ma\n" /* rs1 = x0: VLMAX, 16 */
        "vsetivli %3, 5, e32, m4, tu, mu\n"
        "csrr %4, vlenb\n"
        ".option pop\n"
        : "=&r"(vl[0]), "=&r"(vl[1]), "=&r"(vl[2]), "=&r"(vl[3]), "=&r"(vlenb)
        : "r"((uint64_t)1000), "r"((uint64_t)3));
    __asm__ volatile(".option push\n .option arch, +v\n csrr %0, vtype\n .option pop\n" : "=r"(vtype));
    uint32_t out[6] = {(uint32_t)vl[0], (uint32_t)vl[1], (uint32_t)vl[2], (uint32_t)vl[3], (uint32_t)vlenb, (uint32_t)vtype};
    kmx_result(0, out, 6);
    return core;
}
"""
    result, _ = run_to_end(program_for(source, tmp_path))
    assert [int(w) for w in result.words[:6]] == [512, 3, 16, 5, 64, 0b0_0_010_010]



def test_in_strict_mode_vector_loads_read_the_stale_lines_and_unflushed_vector_stores_never_arrive(tmp_path):
    """Lesson 35's loop, built for the card, is vle32.v, vmul.vx, vse32.v: without its
    invalidate it reads the cache's stale bytes, and without its flush its stores stay in
    the cache, as strict mode says."""
    from tests.cache.test_checker import TRIPLE, run_source
    from tests.tutorial.test_lesson40 import _instructions
    from tests.threads import machine_cluster

    (tmp_path / "stale").mkdir()
    run, _, _ = run_source(tmp_path / "stale", TRIPLE.replace("    kmx_invalidate(0);\n", ""), mode="strict")
    code = _instructions(machine_cluster(run, 1).image)
    assert any(i & 0x1DF0_707F == 0x0000_6007 for i in code), "no vle32.v: the test tests nothing"
    assert (run.thread.read("tripled").view(np.uint32) == np.uint32(3 * 0xA5A5A5A5 % 2**32)).all()
    (tmp_path / "unflushed").mkdir()
    run, _, _ = run_source(tmp_path / "unflushed", TRIPLE.replace("    kmx_flush(1);\n", ""), mode="strict")
    assert (run.thread.read("tripled") == 0).all()
    assert [f.kind for f in run.findings] == ["unflushed-write"]


@pytest.mark.parametrize("instruction", ["vfwcvt.xu.f.v", "vfwcvt.x.f.v", "vfwcvt.rtz.xu.f.v", "vfwcvt.rtz.x.f.v",
                                         "vfncvt.f.xu.w", "vfncvt.f.x.w"])
def test_a_conversion_to_or_from_128_bit_elements_is_refused(tmp_path, instruction):
    """At SEW 64 these conversions' other element width would be 128 bits, past ELEN: RVV 1.0
    reserves them, so the unit refuses them (it used to run them, half their elements lost)."""
    source = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t vl;
    __asm__ volatile(".option push\n .option arch, +v\n"
        "vsetvli %0, %1, e64, m1, ta, ma\n"
        "INSTRUCTION v8, v16\n"
        ".option pop\n"
        : "=&r"(vl) : "r"((uint64_t)4) : "v8", "v9", "v16");
    return core;
}
""".replace("INSTRUCTION", instruction)
    with pytest.raises(km.ThreadFault) as fault:
        run_to_end(program_for(source, tmp_path))
    assert instruction in str(fault.value) and "e64" in str(fault.value), str(fault.value)
