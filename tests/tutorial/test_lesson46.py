"""Lesson 46, "How long a thread takes": its program prints what the lesson shows, and its
common mistakes behave as the lesson says."""

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, run_program

LESSON = ROOT / "tutorial" / "46_how_long_a_thread_takes"
COPY = LESSON / "thread" / "copy.c"
PAGE = ROOT / "docs" / "46_how_long_a_thread_takes.md"
EXPECTED = """\
copying 64 KiB a hart, microseconds at 1750 MHz
                    1 hart   4 harts
cached,   vector      61.1      61.1
cached,   scalar      71.6      71.6
uncached, vector      12.8     245.7
uncached, scalar     500.9     500.9
uncached, vector, 1 hart: core 0 took 41,712 cycles (issue 6%, uncached 49%, flushes 39%)
uncached, vector, 4 harts: core 0 took 449,191 cycles (uncached 92%)
core 0's costliest line: copy.c:9, 406,002 cycles for 1,024 instructions
"""


def test_program_prints_the_lessons_output():
    done = run_program(LESSON)
    assert done.stdout == EXPECTED
    assert "Warning" not in done.stderr


def test_lesson_page_shows_the_program_and_the_output():
    text = PAGE.read_text()
    assert text.startswith("Part 5. X280 threads · lesson 46 (lessons 32 to 46)\n\n# 46. How long a thread takes\n")
    assert_page_shows(text, LESSON / "program.py", COPY, output=EXPECTED)


def _copy(timing, uncached=1, vector=1, harts=1):
    program = km.Program("how_long", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[COPY], cores=4, words=[uncached, vector, harts],
                   regions={"from": np.arange(4 * 8192, dtype=np.uint64), "to": 4 * 65536})
    with km.Session(timing=timing) as session:
        run = session.load(program)
        result = run.thread_result(timeout=60.0)
        run.stop()
        copied = run.thread.read("to").view(np.uint64)
    return run, result, copied


def test_the_timing_mode_changes_the_cycles_and_not_the_results():
    timed, timed_result, timed_copy = _copy("x280", harts=4)
    plain, plain_result, plain_copy = _copy(None, harts=4)
    assert (timed_copy == plain_copy).all() and (timed_copy == np.arange(4 * 8192)).all()
    assert timed_result.words[0] > 10 * plain_result.words[0]  # a crowded alias: cycles, not instructions
    rows = timed.timing()
    assert [(r.cluster, r.core) for r in rows] == [(1, 0), (1, 1), (1, 2), (1, 3)]
    for row in rows:
        assert sum(row.went.values()) == row.cycles  # every cycle counted once
        assert row.cpi == pytest.approx(row.cycles / row.instructions)
        assert str(row).startswith(f"cluster 1 core {row.core}: {row.cycles:,} cycles")


def test_the_mistakes_the_lesson_names():
    with pytest.raises(ValueError, match="clock_mhz is the timing model's clock: give timing='x280' with it"):
        km.Session(clock_mhz=1000)
    run, _, _ = _copy(None)
    with pytest.raises(ValueError, match=r"run.timing\(\): the session has no timing model"):
        run.timing()
