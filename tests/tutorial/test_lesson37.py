"""Lesson 37, "When the invalidate is missing": its program prints what the lesson shows,
its claims about the checker's findings hold through the public API, and its common
mistakes behave as the lesson says."""

import re
import warnings

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import (
    assert_page_shows,
    one_thread_program,
    only_finding,
    run_and_stop,
    run_program,
    run_twelve_cores,
    variant,
)

LESSON = ROOT / "tutorial" / "37_when_the_invalidate_is_missing"
NO_INVALIDATE = LESSON / "thread" / "no_invalidate.c"
TRIPLE = LESSON / "thread" / "triple.c"
PAGE = ROOT / "docs" / "37_when_the_invalidate_is_missing.md"
NUMBERS = np.arange(1024, dtype=np.uint32)
STALE_WORD = 2779096485  # four bytes 0xA5
STALE_TRIPLED = 4042322159  # three times that, cut to 32 bits
INVALIDATE_LINE = "    kmx_invalidate(0);\n"
MESSAGE = (
    "core 0 read region 'numbers' (all 4096 bytes) at line 15 before the thread invalidated "
    "it. Python wrote the region to DRAM, past the cache, and the cache may still hold stale "
    "lines from before: on a card the core can read them instead of Python's data. Call "
    "kmx_invalidate(0) before the first read."
)
EXPECTED = """\
card mode, without the invalidate:
  first five tripled: [0, 3, 6, 9, 12]
  all 1024 right: True
  finding: read-before-invalidate in region 'numbers', bytes 0 to 4095, at no_invalidate.c:15
strict mode, without the invalidate:
  first five tripled: [4042322159, 4042322159, 4042322159, 4042322159, 4042322159]
  all 1024 right: False
  finding: read-before-invalidate in region 'numbers', bytes 0 to 4095, at no_invalidate.c:15

what the checker says, at no_invalidate.c:15:
  core 0 read region 'numbers' (all 4096 bytes) at line 15 before the thread invalidated
  it. Python wrote the region to DRAM, past the cache, and the cache may still hold
  stale lines from before: on a card the core can read them instead of Python's data.
  Call kmx_invalidate(0) before the first read.

the cache report, strict mode:
cluster 1, region 'numbers' (ID 0, 4096 bytes, 64 lines, strict mode)
  ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss
  64 read before an invalidate: stale on a card
cluster 1, region 'tripled' (ID 1, 4096 bytes, 64 lines, strict mode)
  wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww
  64 written and flushed
finding: read-before-invalidate in region 'numbers' (bytes 0 to 4095) at no_invalidate.c:15, core 0
key: . not touched   f fresh from DRAM   w written and flushed
     s read before an invalidate: stale on a card
     b flushed with stale bytes the thread never wrote
     x written, then dropped by an invalidate   U written, never flushed
(fills are seen a page, 64 lines, at a time)

strict mode, with the invalidate:
  first five tripled: [0, 3, 6, 9, 12]
  all 1024 right: True
  no findings
"""


def page() -> str:
    return PAGE.read_text()


def test_program_prints_the_lessons_output():
    done = run_program(LESSON)
    assert done.stdout == EXPECTED
    assert "CoherenceWarning" not in done.stderr  # the program prints the findings itself


def test_lesson_page_shows_the_program_and_the_output():
    text = page()
    assert text.startswith(
        "Part 5. X280 threads · lesson 37 (lessons 32 to 46)\n\n# 37. When the invalidate is missing\n"
    )
    assert_page_shows(text, LESSON / "program.py", NO_INVALIDATE, output=EXPECTED)
    for name in ("writer", "reader", "compute"):
        assert "void kernel_main() {}" in (LESSON / "kernels" / f"{name}.cpp").read_text()


def test_the_files_are_lesson_35s_with_and_without_the_invalidate():
    lesson_35 = (ROOT / "tutorial" / "35_sharing_memory" / "thread" / "triple.c").read_text()
    assert TRIPLE.read_text() == lesson_35
    body = lambda text: text.split("#include", 1)[1]  # noqa: E731 (past the header comment)
    assert body(NO_INVALIDATE.read_text()) == body(lesson_35).replace(INVALIDATE_LINE, "")
    lines = NO_INVALIDATE.read_text().splitlines()
    assert lines[14].strip() == "tripled[i] = 3 * numbers[i];"  # line 15
    assert TRIPLE.read_text().splitlines()[13] == INVALIDATE_LINE.rstrip("\n")  # line 14


def lesson_program(source):
    return one_thread_program(LESSON, source, regions={"numbers": NUMBERS, "tripled": 4096})


def run_lesson(source, coherence="card", **session):
    """(result or fault, the stopped run, tripled, the CoherenceWarnings issued)."""
    results, run, issued = run_and_stop(lesson_program(source), coherence, catch_faults=True, **session)
    return results[-1], run, run.thread.read("tripled").view(np.uint32), issued


def test_card_mode_gets_the_right_numbers_and_the_checker_finds_it():
    assert km.Session().coherence == "card"
    result, run, tripled, _ = run_lesson(NO_INVALIDATE, "card")
    assert result.code == 0 and result.words[0] == 1024
    assert (tripled == 3 * NUMBERS).all()
    finding = only_finding(run)
    assert isinstance(finding, km.Finding)
    assert finding.kind == "read-before-invalidate"
    assert (finding.cluster, finding.core) == (1, 0)
    assert (finding.region, finding.region_id) == ("numbers", 0)
    assert (finding.start, finding.end) == (0, 4096)
    assert (finding.file, finding.line) == (str(NO_INVALIDATE), 15)
    assert finding.message == MESSAGE
    assert finding.category is km.Category.UNPREDICTABLE
    assert str(finding) == f"{NO_INVALIDATE}:15: unpredictable on a card: {MESSAGE}"


def test_strict_mode_reads_the_stale_bytes():
    assert 3 * STALE_WORD % 2**32 == STALE_TRIPLED
    assert np.frombuffer(b"\xa5" * 4, dtype=np.uint32)[0] == STALE_WORD
    result, run, tripled, _ = run_lesson(NO_INVALIDATE, "strict")
    assert result.code == 0
    assert (tripled == STALE_TRIPLED).all()
    assert (run.thread.read("numbers").view(np.uint32) == NUMBERS).all()  # DRAM is right
    finding = only_finding(run)
    assert (finding.kind, finding.region, finding.line) == ("read-before-invalidate", "numbers", 15)
    assert finding.message == MESSAGE
    text = page()
    assert "each byte is `0xA5`, so a `uint32_t` of them reads 2779096485" in text
    assert "4042322159, 1024 times" in text


def test_strict_mode_reads_stale_bytes_one_number_at_a_time(tmp_path):
    # Read one number before the invalidate: it is the stale word, and the checker names
    # its line.
    source = variant(
        tmp_path,
        TRIPLE,
        INVALIDATE_LINE,
        "    const uint32_t first = numbers[0];\n    kmx_result(1, &first, 1);\n" + INVALIDATE_LINE,
    )
    result, run, tripled, _ = run_lesson(source, "strict")
    assert result.words[1] == STALE_WORD
    assert (tripled == 3 * NUMBERS).all()  # the loop reads after the invalidate
    finding = only_finding(run)
    assert (finding.kind, finding.line, finding.start, finding.end) == ("read-before-invalidate", 14, 0, 64)
    assert "cluster 1, region 'numbers' (ID 0, 4096 bytes, 64 lines, strict mode)\n  s" + "f" * 63 in run.cache_report()
    assert "a read of one number marks its line `s`, and the finding names that line's 64 bytes" in page()


def test_the_fix_has_no_finding_and_reads_fresh_lines():
    result, run, tripled, issued = run_lesson(TRIPLE, "strict")
    assert result.code == 0 and (tripled == 3 * NUMBERS).all()
    assert run.findings == [] and issued == []
    report = run.cache_report()
    numbers_block = "region 'numbers' (ID 0, 4096 bytes, 64 lines, strict mode)\n  " + "f" * 64
    assert numbers_block + "\n  64 fresh from DRAM\n" in report
    assert "finding:" not in report
    assert "Run `triple.c` and all 64 lines of `numbers` are `f`." in page()


def test_the_card_mode_report_marks_the_stale_read_too():
    _, run, _, _ = run_lesson(NO_INVALIDATE, "card")
    report = run.cache_report()
    assert "cluster 1, region 'numbers' (ID 0, 4096 bytes, 64 lines, card mode)\n  " + "s" * 64 in report
    assert "cluster 1, region 'tripled' (ID 1, 4096 bytes, 64 lines, card mode)\n  " + "w" * 64 in report
    line = "finding: read-before-invalidate in region 'numbers' (bytes 0 to 4095) at no_invalidate.c:15, core 0\n"
    assert line in report
    assert str(LESSON) not in report  # the file by its name alone
    assert "It names the C file by its name alone, `no_invalidate.c`, so it is printed as it is." in page()
    assert "Last come the key to the marks, over four lines, and a reminder that fills are seen a page at a time." in page()
    assert "In card mode the same lines are marked `s` too" in page()


def test_the_report_and_the_map_come_after_stop(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)
        with km.Session(coherence="strict") as session:
            run = session.load(lesson_program(NO_INVALIDATE))
            run.thread_result(timeout=10.0)
            with pytest.raises(RuntimeError, match=r"after run\.stop\(\)"):
                run.cache_report()
            with pytest.raises(RuntimeError, match=r"after run\.stop\(\)"):
                run.cache_map(tmp_path / "early.svg")
            run.stop()
    picture = run.cache_map(tmp_path / "cache.svg")
    svg = picture.read_text()
    assert svg.startswith("<svg") and "read-before-invalidate" in svg
    assert svg.count('fill="url(#hatch3)"><title>') == 64  # the 64 lines of numbers, stale
    pattern = re.search(r'<pattern id="hatch3" .*?</pattern>', svg).group(0)
    assert '<rect width="4" height="4" fill="#f0e442"/>' in pattern  # yellow
    assert 'stroke="white"' in pattern  # with white stripes
    assert "read before an invalidate: stale on a card: &#8220;s&#8221; in the text form</text>" in svg
    assert "the 64 squares of `numbers` are yellow with white stripes" in page()
    assert "Beside each colour, the key gives what it means and, in quotes, its mark in the text form: `read before an invalidate: stale on a card: \u201cs\u201d in the text form`." in page()
    with pytest.raises(ValueError, match=r"\.svg"):
        run.cache_map(tmp_path / "cache.png")
    assert "which must end in `.svg`. Both work only after `run.stop()`." in page()
    assert '`run.cache_map("cache.svg")` draws the same as a picture' in page()


def test_the_warning_names_the_c_file_and_line():
    _, run, _, issued = run_lesson(NO_INVALIDATE, "card")
    assert len(issued) == 1
    warning = issued[0]
    assert (warning.filename, warning.lineno) == (str(NO_INVALIDATE), 15)
    assert str(warning.message) == f"unpredictable on a card: {MESSAGE}" and MESSAGE == run.findings[0].message
    shown = warnings.formatwarning(warning.message, warning.category, warning.filename, warning.lineno)
    assert shown == f"{NO_INVALIDATE}:15: CoherenceWarning: unpredictable on a card: {MESSAGE}\n  tripled[i] = 3 * numbers[i];\n"
    relative = shown.replace(str(LESSON), "...")
    assert relative in page()


def test_without_the_filter_the_warning_comes_twice_on_stderr(tmp_path):
    text = (LESSON / "program.py").read_text()
    lines = [
        "    with warnings.catch_warnings():\n",
        '        warnings.simplefilter("ignore", km.CoherenceWarning)  # the program prints them itself\n',
    ]
    for line in lines:
        assert text.count(line) == 1
    body = text.replace(lines[0], "    if True:\n").replace(lines[1], "")
    body = body.replace("HERE = Path(__file__).resolve().parent", f"HERE = Path({str(LESSON)!r})")
    (tmp_path / "program.py").write_text(body)
    done = run_program(tmp_path)
    assert done.stdout == EXPECTED
    one = f"{NO_INVALIDATE}:15: CoherenceWarning: unpredictable on a card: {MESSAGE}\n  tripled[i] = 3 * numbers[i];\n"
    assert done.stderr == 2 * one
    assert "The card run and the strict run each give this one, so it comes twice:" in page()


def test_mistake_the_invalidate_after_the_loop(tmp_path):
    # Lesson 35's thread with kmx_invalidate(0) moved to just before kmx_flush(1).
    source = variant(tmp_path, NO_INVALIDATE, "    kmx_flush(1);\n", INVALIDATE_LINE + "    kmx_flush(1);\n")
    _, run, tripled, _ = run_lesson(source, "strict")
    assert (tripled == STALE_TRIPLED).all()
    finding = only_finding(run)
    assert (finding.kind, finding.region, finding.line) == ("read-before-invalidate", "numbers", 15)
    # The later invalidate does not hide the stale read: the lines stay marked `s`.
    assert "strict mode)\n  " + "s" * 64 in run.cache_report()
    assert "An `s` stays an `s` after a later invalidate" in page()
    assert "and the finding is the same `read-before-invalidate` in region `'numbers'`, at line 15." in page()


def test_mistake_invalidating_the_region_it_writes(tmp_path):
    source = variant(tmp_path, TRIPLE, "kmx_invalidate(0);", "kmx_invalidate(1);")
    for coherence, right in (("card", True), ("strict", False)):
        _, run, tripled, _ = run_lesson(source, coherence)
        assert (tripled == 3 * NUMBERS).all() == right
        finding = only_finding(run)
        assert (finding.kind, finding.region, finding.line) == ("read-before-invalidate", "numbers", 16)
    assert "The finding is the same, in region `'numbers'`, at line 16" in page()


def test_mistake_one_core_invalidates_and_the_others_do_not_wait(tmp_path):
    squares_c = ROOT / "tutorial" / "36_twelve_cores" / "thread" / "squares.c"
    source = variant(
        tmp_path,
        squares_c,
        "        kmx_invalidate(0);\n    }\n    kmx_barrier();\n",
        "        kmx_invalidate(0);\n    }\n",
    )
    assert source.read_text().splitlines()[22].strip() == "squares[i] = numbers[i] * numbers[i];"
    for coherence in ("card", "strict"):  # the usual turns: core 0 invalidates first
        run = run_twelve_cores(source, coherence=coherence)  # each cluster's code is 0
        assert run.findings == []
    run = run_twelve_cores(source, coherence="strict", quantum=10, schedule_seed=3)
    numbers = np.arange(4096, dtype=np.uint32)
    squares = run.threads[1].read("squares").view(np.uint32)
    wrong = np.flatnonzero(squares != numbers * numbers)
    assert wrong.size == 48
    assert (squares[wrong] == 2749373529).all() and STALE_WORD**2 % 2**32 == 2749373529
    found = [f for f in run.findings if f.cluster == 1]
    assert len(found) == 1
    finding = found[0]
    assert (finding.kind, finding.core, finding.region, finding.line) == ("read-before-invalidate", 1, "numbers", 23)
    assert finding.cores == ((1, 4096, 4160), (2, 8192, 8256), (3, 12288, 12352))
    assert (finding.start, finding.end) == (4096, 12352)
    assert ("core 1 read region 'numbers' (bytes 4096 to 4159) at line 23 before the thread invalidated it. Core 2 "
            "(bytes 8192 to 8255) and core 3 (bytes 12288 to 12351) read it before the invalidate too.") in finding.message
    assert sum(end - start for _, start, end in finding.cores) == 4 * wrong.size  # the stale numbers read, exactly
    text = page()
    assert '`km.Session(coherence="strict", quantum=10, schedule_seed=3)`, 48 squares on cluster 1' in text
    assert "2749373529" in text and "line 23, in bytes 4096 to 4159 of `numbers`" in text
    assert "`Core 2 (bytes 8192 to 8255) and core 3 (bytes 12288 to 12351) read it before the invalidate too.`" in text


def test_mistake_a_region_id_that_does_not_exist(tmp_path):
    source = variant(tmp_path, TRIPLE, "kmx_invalidate(0);", "kmx_invalidate(5);")
    fault, _, _, _ = run_lesson(source, "strict")
    assert isinstance(fault, km.ThreadFault)
    cause = "kmx_invalidate: region ID 5 does not exist; the thread has IDs 0 to 1"
    assert (fault.cluster, fault.core, fault.file, fault.line) == (1, 0, str(source), 14)
    assert fault.cause == cause
    assert f"crashed at .../thread/triple.c:14 (pc ...): {cause}" in page()


def test_mistake_trusting_the_right_numbers():
    _, card, tripled, _ = run_lesson(NO_INVALIDATE, "card")
    assert (tripled == 3 * NUMBERS).all() and card.findings != []
    _, strict, _, _ = run_lesson(TRIPLE, "strict")
    assert strict.findings == []
    assert "`assert run.findings == []`" in page()


def test_mistake_turning_every_warning_off():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")
        with km.Session() as session:
            run = session.load(lesson_program(NO_INVALIDATE))
            run.thread_result(timeout=10.0)
            run.stop()
    assert caught == []
    assert [f.kind for f in run.findings] == ["read-before-invalidate"]
    assert "`warnings.simplefilter(\"ignore\")` hides the `km.CoherenceWarning`s" in page()


def test_the_page_names_the_four_kinds_and_the_lessons():
    text = page()
    kinds = ("read-before-invalidate", "unflushed-write", "invalidate-dropped-writes", "flush-wrote-stale-bytes")
    for kind in kinds:
        assert f'`"{kind}"`' in text
    assert "lesson 38, When the flush is missing" in text
    assert "lesson 39, An invalidate drops writes" in text
