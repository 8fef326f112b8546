"""Lesson 42, "The C library": its program prints what the lesson shows, the page shows
its files as they are, and its common mistakes behave as it says."""

import numpy as np

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, run_and_stop, run_program, variant

LESSON = ROOT / "tutorial" / "42_the_c_library"
THREAD = LESSON / "thread" / "stats.c"
PAGE = ROOT / "docs" / "42_the_c_library.md"
EXPECTED = (
    "[cluster 0, core 0] 4096 samples: mean 9.9612, deviation 1.9949, median 9.9962\n"
    "the thread's code: 0\n"
    "numpy agrees: True\n"
)
SAMPLES = np.random.default_rng(42).normal(10.0, 2.0, 4096).astype(np.float32)


def page() -> str:
    return PAGE.read_text()


def test_the_program_prints_what_the_lesson_shows():
    done = run_program(LESSON)
    assert done.stdout == EXPECTED
    assert_page_shows(page(), LESSON / "program.py", THREAD, output=done.stdout)
    assert page().startswith("Part 5. X280 threads · lesson 42 (lessons 32 to 46)\n\n# 42. The C library\n")


def _program(source=THREAD, samples=SAMPLES, **thread):
    program = km.Program("the_c_library", kernels=LESSON / "kernels")
    program.thread(cluster=0, sources=[source], regions={"samples": samples}, **thread)
    return program


def test_the_thread_computes_what_numpy_does():
    results, run, said = run_and_stop(_program(), "strict")
    mean, deviation, median = results[-1].words[:3].view(np.float32).tolist()
    assert np.allclose([mean, deviation, median], [SAMPLES.mean(), SAMPLES.std(), np.median(SAMPLES)], rtol=1e-5)
    assert run.findings == [] and said == []  # right on a card: strict mode finds nothing


def test_mistake_a_heap_too_small_is_null_from_malloc():
    results, _, _ = run_and_stop(_program(heap=4096))
    assert results[-1].code == 1
    assert "`program.thread(..., heap=4096)`" in page() and "the program's result has code 1" in page()


def test_mistake_without_the_null_check_the_copy_is_a_store_to_address_0(tmp_path):
    source = variant(tmp_path, THREAD, "    if (sorted == NULL) return 1;\n", "")
    results, _, _ = run_and_stop(_program(source, heap=4096), catch_faults=True)
    fault = results[-1]
    assert isinstance(fault, km.ThreadFault)
    assert "a store to 0x0, which is a null pointer" in fault.cause
    assert "a store to 0x0, which is a null pointer" in page()


def test_mistake_an_assert_that_fails_names_the_expression_and_the_line():
    results, _, _ = run_and_stop(_program(samples=SAMPLES[:4095]), catch_faults=True)
    fault = results[-1]
    assert isinstance(fault, km.ThreadFault) and fault.line == 18
    assert "assertion failed: n % 2 == 0 (stats.c:18)" in str(fault)
    assert "assertion failed: n % 2 == 0 (stats.c:18)" in page()


def test_mistake_without_the_invalidate_the_finding_names_the_memcpy_line(tmp_path):
    source = variant(tmp_path, THREAD, "    kmx_invalidate(0);\n", "")
    assert source.read_text().splitlines()[21].strip().startswith("memcpy(sorted, samples, bytes);")
    _, run, said = run_and_stop(_program(source), "strict")
    assert [(f.kind, f.line, f.file.rsplit("/", 1)[-1]) for f in run.findings] == [
        ("read-before-invalidate", 22, "stats.c")]
    assert len(said) == 1
    assert "names the `memcpy` line of `stats.c`" in page()
