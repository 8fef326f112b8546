"""Lesson 43, "Flushing the way the firmware does": its program prints what the lesson
shows, the page shows its files as they are, and its common mistakes behave as it says."""

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, run_and_stop, run_program, variant

LESSON = ROOT / "tutorial" / "43_flushing_the_way_the_firmware_does"
FIRMWARE = LESSON / "thread" / "firmware.c"
FORGOT = LESSON / "thread" / "forgot_the_flush.c"
PAGE = ROOT / "docs" / "43_flushing_the_way_the_firmware_does.md"
NUMBERS = np.arange(1024, dtype=np.uint32)
EXPECTED = (
    "first five tripled: [0, 3, 6, 9, 12]\n"
    "all 1024 right: True\n"
    "status: 1, findings: 0\n"
    "lines that reached DRAM without a flush: 32768 of 65536\n"
    "L1D misses 65536, L3 evictions written back 32768\n"
    "finding: unflushed-write at forgot_the_flush.c:11\n"
)


def page() -> str:
    return PAGE.read_text()


def test_the_program_prints_what_the_lesson_shows():
    done = run_program(LESSON)
    assert done.stdout == EXPECTED
    assert_page_shows(page(), LESSON / "program.py", FIRMWARE, FORGOT, output=done.stdout)
    assert page().startswith(
        "Part 5. X280 threads · lesson 43 (lessons 32 to 46)\n\n# 43. Flushing the way the firmware does\n"
    )


def _firmware(source=FIRMWARE):
    program = km.Program("firmware", kernels=LESSON / "kernels")
    program.thread(cluster=0, sources=[source], regions={"numbers": NUMBERS, "tripled": 4096, "status": 64})
    return program


def _kinds(run):
    return [f.kind for f in run.findings]


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_the_firmware_thread_is_right_in_both_modes(mode):
    _, run, said = run_and_stop(_firmware(), mode)
    assert (run.thread.read("tripled").view(np.uint32) == 3 * NUMBERS).all()
    assert run.thread.read("status").view(np.uint32)[0] == 1
    assert run.findings == [] and said == []


def test_mistake_reading_without_the_first_flush(tmp_path):
    source = variant(tmp_path, FIRMWARE, "    kmx_cache_flush_range(numbers, bytes);\n", "")
    _, run, _ = run_and_stop(_firmware(source), "strict")
    assert (run.thread.read("tripled").view(np.uint32) == 4042322159).all()
    assert _kinds(run) == ["read-before-invalidate"]
    assert "tripled` holds 4042322159 everywhere" in page()


def test_mistake_writing_without_the_last_flush(tmp_path):
    source = variant(tmp_path, FIRMWARE, "    kmx_cache_flush_range(tripled, bytes);\n", "")
    _, run, _ = run_and_stop(_firmware(source), "strict")
    assert (run.thread.read("tripled").view(np.uint32) == 0).all()
    assert _kinds(run) == ["unflushed-write"]


def test_mistake_mixing_the_aliases(tmp_path):
    source = variant(tmp_path, FIRMWARE, "    status[0] = 1;\n    return 0;\n",
                     "    status[0] = 1;\n    return ((volatile uint32_t*)kmx_region(2, 0))[0];\n")
    results, run, _ = run_and_stop(_firmware(source), "card")
    assert _kinds(run) == ["read-before-invalidate", "mixed-alias"]
    mixed = run.findings[1]
    assert results[-1].code == 1
    assert mixed.kind == "mixed-alias" and "through the uncached alias at line" in mixed.message
    results, run, _ = run_and_stop(_firmware(source), "strict")
    assert results[-1].code == -1515870811  # 0xA5A5A5A5: stale
    assert _kinds(run) == ["read-before-invalidate", "mixed-alias", "stale-read"]


def test_mistake_flush32_for_a_region(tmp_path):
    source = variant(tmp_path, FIRMWARE, "    kmx_cache_flush_range(tripled, bytes);\n",
                     "    for (uint64_t i = 0; i < bytes; i += 64)\n"
                     "        *(volatile uint32_t*)CCACHE0_FLUSH32 = (uint32_t)(((uintptr_t)tripled + i) >> 4);\n")
    results, _, _ = run_and_stop(_firmware(source), "strict", catch_faults=True)
    fault = results[-1]
    assert isinstance(fault, km.ThreadFault) and "CCACHE0_FLUSH32" in fault.cause
    assert "an address of the uncached alias, whose lines no cache holds, so no line was flushed" in fault.cause
    assert "The simulator says so: a `km.ThreadFault` at the store" in page()


def test_mistake_cflush_d_l1(tmp_path):
    source = variant(tmp_path, FIRMWARE, "    kmx_cache_flush_range(tripled, bytes);\n",
                     '    __asm__ volatile(".insn i 0x73, 0, x0, %0, -64" :: "r"(tripled));\n')
    results, _, _ = run_and_stop(_firmware(source), "strict", catch_faults=True)
    assert isinstance(results[-1], km.ThreadFault) and "CCACHE0_FLUSH64" in results[-1].cause


def test_mistake_counting_on_the_l2_flush(tmp_path):
    source = variant(tmp_path, FIRMWARE, "    kmx_cache_flush_range(tripled, bytes);\n",
                     "    for (uint64_t i = 0; i < bytes; i += 64)\n"
                     "        *(volatile uint64_t*)PL2CACHE0_CFLUSH64(0) = (uintptr_t)tripled + i;\n")
    _, run, _ = run_and_stop(_firmware(source), "strict")
    assert (run.thread.read("tripled").view(np.uint32) == 0).all()
    assert _kinds(run) == ["unflushed-write"]


def test_the_unbounded_cache_never_rescues_the_forgotten_flush():
    program = km.Program("forgot", kernels=LESSON / "kernels")
    program.thread(cluster=0, sources=[FORGOT], regions={"out": 65536 * 64})
    _, run, _ = run_and_stop(program, "strict")
    assert (run.thread.read("out") == 0).all()
    assert "rescued" not in run.findings[0].message
