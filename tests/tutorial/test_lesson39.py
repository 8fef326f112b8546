"""Lesson 39, "An invalidate drops writes": its program prints what the lesson shows, what
the lesson says about the finding holds, and its common mistakes behave as it says."""

import re
import shutil
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.lessons import assert_page_shows, one_thread_program, run_and_stop, run_program, write_thread

LESSON = ROOT / "tutorial" / "39_an_invalidate_drops_writes"
WRONG = LESSON / "thread" / "invalidate_then_flush.c"
FIXED = LESSON / "thread" / "flush_then_invalidate.c"
TRIPLE = ROOT / "tutorial" / "35_sharing_memory" / "thread" / "triple.c"
PAGE = ROOT / "docs" / "39_an_invalidate_drops_writes.md"
NUMBERS = np.arange(1024, dtype=np.uint32)
SVG = "{http://www.w3.org/2000/svg}"
STALE = 0xA5A5A5A5  # 2779096485: a uint32 of a stale line in strict mode
KEY = (
    "key: . not touched   f fresh from DRAM   w written and flushed\n"
    "     s read before an invalidate: stale on a card\n"
    "     b flushed with stale bytes the thread never wrote\n"
    "     x written, then dropped by an invalidate   U written, never flushed"
)
EXPECTED = (
    "card mode, invalidate then flush:\n"
    "  first five tripled: [0, 0, 0, 0, 0]\n"
    "  all 1024 right: False\n"
    "  finding: invalidate-dropped-writes in region 'tripled', bytes 0 to 4095, at invalidate_then_flush.c:19\n"
    "strict mode, invalidate then flush:\n"
    "  first five tripled: [0, 0, 0, 0, 0]\n"
    "  all 1024 right: False\n"
    "  finding: invalidate-dropped-writes in region 'tripled', bytes 0 to 4095, at invalidate_then_flush.c:19\n"
    "\n"
    "what the checker says, at invalidate_then_flush.c:19:\n"
    "  kmx_invalidate(1) at line 19 dropped dirty lines of region 'tripled' (all 4096 bytes),\n"
    "  written at line 17, before they were flushed: those writes are lost, and DRAM keeps\n"
    "  the old bytes. Flush the region (kmx_flush(1)) before invalidating it, or invalidate\n"
    "  it before the thread writes, not after.\n"
    "\n"
    "the cache report, strict mode:\n"
    "cluster 1, region 'numbers' (ID 0, 4096 bytes, 64 lines, strict mode)\n"
    "  " + "f" * 64 + "\n"
    "  64 fresh from DRAM\n"
    "cluster 1, region 'tripled' (ID 1, 4096 bytes, 64 lines, strict mode)\n"
    "  " + "x" * 64 + "\n"
    "  64 written, then dropped by an invalidate\n"
    "finding: invalidate-dropped-writes in region 'tripled' (bytes 0 to 4095) at invalidate_then_flush.c:19, core 0\n"
    + KEY + "\n"
    "(fills are seen a page, 64 lines, at a time)\n"
    "\n"
    "strict mode, flush then invalidate:\n"
    "  first five tripled: [0, 3, 6, 9, 12]\n"
    "  all 1024 right: True\n"
    "  no findings\n"
)


def page() -> str:
    return PAGE.read_text()


def line_of(text: str, needle: str) -> int:
    [number] = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    return number


def test_program_prints_the_lessons_output():
    done = run_program(LESSON)
    assert done.stdout == EXPECTED
    assert "CoherenceWarning" not in done.stderr  # the program prints the findings itself


def test_the_output_is_the_same_wherever_the_lesson_is(tmp_path):
    copy = tmp_path / "somewhere" / "else"
    shutil.copytree(LESSON, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert run_program(copy).stdout == EXPECTED


def test_lesson_page_shows_the_program_the_threads_and_the_output():
    text = page()
    assert text.startswith(
        "Part 5. X280 threads · lesson 39 (lessons 32 to 46)\n\n# 39. An invalidate drops writes\n"
    )
    assert_page_shows(text, LESSON / "program.py", WRONG, FIXED)
    assert "\n```\n" + EXPECTED.strip() + "\n```\n" in text
    for kernel in ("compute.cpp", "reader.cpp", "writer.cpp"):
        body = (LESSON / "kernels" / kernel).read_text()
        assert "void kernel_main() {}" in body and "lesson 39" in body


def test_the_two_threads_differ_in_the_order_of_two_calls_only():
    wrong = WRONG.read_text().split("#include")[1]
    fixed = FIXED.read_text().split("#include")[1]
    swapped = "    kmx_invalidate(1);\n    kmx_flush(1);\n"
    assert wrong.count(swapped) == 1
    assert wrong.replace(swapped, "    kmx_flush(1);\n    kmx_invalidate(1);\n") == fixed
    # and, without the added invalidate, the wrong thread is lesson 35's
    assert wrong.replace("    kmx_invalidate(1);\n", "") == TRIPLE.read_text().split("#include")[1]
    text = page()
    assert "```c\n    kmx_invalidate(0);\n    for" in text
    assert "```c\n    kmx_flush(1);\n    kmx_invalidate(1);\n```" in text


def run_thread(source, mode, regions=None):
    """Run SOURCE on cluster 1 in MODE; return (final result, stopped run, CoherenceWarnings)."""
    regions = regions if regions is not None else {"numbers": NUMBERS, "tripled": 4096}
    results, run, caught = run_and_stop(one_thread_program(LESSON, source, regions=regions), mode)
    return results[-1], run, caught


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_the_finding_names_the_invalidate_and_the_lost_writes(mode):
    text = WRONG.read_text()
    result, run, caught = run_thread(WRONG, mode)
    assert result.code == 0 and result.words[0] == 1024
    assert (run.thread.read("tripled") == 0).all()  # what DRAM held before: zeros
    [finding] = run.findings
    assert finding.kind == "invalidate-dropped-writes"
    assert (finding.cluster, finding.core) == (1, 0)
    assert (finding.region, finding.region_id) == ("tripled", 1)
    assert (finding.start, finding.end) == (0, 4096)
    assert finding.file == str(WRONG)
    assert finding.line == line_of(text, "kmx_invalidate(1);") == 19
    assert f"written at line {line_of(text, 'tripled[i] = 3 * numbers[i];')}," in finding.message
    assert line_of(text, "tripled[i] = 3 * numbers[i];") == 17
    assert str(finding) == f"{WRONG}:19: unpredictable on a card: {finding.message}"
    # the same finding, as a warning located at the C line
    [warning] = caught
    assert str(warning.message) == f"unpredictable on a card: {finding.message}" and warning.message.finding == finding
    assert (warning.filename, warning.lineno) == (str(WRONG), 19)


def test_the_warning_on_standard_error_is_what_the_page_shows():
    _, run, [warning] = run_thread(WRONG, "card")
    shown = warnings.formatwarning(
        warning.message, warning.category, warning.filename, warning.lineno
    )
    assert shown == f"{WRONG}:19: CoherenceWarning: unpredictable on a card: {run.findings[0].message}\n  kmx_invalidate(1);\n"
    short = shown.replace(str(LESSON), "...")
    assert "```\n" + short + "```\n" in page()


def test_the_fix_has_no_findings_and_its_report_shows_written_and_flushed():
    for mode in ("card", "strict"):
        _, run, caught = run_thread(FIXED, mode)
        assert (run.thread.read("tripled").view(np.uint32) == 3 * NUMBERS).all()
        assert run.findings == [] and caught == []
        report = run.cache_report()
        assert f"region 'tripled' (ID 1, 4096 bytes, 64 lines, {mode} mode)\n  {'w' * 64}\n  64 written and flushed\n" in report
        assert f"region 'numbers' (ID 0, 4096 bytes, 64 lines, {mode} mode)\n  {'f' * 64}\n  64 fresh from DRAM\n" in report
    assert "that run's report shows `tripled` as 64 `w`, written and flushed" in page()


def test_the_card_mode_report_is_the_same_but_for_the_mode():
    _, card, _ = run_thread(WRONG, "card")
    _, strict, _ = run_thread(WRONG, "strict")
    assert card.cache_report() == strict.cache_report().replace("strict mode", "card mode")


def test_the_map_draws_the_dropped_lines_hatched_in_reddish_purple(tmp_path):
    _, run, _ = run_thread(WRONG, "strict")
    svg = ET.parse(run.cache_map(tmp_path / "cache.svg")).getroot()
    cells = [r for r in svg.iter(SVG + "rect") if r.find(SVG + "title") is not None]
    dropped = [r for r in cells if r.find(SVG + "title").text.endswith(": written, then dropped by an invalidate")]
    assert len(cells) == 128 and len(dropped) == 64
    [fill] = {r.get("fill") for r in dropped}
    pattern = next(p for p in svg.iter(SVG + "pattern") if fill == f"url(#{p.get('id')})")
    assert pattern.find(SVG + "rect").get("fill") == "#cc79a7"  # Okabe and Ito's reddish purple
    assert pattern.find(SVG + "line") is not None  # hatched
    assert "with `x` hatched in reddish purple" in page()


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_the_thread_itself_reads_zero_after_the_invalidate(tmp_path, mode):
    check = "    kmx_result(1, &tripled[1], 1);\n    return 0;\n}"
    for source, expected in ((WRONG, 0), (FIXED, 3)):
        text = source.read_text()
        assert text.count("    return 0;\n}") == 1
        changed = write_thread(tmp_path, source.name, text.replace("    return 0;\n}", check))
        result, _, _ = run_thread(changed, mode)
        assert result.words[:2].tolist() == [1024, expected]
    assert "it would have read 0" in page() and "After the fixed calls it reads 3." in page()


# -- common mistakes ---------------------------------------------------------------------

IN_PLACE = """#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    uint64_t numbers_bytes;
    uint32_t* numbers = (uint32_t*)kmx_region(0, &numbers_bytes);
    if (numbers == 0) {
        return 1;
    }
%s    return 0;
}
"""


def fragments() -> list[str]:
    """The C fragments of the page's "Common mistakes", without their list indentation."""
    mistakes = page().split("## Common mistakes")[1]
    blocks = re.findall(r"\n  ```c\n(.*?)  ```\n", mistakes, re.S)
    return ["".join(line[2:] + "\n" for line in block.splitlines()) for block in blocks]


def test_the_page_has_the_two_fragments():
    wrong_place, zero_odd = fragments()
    assert "kmx_invalidate(0);\n    kmx_flush(0);" in wrong_place
    assert "numbers[i] = 0;" in zero_odd


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_invalidating_after_the_writes_instead_of_before(tmp_path, mode):
    wrong_place, _ = fragments()
    text = IN_PLACE % wrong_place
    source = write_thread(tmp_path, "in_place.c", text)
    _, run, _ = run_thread(source, mode, regions={"numbers": NUMBERS})
    numbers = run.thread.read("numbers").view(np.uint32)
    assert (numbers == NUMBERS).all() and numbers[:5].tolist() == [0, 1, 2, 3, 4]
    assert [(f.kind, f.line) for f in run.findings] == [
        ("read-before-invalidate", line_of(text, "numbers[i] = 3 * numbers[i];")),
        ("invalidate-dropped-writes", line_of(text, "kmx_invalidate(0);")),
    ]
    # the fix: the invalidate moved up, before the loop
    moved = "    kmx_invalidate(0);\n" + wrong_place.replace("    kmx_invalidate(0);\n", "")
    source = write_thread(tmp_path, "in_place.c", IN_PLACE % moved)
    _, run, _ = run_thread(source, mode, regions={"numbers": NUMBERS})
    assert (run.thread.read("numbers").view(np.uint32) == 3 * NUMBERS).all()
    assert run.findings == []
    assert "Python reads the numbers unchanged, `[0, 1, 2, 3, 4]` at the start, in both modes" in page()


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_an_invalidate_where_the_flush_belongs(tmp_path, mode):
    text = TRIPLE.read_text()
    assert text.count("    kmx_flush(1);\n") == 1
    text = text.replace("    kmx_flush(1);\n", "    kmx_invalidate(1);\n")
    source = write_thread(tmp_path, "triple.c", text)
    _, run, _ = run_thread(source, mode)
    assert (run.thread.read("tripled") == 0).all()
    [finding] = run.findings
    assert (finding.kind, finding.line) == ("invalidate-dropped-writes", line_of(text, "kmx_invalidate(1);"))
    assert "`kmx_invalidate(1);` in place of `kmx_flush(1);`" in page()


def test_writing_part_of_each_line_without_an_invalidate_first(tmp_path):
    _, zero_odd = fragments()
    text = IN_PLACE % zero_odd
    source = write_thread(tmp_path, "zero_odd.c", text)
    expected = NUMBERS.copy()
    expected[1::2] = 0

    _, card, _ = run_thread(source, "card", regions={"numbers": NUMBERS})
    numbers = card.thread.read("numbers").view(np.uint32)
    assert (numbers == expected).all() and numbers[:5].tolist() == [0, 0, 2, 0, 4]
    assert card.findings == []

    _, strict, caught = run_thread(source, "strict", regions={"numbers": NUMBERS})
    numbers = strict.thread.read("numbers").view(np.uint32)
    assert numbers[:5].tolist() == [2779096485, 0, 2779096485, 0, 2779096485]
    assert (numbers[0::2] == STALE).all() and (numbers[1::2] == 0).all()
    [finding] = strict.findings
    assert (finding.kind, finding.region) == ("flush-wrote-stale-bytes", "numbers")
    assert (finding.start, finding.end - 1) == (0, 4091)
    assert finding.line == line_of(text, "kmx_flush(0);")
    assert len(caught) == 1
    report = strict.cache_report()
    assert f"strict mode)\n  {'b' * 64}\n  64 flushed with stale bytes the thread never wrote\n" in report
    assert "Its cache report shows all 64 lines of `numbers` as `b`: flushed with stale bytes the thread never wrote." in page()
    assert "and `b`, in strict mode only, a line that a flush wrote back with stale bytes" in page()
    text_page = page()
    assert "In card mode Python reads `[0, 0, 2, 0, 4]` at the start, right, and there are no findings." in text_page
    assert "In strict mode it reads `[2779096485, 0, 2779096485, 0, 2779096485]`, and the checker finds `flush-wrote-stale-bytes` in region `'numbers'`, bytes 0 to 4091, at the line `kmx_flush(0);`." in text_page

    # the fix: an invalidate before the loop
    source = write_thread(tmp_path, "zero_odd.c", IN_PLACE % ("    kmx_invalidate(0);\n" + zero_odd))
    for mode in ("card", "strict"):
        _, run, _ = run_thread(source, mode, regions={"numbers": NUMBERS})
        assert (run.thread.read("numbers").view(np.uint32) == expected).all()
        assert run.findings == []
