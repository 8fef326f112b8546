"""Lesson 35, "Sharing memory": its program prints what the lesson shows, and its common
mistakes behave as the lesson says."""

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, one_thread_program, run_program
from tests.threads import program_for, run_to_end

LESSON = ROOT / "tutorial" / "35_sharing_memory"
TRIPLE = LESSON / "thread" / "triple.c"
EXPECTED = (
    "the thread went through 1024 numbers\n"
    "first five tripled: [0, 3, 6, 9, 12]\n"
    "last five tripled: [3057, 3060, 3063, 3066, 3069]\n"
)


def test_program_prints_the_lessons_output():
    assert run_program(LESSON).stdout == EXPECTED


def test_lesson_page_shows_the_program_and_the_output():
    page = (ROOT / "docs" / "35_sharing_memory.md").read_text()
    assert_page_shows(page, LESSON / "program.py", TRIPLE, output=EXPECTED)


# The lesson's own words (normative: kept as written), which the tutorial has outgrown.
NOT_IN_THE_TUTORIAL = (
    "One thing the run does not show. With the `kmx_flush` left out, Python reads the same numbers: the library "
    "hands every region back when the thread ends, and Python reads only after that. The two calls matter when the "
    "Tensix cores use a region while the thread runs, and the Tensix side of that is not in this tutorial yet."
)


def test_the_lesson_keeps_its_words_and_points_to_lesson_45_after_them():
    page = (ROOT / "docs" / "35_sharing_memory.md").read_text()
    paragraphs = page.split("\n\n")
    said = paragraphs.index(NOT_IN_THE_TUTORIAL)
    pointer = paragraphs[said + 1]
    assert pointer.startswith("> ") and "lesson 45" in pointer and "(45_the_tensix_side.md)" in pointer, pointer
    assert (ROOT / "docs" / "45_the_tensix_side.md").exists()


def lesson_program(numbers):
    return one_thread_program(LESSON, TRIPLE, regions={"numbers": numbers, "tripled": 4096})


def test_reading_too_early_raises():
    with km.Session() as session:
        run = session.load(lesson_program(np.arange(1024, dtype=np.uint32)))
        run.thread_result(timeout=10.0)
        with pytest.raises(RuntimeError, match=r"^regions are read after run\.stop\(\)$"):
            run.thread.read("tripled")
        run.stop()
        assert run.thread.read("tripled").view(np.uint32)[5] == 15


def test_read_returns_bytes():
    numbers = np.arange(1024, dtype=np.uint32)
    _, run = run_to_end(lesson_program(numbers))
    data = run.thread.read("tripled")
    assert data.dtype == np.uint8 and data.shape == (4096,)
    assert (data.view(np.uint32) == 3 * numbers).all()
    assert (run.thread.read("numbers") == numbers.view(np.uint8)).all()


def test_unknown_region_id_gives_a_null_pointer(tmp_path):
    source = """
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes = 12345;
    void* p = kmx_region(5, &bytes);
    uint32_t out[2] = {p == 0, (uint32_t)bytes};
    kmx_result(0, out, 2);
    return 0;
}
"""
    result, _ = run_to_end(program_for(source, tmp_path, regions={"a": 64}))
    assert result.words[:2].tolist() == [1, 0]


def test_more_than_sixteen_regions_is_a_value_error(kernels):
    program = km.Program("many", kernels=kernels)
    with pytest.raises(ValueError, match="at most 16"):
        program.thread(
            cluster=1,
            sources=[TRIPLE],
            regions={f"r{i}": 64 for i in range(17)},
        )


def test_the_callers_array_is_not_changed():
    numbers = np.arange(1024, dtype=np.uint32)
    before = numbers.copy()
    run_to_end(lesson_program(numbers))
    assert (numbers == before).all()
