"""docs/memory-model.md says what the simulator does: its example program and threads run
and print what the page shows, and its claims about the modes, the findings, the picture
and the approximations hold, through the public API."""

import re
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import run_and_stop, run_program

PAGE = ROOT / "docs" / "memory-model.md"
KERNELS = ROOT / "tutorial" / "35_sharing_memory" / "kernels"
KINDS = ["read-before-invalidate", "unflushed-write", "invalidate-dropped-writes", "flush-wrote-stale-bytes",
         "stale-read", "mixed-alias"]
STRICT_ONLY = ("flush-wrote-stale-bytes", "stale-read")
STALE = 0xA5A5A5A5
SVG = "{http://www.w3.org/2000/svg}"


def page() -> str:
    return PAGE.read_text()


def prose() -> str:
    """The page with its lines joined: a sentence can be looked for across line breaks."""
    return " ".join(page().split())


def section(title: str) -> str:
    """The text of the page from heading TITLE to the next heading of any level."""
    text = page()
    start = text.index(title + "\n")
    rest = text[start + len(title) + 1 :]
    end = re.search(r"^#{2,3} ", rest, re.M)
    return rest[: end.start()] if end else rest


def blocks(text: str, language: str = "") -> list[str]:
    """The bodies of TEXT's fenced code blocks of LANGUAGE ("" for a plain fence)."""
    found, body, inside = [], [], None
    for line in text.splitlines(keepends=True):
        if inside is None:
            if line.startswith("```"):
                inside, body = line[3:].strip(), []
        elif line.rstrip("\n") == "```":
            if inside == language:
                found.append("".join(body))
            inside = None
        else:
            body.append(line)
    return found


HARNESS = blocks(section("## The checker"), "python")[0]


def example(kind: str) -> tuple[str, str]:
    """The C file of KIND's example, and the text the page says the harness prints."""
    text = section(f"### {kind}")
    [source] = blocks(text, "c")
    [said] = blocks(text, "text")
    return source, said


def run_source(tmp_path, text, *, mode="card", regions=None, name="example.c", cores=1):
    """Run C TEXT on cluster 1; return (the results handed, the stopped run, warnings)."""
    source = tmp_path / name
    source.write_text(text)
    program = km.Program("example", kernels=KERNELS)
    program.thread(
        cluster=1,
        sources=[source],
        regions=regions if regions is not None else {"data": np.arange(1024, dtype=np.uint32)},
        cores=cores,
    )
    return run_and_stop(program, mode, catch_faults=True)


C = """#include "kmx.h"

int kmx_main(int core) {
    (void)core;
    uint32_t* data = (uint32_t*)kmx_region(0, 0);
%s    return 0;
}
"""


# -- the examples of the four findings ---------------------------------------------------

def test_the_page_has_an_example_of_each_kind():
    assert re.findall(r"^### (.*)$", page(), re.M) == KINDS
    kinds = ", ".join(f'`"{kind}"`' for kind in [*KINDS, "noc-read-unflushed", "flush-over-noc-write"])  # (lesson 45, tests/noc)
    assert f"- `kind`: one of {kinds};" in prose()


@pytest.mark.parametrize("kind", KINDS)
def test_each_example_prints_what_the_page_shows(tmp_path, kind):
    source, said = example(kind)
    (tmp_path / "kernels").mkdir()
    (tmp_path / "example.c").write_text(source)
    (tmp_path / "program.py").write_text(HARNESS)
    done = run_program(tmp_path)
    assert done.stdout == said
    assert f"{tmp_path / 'example.c'}:" in done.stderr  # the warning, at the C file


@pytest.mark.parametrize("kind", KINDS)
def test_in_card_mode_the_findings_are_the_same_but_the_last_kind(tmp_path, kind):
    source, said = example(kind)
    _, card, _ = run_source(tmp_path, source, mode="card")
    _, strict, _ = run_source(tmp_path, source, mode="strict")
    assert [f.message for f in strict.findings] == [said.splitlines()[1]]
    where = [(f.kind, f.line, f.start, f.end) for f in strict.findings]
    if kind in STRICT_ONLY:
        assert card.findings == []
    else:
        assert [(f.kind, f.line, f.start, f.end) for f in card.findings] == where
    if kind == "unflushed-write":
        [f] = card.findings
        assert f.message != strict.findings[0].message
        assert "The library's hand-back wrote them to DRAM when the thread ended, so Python sees them here. " in f.message
        assert "`The library's hand-back wrote them to DRAM when the thread ended, so Python sees them here. ...`" in prose()
        late = "too late for anything that reads the region's DRAM before"
        assert "That comes only at the end: anything that reads the region's DRAM before it" in f.message
        assert late in strict.findings[0].message
        assert (
            "Both messages say the same of the hand-back: it comes only when the thread ends, "
            "too late for a Tensix kernel or the host that reads the region's DRAM before." in prose()
        )
    elif kind not in STRICT_ONLY:
        assert card.findings[0].message == strict.findings[0].message
    assert (
        "In card mode the findings are the same kinds, at the same lines, apart from "
        "`flush-wrote-stale-bytes` and `stale-read`, which only strict mode records for these threads; and the message of an `unflushed-write` says "
        "what card mode did instead." in prose()
    )


def test_the_table_of_the_two_modes(tmp_path):
    """The four rows of "The same four threads in the two modes"."""
    table = section("## Two modes: \"card\" and \"strict\"")
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == 4
    got = {}
    for kind in KINDS:
        source, _ = example(kind)
        for mode in ("card", "strict"):
            results, run, _ = run_source(tmp_path, source, mode=mode)
            data = run.thread.read("data").view(np.uint32)
            got[kind, mode] = (int(results[-1].words[0]), data[:2].tolist())
    assert got["read-before-invalidate", "card"][0] == 0
    assert got["read-before-invalidate", "strict"][0] == 2779096485 == STALE
    assert got["unflushed-write", "card"][1][0] == 7 and got["unflushed-write", "strict"][1][0] == 0
    assert got["invalidate-dropped-writes", "card"][1][0] == 0 == got["invalidate-dropped-writes", "strict"][1][0]
    assert got["flush-wrote-stale-bytes", "card"][1] == [7, 1]
    assert got["flush-wrote-stale-bytes", "strict"][1] == [7, 2779096485]
    assert rows[0] == "| reads `data[0]`, then invalidates | the thread reads 0, right | the thread reads 2779096485 |"
    assert rows[1] == "| invalidates, writes `data[0] = 7`, never flushes | Python reads 7 | Python reads 0 |"
    assert rows[2] == "| invalidates, writes `data[0] = 7`, invalidates, flushes | Python reads 0 | Python reads 0 |"
    assert rows[3] == (
        "| writes `data[0] = 7` without invalidating first, flushes | Python reads 1 in `data[1]` "
        "| Python reads 2779096485 in `data[1]` |"
    )


def test_the_stale_flush_example_reads_stale_words_to_the_end_of_the_line(tmp_path):
    source, _ = example("flush-wrote-stale-bytes")
    _, run, _ = run_source(tmp_path, source, mode="strict")
    data = run.thread.read("data").view(np.uint32)
    assert data[0] == 7 and (data[1:16] == STALE).all() and (data[16:] == np.arange(16, 1024)).all()
    assert "Python reads 7 in `data[0]` and 2779096485 in `data[1]` to `data[15]`" in page()


def test_a_submit_with_dirty_lines(tmp_path):
    text = C % "    kmx_invalidate(0);\n    data[0] = 7;\n    kmx_submit();\n    kmx_flush(0);\n"
    results, run, _ = run_source(tmp_path, text)
    assert [r.final for r in results] == [False, True]
    [finding] = run.findings
    assert finding.kind == "unflushed-write" and finding.line == 7
    assert "when core 0 called kmx_submit at line 8. " in finding.message
    assert finding.message.endswith("Call kmx_flush(0) before kmx_submit().")
    assert (
        "At a submit the message says `when core 0 called kmx_submit at line N` instead of "
        "`when the thread ended`, and asks for `kmx_flush(0)` before `kmx_submit()`." in prose()
    )


def test_a_crash_gets_no_unflushed_finding_and_card_mode_still_hands_back(tmp_path):
    text = C % "    kmx_invalidate(0);\n    data[0] = 7;\n    *(volatile uint32_t*)8 = 1;\n"
    for mode, first in (("card", 7), ("strict", 0)):
        results, run, _ = run_source(tmp_path, text, mode=mode)
        assert isinstance(results[-1], km.ThreadFault)
        assert run.findings == []
        assert run.thread.read("data").view(np.uint32)[0] == first
    assert "A\nthread that crashed gets no such finding" in page()


def test_a_stop_that_halts_a_running_thread_is_its_end(tmp_path):
    source = tmp_path / "forever.c"
    source.write_text(C % "    kmx_invalidate(0);\n    data[0] = 7;\n    for (;;) {\n    }\n")
    program = km.Program("example", kernels=KERNELS)
    program.thread(cluster=1, sources=[source], regions={"data": 4096})
    for mode, first in (("card", 7), ("strict", 0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", km.CoherenceWarning)
            with km.Session(coherence=mode) as session:
                run = session.load(program)
                with pytest.raises(TimeoutError):
                    run.thread_result(timeout=0.2)
                run.stop()
        [finding] = run.findings
        assert finding.kind == "unflushed-write" and "when the thread ended" in finding.message
        assert run.thread.read("data").view(np.uint32)[0] == first  # the hand-back, card mode only


# -- what every finding holds, and the warnings ---------------------------------------------

def test_the_fields_of_a_finding_and_its_str(tmp_path):
    source, _ = example("invalidate-dropped-writes")
    _, run, caught = run_source(tmp_path, source)
    [f] = run.findings
    assert (f.kind, f.cluster, f.core, f.region, f.region_id) == ("invalidate-dropped-writes", 1, 0, "data", 0)
    assert (f.start, f.end) == (0, 64)
    assert f.file == str(tmp_path / "example.c") and f.line == 8
    assert str(f) == f"{f.file}:{f.line}: unpredictable on a card: {f.message}"
    [w] = caught
    assert (w.filename, w.lineno, str(w.message)) == (f.file, f.line, f"unpredictable on a card: {f.message}")
    shown = warnings.formatwarning(w.message, w.category, w.filename, w.lineno)
    said = blocks(section("## The checker"))[0]
    first, source_line = said.rstrip("\n").split("\n")
    assert first.endswith(" ...") and first.startswith(".../example.c:8: CoherenceWarning: ")
    assert shown.replace(str(tmp_path), "...").startswith(first[: -len(" ...")])
    assert shown.endswith("\n" + source_line + "\n")


def test_an_error_filter_makes_stop_raise(tmp_path):
    source = tmp_path / "example.c"
    source.write_text(example("invalidate-dropped-writes")[0])
    program = km.Program("example", kernels=KERNELS)
    program.thread(cluster=1, sources=[source], regions={"data": np.arange(1024, dtype=np.uint32)})
    with km.Session() as session:
        run = session.load(program)
        run.thread_result(timeout=10.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", km.CoherenceWarning)
            with pytest.raises(km.CoherenceWarning, match=r"^unpredictable on a card: kmx_invalidate\(0\) at line 8 dropped"):
                run.stop()
    assert 'warnings.simplefilter("error", km.CoherenceWarning)' in page()


def test_once_per_region_and_kind_the_first_line_and_a_grown_range(tmp_path):
    text = C % (
        "    kmx_invalidate(0);\n    data[0] = 7;\n    kmx_invalidate(0);\n"
        "    data[1000] = 7;\n    kmx_invalidate(0);\n"
    )
    _, run, caught = run_source(tmp_path, text)
    [finding] = run.findings
    assert finding.kind == "invalidate-dropped-writes" and finding.line == 8
    assert (finding.start, finding.end) == (0, 4032)  # lines 0 and 62, and all between
    assert "(bytes 0 to 4031), written at line 7," in finding.message
    assert len(caught) == 1


def test_the_findings_come_region_by_region_then_in_the_order_found(tmp_path):
    text = C % "    uint32_t* more = (uint32_t*)kmx_region(1, 0);\n    more[0] = data[0] + 1;\n    kmx_invalidate(1);\n    kmx_invalidate(0);\n    data[0] = 1;\n"
    _, run, _ = run_source(tmp_path, text, regions={"data": np.arange(1024, dtype=np.uint32), "more": 64})
    assert [(f.region_id, f.kind) for f in run.findings] == [
        (0, "read-before-invalidate"),
        (0, "unflushed-write"),
        (1, "invalidate-dropped-writes"),
    ]


def test_a_bad_mode_is_a_value_error():
    with pytest.raises(ValueError) as caught:
        km.Session(coherence="loose")
    assert f"`ValueError: {caught.value}`" in page()


# -- the picture -------------------------------------------------------------------------------

def every_mark(tmp_path, mode):
    source = blocks(section("## The picture"), "c")[0]
    return run_source(
        tmp_path,
        source,
        mode=mode,
        name="every_mark.c",
        regions={"data": np.arange(4096, dtype=np.uint32), "spare": 64},
    )


def test_the_report_of_the_thread_that_does_one_of_each(tmp_path):
    results, run, _ = every_mark(tmp_path, "card")
    assert results[-1].code == 0
    report = run.cache_report()
    said = blocks(section("## The picture"))[0]
    assert report + "\n" == said
    # the findings in the order found, not in the order of the kinds
    assert [(f.kind, f.line) for f in run.findings] == [
        ("read-before-invalidate", 8),
        ("invalidate-dropped-writes", 11),
        ("unflushed-write", 14),
    ]
    assert "then by region\nID, then in the order the checker found them." in page()
    assert 'regions={"data": np.arange(4096, dtype=np.uint32), "spare": 64}' in page()
    # strict mode: the same, but for the titles and the first page, whose lines were in
    # the cache from the start (stale): the read filled none of them from DRAM
    _, strict, _ = every_mark(tmp_path, "strict")
    card = run.cache_report().replace("card mode", "strict mode")
    card = card.replace("  s" + "f" * 63 + "\n", "  s" + "." * 63 + "\n").replace("252 fresh from DRAM", "189 fresh from DRAM; 63 not touched")
    assert strict.cache_report() == card


def test_the_marks_and_colours_are_the_reports_and_the_maps(tmp_path):
    table = section("## The picture")
    rows = re.findall(r"^\| `(.)` \| [a-z -]+ `(#[0-9a-f]{6})`(, hatched)? \| (.*) \|$", table, re.M)
    assert len(rows) == 7
    assert [hatched for _, _, hatched, _ in rows] == ["", "", "", ", hatched", ", hatched", ", hatched", ", hatched"]
    assert [mark for mark, _, _, _ in rows] == [".", "f", "w", "s", "b", "x", "U"]
    rows = [(mark, colour, said) for mark, colour, _, said in rows]
    _, run, _ = every_mark(tmp_path, "card")
    lines = run.cache_report().splitlines()
    key, reminder = lines[-5:-1], lines[-1]  # the key, over four lines, then the reminder
    assert reminder == "(fills are seen a page, 64 lines, at a time)"
    assert key[0].startswith("key: ") and all(line.startswith("     ") for line in key[1:])
    pairs = [part.split(" ", 1) for line in key for part in line[len("key: "):].split("   ")]
    assert [mark for mark, _ in pairs] == [mark for mark, _, _ in rows]
    for (_, words), (_, _, said) in zip(pairs, rows):
        assert said.startswith(words)
    svg = ET.parse(run.cache_map(tmp_path / "map.svg")).getroot()
    patterns = {f"url(#{p.get('id')})": p for p in svg.iter(SVG + "pattern")}
    shapes = list(svg)
    legend = []
    for i, shape in enumerate(shapes):
        if shape.tag == SVG + "rect" and shape.get("width") == "12":
            fill = shape.get("fill")
            hatched = fill in patterns
            if hatched:
                assert patterns[fill].find(SVG + "line") is not None
                fill = patterns[fill].find(SVG + "rect").get("fill")
            legend.append((fill, hatched, shapes[i + 1].text))
    assert legend == [
        (colour, mark in "sbxU", f"{words}: \u201c{mark}\u201d in the text form")
        for (_, words), (mark, colour, _) in zip(pairs, rows)
    ]
    assert "At the end come the key, over four lines, and a reminder" in prose()
    assert "In the map the key gives each colour's mark in the text form too, in quotes" in prose()
    assert "(`written, never flushed: \u201cU\u201d in the text form`)" in prose()
    assert legend[-1][2] == "written, never flushed: \u201cU\u201d in the text form"
    assert "the four mistakes are hatched as well" in page()
    offsets = [t.text for t in svg.iter(SVG + "text") if t.get("text-anchor") == "end"]
    assert offsets == ["0", "4096", "8192", "12288", "0"]  # each row's byte offset
    cells = [r for r in svg.iter(SVG + "rect") if r.find(SVG + "title") is not None]
    assert cells[0].find(SVG + "title").text == "line 0: read before an invalidate: stale on a card"
    assert len(cells) == 256 + 1


def test_the_stale_flush_line_is_b_and_the_rest_of_its_page_dot(tmp_path):
    source = example("flush-wrote-stale-bytes")[0]
    _, run, _ = run_source(tmp_path, source, mode="strict")
    said = "  b" + "." * 63 + "\n  1 flushed with stale bytes the thread never wrote; 63 not touched\n"
    assert said in run.cache_report()
    assert "`data`'s first line is `b` and\nthe 63 others are `.`." in page()
    assert "and the picture\nmarks the line `b`." in page()
    # b is found in strict mode only: in card mode the same line is w
    _, card, _ = run_source(tmp_path, source, mode="card")
    assert "  w" + "f" * 63 + "\n  1 written and flushed; 63 fresh from DRAM\n" in card.cache_report()
    assert "so `b` is found in strict mode only. In\ncard mode the same thread's line is `w`" in page()
    [row] = [line for line in section("## The picture").splitlines() if line.startswith("| `b` |")]
    assert row.endswith("(strict mode only) |")


def test_the_map_is_as_wide_as_its_text_needs(tmp_path):
    source, _ = example("invalidate-dropped-writes")
    widths = []
    for name in ("data", "d" * 120):
        _, run, _ = run_source(tmp_path, source, regions={name: np.arange(1024, dtype=np.uint32)})
        svg = ET.parse(run.cache_map(tmp_path / "map.svg")).getroot()
        widths.append(int(svg.get("width")))
    assert widths[1] > widths[0] and widths[1] > 7 * 120
    assert "the map is as wide as its longest title or finding line needs" in prose()


def test_a_line_written_flushed_then_written_again_shows_unflushed(tmp_path):
    text = C % "    kmx_invalidate(0);\n    data[0] = 7;\n    kmx_flush(0);\n    data[0] = 8;\n"
    _, run, _ = run_source(tmp_path, text)
    assert "  U" + "f" * 63 + "\n" in run.cache_report()


def test_the_picture_waits_for_stop_and_wants_an_svg(tmp_path):
    source = tmp_path / "example.c"
    source.write_text(example("unflushed-write")[0])
    program = km.Program("example", kernels=KERNELS)
    program.thread(cluster=1, sources=[source], regions={"data": 4096})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)
        with km.Session() as session:
            run = session.load(program)
            with pytest.raises(RuntimeError) as caught:
                run.cache_report()
            message = str(caught.value)
            with pytest.raises(RuntimeError, match=r"^run\.cache_map\(\) comes after run\.stop\(\)"):
                run.cache_map(tmp_path / "map.svg")
            run.thread_result(timeout=10.0)
            run.stop()
            with pytest.raises(ValueError):
                run.cache_map(tmp_path / "map.png")
    assert message == "run.cache_report() comes after run.stop(), when every line's story is complete"
    said = " ".join(section("## The picture").split())
    assert f"`RuntimeError: {message}`" in said


# -- what is approximate ---------------------------------------------------------------------

def test_a_read_before_the_invalidate_is_seen_a_line_at_a_time(tmp_path):
    text = C % "    uint32_t x = data[1] + data[700];\n    kmx_invalidate(0);\n    kmx_result(0, &x, 1);\n"
    _, run, _ = run_source(tmp_path, text, regions={"data": np.arange(2048, dtype=np.uint32)})
    [finding] = run.findings
    assert finding.kind == "read-before-invalidate" and (finding.start, finding.end) == (0, 2816)
    assert "(bytes 0 to 2815)" in finding.message  # from its first line to its last
    assert "  s" + "f" * 42 + "s" + "f" * 20 + "\n  " + "." * 64 + "\n" in run.cache_report()


def test_a_read_of_a_page_already_written_is_not_checked(tmp_path):
    text = C % (
        "    uint32_t seven = 7;\n    data[0] = seven;\n    kmx_result(1, &seven, 1);\n"
        "    uint32_t x = data[1];\n    kmx_result(0, &x, 1);\n    kmx_flush(0);\n"
    )
    results, run, _ = run_source(tmp_path, text, mode="strict")
    assert results[-1].words[0] == STALE  # a stale read ...
    assert "read-before-invalidate" not in [f.kind for f in run.findings]  # ... not found


def test_a_store_of_a_lines_own_value_counts_as_clean(tmp_path):
    text = C % "    kmx_invalidate(0);\n    data[5] = 5;\n    kmx_invalidate(0);\n"
    _, run, _ = run_source(tmp_path, text)
    assert run.findings == []  # a card would mark it dirty, and lose nothing
    text = C % "    kmx_invalidate(0);\n    data[5] = 6;\n    kmx_invalidate(0);\n"
    _, run, _ = run_source(tmp_path, text)
    assert [f.kind for f in run.findings] == ["invalidate-dropped-writes"]


def test_the_stale_flush_check_knows_the_bytes_the_thread_wrote(tmp_path):
    # a byte a line: the other 63 bytes of each line go stale, from byte 1
    text = C % (
        "    uint8_t* bytes = (uint8_t*)data;\n    for (int i = 0; i < 4096; i += 64) {\n"
        "        bytes[i] = 7;\n    }\n    kmx_flush(0);\n"
    )
    _, run, _ = run_source(tmp_path, text, mode="strict")
    [finding] = run.findings
    assert finding.kind == "flush-wrote-stale-bytes" and (finding.start, finding.end) == (1, 4096)
    assert run.thread.read("data")[:4].tolist() == [7, 0xA5, 0xA5, 0xA5]
    # a byte in each word of one line: the stale bytes between them count, and the line is b
    text = C % (
        "    uint8_t* bytes = (uint8_t*)data;\n    for (int i = 0; i < 64; i += 4) {\n"
        "        bytes[i] = 7;\n    }\n    kmx_flush(0);\n"
    )
    _, run, _ = run_source(tmp_path, text, mode="strict")
    [finding] = run.findings
    assert finding.kind == "flush-wrote-stale-bytes" and (finding.start, finding.end) == (1, 64)
    assert "  b" + "." * 63 + "\n" in run.cache_report()
    # the thread's own 0xA5A5A5A5, in a line it wrote whole, is its own: no finding
    text = C % "    for (int i = 0; i < 15; i++) {\n        data[i] = 7;\n    }\n    data[15] = 0xA5A5A5A5u;\n    kmx_flush(0);\n"
    _, run, _ = run_source(tmp_path, text, mode="strict")
    assert run.findings == []
    # where Python's data was 0xA5 too, the bytes the thread did not write still count
    text = C % "    data[0] = 7;\n    kmx_flush(0);\n"
    python = np.full(1024, STALE, dtype=np.uint32)
    _, run, _ = run_source(tmp_path, text, mode="strict", regions={"data": python})
    [finding] = run.findings
    assert finding.kind == "flush-wrote-stale-bytes" and (finding.start, finding.end) == (4, 64)
    assert "a thread that writes one `uint8_t` in each line of a region gets a finding from byte 1" in prose()
    assert "A stale byte where Python's data was `0xA5` too counts as well" in prose()
