"""Lesson 45, "The Tensix side": its program prints what the lesson shows, its three
mistakes differ from the right thread by the lines the page says, and the common
mistakes behave as the page says."""

import re
import warnings

import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, run_program, variant

LESSON = ROOT / "tutorial" / "45_the_tensix_side"
DOUBLE = LESSON / "thread" / "double.c"
PAGE = ROOT / "docs" / "45_the_tensix_side.md"
EXPECTED = """\
double.c: 4 of 4 frames came back right [1, 2, 3, 4]
no_invalidate.c: 1 of 4 frames came back right [1]
  finding: read-before-invalidate in region 'frame', at no_invalidate.c:19
  finding: stale-read in region 'frame', at no_invalidate.c:19, agent 'tensix' at program.py:25
  what the checker says of stale-read:
    core 0 read stale bytes of region 'frame' (all 4096 bytes) at line 19: agent
    'tensix' had written them to DRAM at program.py:25 (noc.write), past the X280's
    cache, while the cache held those lines from before, so the core read the cache's
    old bytes instead of DRAM's new ones. Call kmx_invalidate(0) after the thread sees
    that the data is ready (its flag) and before it reads the data.
no_flush.c: 1 of 4 frames came back right [4]
  finding: noc-read-unflushed in region 'results', at no_flush.c:20, agent 'tensix' at program.py:28
  finding: unflushed-write in region 'results', at no_flush.c:20
  what the checker says of noc-read-unflushed:
    agent 'tensix' read region 'results' (all 4096 bytes) from DRAM at program.py:28
    (noc.read), but core 0 had written those bytes at line 20 and not flushed them: they
    were still dirty in the X280's cache, so the agent read DRAM's old bytes. A Tensix
    core reads DRAM past that cache. Call kmx_flush(2) after the last write and before
    the thread says the data is ready (before it writes or flushes its flag).
invalidate_not_flush.c: 0 of 4 frames came back right []
  finding: invalidate-dropped-writes in region 'results', at invalidate_not_flush.c:22
"""


def lesson_parts():
    """The program's frame() and tensix() (its text before run_thread), compiled as its own
    file, so that the stand-in's lines are the program's."""
    source = (LESSON / "program.py").read_text().split("\ndef run_thread")[0]
    names = {"__name__": "lesson45", "__file__": str(LESSON / "program.py")}
    exec(compile(source, str(LESSON / "program.py"), "exec"), names)  # noqa: S102 - the lesson's own code
    return names


def run(source, timeout=60.0):
    names = lesson_parts()
    program = km.Program("the_tensix_side", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[source], regions={"frame": 4096, "flags": 128, "results": 4096})
    program.noc_agent("tensix", names["tensix"], cluster=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)
        with km.Session() as session:
            loaded = session.load(program)
            try:
                loaded.thread_result(timeout=timeout)
                said = None
            except TimeoutError as error:
                said = str(error)
            loaded.stop()
    return loaded, said


def test_program_prints_the_lessons_output():
    done = run_program(LESSON)
    assert done.stdout == EXPECTED
    assert "CoherenceWarning" not in done.stderr


def test_lesson_page_shows_the_program_and_the_output():
    text = PAGE.read_text()
    assert text.startswith("Part 5. X280 threads · lesson 45 (lessons 32 to 46)\n\n# 45. The Tensix side\n")
    assert_page_shows(text, LESSON / "program.py", DOUBLE, output=EXPECTED)
    for name in ("writer", "reader", "compute"):
        assert "void kernel_main() {}" in (LESSON / "kernels" / f"{name}.cpp").read_text()


def test_the_mistakes_are_double_c_less_the_lines_the_page_names():
    lines = DOUBLE.read_text().splitlines(keepends=True)
    assert lines[17].strip() == "kmx_invalidate(0);" and lines[21].strip() == "kmx_flush(2);"
    thread = LESSON / "thread"

    def code(text):  # (from the #include on, line 4: each file's comment says its mistake, in 3 lines)
        assert text.splitlines()[3] == '#include "kmx.h"'
        return text.split("#include", 1)[1]

    assert code((thread / "no_invalidate.c").read_text()) == code("".join(lines[:17] + lines[18:]))
    assert code((thread / "no_flush.c").read_text()) == code("".join(lines[:21] + lines[22:]))
    assert code((thread / "invalidate_not_flush.c").read_text()) == code("".join(
        lines[:21] + [lines[21].replace("kmx_flush(2)", "kmx_invalidate(2)")] + lines[22:]))
    program = (LESSON / "program.py").read_text().splitlines()
    assert program[24].strip() == 'noc.write("frame", 0, frame(n))'  # program.py:25
    assert program[26].strip() == 'noc.wait("flags", 64, n)'  # program.py:27
    assert program[27].strip().startswith('results.append(noc.read("results"')  # program.py:28


def test_the_right_thread_is_right_in_strict_mode_too():
    names = lesson_parts()
    program = km.Program("the_tensix_side", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[DOUBLE], regions={"frame": 4096, "flags": 128, "results": 4096})
    program.noc_agent("tensix", names["tensix"], cluster=1)
    with km.Session(coherence="strict") as session:
        loaded = session.load(program)
        loaded.thread_result(timeout=60.0)
        loaded.stop()
    got = loaded.agent("tensix").result
    assert all((g == 2 * names["frame"](n)).all() for n, g in enumerate(got, 1))
    assert loaded.findings == []


@pytest.mark.parametrize("seed", [1, 2])
def test_under_seeds_the_right_thread_stays_right_and_the_mistakes_stay_wrong(tmp_path, seed):
    names = lesson_parts()
    for source, right in (("double.c", True), ("no_flush.c", False)):
        program = km.Program("the_tensix_side", kernels=LESSON / "kernels")
        program.thread(cluster=1, sources=[LESSON / "thread" / source], regions={"frame": 4096, "flags": 128, "results": 4096})
        program.noc_agent("tensix", names["tensix"], cluster=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", km.CoherenceWarning)
            with km.Session(schedule_seed=seed) as session:
                loaded = session.load(program)
                loaded.thread_result(timeout=60.0)
                loaded.stop()
        got = loaded.agent("tensix").result
        assert all((g == 2 * names["frame"](n)).all() for n, g in enumerate(got, 1)) == right
        assert (loaded.findings == []) == right


def test_spinning_without_the_invalidate_times_out_saying_where_each_side_is(tmp_path):
    spin = variant(tmp_path, DOUBLE, "        do {\n            kmx_invalidate(1);\n        } while (flags[0] < n);\n",
                   "        kmx_invalidate(1);\n        while (flags[0] < n) {\n        }\n")
    loaded, said = run(spin, timeout=2.0)
    assert re.fullmatch(
        r"the thread on cluster 1 handed no result in 2.0 s\n"
        rf"  core 0: running, at {re.escape(str(spin))}:16 \(pc 0x[0-9a-f]+\)\n"
        rf"  agent 'tensix': waiting in noc.wait\('flags', 64, 1\), at {re.escape(str(LESSON / 'program.py'))}:27",
        said), said
    found = [f for f in loaded.findings if f.kind == "stale-read"]
    assert [(f.region, f.line, f.agent, f.agent_line) for f in found] == [("flags", 16, "tensix", 26)]


def test_a_stand_in_that_fails_leaves_the_thread_waiting_and_the_timeout_says_so(tmp_path):
    names = lesson_parts()

    def failing(noc):
        noc.write("frame", 0, names["frame"](1))
        raise OSError("the reader kernel lost its input")

    program = km.Program("the_tensix_side", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[DOUBLE], regions={"frame": 4096, "flags": 128, "results": 4096})
    program.noc_agent("tensix", failing, cluster=1)
    with km.Session() as session:
        loaded = session.load(program)
        with pytest.raises(TimeoutError, match=r"agent 'tensix': failed: OSError\('the reader kernel lost its input'\)"):
            loaded.thread_result(timeout=1.0)
        loaded.stop()
    assert isinstance(loaded.agent("tensix").error, OSError)


def test_a_region_the_thread_does_not_have_is_a_key_error_naming_the_regions():
    def wrong(noc):
        try:
            noc.read("frames", 0, 16)
        except KeyError as error:
            return str(error)

    program = km.Program("the_tensix_side", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[DOUBLE], regions={"frame": 4096, "flags": 128, "results": 4096})
    program.noc_agent("tensix", wrong, cluster=1)
    with km.Session() as session:
        loaded = session.load(program)
        with pytest.raises(TimeoutError):
            loaded.thread_result(timeout=0.5)
        loaded.stop()
    assert "no region 'frames' on cluster 1; its regions are 'frame' (4096 bytes), 'flags' (128 bytes), 'results' (4096 bytes)" in (
        loaded.agent("tensix").result)


def test_the_memory_model_shows_the_findings_of_two_of_the_mistakes():
    memory_model = (ROOT / "docs" / "memory-model.md").read_text()
    for source, kind in (("no_flush.c", "noc-read-unflushed"), ("no_invalidate.c", "stale-read")):
        loaded, _ = run(LESSON / "thread" / source)
        found = next(f for f in loaded.findings if f.kind == kind)
        assert f"```text\n{kind} {found.line}\n{found.message}\n```" in memory_model
