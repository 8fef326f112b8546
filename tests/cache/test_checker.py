"""The coherence checker and strict mode, through the public API: each kind of finding
from a small C thread (kind, region, source line), strict mode's wrong numbers for the
lesson's two mistakes, the warnings at stop, and the picture."""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT

LESSON = ROOT / "tutorial" / "35_sharing_memory"
TRIPLE = (LESSON / "thread" / "triple.c").read_text()
NUMBERS = np.arange(1024, dtype=np.uint32)


def run_source(tmp_path, text, *, mode="card", regions=None, cores=1, words=(), name="thread.c", cache="unbounded"):
    source = tmp_path / name
    source.write_text(text)
    program = km.Program("checker", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[source], regions=regions if regions is not None else
                   {"numbers": NUMBERS, "tripled": NUMBERS.nbytes}, cores=cores, words=words)
    with km.Session(coherence=mode, cache=cache) as session:
        run = session.load(program)
        results = []
        try:
            while True:
                results.append(run.thread_result(timeout=30))
                if results[-1].final:
                    break
        finally:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                run.stop()
    return run, results, caught


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# -- the lesson, and its two mistakes --------------------------------------------------------

@pytest.mark.parametrize("mode", ["card", "strict"])
def test_the_lesson_is_right_and_has_no_findings_in_both_modes(tmp_path, mode):
    run, _, caught = run_source(tmp_path, TRIPLE, mode=mode)
    assert (run.thread.read("tripled").view(np.uint32) == 3 * NUMBERS).all()
    assert run.findings == [] and caught == []


def test_without_the_invalidate_strict_mode_reads_stale_bytes(tmp_path):
    text = TRIPLE.replace("    kmx_invalidate(0);\n", "")
    run, _, caught = run_source(tmp_path, text, mode="strict")
    tripled = run.thread.read("tripled").view(np.uint32)
    assert (tripled == np.uint32(3 * 0xA5A5A5A5 % 2**32)).all()  # stale bytes, tripled
    [finding] = run.findings
    assert (finding.kind, finding.region, finding.region_id) == ("read-before-invalidate", "numbers", 0)
    assert (finding.start, finding.end) == (0, NUMBERS.nbytes)
    assert finding.file.endswith("thread.c") and finding.line == line_of(text, "3 * numbers[i]")
    assert "kmx_invalidate(0)" in finding.message
    [warning] = caught
    assert warning.category is km.CoherenceWarning
    assert warning.filename == finding.file and warning.lineno == finding.line


def test_without_the_invalidate_card_mode_is_right_by_luck_and_says_so(tmp_path):
    text = TRIPLE.replace("    kmx_invalidate(0);\n", "")
    run, _, _ = run_source(tmp_path, text, mode="card")
    assert (run.thread.read("tripled").view(np.uint32) == 3 * NUMBERS).all()
    assert [f.kind for f in run.findings] == ["read-before-invalidate"]


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_without_the_flush_the_write_line_is_named(tmp_path, mode):
    text = TRIPLE.replace("    kmx_flush(1);\n", "")
    run, _, _ = run_source(tmp_path, text, mode=mode)
    tripled = run.thread.read("tripled").view(np.uint32)
    if mode == "strict":
        assert (tripled == 0).all()  # never reached DRAM
    else:
        assert (tripled == 3 * NUMBERS).all()  # the library's hand-back saved it
    [finding] = run.findings
    assert (finding.kind, finding.region, finding.region_id) == ("unflushed-write", "tripled", 1)
    assert finding.line == line_of(text, "3 * numbers[i]") and finding.core == 0
    assert "kmx_flush(1)" in finding.message and "when the thread ended" in finding.message
    assert ("Nothing hands them back in strict mode" in finding.message) == (mode == "strict")


# -- each kind, from a thread of its own -------------------------------------------------------

DROPS = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    uint32_t* out = (uint32_t*)kmx_region(0, &bytes);
    for (uint64_t i = 0; i < bytes / 4; i++) out[i] = 7;
    kmx_invalidate(0); /* drops the writes */
    kmx_flush(0);
    return 0;
}
"""


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_an_invalidate_that_drops_writes(tmp_path, mode):
    run, _, _ = run_source(tmp_path, DROPS, mode=mode, regions={"out": 8192})
    assert (run.thread.read("out") == 0).all()  # lost in both modes
    [finding] = run.findings
    assert (finding.kind, finding.region) == ("invalidate-dropped-writes", "out")
    assert finding.line == line_of(DROPS, "drops the writes")
    assert (finding.start, finding.end) == (0, 8192)
    assert "written at line 6" in finding.message


PARTIAL = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    uint32_t* out = (uint32_t*)kmx_region(0, &bytes);
    for (uint64_t i = 0; i < bytes / 4; i += 16) out[i] = 1; /* one word a line */
    kmx_flush(0); /* writes the other fifteen back too */
    return 0;
}
"""


def test_a_flush_of_partly_written_stale_lines(tmp_path):
    data = np.full(1024, 5, dtype=np.uint32)
    run, _, _ = run_source(tmp_path, PARTIAL, mode="strict", regions={"out": data})
    out = run.thread.read("out").view(np.uint32).reshape(-1, 16)
    assert (out[:, 0] == 1).all() and (out[:, 1:] == 0xA5A5A5A5).all()  # Python's 5s are gone
    assert (data == 5).all()  # the caller's array is untouched
    kinds = {f.kind: f for f in run.findings}
    assert set(kinds) == {"flush-wrote-stale-bytes"}
    assert "b" * 64 in run.cache_report()  # every line went back with stale bytes
    finding = kinds["flush-wrote-stale-bytes"]
    assert finding.line == line_of(PARTIAL, "writes the other fifteen")
    assert (finding.start, finding.end) == (4, 4096)


def test_the_same_thread_in_card_mode_writes_only_its_words(tmp_path):
    data = np.full(1024, 5, dtype=np.uint32)
    run, _, _ = run_source(tmp_path, PARTIAL, mode="card", regions={"out": data})
    out = run.thread.read("out").view(np.uint32).reshape(-1, 16)
    assert (out[:, 0] == 1).all() and (out[:, 1:] == 5).all()
    assert run.findings == []  # nothing stale to write back in card mode (docs say so)


SUBMITS = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    uint32_t* out = (uint32_t*)kmx_region(0, &bytes);
    kmx_invalidate(0);
    out[0] = 1;
    kmx_submit(); /* out is still dirty */
    kmx_flush(0);
    return 0;
}
"""


def test_a_submit_with_unflushed_writes(tmp_path):
    run, results, _ = run_source(tmp_path, SUBMITS, regions={"out": 64})
    assert [r.final for r in results] == [False, True]
    [finding] = run.findings
    assert finding.kind == "unflushed-write" and finding.line == line_of(SUBMITS, "out[0] = 1")
    assert f"kmx_submit at line {line_of(SUBMITS, 'still dirty')}" in finding.message
    assert "Call kmx_flush(0) before kmx_submit()" in finding.message
    assert (finding.start, finding.end) == (0, 64)


MEMCPY = r"""
#include "kmx.h"
void* memcpy(void*, const void*, unsigned long);
int kmx_main(int core) {
    uint64_t bytes;
    uint32_t* out = (uint32_t*)kmx_region(0, &bytes);
    uint32_t here[32] = {1, 2, 3};
    memcpy(out, here, sizeof here); /* the write, inside the runtime's memcpy */
    return 0;
}
"""


def test_a_write_inside_memcpy_names_the_callers_line(tmp_path):
    run, _, _ = run_source(tmp_path, MEMCPY, regions={"out": 4096})
    [finding] = run.findings
    assert finding.kind == "unflushed-write" and finding.line == line_of(MEMCPY, "inside the runtime")


ALL_CORES = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    uint32_t* x = (uint32_t*)kmx_region(0, &bytes);
    uint64_t n = bytes / 4, share = n / 4;
    uint32_t sum = 0;
    for (uint64_t i = core * share; i < (core + 1) * share; i++) sum += x[i]; /* no invalidate */
    kmx_result(core, &sum, 1);
    kmx_barrier();
    if (core == 2) kmx_invalidate(0);
    return 0;
}
"""


def test_once_per_region_and_kind_with_the_first_cores_bytes_and_the_others(tmp_path):
    run, _, caught = run_source(tmp_path, ALL_CORES, regions={"x": np.ones(4096, np.uint32)}, cores=4)
    [finding] = run.findings
    assert finding.kind == "read-before-invalidate" and finding.core == 0
    assert (finding.start, finding.end) == (0, 16384)  # what every core read: the four quarters
    assert finding.cores == ((0, 0, 4096), (1, 4096, 8192), (2, 8192, 12288), (3, 12288, 16384))
    assert "core 0 read region 'x' (bytes 0 to 4095)" in finding.message
    assert ("Core 1 (bytes 4096 to 8191), core 2 (bytes 8192 to 12287) and core 3 (bytes 12288 to 16383) read "
            "it before the invalidate too.") in finding.message
    assert [str(w.message) for w in caught] == [f"unpredictable on a card: {finding.message}"]


WRITERS = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    uint32_t* x = (uint32_t*)kmx_region(0, &bytes);
    if (core == 0) kmx_invalidate(0);
    kmx_barrier();
    uint64_t share = bytes / 4 / 4;
    for (uint64_t i = core * share; i < (core + 1) * share; i++) x[i] = (uint32_t)i + 1; /* no flush */
    return 0;
}
"""


@pytest.mark.parametrize("coherence", ["card", "strict"])
def test_every_core_that_left_its_writes_unflushed_is_named_with_its_bytes(tmp_path, coherence):
    run, _, _ = run_source(tmp_path, WRITERS, regions={"prefix": 32768}, cores=4, mode=coherence)
    [finding] = [f for f in run.findings if f.kind == "unflushed-write"]
    assert (finding.start, finding.end, finding.core) == (0, 32768, 0)
    assert finding.cores == ((0, 0, 8192), (1, 8192, 16384), (2, 16384, 24576), (3, 24576, 32768))
    assert finding.message.startswith(
        "cores 0, 1, 2 and 3 wrote region 'prefix' (all 32768 bytes: core 0 bytes 0 to 8191, core 1 bytes 8192 to "
        "16383, core 2 bytes 16384 to 24575 and core 3 bytes 24576 to 32767) at line 9, and the lines were still dirty")
    assert "cores 0, 1, 2 and 3 of cluster 1" in repr(finding)


QUARTERS = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    const uint8_t* x = (const uint8_t*)kmx_region(0, &bytes);
    uint64_t share = bytes / 4;
    uint32_t sum = 0;
    for (uint64_t i = core * share; i < (core + 1) * share; i++) sum += x[i]; /* no invalidate */
    kmx_result(core, &sum, 1);
    return 0;
}
"""


def test_a_finding_names_the_lines_its_core_read_everywhere_it_is_shown(tmp_path):
    """Four cores each read their own quarter of 10,000 bytes: the finding's message names
    core 0's lines (bytes 0 to 2499, to the end of their last line), then the others', in
    run.findings, the warning, the trace and the story alike; its fields, all of them."""
    source = tmp_path / "quarters.c"
    source.write_text(QUARTERS)
    program = km.Program("quarters", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[source], regions={"data": np.arange(10000, dtype=np.uint32).astype(np.uint8)},
                   cores=4)
    trace = tmp_path / "trace.json"
    with km.Session(trace=trace) as session:
        run = session.load(program)
        while not run.thread_result(timeout=60).final:
            pass
        with pytest.warns(km.CoherenceWarning) as warned:
            run.stop()
    [finding] = run.findings
    assert finding.core == 0 and (finding.start, finding.end) == (0, 10000)
    assert [n for n, _, _ in finding.cores] == [0, 1, 2, 3] and finding.cores[-1][2] == 10000
    first_end = finding.cores[0][2]
    assert 2500 <= first_end <= 2500 + 63
    said = f"core 0 read region 'data' (bytes 0 to {first_end - 1})"
    assert said in finding.message and "all 10000 bytes" not in finding.message
    assert re.search(r"Core 1 \(bytes 24\d\d to 50\d\d\), core 2 \(bytes 49\d\d to 75\d\d\) and core 3 "
                     r"\(bytes 74\d\d to 9999\) read it before the invalidate too\.", finding.message), finding.message
    assert [str(w.message) for w in warned] == [f"unpredictable on a card: {finding.message}"]
    import json
    events = [e for e in json.loads(trace.read_text())["traceEvents"] if e["name"] == "finding: read-before-invalidate"]
    assert [e["args"]["message"] for e in events] == [finding.message]
    assert events[0]["args"]["cores"].startswith(f"0 (bytes 0 to {first_end - 1}), 1 (bytes ")
    page = run.cache_story(tmp_path / "story.html").read_text()
    assert said in page


# -- the picture ----------------------------------------------------------------------------------

def test_the_report_and_the_map_show_each_lines_story(tmp_path):
    text = TRIPLE.replace("    kmx_invalidate(0);\n", "").replace("    kmx_flush(1);\n", "")
    run, _, _ = run_source(tmp_path, text, mode="strict")
    report = run.cache_report()
    assert "region 'numbers' (ID 0, 4096 bytes, 64 lines, strict mode)\n  " + "s" * 64 in report
    assert "region 'tripled' (ID 1, 4096 bytes, 64 lines, strict mode)\n  " + "U" * 64 in report
    assert "64 read before an invalidate" in report and "64 written, never flushed" in report
    assert "finding: read-before-invalidate in region 'numbers' (bytes 0 to 4095) at thread.c:15, core 0" in report
    path = run.cache_map(tmp_path / "map.svg")
    svg = ET.parse(path).getroot()
    fills = [r.get("fill") for r in svg.iter("{http://www.w3.org/2000/svg}rect")]
    assert fills.count("url(#hatch3)") == 64 + 1  # the lines of numbers, and the key
    assert fills.count("url(#hatch6)") == 64 + 1
    texts = " ".join(t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}text"))
    assert "written, never flushed" in texts and "finding: unflushed-write" in texts


def test_a_big_region_is_drawn_a_cell_for_several_lines(tmp_path):
    run, _, _ = run_source(tmp_path, TRIPLE, regions={"numbers": np.zeros(1 << 18, np.uint32), "tripled": 1 << 20})
    report = run.cache_report()
    assert "one mark for every 64 lines" in report
    svg = ET.parse(run.cache_map(tmp_path / "big.svg")).getroot()
    cells = [r for r in svg.iter("{http://www.w3.org/2000/svg}rect") if r.find("{http://www.w3.org/2000/svg}title") is not None]
    assert len(cells) == 2 * 64 * 32


def test_the_picture_waits_for_stop_and_wants_an_svg_path(tmp_path):
    source = tmp_path / "t.c"
    source.write_text(TRIPLE)
    program = km.Program("p", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[source], regions={"numbers": NUMBERS, "tripled": 4096})
    with km.Session() as session:
        run = session.load(program)
        with pytest.raises(RuntimeError, match="after run.stop"):
            run.cache_report()
        run.thread_result(timeout=30)
        run.stop()
        with pytest.raises(ValueError, match=r"must end in \.svg"):
            run.cache_map(tmp_path / "map.png")
        with pytest.raises(TypeError, match="file path"):
            run.cache_map(3)


REWRITE = r"""
#include "kmx.h"
int kmx_main(int core) {
    volatile uint32_t* data = (volatile uint32_t*)kmx_region(0, 0);
    data[0] = 7;     /* flushed below */
    kmx_flush(0);
    data[1] = 8;     /* the write left dirty */
    return 0;
}
"""


def test_a_finding_names_the_write_since_the_last_flush_not_the_first_ever(tmp_path):
    run, _, _ = run_source(tmp_path, REWRITE, regions={"data": 64})
    [finding] = run.findings
    assert finding.kind == "unflushed-write" and finding.line == line_of(REWRITE, "left dirty")


UNALIGNED = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    volatile uint8_t* data = (volatile uint8_t*)kmx_region(0, &bytes);
    for (uint64_t i = 0; i < 36; i++) data[i] = 9;  /* the region's first line, whole */
    data[40] = 9;  /* and one byte of its second: the rest of that line stays stale */
    kmx_flush(0);
    return 0;
}
"""


def test_stale_bytes_are_counted_from_the_regions_own_start(tmp_path):
    # 100 bytes: the region starts 28 bytes into a line whose first 28 bytes are not its
    # own (stale 0xA5 in strict mode, 0 in DRAM); they must not count as the thread's.
    run, _, _ = run_source(tmp_path, UNALIGNED, mode="strict", regions={"data": np.zeros(100, np.uint8)})
    [finding] = run.findings
    assert finding.kind == "flush-wrote-stale-bytes" and (finding.start, finding.end) == (36, 100)
    whole = UNALIGNED.replace("i < 36", "i < bytes").replace("    data[40] = 9;", "    data[40] = 8;")
    run, _, _ = run_source(tmp_path, whole, mode="strict", regions={"data": np.zeros(100, np.uint8)})
    assert run.findings == [] and "\n  ww\n" in run.cache_report()  # no "b" mark


# -- writes a kmx call makes on the thread's behalf ---------------------------------------------

KMX_WRITES = """
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    uint64_t* d = (uint64_t*)kmx_region(0, 0);
    kmx_region(0, d + 100);
    return 0;
}
"""


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_a_kmx_calls_unflushed_write_is_named_at_the_callers_line(tmp_path, mode):
    """kmx_region(id, bytes) stores the size through BYTES, here into a region: the store is
    the thread's, made at its kmx_region line, and never flushed."""
    run, _, _ = run_source(tmp_path, KMX_WRITES, mode=mode, regions={"d": 4096})
    [finding] = run.findings
    assert finding.kind == "unflushed-write" and (finding.start, finding.end) == (768, 832)
    assert finding.line == line_of(KMX_WRITES, "kmx_region(0, d + 100)") and finding.core == 0


def test_every_kind_of_finding_has_its_category():
    from komorebi.sim.cache.checker import CATEGORIES, KINDS

    assert set(CATEGORIES) == set(KINDS) and set(CATEGORIES.values()) == {km.Category.UNPREDICTABLE}


def test_an_error_inside_the_checker_is_a_fault_not_silence(tmp_path, monkeypatch):
    """The checker hears of a read before any invalidate after the engine's hook that saw
    it (sim/cache/events.py): an exception it raises is the simulator's failure, said as
    such, where it was raised."""
    from komorebi.sim.cache.checker import Checker

    def broken(self, region, page, core, site):
        raise ValueError("broken on purpose")

    monkeypatch.setattr(Checker, "_read_before_invalidate", broken)
    text = TRIPLE.replace("    kmx_invalidate(0);\n", "")
    with pytest.raises(km.ThreadFault, match=r"the simulator failed: ValueError\('broken on purpose'\)") as caught:
        run_source(tmp_path, text)
    assert caught.value.category is km.Category.SIMULATOR  # (the simulator's failure, not the thread's)


STALE_IN_RESULTS_OUT = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    uint64_t bytes;
    const uint32_t* in = (const uint32_t*)kmx_region(0, &bytes);
    uint32_t* out = (uint32_t*)kmx_region(1, 0);
    for (uint64_t i = 0; i < bytes / 4; i++) /* no invalidate first: in strict mode, stale words */
        out[i] = in[i] * 1;
    kmx_flush(1);
    return 0;
}
"""


def test_results_computed_from_stale_bytes_are_the_threads_own_writes(tmp_path):
    """Strict mode: the thread reads stale 0xA5 words (the read-before-invalidate mistake)
    and writes every byte of its results from them: the flush of the results writes no
    stale byte, and there is no second finding telling it to invalidate the results."""
    run, _, _ = run_source(tmp_path, STALE_IN_RESULTS_OUT, mode="strict",
                           regions={"in": np.arange(1024, dtype=np.uint32), "out": 4096})
    assert [(f.kind, f.region) for f in run.findings] == [("read-before-invalidate", "in")]
    assert (run.thread.read("out").view(np.uint32) == 0xA5A5A5A5).all()  # (the stale words, the thread's)
