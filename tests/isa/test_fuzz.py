"""No input crashes the Python process: random kmx calls (any number in a7, any values in
a0..a2) and random instruction words end in a result, a km.ThreadFault or a TimeoutError,
run.stop() returns, and the same session runs the lesson correctly afterwards."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import komorebi as km
from tests.conftest import ROOT

LESSON = ROOT / "tutorial" / "35_sharing_memory"

CALLS = r"""
#include "kmx.h"
/* Words come in fours of pairs: a7, a0, a1, a2, each a 64-bit value as two words. */
int kmx_main(int core) {
    uint64_t n = kmx_word_count() / 8;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v[4];
        for (int j = 0; j < 4; j++)
            v[j] = (uint64_t)kmx_word(8 * i + 2 * j) | (uint64_t)kmx_word(8 * i + 2 * j + 1) << 32;
        register uint64_t a7 __asm__("a7") = v[0];
        register uint64_t a0 __asm__("a0") = v[1];
        register uint64_t a1 __asm__("a1") = v[2];
        register uint64_t a2 __asm__("a2") = v[3];
        __asm__ volatile("ecall" : "+r"(a0) : "r"(a7), "r"(a1), "r"(a2) : "memory");
    }
    return 0;
}
"""

CODE = r"""
#include "kmx.h"
/* Runs the argument words as instructions, followed by a return. */
static uint32_t code[72] __attribute__((aligned(64)));
int kmx_main(int core) {
    uint64_t n = kmx_word_count();
    for (uint64_t i = 0; i < n; i++) code[i] = kmx_word(i);
    code[n] = 0x00008067; /* ret */
    __asm__ volatile("fence.i" ::: "memory");
    return ((int (*)(void))code)();
}
"""

REGION = 0x4000_3020_0000  # about where cluster 1's first region lands
INTERESTING = st.sampled_from([0, 1, 8, 64, 4096, REGION, REGION + 4000, 0x4000_3000_0000, 2**63, 2**64 - 1])
VALUES = st.one_of(INTERESTING, st.integers(0, 2**64 - 1), st.integers(0, 70))


def split(values):
    out = []
    for v in values:
        out += [v & 0xFFFF_FFFF, v >> 32]
    return out


def run_once(session, source, words, *, regions=True, timeout=5.0):
    program = km.Program("fuzz", kernels=LESSON / "kernels")
    program.thread(
        cluster=1, sources=[source], words=words,
        regions={"numbers": np.arange(1024, dtype=np.uint32), "tripled": 4096} if regions else {},
    )
    run = session.load(program)
    outcome = None
    try:
        for _ in range(20):
            result = run.thread_result(timeout=timeout)
            if result.final:
                outcome = "result"
                break
    except km.ThreadFault as fault:
        assert fault.cause and fault.core == 0 and fault.cluster == 1
        outcome = "fault"
    except TimeoutError:
        outcome = "timeout"
    finally:
        run.stop()  # returns, whatever the thread did
    if regions:
        assert run.thread.read("numbers").size == 4096
    return outcome


def lesson_still_runs(session):
    program = km.Program("sharing_memory", kernels=LESSON / "kernels")
    numbers = np.arange(1024, dtype=np.uint32)
    program.thread(cluster=1, sources=[LESSON / "thread" / "triple.c"], regions={"numbers": numbers, "tripled": 4096})
    run = session.load(program)
    assert run.thread_result(timeout=30).code == 0
    run.stop()
    assert (run.thread.read("tripled").view(np.uint32) == 3 * numbers).all()


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(st.integers(0, 20), VALUES, VALUES, VALUES), min_size=1, max_size=8))
def test_random_kmx_calls_end_in_a_result_or_a_fault(tmp_path_factory, calls):
    source = tmp_path_factory.mktemp("calls") / "calls.c"
    source.write_text(CALLS)
    words = split([v for call in calls for v in call])
    with km.Session() as session:
        assert run_once(session, source, words) in ("result", "fault", "timeout")
        lesson_still_runs(session)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(code=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=64))
def test_random_instruction_words_end_in_a_result_a_fault_or_a_timeout(tmp_path_factory, code):
    source = tmp_path_factory.mktemp("code") / "code.c"
    source.write_text(CODE)
    with km.Session() as session:
        assert run_once(session, source, code, regions=False, timeout=1.0) in ("result", "fault", "timeout")
        lesson_still_runs(session)


def test_named_hostile_instructions(tmp_path):
    """Instructions that change the machine under the engine: csr writes to satp (paging),
    mtvec and mstatus, mret, wfi, an infinite loop, a jump to 0, ebreak."""
    source = tmp_path / "code.c"
    source.write_text(CODE)
    li_t0_minus1 = 0xFFF00293  # addi t0, zero, -1
    cases = {
        "satp": [li_t0_minus1, 0x18029073],  # csrw satp, t0
        "mtvec": [li_t0_minus1, 0x30529073],  # csrw mtvec, t0
        "mstatus": [li_t0_minus1, 0x30029073],  # csrw mstatus, t0
        "mret": [0x30200073],
        "wfi": [0x10500073],
        "loop": [0x0000006F],  # j .
        "jump to 0": [0x00000067],  # jr zero
        "ebreak": [0x00100073],
        "vector": [0x02000057],  # vadd.vv v0, v0, v0
    }
    with km.Session() as session:
        outcomes = {name: run_once(session, source, words, regions=False, timeout=1.0) for name, words in cases.items()}
        lesson_still_runs(session)
    assert outcomes["loop"] == "timeout"
    assert outcomes["ebreak"] == "fault" and outcomes["vector"] == "fault" and outcomes["jump to 0"] == "fault"
