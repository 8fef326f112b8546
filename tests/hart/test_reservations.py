"""lr/sc across turns (sim/native/reserve.c): an sc fails when another core stored to the
reservation's line between the lr and the sc, even the same value (A-B-A), wherever the
word is; it succeeds when nothing stored there, a turn switch alone included; a Tensix
stand-in's noc.write to the line clears it too; and a counter taken with lr/sc loops on
four cores in turns of one instruction comes out right."""

from __future__ import annotations

import numpy as np
import pytest

import komorebi as km
from tests.threads import program_for, run_to_end

NOTHING, SAME_VALUE, LOAD, NEXT_LINE, VECTOR = range(5)
GLOBAL, HEAP, STACK, REGION = range(4)
SCHEDULES = [{}, {"quantum": 1}, {"schedule_seed": 3}]


def sc(tmp_path, what: int, where: int = GLOBAL, **session) -> tuple[bool, int]:
    """(whether core 0's sc failed, the word after)."""
    program = program_for("reserved.c", tmp_path, cores=2, words=[what, where], regions={"data": 4096})
    result, _ = run_to_end(program, 600, **session)
    return bool(result.words[0]), int(result.words[1])


@pytest.mark.parametrize("session", SCHEDULES, ids=["default turns", "quantum 1", "seed 3"])
def test_a_store_of_the_same_value_by_another_core_fails_the_sc(tmp_path, session):
    assert sc(tmp_path, SAME_VALUE, **session) == (True, 5)


@pytest.mark.parametrize("where", [GLOBAL, HEAP, STACK, REGION], ids=["global", "heap", "stack", "region"])
def test_wherever_the_word_is(tmp_path, where):
    assert sc(tmp_path, SAME_VALUE, where, quantum=1) == (True, 5)


@pytest.mark.parametrize("what", [NOTHING, LOAD, NEXT_LINE], ids=["a turn switch", "a load", "the next line"])
@pytest.mark.parametrize("session", SCHEDULES, ids=["default turns", "quantum 1", "seed 3"])
def test_nothing_stored_to_the_line_and_the_sc_succeeds(tmp_path, what, session):
    assert sc(tmp_path, what, **session) == (False, 6)


def test_a_vector_store_to_the_line_fails_the_sc(tmp_path):
    assert sc(tmp_path, VECTOR, quantum=1) == (True, 5)


def test_a_stand_ins_noc_write_to_the_line_fails_the_sc(tmp_path):
    source = """
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    volatile uint64_t* word = (volatile uint64_t*)kmx_region(0, 0);
    volatile uint32_t* flags = (volatile uint32_t*)kmx_region_uncached(1);
    kmx_invalidate(0);
    uint64_t seen, failed;
    __asm__ volatile("lr.d %0, (%1)" : "=r"(seen) : "r"(word) : "memory");
    flags[0] = 1;            /* the stand-in writes the word's line in DRAM */
    while (flags[1] != 1)
        ;
    __asm__ volatile("sc.d %0, %2, (%1)" : "=r"(failed) : "r"(word), "r"(seen + 1) : "memory");
    uint32_t out[1] = {(uint32_t)failed};
    kmx_result(0, out, 1);
    kmx_flush(0);
    return 0;
}
"""

    def tensix(noc):
        noc.wait("flags", 0, 1)
        noc.write("data", 8, np.uint64([3]))  # (the word's line, not the word)
        noc.write("flags", 4, np.uint32([1]))

    program = program_for(source, tmp_path, regions={"data": np.uint64([5, 0]), "flags": 64})
    program.noc_agent("tensix", tensix, cluster=1)
    result, run = run_to_end(program, 600)
    assert run.agent("tensix").error is None
    assert int(result.words[0]) == 1


COUNTER = """
#include "kmx.h"
static volatile uint64_t counter;
int kmx_main(int core) {
    (void)core;
    for (int i = 0; i < 300; i++) {
        uint64_t seen, failed;
        do {
            __asm__ volatile("lr.d %0, (%1)" : "=r"(seen) : "r"(&counter) : "memory");
            __asm__ volatile("sc.d %0, %2, (%1)" : "=r"(failed) : "r"(&counter), "r"(seen + 1) : "memory");
        } while (failed);
    }
    kmx_barrier();
    uint32_t out[1] = {(uint32_t)counter};
    kmx_result(0, out, 1);
    return 0;
}
"""


@pytest.mark.parametrize("session", SCHEDULES, ids=["default turns", "quantum 1", "seed 3"])
def test_an_lr_sc_counter_on_four_cores_counts_every_increment(tmp_path, session):
    result, _ = run_to_end(program_for(COUNTER, tmp_path, cores=4), 600, **session)
    assert int(result.words[0]) == 4 * 300


MISALIGNED_LR = """
#include "kmx.h"
static uint64_t words[2];
int kmx_main(int core) {
    (void)core;
    uint64_t seen;
    __asm__ volatile("lr.w %0, (%1)" : "=r"(seen) : "r"((char*)words + 2) : "memory");
    return (int)seen;
}
"""


def test_a_misaligned_lr_is_the_atomics_fault_at_its_line(tmp_path):
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(MISALIGNED_LR, tmp_path), 600)
    assert caught.value.line == 7
    assert "a misaligned atomic access to" in caught.value.cause and "multiple of their size, 4 bytes" in caught.value.cause


PYTHON_STORES = """
#include <time.h>
#include "kmx.h"
static volatile uint64_t words[8] __attribute__((aligned(64))) = {5};
static volatile uint32_t reserved, done;
int kmx_main(int core) {
    if (core == 0) {
        uint64_t seen, failed;
        __asm__ volatile("lr.d %0, (%1)" : "=r"(seen) : "r"(words) : "memory");
        reserved = 1;
        while (!done)
            ;
        __asm__ volatile("sc.d %0, %2, (%1)" : "=r"(failed) : "r"(words), "r"(seen + 1) : "memory");
        uint32_t out[1] = {(uint32_t)failed};
        kmx_result(0, out, 1);
    } else {
        while (!reserved)
            ;
        if (kmx_word(0)) /* a store through the uncached alias */
            *(volatile uint64_t*)((uintptr_t)words - 0x400000000000ull) = 0;
        else /* a system call's store, on core 1's behalf */
            clock_gettime(CLOCK_MONOTONIC, (struct timespec*)(void*)words);
        done = 1;
    }
    return 0;
}
"""


@pytest.mark.parametrize("how", ["a system call", "the uncached alias"])
def test_a_store_on_another_cores_behalf_or_past_the_cache_fails_the_sc(tmp_path, how):
    program = program_for(PYTHON_STORES, tmp_path, cores=2, words=[int(how == "the uncached alias")])
    result, _ = run_to_end(program, 600, quantum=1)
    assert int(result.words[0]) == 1


FAILED_CAS = """
#include "kmx.h"
static volatile uint64_t lock = 1, sink;
int kmx_main(int core) {
    if (core == 0) {
        uint64_t seen;
        __asm__ volatile("lr.d %0, (%1)" : "=r"(seen) : "r"(&lock) : "memory");
        /* (a compare-and-swap that finds 1, not 0, jumps past its sc) */
    }
    for (int i = 0; i < 100000; i++) /* (a volatile's load and store each time: 400,000 and more) */
        sink = sink + 1;
    kmx_barrier();
    return 0;
}
"""


def test_a_reservation_left_behind_is_dropped_after_its_lifetime(tmp_path):
    """A failed compare-and-swap leaves its lr's reservation; 65,536 of the holder's
    instructions later it is dropped as a turn ends, so that the other cores' accesses to
    its page are not watched for ever (sim/native/reserve.c)."""
    from tests.threads import machine_cluster

    result, run = run_to_end(program_for(FAILED_CAS, tmp_path, cores=2), 600, quantum=100)
    assert result.code == 0
    assert machine_cluster(run, 1).cores[0].native.reserved == 0
