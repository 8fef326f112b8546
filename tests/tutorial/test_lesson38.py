"""Lesson 38, "When the flush is missing": its program prints what the lesson shows, its
claims about the checker's findings hold through the public API, and its common mistakes
behave as the lesson says."""

import numpy as np

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

LESSON = ROOT / "tutorial" / "38_when_the_flush_is_missing"
NO_FLUSH = LESSON / "thread" / "no_flush.c"
TRIPLE = LESSON / "thread" / "triple.c"
PAGE = ROOT / "docs" / "38_when_the_flush_is_missing.md"
NUMBERS = np.arange(1024, dtype=np.uint32)
FLUSH_LINE = "    kmx_flush(1);\n"
LOOP = (
    "    for (uint64_t i = 0; i < numbers_bytes / 4; i++) {\n"
    "        tripled[i] = 3 * numbers[i];\n"
    "    }\n"
)
WROTE = (
    "core 0 wrote region 'tripled' (all 4096 bytes) at line 16, and the lines were still "
    "dirty in the cache when the thread ended. "
)
CARD_WHY = (
    "The library's hand-back wrote them to DRAM when the thread ended, so Python sees them "
    "here. That comes only at the end: anything that reads the region's DRAM before it (a "
    "Tensix kernel, the host) gets the old bytes, and in strict mode, where nothing is handed "
    "back, so does Python. Call kmx_flush(1) after the last write."
)
CARD_MESSAGE = WROTE + CARD_WHY
STRICT_MESSAGE = WROTE + (
    "Nothing hands them back in strict mode, so they never reached DRAM and Python reads the "
    "old bytes. On a card the library's hand-back would write them when the thread ended, too "
    "late for anything that reads the region's DRAM before (a Tensix kernel, the host). Call "
    "kmx_flush(1) after the last write."
)
EXPECTED = """\
card mode, without the flush:
  first five tripled: [0, 3, 6, 9, 12]
  all 1024 right: True
  finding: unflushed-write in region 'tripled', bytes 0 to 4095, at no_flush.c:16
strict mode, without the flush:
  first five tripled: [0, 0, 0, 0, 0]
  all 1024 right: False
  finding: unflushed-write in region 'tripled', bytes 0 to 4095, at no_flush.c:16

what the checker says, at no_flush.c:16:
  core 0 wrote region 'tripled' (all 4096 bytes) at line 16, and the lines were still
  dirty in the cache when the thread ended. Nothing hands them back in strict mode, so
  they never reached DRAM and Python reads the old bytes. On a card the library's
  hand-back would write them when the thread ended, too late for anything that reads the
  region's DRAM before (a Tensix kernel, the host). Call kmx_flush(1) after the last
  write.

the cache report, strict mode:
cluster 1, region 'numbers' (ID 0, 4096 bytes, 64 lines, strict mode)
  ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff
  64 fresh from DRAM
cluster 1, region 'tripled' (ID 1, 4096 bytes, 64 lines, strict mode)
  UUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUU
  64 written, never flushed
finding: unflushed-write in region 'tripled' (bytes 0 to 4095) at no_flush.c:16, core 0
key: . not touched   f fresh from DRAM   w written and flushed
     s read before an invalidate: stale on a card
     b flushed with stale bytes the thread never wrote
     x written, then dropped by an invalidate   U written, never flushed
(fills are seen a page, 64 lines, at a time)

strict mode, with the flush:
  first five tripled: [0, 3, 6, 9, 12]
  all 1024 right: True
  no findings
"""
SUBMIT_FIRST = (
    "    const uint64_t half = numbers_bytes / 8;\n"
    "    for (uint64_t i = 0; i < half; i++) {\n"
    "        tripled[i] = 3 * numbers[i];\n"
    "    }\n"
    "    kmx_submit();\n"
    "    for (uint64_t i = half; i < numbers_bytes / 4; i++) {\n"
    "        tripled[i] = 3 * numbers[i];\n"
    "    }\n"
    "    kmx_flush(1);\n"
)


def page() -> str:
    return PAGE.read_text()


def test_program_prints_the_lessons_output():
    done = run_program(LESSON)
    assert done.stdout == EXPECTED
    assert "CoherenceWarning" not in done.stderr  # the program prints the findings itself
    # cut at spaces only: the message's "hand-back" stays whole
    assert "\n  hand-back would write them when the thread ended" in done.stdout and "hand-\n" not in done.stdout
    lesson_37 = (ROOT / "docs" / "37_when_the_invalidate_is_missing.md").read_text()
    assert "`break_on_hyphens=False` cuts only at spaces, so that a word such as `hand-back` (lesson 38) stays whole." in lesson_37


def test_lesson_page_shows_the_program_and_the_output():
    text = page()
    assert text.startswith("Part 5. X280 threads · lesson 38 (lessons 32 to 46)\n\n# 38. When the flush is missing\n")
    assert_page_shows(text, LESSON / "program.py", NO_FLUSH, output=EXPECTED)
    for name in ("writer", "reader", "compute"):
        assert "void kernel_main() {}" in (LESSON / "kernels" / f"{name}.cpp").read_text()


def test_the_files_are_lesson_35s_with_and_without_the_flush():
    lesson_35 = (ROOT / "tutorial" / "35_sharing_memory" / "thread" / "triple.c").read_text()
    assert TRIPLE.read_text() == lesson_35
    body = lambda text: text.split("#include", 1)[1]  # noqa: E731 (past the header comment)
    assert body(NO_FLUSH.read_text()) == body(lesson_35).replace(FLUSH_LINE, "")
    assert NO_FLUSH.read_text().splitlines()[15].strip() == "tripled[i] = 3 * numbers[i];"  # line 16
    assert TRIPLE.read_text().splitlines()[17] == FLUSH_LINE.rstrip("\n")  # line 18
    # The program is lesson 37's, with no_flush.c in place of no_invalidate.c.
    lesson_37 = (ROOT / "tutorial" / "37_when_the_invalidate_is_missing" / "program.py").read_text()
    ours = (LESSON / "program.py").read_text()

    def same(text):
        return [line for line in text.splitlines() if "invalidate" not in line and "flush" not in line]

    assert same(ours) == same(lesson_37)


def lesson_program(source, regions=None):
    return one_thread_program(
        LESSON, source, regions=regions or {"numbers": NUMBERS, "tripled": 4096}
    )


def run_lesson(source, coherence="card", regions=None):
    """(the results, submitted then final; the stopped run; tripled)."""
    results, run, _ = run_and_stop(lesson_program(source, regions), coherence)
    assert results[-1].code == 0
    return results, run, run.thread.read("tripled").view(np.uint32)


def test_card_mode_is_right_by_the_hand_back_and_the_checker_finds_it():
    _, run, tripled = run_lesson(NO_FLUSH, "card")
    assert (tripled == 3 * NUMBERS).all()
    finding = only_finding(run)
    assert isinstance(finding, km.Finding)
    assert finding.kind == "unflushed-write"
    assert (finding.cluster, finding.core) == (1, 0)
    assert (finding.region, finding.region_id) == ("tripled", 1)
    assert (finding.start, finding.end) == (0, 4096)
    assert (finding.file, finding.line) == (str(NO_FLUSH), 16)
    assert finding.message == CARD_MESSAGE
    assert str(finding) == f"{NO_FLUSH}:16: unpredictable on a card: {CARD_MESSAGE}"
    assert (
        f"after `when the thread ended.` its message says what card mode did: `{CARD_WHY}` The two "
        "messages tell the same story from the two sides: the hand-back comes only when the "
        "thread ends, in card mode as on a card, and never in strict mode; whatever reads the "
        "region's DRAM before it gets the old bytes. Both end with the same fix." in page()
    )
    assert CARD_MESSAGE.startswith(WROTE) and WROTE.endswith("when the thread ended. ")


def test_the_warning_names_no_flush_c_and_line_16():
    _, _, issued = run_and_stop(lesson_program(NO_FLUSH))
    assert [(w.filename, w.lineno, str(w.message)) for w in issued] == [(str(NO_FLUSH), 16, f"unpredictable on a card: {CARD_MESSAGE}")]
    assert "naming `no_flush.c` and line 16" in page()


def test_strict_mode_python_reads_zeros():
    _, run, tripled = run_lesson(NO_FLUSH, "strict")
    assert (tripled == 0).all()  # what DRAM held: not the cache's 0xA5 bytes either
    assert (run.thread.read("numbers").view(np.uint32) == NUMBERS).all()
    finding = only_finding(run)
    assert (finding.kind, finding.region, finding.line, finding.message) == ("unflushed-write", "tripled", 16, STRICT_MESSAGE)
    report = run.cache_report()
    tripled_block = "region 'tripled' (ID 1, 4096 bytes, 64 lines, strict mode)\n  " + "U" * 64
    assert tripled_block + "\n  64 written, never flushed" in report
    assert "region 'numbers' (ID 0, 4096 bytes, 64 lines, strict mode)\n  " + "f" * 64 in report
    assert "the 64 lines of `tripled` are `U`" in page()


def test_the_message_says_what_became_of_the_bytes():
    _, card, _ = run_lesson(NO_FLUSH, "card")
    _, strict, _ = run_lesson(NO_FLUSH, "strict")
    [card_finding], [strict_finding] = card.findings, strict.findings
    where = lambda f: (f.kind, f.region, f.start, f.end, f.line)  # noqa: E731
    assert where(card_finding) == where(strict_finding)
    assert "The library's hand-back wrote them to DRAM when the thread ended" in card_finding.message
    assert "Nothing hands them back in strict mode, so they never reached DRAM" in strict_finding.message
    assert (
        "Its message depends on the mode and on when the checker found the lines: at the end in "
        "card mode, it says that the hand-back wrote them to DRAM; at the end in strict mode, that "
        "they never reached it; at a `kmx_submit`, that they were only in the cache when the "
        "thread said the work was done. At the end both modes' messages agree about the "
        "hand-back: on a card it writes the lines only when the thread ends, too late for "
        "anything that reads the region's DRAM before (a Tensix kernel, the host)." in page()
    )
    assert "On a card the library's hand-back would write them when the thread ended, too late" in strict_finding.message
    assert "That comes only at the end: anything that reads the region's DRAM before it" in card_finding.message


def test_the_fix_has_no_finding():
    _, run, tripled = run_lesson(TRIPLE, "strict")
    assert (tripled == 3 * NUMBERS).all() and run.findings == []


def test_a_missing_flush_is_never_rescued_by_running_out_of_room(tmp_path):
    # Four times the card's 2 MiB L3, written and never flushed: nothing reaches DRAM.
    source = tmp_path / "big.c"
    source.write_text(
        '#include "kmx.h"\n'
        "int kmx_main(int core) {\n"
        "    (void)core;\n"
        "    uint64_t bytes;\n"
        "    uint32_t* tripled = (uint32_t*)kmx_region(0, &bytes);\n"
        "    for (uint64_t i = 0; i < bytes / 4; i++) {\n"
        "        tripled[i] = 3 * (uint32_t)i;\n"
        "    }\n"
        "    return 0;\n"
        "}\n"
    )
    _, run, tripled = run_lesson(source, "strict", regions={"tripled": 8 << 20})
    assert not tripled.any()
    assert [(f.kind, f.start, f.end) for f in run.findings] == [("unflushed-write", 0, 8 << 20)]
    assert "The simulator's cache never runs out of room, so a missing flush is never rescued that way." in page()


def test_a_submit_before_the_flush(tmp_path):
    assert SUBMIT_FIRST in page()
    source = variant(tmp_path, TRIPLE, LOOP + FLUSH_LINE, SUBMIT_FIRST)
    lines = source.read_text().splitlines()
    assert lines[16].strip() == "tripled[i] = 3 * numbers[i];" and lines[18].strip() == "kmx_submit();"
    message = (
        "core 0 wrote region 'tripled' (bytes 0 to 2047) at line 17, and the lines were still "
        "dirty in the cache when core 0 called kmx_submit at line 19. A submission says the "
        "work so far is done, but these bytes were only in the cache: whatever reads the "
        "region's DRAM then (a Tensix kernel, the host) gets the old bytes. Call kmx_flush(1) "
        "before kmx_submit()."
    )
    for coherence in ("card", "strict"):
        results, run, tripled = run_lesson(source, coherence)
        assert [r.final for r in results] == [False, True]
        assert (tripled == 3 * NUMBERS).all()
        finding = only_finding(run)
        assert (finding.kind, finding.region, finding.core) == ("unflushed-write", "tripled", 0)
        assert (finding.start, finding.end, finding.line) == (0, 2048, 17)
        assert finding.message == message
    assert f"unflushed-write in region 'tripled', bytes 0 to 2047, at line 17\n{message}\n" in page()
    # The fix: a flush just before the submit.
    (tmp_path / "fixed").mkdir()
    fixed = variant(tmp_path / "fixed", source, "    kmx_submit();\n", FLUSH_LINE + "    kmx_submit();\n")
    _, run, tripled = run_lesson(fixed, "strict")
    assert (tripled == 3 * NUMBERS).all() and run.findings == []
    assert (
        "The message is the same in both modes, since no hand-back comes at a submit, and its "
        "last sentence is the fix: a `kmx_flush(1);` just before `kmx_submit();`." in page()
    )


def test_mistake_the_flush_before_the_loop(tmp_path):
    source = variant(tmp_path, TRIPLE, LOOP + FLUSH_LINE, FLUSH_LINE + LOOP)
    assert source.read_text().splitlines()[14] == FLUSH_LINE.rstrip("\n")  # next to the invalidate
    _, card, tripled = run_lesson(source, "card")
    assert (tripled == 3 * NUMBERS).all()
    _, run, tripled = run_lesson(source, "strict")
    assert (tripled == 0).all()
    finding = only_finding(run)
    assert (finding.kind, finding.region, finding.line) == ("unflushed-write", "tripled", 17)
    assert (card.findings[0].kind, card.findings[0].line) == ("unflushed-write", 17)
    assert "and the finding is `unflushed-write` in region `'tripled'`, at the write, line 17" in page()


def test_mistake_flushing_the_region_it_read(tmp_path):
    source = variant(tmp_path, TRIPLE, "kmx_flush(1);", "kmx_flush(0);")
    _, run, tripled = run_lesson(source, "strict")
    assert (tripled == 0).all()
    finding = only_finding(run)
    assert (finding.kind, finding.region, finding.line) == ("unflushed-write", "tripled", 16)
    assert "The finding is `unflushed-write` in region `'tripled'`, at line 16, and strict mode gives zeros." in page()


def test_mistake_a_flush_before_the_other_cores_are_done(tmp_path):
    squares_c = ROOT / "tutorial" / "36_twelve_cores" / "thread" / "squares.c"
    old = "    __atomic_fetch_add(&total, sum, __ATOMIC_RELAXED);\n    kmx_barrier();\n"
    source = variant(tmp_path, squares_c, old, "    __atomic_fetch_add(&total, sum, __ATOMIC_RELAXED);\n")
    assert source.read_text().count("kmx_barrier();") == 1
    assert source.read_text().splitlines()[23].strip() == "squares[i] = numbers[i] * numbers[i];"
    for coherence in ("card", "strict"):
        run = run_twelve_cores(source, coherence=coherence)  # each cluster's code is 0
        for k, c in enumerate([1, 2, 3]):
            numbers = np.arange(4096 * k, 4096 * (k + 1), dtype=np.uint32)
            squares = run.threads[c].read("squares").view(np.uint32)
            if coherence == "card":
                assert (squares == numbers * numbers).all()
            else:
                assert (squares[:1024] == numbers[:1024] * numbers[:1024]).all()  # core 0's quarter
                assert not squares[1024:].any()  # the other 3072: zeros
            found = [f for f in run.findings if f.cluster == c]
            assert len(found) == 1
            f = found[0]
            assert (f.kind, f.core, f.region, f.line) == ("unflushed-write", 1, "squares", 24)
            assert (f.start, f.end) == (4096, 16384)
    text = page()
    assert "only core 0's 1024 squares reach DRAM, and Python reads zeros for the other 3072" in text
    assert "`unflushed-write` by core 1, at the line of the squares, line 24, in bytes 4096 to 16383 of `squares`" in text


def test_mistake_counting_on_the_hand_back():
    _, card, tripled = run_lesson(NO_FLUSH, "card")
    assert (tripled == 3 * NUMBERS).all() and card.findings != []
    assert "`assert run.findings == []`" in page()


def test_the_page_links_the_lessons():
    text = page()
    for words in (
        "lesson 37, When the invalidate is missing",
        "lesson 35, Sharing memory",
        "lesson 33, A thread that submits",
        "lesson 36, Twelve cores",
        "lesson 39, An invalidate drops writes",
    ):
        assert words in text
