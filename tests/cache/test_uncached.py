"""The uncached alias (0x0000_3000_0000 plus the offset in the cluster's DRAM): loads and
stores reach DRAM past the cache, and the cache does not see them, nor they the cache,
exactly as on a card; a line touched through both aliases is a mixed-alias finding with
both source lines (sim/native/watch.c)."""

from __future__ import annotations

import numpy as np
import pytest

import komorebi as km
from tests.cache.test_checker import line_of, run_source

HEAD = """#include <kmx.h>
#include <kmx_cache.h>
#include <stdint.h>

int kmx_main(int core) {
    if (core != 0)
        return 0;
    volatile uint32_t *cached = (volatile uint32_t *)kmx_region(0, 0);
    volatile uint32_t *uncached = (volatile uint32_t *)kmx_region_uncached(0);
    (void)cached;
    (void)uncached;
"""
TAIL = """}
"""
NUMBERS = np.arange(1024, dtype=np.uint32)
REGIONS = {"numbers": NUMBERS}


def run(tmp_path, body, mode="card", regions=None):
    return run_source(tmp_path, HEAD + body + TAIL, mode=mode, regions=regions or REGIONS)


def dram(run_) -> np.ndarray:
    return run_.thread.read("numbers").view(np.uint32)


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_the_uncached_alias_reads_dram_past_the_cache(tmp_path, mode):
    body = """    uint32_t sum = 0;
    for (int i = 0; i < 1024; i++)
        sum += uncached[i];
    return sum == 1023 * 1024 / 2;
"""
    done, [result], _ = run(tmp_path, body, mode)
    assert result.code == 1  # Python's numbers, also in strict mode, where the cache is stale
    assert done.findings == []


def test_kmx_region_uncached_is_the_cached_address_less_0x4000_0000_0000(tmp_path):
    body = """    return (uintptr_t)cached - (uintptr_t)uncached == 0x400000000000ull
        && (uintptr_t)uncached >= 0x30000000ull && (uintptr_t)uncached < 0x130000000ull;
"""
    _, [result], _ = run(tmp_path, body)
    assert result.code == 1


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_a_store_there_is_not_seen_by_a_cached_read_of_a_line_the_cache_holds(tmp_path, mode):
    body = """    kmx_invalidate(0);
    uint32_t before = cached[3]; /* the line is now in the cache */
    uncached[3] = 77; /* to DRAM, past it */
    uint32_t after = cached[3]; /* still the cache's */
    kmx_cache_flush_line((const void *)&cached[0]); /* dropped: the next read fills from DRAM */
    uint32_t flushed = cached[3];
    return before == 3 && after == 3 && flushed == 77;
"""
    done, [result], _ = run(tmp_path, body, mode)
    assert result.code == 1
    assert dram(done)[3] == 77
    kinds = {f.kind: f for f in done.findings}
    assert set(kinds) == {"mixed-alias", "stale-read"}
    text = HEAD + body
    stale = kinds["stale-read"]
    assert stale.line == line_of(text, "/* still the cache's */") and (stale.start, stale.end) == (12, 16)
    mixed = kinds["mixed-alias"]
    assert mixed.line == line_of(text, "/* to DRAM, past it */")
    assert f"at line {line_of(text, '/* the line is now in the cache */')}" in mixed.message


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_a_dirty_line_is_not_seen_by_an_uncached_read_until_it_is_flushed(tmp_path, mode):
    body = """    kmx_invalidate(0);
    cached[5] = 55; /* dirty in the cache */
    uint32_t before = uncached[5]; /* DRAM: the old number */
    kmx_flush(0);
    uint32_t after = uncached[5];
    return before == 5 && after == 55;
"""
    done, [result], _ = run(tmp_path, body, mode)
    assert result.code == 1
    assert dram(done)[5] == 55
    [mixed] = done.findings
    assert mixed.kind == "mixed-alias" and mixed.line == line_of(HEAD + body, "/* DRAM: the old number */")


def test_an_uncached_store_to_a_line_not_cached_is_read_by_the_next_fill(tmp_path):
    body = """    kmx_invalidate(0);
    uncached[700] = 9; /* not cached: DRAM */
    return cached[700] == 9 && cached[1] == 1;
"""
    done, [result], _ = run(tmp_path, body)
    assert result.code == 1 and dram(done)[700] == 9
    [mixed] = done.findings
    assert mixed.kind == "mixed-alias"


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_an_invalidate_makes_the_uncached_stores_visible(tmp_path, mode):
    body = """    kmx_invalidate(0);
    uint32_t before = cached[0];
    for (int i = 0; i < 1024; i++)
        uncached[i] = 2 * i;
    uint32_t stale = cached[10];
    kmx_invalidate(0);
    uint32_t fresh = cached[10];
    return before == 0 && stale == 10 && fresh == 20;
"""
    done, [result], _ = run(tmp_path, body, mode)
    assert result.code == 1
    assert (dram(done) == 2 * NUMBERS).all()


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_a_flush_writes_back_only_dirty_lines_over_uncached_stores(tmp_path, mode):
    """A clean line that an uncached store made stale is not written back by a flush; a
    dirty one is, whole, over what the uncached store wrote."""
    body = """    kmx_invalidate(0);
    uint32_t a = cached[0], b = cached[16]; /* lines 0 and 1 cached, clean */
    uncached[1] = 100; /* line 0, clean in the cache: DRAM keeps 100 */
    cached[17] = 200;  /* line 1 dirty */
    uncached[18] = 300; /* line 1: DRAM gets 300, but the dirty line goes back whole */
    kmx_flush(0);
    return a == 0 && b == 16;
"""
    done, [result], _ = run(tmp_path, body, mode)
    assert result.code == 1
    out = dram(done)
    assert out[1] == 100 and out[17] == 200 and out[18] == 18


def test_card_mode_hand_back_keeps_uncached_stores_to_clean_lines(tmp_path):
    body = """    kmx_invalidate(0);
    uint32_t a = cached[0];
    uncached[2] = 42;
    return a == 0;
"""
    done, [result], _ = run(tmp_path, body)
    assert result.code == 1 and dram(done)[2] == 42


def test_uncached_alone_has_no_findings_and_reaches_every_region(tmp_path):
    text = """#include <kmx.h>
#include <stdint.h>

int kmx_main(int core) {
    volatile uint32_t *a = (volatile uint32_t *)kmx_region_uncached(0);
    volatile uint32_t *b = (volatile uint32_t *)kmx_region_uncached(1);
    for (int i = 0; i < 1024; i++)
        b[i] = 3 * a[i];
    return 0;
}
"""
    done, _, caught = run_source(tmp_path, text, mode="strict")
    assert (done.thread.read("tripled").view(np.uint32) == 3 * NUMBERS).all()
    assert done.findings == [] and caught == []


def test_past_a_regions_end_the_uncached_alias_faults_as_the_cached_one(tmp_path):
    text = """#include <kmx.h>
#include <stdint.h>

int kmx_main(int core) {
    uint64_t bytes;
    kmx_region(0, &bytes);
    volatile uint8_t *a = (volatile uint8_t *)kmx_region_uncached(0);
    return a[bytes + 4096 * 4]; /* past the end */
}
"""
    with pytest.raises(km.ThreadFault) as caught:
        run_source(tmp_path, text)
    assert f"thread.c:{line_of(text, '/* past the end */')}" in str(caught.value)


def test_kmx_region_uncached_of_a_region_that_does_not_exist_is_0_as_kmx_regions(tmp_path):
    text = """#include <kmx.h>

int kmx_main(int core) {
    return kmx_region_uncached(7) == 0 && kmx_region(7, 0) == 0;
}
"""
    _, [result], _ = run_source(tmp_path, text)
    assert result.code == 1


def test_the_memory_models_mixed_alias_example_with_a_read_before_the_store(tmp_path):
    """The page: read data[1] once before the store, and the second read gets the cache's 1."""
    from tests.docs.test_memory_model_doc import example

    source, _ = example("mixed-alias")
    source = source.replace("    dram[1] = 7;\n", "    uint32_t before = ((volatile uint32_t*)data)[1];\n    (void)before;\n    dram[1] = 7;\n")
    regions = {"data": NUMBERS}
    for mode in ("card", "strict"):
        done, [result], _ = run_source(tmp_path, source, mode=mode, regions=regions)
        assert result.words[0] == 1
        assert {f.kind for f in done.findings} == {"mixed-alias", "stale-read"}
        assert done.thread.read("data").view(np.uint32)[1] == 7


def test_four_cores_write_through_the_uncached_alias_and_read_it_cached_after_an_invalidate(tmp_path):
    text = """#include <kmx.h>
#include <stdint.h>

int kmx_main(int core) {
    volatile uint32_t *out = (volatile uint32_t *)kmx_region_uncached(1);
    const uint32_t *in = (const uint32_t *)kmx_region(0, 0);
    if (core == 0)
        kmx_invalidate(0);
    kmx_barrier();
    for (int i = core; i < 1024; i += 4)
        out[i] = 3 * in[i];
    kmx_barrier();
    if (core != 0)
        return 0;
    kmx_invalidate(1);
    const uint32_t *check = (const uint32_t *)kmx_region(1, 0);
    uint32_t wrong = 0;
    for (int i = 0; i < 1024; i++)
        wrong += check[i] != 3 * in[i];
    return wrong;
}
"""
    done, results, _ = run_source(tmp_path, text, mode="strict", cores=4)
    assert results[-1].code == 0
    assert (done.thread.read("tripled").view(np.uint32) == 3 * NUMBERS).all()
    assert done.findings == []  # (the invalidate between the aliases: the lines start anew)


@pytest.mark.parametrize("cores", [1, 4])
def test_the_watchs_stop_leaves_the_instruction_count_exact(tmp_path, cores):
    """The same instructions through either alias count the same cycles: the stop that
    makes the region watched (sim/native/watch.c) cuts no block in two."""
    text = """#include <kmx.h>
#include <stdint.h>

int kmx_main(int core) {
    volatile uint32_t *p = (volatile uint32_t *)(UNCACHED ? kmx_region_uncached(0) : kmx_region(0, 0));
    uint64_t start = kmx_cycles();
    uint32_t sum = 0;
    for (int i = 0; i < 1024; i++) {
        p[i] = i;
        sum += p[(i * 7) % 1024];
    }
    uint64_t spent = kmx_cycles() - start;
    uint32_t words[2] = {(uint32_t)spent, sum};
    if (core == 0)
        kmx_result(0, words, 2);
    return 0;
}
"""
    spent = []
    for uncached in (0, 1):
        _, results, _ = run_source(tmp_path, f"#define UNCACHED {uncached}\n" + text, cores=cores,
                                   name=f"thread{uncached}.c")
        spent.append(int(results[-1].words[0]))
    assert spent[0] == spent[1] > 1024


def test_direct_a_page_written_after_an_uncached_store_keeps_it_in_dram(tmp_path):
    """Card mode (direct): an uncached store to a line not cached, then a cached write to
    another line of the page: DRAM keeps the uncached bytes, and only the written line is dirty."""
    body = """    kmx_invalidate(0);
    uncached[100] = 5;
    cached[0] = 1;
    uint32_t seen = uncached[100];
    kmx_flush(0);
    return seen;
"""
    done, [result], _ = run(tmp_path, body)
    assert result.code == 5 and dram(done)[100] == 5 and dram(done)[0] == 1


def test_two_cores_counting_a_stale_read_right_after_the_first_uncached_store(tmp_path):
    body = """    kmx_invalidate(0);
    uint32_t x = cached[0];
    uncached[0] = 1000; /* the first uncached access */
    uint32_t y = cached[0]; /* stale */
    return x == 0 && y == 0;
"""
    text = HEAD + body + TAIL
    done, results, _ = run_source(tmp_path, text, cores=2)
    assert results[-1].code == 1
    assert "stale-read" in {f.kind for f in done.findings}


def test_a_line_flushed_out_between_the_aliases_is_no_mixed_alias(tmp_path):
    body = """    kmx_invalidate(0);
    uint32_t other = uncached[1000]; /* (the region is watched line by line from here) */
    (void)other;
    cached[0] = 1;
    kmx_cache_flush_line((const void *)&cached[0]);
    uncached[0] = 2;
    kmx_cache_flush_line((const void *)&cached[0]);
    return cached[0];
"""
    done, [result], _ = run(tmp_path, body)
    assert result.code == 2 and done.findings == []
