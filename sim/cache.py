"""The cluster's cache: 64-byte lines, write-back, shared by the cluster's cores.

The model is unbounded (SPEC section 5): a line, once filled, stays until an invalidate or
the hand-back drops it, so a missing flush is never rescued by an eviction.

How it holds data. Each region has a *view*: host memory that the cores' engines map and
load from and store to directly, at full speed. The view is the cache's copy of the
region's lines. DRAM is separate storage (sim.dram). The model keeps two flags per 4 KiB
page, which the engine's TLB-fill hook keeps up to date (see sim.core):

- filled: the page's lines are in the cache. The first access to a page that is not
  filled copies its lines from DRAM into the view: the fill.
- writable: the page has been written since it was last clean. At the first store to a
  page, the model keeps a clean copy of the page; a line is dirty when the view differs
  from that clean copy.

Every region operation works on whole regions, and a region's pages hold only its own
lines, so page-level flags describe each line exactly. One thing is approximate: a store
that writes a line's own value back leaves the line equal to its clean copy, and the model
counts it clean. On a card that line would be dirty and written back with the same bytes;
no program can tell the two apart unless something else writes DRAM meanwhile.

The model never calls the engine. After `invalidate`, `flush` and `hand_back` the caller
must drop the engines' TLB entries, so that the next access comes through the fill hook
again.
"""

from __future__ import annotations

import numpy as np

from sim.layout import LINE, PAGE

LINES_PER_PAGE = PAGE // LINE
_NO_LINES = np.zeros(0, dtype=np.int64)


class CachedRegion:
    """The cache's lines of one region, over the region's page-aligned span.

    `view` is what the engines map; `dram` is the span's storage in its bank. Both are
    uint8 arrays of the same size, a multiple of PAGE.
    """

    def __init__(self, view: np.ndarray, dram: np.ndarray) -> None:
        if view.size != dram.size or view.size % PAGE:
            raise ValueError("view and dram must be the same whole number of pages")
        self.view = view
        self.dram = dram
        self.pages = view.size // PAGE
        self._filled = bytearray(self.pages)
        self._writable = bytearray(self.pages)
        self._clean = np.empty_like(view)  # touched page by page: resident only when used
        self._view_lines = view.view(np.uint64).reshape(-1, LINE // 8)
        self._clean_lines = self._clean.view(np.uint64).reshape(-1, LINE // 8)

    # -- what the cores do (through the engine's TLB-fill hook) --------------------------

    def access(self, page: int, write: bool) -> bool:
        """A core reads (or writes) page PAGE of the span. Returns whether the page may be
        written without coming back here."""
        if not self._filled[page]:
            start = page * PAGE
            self.view[start : start + PAGE] = self.dram[start : start + PAGE]
            self._filled[page] = 1
        if write and not self._writable[page]:
            start = page * PAGE
            self._clean[start : start + PAGE] = self.view[start : start + PAGE]
            self._writable[page] = 1
        return bool(self._writable[page])

    def is_filled(self, page: int) -> bool:
        return bool(self._filled[page])

    # -- the thread's kmx calls -----------------------------------------------------------

    def dirty_lines(self) -> np.ndarray:
        """Indices of the span's lines that were written since they were last clean."""
        pages = np.flatnonzero(np.frombuffer(self._writable, dtype=np.uint8))
        if pages.size == 0:
            return _NO_LINES
        # Compare run by run of consecutive written pages: slices, not gathered copies.
        breaks = np.flatnonzero(np.diff(pages) != 1) + 1
        firsts = pages[np.r_[0, breaks]]
        lasts = pages[np.r_[breaks - 1, pages.size - 1]]
        found = []
        for first, last in zip(firsts.tolist(), lasts.tolist()):
            lo, hi = first * LINES_PER_PAGE, (last + 1) * LINES_PER_PAGE
            differs = (self._view_lines[lo:hi] != self._clean_lines[lo:hi]).any(axis=1)
            found.append(np.flatnonzero(differs) + lo)
        return np.concatenate(found)

    def flush(self) -> np.ndarray:
        """kmx_flush: write the dirty lines back to DRAM; they stay cached, clean.
        Returns the lines written."""
        lines = self.dirty_lines()
        if lines.size:
            dram_lines = self.dram.view(np.uint64).reshape(-1, LINE // 8)
            if lines.size == lines[-1] - lines[0] + 1:  # one contiguous run: a slice copy
                dram_lines[lines[0] : lines[-1] + 1] = self._view_lines[lines[0] : lines[-1] + 1]
            else:
                dram_lines[lines] = self._view_lines[lines]
        self._writable[:] = bytes(self.pages)
        return lines

    def invalidate(self) -> np.ndarray:
        """kmx_invalidate: drop every line, dirty ones too. Returns the dirty lines whose
        writes were lost."""
        lost = self.dirty_lines()
        self._filled[:] = bytes(self.pages)
        self._writable[:] = bytes(self.pages)
        return lost

    def hand_back(self) -> np.ndarray:
        """The library's hand-back when a thread ends (card mode): write back, then drop.
        Returns the lines written back."""
        written = self.flush()
        self._filled[:] = bytes(self.pages)
        return written


class ClusterCache:
    """The one cache of a cluster, shared by its cores: a CachedRegion per region ID."""

    def __init__(self) -> None:
        self.regions: list[CachedRegion] = []

    def add_region(self, view: np.ndarray, dram: np.ndarray) -> CachedRegion:
        region = CachedRegion(view, dram)
        self.regions.append(region)
        return region

    def hand_back(self) -> None:
        for region in self.regions:
            region.hand_back()
