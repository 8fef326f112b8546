"""Lesson 33, "A thread that submits": its program prints what the lesson shows, and its
common mistakes behave as the lesson says."""

import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, one_thread_program, run_program, take_all
from tests.threads import program_for, stalled_in, wait_for

LESSON = ROOT / "tutorial" / "33_a_thread_that_submits"
PRIMES = LESSON / "thread" / "primes.c"
EXPECTED = (
    "[cluster 1, core 0] counting primes below 100000 in 5 steps\n"
    "step 1: 2262 primes below 20000\n"
    "step 2: 4203 primes below 40000\n"
    "step 3: 6057 primes below 60000\n"
    "step 4: 7837 primes below 80000\n"
    "step 5: 9592 primes below 100000\n"
    "the thread ended with code 0\n"
    "its words still say 9592 primes below 100000\n"
)
STEPS = [[1, 20000, 2262], [2, 40000, 4203], [3, 60000, 6057], [4, 80000, 7837], [5, 100000, 9592]]


def test_program_prints_the_lessons_output():
    assert run_program(LESSON).stdout == EXPECTED


def test_lesson_page_shows_the_program_and_the_output():
    page = (ROOT / "docs" / "33_a_thread_that_submits.md").read_text()
    assert_page_shows(page, LESSON / "program.py", PRIMES, output=EXPECTED)


def lesson_program(words=(100000, 5)):
    return one_thread_program(LESSON, PRIMES, words=list(words))


def test_submissions_then_the_final_result():
    with km.Session() as session:
        run = session.load(lesson_program())
        results = take_all(run)
        run.stop()
    submitted, final = results[:-1], results[-1]
    assert [r.words[:3].tolist() for r in submitted] == STEPS
    assert all(not r.final and r.code is None for r in submitted)
    assert final.final and final.code == 0


def test_taking_one_result_gets_step_one():
    with km.Session() as session:
        run = session.load(lesson_program())
        result = run.thread_result(timeout=10.0)
        run.stop()
        assert result.final is False and result.code is None
        assert result.words[:3].tolist() == STEPS[0]
        rest = []
        with pytest.raises(RuntimeError, match="the run was stopped before"):
            while True:
                rest.append(run.thread_result(timeout=10.0))
    assert not any(r.final for r in rest)


def test_one_call_too_many_raises():
    with km.Session() as session:
        run = session.load(lesson_program())
        results = [run.thread_result(timeout=10.0) for _ in range(6)]
        assert results[-1].final
        with pytest.raises(
            RuntimeError,
            match=r"^the thread on cluster 1 has ended and its final result was already returned$",
        ):
            run.thread_result(timeout=10.0)
        run.stop()


def test_the_final_result_carries_the_last_steps_words():
    with km.Session() as session:
        run = session.load(lesson_program())
        results = take_all(run)
        run.stop()
    assert (results[-1].words == results[-2].words).all()


def test_submit_does_not_clear_the_words(tmp_path):
    source = """
#include "kmx.h"
int kmx_main(int core) {
    const uint32_t first[3] = {1, 2, 3};
    kmx_result(0, first, 3);
    kmx_submit();
    const uint32_t nine = 9;
    kmx_result(0, &nine, 1);
    kmx_submit();
    return 0;
}
"""
    with km.Session() as session:
        run = session.load(program_for(source, tmp_path))
        results = take_all(run)
        run.stop()
    assert [r.words[:3].tolist() for r in results] == [[1, 2, 3], [9, 2, 3], [9, 2, 3]]


def test_sleeping_then_stopping_gets_sixteen_steps():
    with km.Session() as session:
        run = session.load(lesson_program((2000, 20)))
        wait_for(lambda: stalled_in(run, "kmx_submit"), "the stall in the 17th kmx_submit")
        run.stop()
        taken = []
        with pytest.raises(
            RuntimeError,
            match=r"^the run was stopped before the thread on cluster 1 handed another result$",
        ):
            while True:
                taken.append(run.thread_result(timeout=10.0))
    assert [int(r.words[0]) for r in taken] == list(range(1, 17))
    assert not any(r.final for r in taken)


def test_a_stalled_thread_goes_on_when_python_takes():
    with km.Session() as session:
        run = session.load(lesson_program((2000, 20)))
        wait_for(lambda: stalled_in(run, "kmx_submit"), "the stall in the 17th kmx_submit")
        results = take_all(run)
        run.stop()
    assert [int(r.words[0]) for r in results[:-1]] == list(range(1, 21))
    assert results[-1].final and results[-1].code == 0
    assert results[-1].words[:3].tolist() == [20, 2000, 303]

