"""Lesson 44, "Finding a race": its program prints what the lesson shows, the page shows
its files as they are, and its common mistakes behave as it says."""


import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, run_program

LESSON = ROOT / "tutorial" / "44_finding_a_race"
PAGE = ROOT / "docs" / "44_finding_a_race.md"
EXPECTED = (
    "racy: 100 schedules, 33 failed, the first after 3\n"
    "schedule 2: AssertionError: the log keeps 20 of 40 entries\n"
    "found with 8 turns, shrunk to 3:\n"
    "  core 0 runs 1000 instructions\n"
    "  core 1 runs 500 instructions\n"
    "  core 0 runs 61 instructions\n"
    "replayed: the log keeps 20 of 40 entries\n"
    "fixed: 100 schedules, 0 failed\n"
)


def lesson():
    import importlib.util

    spec = importlib.util.spec_from_file_location("lesson44_program", LESSON / "program.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_program_prints_what_the_lesson_shows():
    done = run_program(LESSON)
    assert done.stdout == EXPECTED
    page = PAGE.read_text()
    assert_page_shows(page, LESSON / "program.py", LESSON / "thread" / "append.c",
                      LESSON / "thread" / "append_fixed.c", output=done.stdout)
    assert page.startswith("Part 5. X280 threads · lesson 44 (lessons 32 to 46)\n\n# 44. Finding a race\n")


def test_the_default_schedule_alone_shows_nothing_and_random_turns_find_it_less_often():
    program = lesson()
    with km.Session() as session:
        run = session.load(program.racy())
        run.thread_result(timeout=30)
        run.stop()
    program.check(run)  # right under the default turns
    random = km.explore(program.racy, program.check, schedules=300, strategy="random", workers=1, shrink=False)
    pct = km.explore(program.racy, program.check, schedules=300, workers=1, shrink=False)
    assert (random.failed, random.first_failure, pct.failed, pct.first_failure) == (44, 3, 106, 3)
    assert "finds it too, in 44 of 300 schedules, the first after 3; PCT fails 106 of 300" in PAGE.read_text()


def test_taking_the_results_in_check_raises_as_the_lesson_says():
    program = lesson()

    def check(run):
        run.thread_result(timeout=1)

    report = km.explore(program.fixed, check, schedules=1, workers=1)
    assert report.failures[0].kind == "check" and "already returned" in report.failures[0].message
