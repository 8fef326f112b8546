"""The checker misses no stale read (sim/native/watch.c): a page with a stale line is
watched an access at a time, so a read of stale bytes is found on any page, also one the
thread wrote first, by scalar code and by the vector unit, at the reading line."""

from __future__ import annotations

import numpy as np
import pytest

from tests.cache.test_checker import line_of, run_source

STUDENT = """#include <kmx.h>
#include <stdint.h>

int kmx_main(int core) {
    uint32_t *buf = (uint32_t *)kmx_region(0, 0);
    buf[0] = 0;
    uint32_t sum = 0;
    for (int i = 1; i < 1024; i++)
        sum += buf[i]; /* the sum */
    kmx_print("sum = %u\\n", sum);
    return sum;
}
"""
ONES = {"buf": np.ones(1024, np.uint32)}


def test_the_students_thread_gets_a_stale_read_at_its_summing_line(tmp_path):
    run, [result], _ = run_source(tmp_path, STUDENT, mode="strict", regions=ONES)
    assert result.code % 2**32 == 4042321499  # 1023 stale words: the strict mode answer
    kinds = {f.kind: f for f in run.findings}
    assert set(kinds) == {"stale-read", "unflushed-write"}
    stale = kinds["stale-read"]
    assert (stale.region, stale.start, stale.end) == ("buf", 4, 4096)
    assert stale.line == line_of(STUDENT, "/* the sum */") and stale.file.endswith("thread.c")
    assert "kmx_invalidate(0)" in stale.message and "bytes 4 to 4095" in stale.message


def test_with_the_invalidate_the_sum_is_right_and_nothing_is_stale(tmp_path):
    text = STUDENT.replace("    buf[0] = 0;\n", "    kmx_invalidate(0);\n    buf[0] = 0;\n")
    run, [result], _ = run_source(tmp_path, text, mode="strict", regions=ONES)
    assert "stale-read" not in {f.kind for f in run.findings}
    assert [f.kind for f in run.findings] == ["unflushed-write"]


def test_card_mode_has_no_stale_lines(tmp_path):
    run, _, _ = run_source(tmp_path, STUDENT, mode="card", regions=ONES)
    assert "stale-read" not in {f.kind for f in run.findings}


def test_bytes_the_thread_wrote_are_not_stale_the_rest_of_their_line_is(tmp_path):
    text = """#include <kmx.h>
#include <stdint.h>

int kmx_main(int core) {
    uint32_t *buf = (uint32_t *)kmx_region(0, 0);
    for (int i = 0; i < 1024; i += 16)
        buf[i] = 7; /* one word a line */
    uint32_t sum = 0;
    for (int i = 0; i < 1024; i += 16)
        sum += buf[i]; /* its own writes */
    uint32_t more = buf[17]; /* a stale word */
    return sum == 64 * 7 && more == 0xA5A5A5A5u;
}
"""
    run, [result], _ = run_source(tmp_path, text, mode="strict", regions=ONES)
    assert result.code == 1
    [stale] = [f for f in run.findings if f.kind == "stale-read"]
    assert stale.line == line_of(text, "/* a stale word */")
    assert (stale.start, stale.end) == (68, 128)  # the stale bytes of the line it read


def test_a_page_read_first_keeps_its_read_before_invalidate_and_no_second_finding(tmp_path):
    text = """#include <kmx.h>
#include <stdint.h>

int kmx_main(int core) {
    volatile uint32_t *buf = (volatile uint32_t *)kmx_region(0, 0);
    uint32_t first = buf[5]; /* the first read */
    buf[0] = first;
    return buf[9] == 0xA5A5A5A5u;
}
"""
    run, [result], _ = run_source(tmp_path, text, mode="strict", regions=ONES)
    assert result.code == 1
    kinds = [(f.kind, f.line) for f in run.findings if f.kind != "unflushed-write"]
    assert kinds == [("read-before-invalidate", line_of(text, "/* the first read */"))]


@pytest.mark.parametrize("pages", [1, 3])
def test_the_vector_unit_reads_stale_lines_on_a_page_it_wrote_first(tmp_path, pages):
    """clang vectorises the sum (-O2, the card's target): the vector unit's loads are watched too."""
    n = 1024 * pages
    text = STUDENT.replace("i < 1024", f"i < {n}")
    run, _, _ = run_source(tmp_path, text, mode="strict", regions={"buf": np.ones(n, np.uint32)})
    found = {f.kind: f for f in run.findings}
    stale = found["stale-read"]  # the page written first
    assert (stale.start, stale.end) == (4, 4096)
    assert stale.line == line_of(STUDENT, "/* the sum */")
    if pages > 1:  # the pages read before any write: the finding at the first read covers them
        before = found["read-before-invalidate"]
        assert (before.start, before.end, before.line) == (4096, 4096 * pages, stale.line)


def test_a_line_flush_of_a_partly_written_stale_line_writes_stale_bytes(tmp_path):
    text = """#include <kmx.h>
#include <kmx_cache.h>
#include <stdint.h>

int kmx_main(int core) {
    uint32_t *buf = (uint32_t *)kmx_region(0, 0);
    buf[0] = 7;
    kmx_cache_flush_line(buf); /* the flush */
    return 0;
}
"""
    run, _, _ = run_source(tmp_path, text, mode="strict", regions=ONES)
    out = run.thread.read("buf").view(np.uint32)
    assert out[0] == 7 and (out[1:16] == 0xA5A5A5A5).all() and (out[16:] == 1).all()
    [finding] = run.findings
    assert finding.kind == "flush-wrote-stale-bytes"
    assert (finding.start, finding.end) == (4, 64)
    assert finding.message.startswith("a line flush (CCACHE0_FLUSH64) at line")
    assert finding.line == line_of(text, "/* the flush */")
