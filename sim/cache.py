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

Strict mode (SPEC section 5) starts every line cached and clean but *stale*: the view holds
STALE_BYTE everywhere, not DRAM's bytes, until an invalidate drops the lines.

What happened to each line is kept for the checker and the picture (sim.checker): per page,
whether it was filled from DRAM and whether it was read before any invalidate and before
any write (reads are seen a page at a time, at the fill); per line, whether a flush wrote
it back, an invalidate dropped its writes, or it was still dirty when the thread ended.
"""

from __future__ import annotations

import numpy as np

from sim.layout import LINE, PAGE

LINES_PER_PAGE = PAGE // LINE
_NO_LINES = np.zeros(0, dtype=np.int64)

STALE_BYTE = 0xA5  # what a stale line holds in strict mode: a uint32 of them is 2779096485
STALE_WORD = 0xA5A5A5A5

# What happened to a line, in rising order of importance: the picture shows the highest.
# FLUSHED_STALE: a flush wrote it back carrying stale bytes the thread never wrote.
UNTOUCHED, FRESH, FLUSHED, READ_STALE, FLUSHED_STALE, DROPPED, UNFLUSHED = range(7)


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
        # What happened, for the checker and the picture.
        self.invalidated = False  # the thread has invalidated the region at least once
        self.stale = bytearray(self.pages)  # strict mode: the page's lines hold STALE_BYTE
        self.loaded = bytearray(self.pages)  # filled from DRAM at least once
        self.written = bytearray(self.pages)  # written by the thread at least once
        self.read_stale = bytearray(self.pages)  # read before any invalidate or write
        self.line_events = np.zeros(self.pages * LINES_PER_PAGE, dtype=np.uint8)
        self.on_stale_read = None  # callables (page) -> None, set by the checker
        self.on_first_write = None
        self._unpainted: bytearray | None = None  # strict mode: pages not yet made stale

    def start_stale(self) -> None:
        """Strict mode: every line cached, clean, holding stale bytes instead of DRAM's.
        A page is painted with them at its first touch, so that an untouched region
        costs no memory."""
        self._filled[:] = b"\1" * self.pages
        self.stale[:] = b"\1" * self.pages
        self._unpainted = bytearray(b"\1" * self.pages)

    def _paint(self, page: int) -> None:
        self._unpainted[page] = 0
        if self.stale[page]:
            self.view[page * PAGE : (page + 1) * PAGE] = STALE_BYTE

    # -- what the cores do (through the engine's TLB-fill hook) --------------------------

    def access(self, page: int, write: bool) -> bool:
        """A core reads (or writes) page PAGE of the span. Returns whether the page may be
        written without coming back here."""
        if self._unpainted is not None and self._unpainted[page]:
            self._paint(page)
        if not self._filled[page]:
            start = page * PAGE
            self.view[start : start + PAGE] = self.dram[start : start + PAGE]
            self._filled[page] = 1
            self.loaded[page] = 1
            self.stale[page] = 0
        if write:
            if not self._writable[page]:  # the first write since the page was clean
                start = page * PAGE
                self._clean[start : start + PAGE] = self.view[start : start + PAGE]
                self._writable[page] = 1
                self.written[page] = 1
                if self.on_first_write is not None:
                    self.on_first_write(page)
        elif not (self.invalidated or self.written[page] or self.read_stale[page]):
            self.read_stale[page] = 1  # Python's data, read before any invalidate
            if self.on_stale_read is not None:
                self.on_stale_read(page)
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

    def stale_words(self, lines: np.ndarray) -> np.ndarray:
        """Byte offsets of the 4-byte words in LINES that still hold stale bytes where DRAM
        holds something else: what a flush of them would write over Python's data. The
        thread storing 0xA5A5A5A5 itself would be counted too."""
        lines = lines[np.frombuffer(self.stale, dtype=np.uint8)[lines // LINES_PER_PAGE] == 1]
        if lines.size == 0:
            return _NO_LINES
        view = self.view.view(np.uint32).reshape(-1, LINE // 4)[lines]
        dram = self.dram.view(np.uint32).reshape(-1, LINE // 4)[lines]
        row, column = np.nonzero((view == STALE_WORD) & (dram != STALE_WORD))
        return lines[row] * LINE + column * 4

    def flush(self, lines: np.ndarray | None = None, stale_words: np.ndarray | None = None) -> np.ndarray:
        """kmx_flush: write the dirty lines (LINES, when the caller has found them) back to
        DRAM; they stay cached, clean. STALE_WORDS (from `stale_words`) marks the lines
        whose write-back carries stale bytes. Returns the lines written."""
        if lines is None:
            lines = self.dirty_lines()
        self._mark(lines, FLUSHED)
        if stale_words is not None and stale_words.size:
            stale = np.unique(stale_words // LINE)
            self.line_events[stale] = np.maximum(self.line_events[stale], FLUSHED_STALE)
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
        self._mark(lost, DROPPED)
        self._filled[:] = bytes(self.pages)
        self._writable[:] = bytes(self.pages)
        self.stale[:] = bytes(self.pages)
        self._unpainted = None
        self.invalidated = True
        return lost

    def _mark(self, lines: np.ndarray, state: int) -> None:
        """Raise LINES (sorted) to at least STATE; a slice when they are one run."""
        if lines.size == 0:
            return
        if lines[-1] - lines[0] + 1 == lines.size:
            run = self.line_events[lines[0] : lines[-1] + 1]
            np.maximum(run, state, out=run)
        else:
            self.line_events[lines] = np.maximum(self.line_events[lines], state)

    def mark_unflushed(self) -> np.ndarray:
        """The thread has ended: remember its dirty lines as never flushed. Returns them."""
        lines = self.dirty_lines()
        self.line_events[lines] = UNFLUSHED
        return lines

    def line_states(self) -> np.ndarray:
        """What happened to each line of the span: the highest of UNTOUCHED to UNFLUSHED."""
        pages = np.zeros(self.pages, dtype=np.uint8)
        pages[np.frombuffer(self.loaded, dtype=np.uint8) == 1] = FRESH
        pages[np.frombuffer(self.read_stale, dtype=np.uint8) == 1] = READ_STALE
        return np.maximum(self.line_events, np.repeat(pages, LINES_PER_PAGE))

    def hand_back(self) -> np.ndarray:
        """The library's hand-back when a thread ends (card mode): write back, then drop.
        Returns the lines written back. (Not a flush of the thread's: the lines keep the
        mark they had.)"""
        events = self.line_events.copy()
        written = self.flush()
        self.line_events[:] = events
        self._filled[:] = bytes(self.pages)
        self.stale[:] = bytes(self.pages)
        self._unpainted = None
        return written

    def release(self) -> None:
        """Nothing will touch the lines again: drop the clean copies (DRAM and each
        line's story stay)."""
        self._clean = self._clean_lines = None


class ClusterCache:
    """The one cache of a cluster, shared by its cores: a CachedRegion per region of its
    thread, in ID order, then one per region of the cluster it shares bank D7 with."""

    def __init__(self) -> None:
        self.regions: list[CachedRegion] = []

    def add_region(self, view: np.ndarray, dram: np.ndarray) -> CachedRegion:
        region = CachedRegion(view, dram)
        self.regions.append(region)
        return region

    def hand_back(self) -> None:
        for region in self.regions:
            region.hand_back()
