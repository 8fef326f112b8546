"""The cache's registers as firmware uses them (kmx_runtime/kmx_cache.h, sim/native/watch.c):
a line flush through CCACHE0_FLUSH64 or FLUSH32 writes a dirty line back and drops it, so a
thread that keeps its regions in step only that way is right in strict mode exactly when
it would be on a card; an L2 flush leaves the line in the tile's L3; the other registers
and cflush.d.l1 are faults that say what to use."""

from __future__ import annotations

import numpy as np
import pytest

import komorebi as km
from tests.cache.test_checker import NUMBERS, line_of, run_source

FIRMWARE = """#include <kmx.h>
#include <kmx_cache.h>
#include <stdint.h>

int kmx_main(int core) {
    if (core != 0)
        return 0;
    uint64_t bytes;
    const uint32_t *numbers = (const uint32_t *)kmx_region(0, &bytes);
    uint32_t *tripled = (uint32_t *)kmx_region(1, 0);
    kmx_cache_flush_range(numbers, bytes); /* drop: the next reads are DRAM's */
    for (size_t i = 0; i < bytes / 4; i++)
        tripled[i] = 3 * numbers[i]; /* the loop */
    kmx_cache_flush_range(tripled, bytes); /* write back */
    return 0;
}
"""

FLUSH32 = """    for (uintptr_t p = (uintptr_t)tripled; p < (uintptr_t)tripled + bytes; p += 64)
        *(volatile uint32_t *)CCACHE0_FLUSH32 = (uint32_t)(p >> 4);
"""


def tripled(run) -> np.ndarray:
    return run.thread.read("tripled").view(np.uint32)


@pytest.mark.parametrize("mode", ["card", "strict"])
def test_a_thread_that_flushes_line_by_line_is_right_with_no_findings(tmp_path, mode):
    run, _, caught = run_source(tmp_path, FIRMWARE, mode=mode)
    assert (tripled(run) == 3 * NUMBERS).all()
    assert run.findings == [] and caught == []


def test_flush32_reaches_only_36_bit_addresses_so_not_the_regions(tmp_path):
    """FLUSH32 takes bits 35..4 of the address: a region's (0x4000_3000_0000 on) is cut
    short to an address of the uncached alias, which no cache holds: a fault that says so."""
    text = FIRMWARE.replace("    kmx_cache_flush_range(tripled, bytes); /* write back */\n", FLUSH32)
    with pytest.raises(km.ThreadFault) as caught:
        run_source(tmp_path, text, mode="strict")
    message = str(caught.value)
    assert "a 4-byte store to 0x2010240, CCACHE0_FLUSH32" in message
    assert "which names 0x3" in message and "an address of the uncached alias, whose lines no cache holds" in message
    assert "through CCACHE0_FLUSH64 (kmx_cache_flush_line)" in message
    assert f"thread.c:{line_of(text, 'CCACHE0_FLUSH32')}" in message


def test_without_the_line_flushes_before_reading_strict_mode_reads_stale_lines(tmp_path):
    text = FIRMWARE.replace("    kmx_cache_flush_range(numbers, bytes); /* drop: the next reads are DRAM's */\n", "")
    run, _, _ = run_source(tmp_path, text, mode="strict")
    assert (tripled(run) == np.uint32(3 * 0xA5A5A5A5 % 2**32)).all()
    assert [(f.kind, f.region, f.line) for f in run.findings] == [
        ("read-before-invalidate", "numbers", line_of(text, "/* the loop */"))]


def test_without_the_line_flushes_after_writing_the_writes_never_reach_dram(tmp_path):
    text = FIRMWARE.replace("    kmx_cache_flush_range(tripled, bytes); /* write back */\n", "")
    run, _, _ = run_source(tmp_path, text, mode="strict")
    assert (tripled(run) == 0).all()
    [finding] = run.findings
    assert (finding.kind, finding.region, finding.start, finding.end) == ("unflushed-write", "tripled", 0, 4096)


def test_flushing_half_the_lines_writes_back_exactly_those(tmp_path):
    text = FIRMWARE.replace("kmx_cache_flush_range(tripled, bytes)", "kmx_cache_flush_range(tripled, bytes / 2)")
    run, _, _ = run_source(tmp_path, text, mode="strict")
    out = tripled(run)
    assert (out[:512] == 3 * NUMBERS[:512]).all() and (out[512:] == 0).all()
    [finding] = run.findings
    assert (finding.kind, finding.start, finding.end) == ("unflushed-write", 2048, 4096)


def test_card_mode_a_read_of_a_line_not_flushed_is_a_read_before_invalidate(tmp_path):
    """Half the lines of the page dropped by line flushes: a read of the other half is one."""
    text = FIRMWARE.replace("kmx_cache_flush_range(numbers, bytes)", "kmx_cache_flush_range(numbers, bytes / 2)")
    run, _, _ = run_source(tmp_path, text, mode="card")
    assert (tripled(run) == 3 * NUMBERS).all()
    [finding] = run.findings
    assert (finding.kind, finding.region, finding.line) == (
        "read-before-invalidate", "numbers", line_of(text, "/* the loop */"))


def test_an_l2_flush_leaves_the_line_in_the_tiles_l3(tmp_path):
    text = """#include <kmx.h>
#include <kmx_cache.h>
#include <stdint.h>

int kmx_main(int core) {
    uint32_t *tripled = (uint32_t *)kmx_region(1, 0);
    kmx_invalidate(1);
    for (int i = 0; i < 16; i++)
        tripled[i] = 3 * i;
    *(volatile uint64_t *)PL2CACHE0_CFLUSH64(0) = (uint64_t)(uintptr_t)tripled;
    return *(volatile uint8_t *)PL2CACHE0_FLUSHCOUNT(0) + *(volatile uint64_t *)PL2CACHE0_FLUSHCOUNT(0);
}
"""
    run, [result], _ = run_source(tmp_path, text, mode="strict")
    assert result.code == 0  # FLUSHCOUNT: nothing pending
    assert (tripled(run) == 0).all()  # the line is in the L3, not in DRAM
    assert [f.kind for f in run.findings] == ["unflushed-write"]


def _fault_at(tmp_path, access: str, after: str = "") -> str:
    """The ThreadFault's text of a thread whose kmx_main does ACCESS (p: region 0), then AFTER;
    it names ACCESS's line."""
    text = f"""#include <kmx.h>
#include <kmx_cache.h>
#include <stdint.h>

int kmx_main(int core) {{
    void *p = kmx_region(0, 0);
    (void)p;
    {access}
{after}    return 0;
}}
"""
    with pytest.raises(km.ThreadFault) as caught:
        run_source(tmp_path, text)
    message = str(caught.value)
    assert f"thread.c:{line_of(text, access)}" in message
    return message


@pytest.mark.parametrize(("access", "named"), [
    ("*(volatile uint32_t *)(CCACHE0_BASE + 8) = 15;", "a 4-byte store to 0x2010008, CCACHE0_WAYENABLE"),
    ("return *(volatile uint64_t *)CCACHE0_FLUSH64;", "load from 0x2010200, CCACHE0_FLUSH64"),
    ("*(volatile uint64_t *)(CCACHE0_BASE + 0x808) = 1;", "CCACHE0_WAYMASK0 entry 1"),
    ("*(volatile uint32_t *)(PL2CACHE0_BASE(2) + 0x1008) = 1;", "PL2CACHE0_CONFIGBITS (configuration bits) in hart 2's"),
])
def test_a_register_not_simulated_is_a_fault_that_names_it(tmp_path, access, named):
    message = _fault_at(tmp_path, access)
    assert named in message
    assert "The simulator models only CCACHE0_FLUSH64" in message


@pytest.mark.parametrize(("access", "named"), [
    # a 4-byte store to either half of an 8-byte register (the engine hands an 8-byte store
    # to a device as two such halves, so a half alone is told apart by what follows it)
    ("*(volatile uint32_t *)CCACHE0_FLUSH64 = (uint32_t)(uintptr_t)p;", "a 4-byte store to 0x2010200, CCACHE0_FLUSH64"),
    ("*(volatile uint32_t *)(CCACHE0_FLUSH64 + 4) = 1;", "a 4-byte store to 0x2010204, CCACHE0_FLUSH64"),
    ("*(volatile uint32_t *)PL2CACHE0_CFLUSH64(1) = (uint32_t)(uintptr_t)p;", "a 4-byte store to 0x10108200, PL2CACHE0_CFLUSH64"),
    # a low half, then another register: the half was a store of its own
    ("*(volatile uint32_t *)CCACHE0_FLUSH64 = 0; (void)*(volatile uint8_t *)PL2CACHE0_FLUSHCOUNT(0);",
     "a 4-byte store to 0x2010200, CCACHE0_FLUSH64"),
])
def test_a_4_byte_store_to_an_8_byte_register_is_a_fault(tmp_path, access, named):
    message = _fault_at(tmp_path, access, "    for (volatile int i = 0; i < 1000; i++) /* (more blocks after it) */\n        ;\n")
    assert named in message and "The simulator models only CCACHE0_FLUSH64" in message


@pytest.mark.parametrize(("access", "said"), [
    ("*(volatile uint32_t *)CCACHE0_FLUSH32 = (uint32_t)(uintptr_t)p;",
     "(the value shifted left by 4), no memory of the thread's"),
    ("*(volatile uint64_t *)CCACHE0_FLUSH64 = 0x1234;", "It named 0x1234, no memory of the thread's"),
    ("*(volatile uint64_t *)CCACHE0_FLUSH64 = (uintptr_t)p - 0x400000000000ull;",
     "an address of the uncached alias, whose lines no cache holds"),
])
def test_a_line_flush_of_no_memory_of_the_threads_is_a_fault_that_says_what_it_named(tmp_path, access, said):
    message = _fault_at(tmp_path, access)
    assert said in message and "so no line was flushed" in message


def test_cflush_d_l1_is_an_illegal_instruction_that_says_to_use_the_registers(tmp_path):
    text = """#include <kmx.h>

int kmx_main(int core) {
    void *p = kmx_region(0, 0);
    __asm__ volatile(".insn i 0x73, 0, x0, %0, -64" :: "r"(p)); /* cflush.d.l1 */
    return 0;
}
"""
    with pytest.raises(km.ThreadFault) as caught:
        run_source(tmp_path, text)
    message = str(caught.value)
    assert "cflush.d.l1" in message and "CCACHE0_FLUSH64" in message and "kmx_cache_flush_line" in message
    assert f"thread.c:{line_of(text, 'cflush.d.l1')}" in message


def test_after_a_register_fault_the_next_run_is_right(tmp_path):
    bad = """#include <kmx_cache.h>
int kmx_main(int core) { *(volatile uint32_t *)(CCACHE0_BASE + 8) = 15; return 0; }
"""
    with pytest.raises(km.ThreadFault):
        run_source(tmp_path, bad)
    run, _, _ = run_source(tmp_path, FIRMWARE, mode="strict", name="good.c")
    assert (tripled(run) == 3 * NUMBERS).all()


def test_the_memory_models_firmware_example_is_right_with_no_findings(tmp_path):
    from tests.docs.test_memory_model_doc import blocks, section

    [source] = blocks(section("## Flushing a line through the cache's registers"), "c")
    regions = {"data": np.arange(1024, dtype=np.uint32)}
    for mode in ("card", "strict"):
        run, _, caught = run_source(tmp_path, source, mode=mode, regions=regions)
        assert (run.thread.read("data").view(np.uint32) == 3 * regions["data"]).all()
        assert run.findings == [] and caught == []
    without = source.replace(" /* drop the region's lines: the reads below are DRAM's */", "", 1)
    without = without.replace("    kmx_cache_flush_range(data, bytes);\n", "", 1)
    run, _, _ = run_source(tmp_path, without, mode="strict", regions=regions)
    assert [f.kind for f in run.findings] == ["read-before-invalidate"]


def test_a_line_a_flush_dropped_is_not_read_before_the_invalidate_by_python_either(tmp_path):
    """A kmx call's own read of a line a line flush dropped (kmx_result reading the region)
    is no read before the invalidate, as the core's own read would not be."""
    text = """#include <kmx.h>
#include <kmx_cache.h>
#include <stdint.h>

int kmx_main(int core) {
    volatile uint32_t *p = (volatile uint32_t *)kmx_region(0, 0);
    kmx_cache_flush_line((void *)p); /* line 0: its own invalidate */
    uint32_t v = p[16]; /* line 1, read before any invalidate */
    kmx_result(0, (uint32_t *)p, 1); /* line 0 again, read by the call */
    (void)v;
    return 0;
}
"""
    run, _, _ = run_source(tmp_path, text, regions={"x": np.arange(1024, dtype=np.uint32)})
    [finding] = run.findings
    assert (finding.kind, finding.start, finding.end) == ("read-before-invalidate", 64, 128)
