"""The cache model on its own, without an engine."""

import numpy as np
import pytest

from komorebi.sim.cache.model import CachedRegion
from komorebi.sim.layout import LINE, PAGE


def region(pages=2, fill=5):
    view = np.zeros(pages * PAGE, dtype=np.uint8)
    dram = np.full(pages * PAGE, fill, dtype=np.uint8)
    return CachedRegion(view, dram), view, dram


def test_first_access_fills_the_page_from_dram():
    cache, view, dram = region()
    assert not cache.access(1, write=False)
    assert (view[PAGE:] == 5).all() and (view[:PAGE] == 0).all()


def test_a_write_makes_only_its_lines_dirty():
    cache, view, dram = region()
    assert cache.access(0, write=True)
    view[3 * LINE + 1] = 9
    view[PAGE - 1] = 9
    assert cache.dirty_lines().tolist() == [3, PAGE // LINE - 1]


def test_flush_writes_dirty_lines_back_and_keeps_them():
    cache, view, dram = region()
    cache.access(0, write=True)
    view[LINE : 2 * LINE] = 1
    dram[:LINE] = 42  # someone else wrote line 0 in DRAM: a flush must not overwrite it
    assert cache.flush()[0].tolist() == [1]
    assert (dram[LINE : 2 * LINE] == 1).all() and (dram[:LINE] == 42).all()
    assert cache.dirty_lines().size == 0
    assert cache.is_filled(0)


def test_invalidate_drops_dirty_lines_and_refills():
    cache, view, dram = region()
    cache.access(0, write=True)
    view[:8] = 1
    assert cache.invalidate().tolist() == [0]
    assert not cache.is_filled(0)
    cache.access(0, write=False)
    assert (view[:8] == 5).all() and (dram[:8] == 5).all()


def test_hand_back_writes_back_and_drops():
    cache, view, dram = region()
    cache.access(1, write=True)
    view[PAGE + 10] = 77
    cache.hand_back()
    assert dram[PAGE + 10] == 77
    assert not cache.is_filled(1)


def test_scattered_dirty_lines_are_written_back_exactly():
    cache, view, dram = region(pages=4)
    for page in (0, 2, 3):
        cache.access(page, write=True)
    touched = [0, 130, 200, 255]
    for line in touched:
        view[line * LINE] = 3
    assert cache.flush()[0].tolist() == touched
    expected = np.full(4 * PAGE, 5, dtype=np.uint8)
    for line in touched:
        expected[line * LINE] = 3
    # lines never written keep DRAM's bytes, even where the view still holds zeros
    assert (dram == expected).all()


def test_sizes_must_be_whole_pages():
    with pytest.raises(ValueError):
        CachedRegion(np.zeros(100, np.uint8), np.zeros(100, np.uint8))
