"""The cluster's cache: 64-byte lines, write-back, shared by the cluster's cores.

The model is unbounded (docs/memory-model.md): a line, once filled, stays until an invalidate or
the hand-back drops it, so a missing flush is never rescued by an eviction.

How it holds data. Each region has a *view*: host memory that the cores' engines map and
load from and store to directly, at full speed: the cache's copy of the region's lines,
or (direct, below) DRAM itself (sim.memory.dram). The model keeps two flags per 4 KiB
page, which the engine's TLB-fill hook (sim/native/fill.c, the same steps as `access` here)
keeps up to date:

- filled: the page's lines are in the cache. The first access to a page that is not
  filled brings its lines in from DRAM: the fill.
- writable: the page has been written since it was last clean. A line is dirty when the
  view differs from the line as it was when last clean.

Three ways of holding a region, with the same behaviour (tests/cache/test_cache_stateful.py
runs each against one reference):

- direct (card mode, the usual one): the engines map DRAM itself (sim.memory.dram). A line's
  clean bytes are those it was loaded with (zeros, or the snapshot of Python's array), or,
  for a page written again after a flush, a copy taken at that first write. A flush
  copies nothing: it finds the dirty lines and marks them clean. An invalidate puts the
  dropped lines' clean bytes back. This is exact because in card mode nothing but this
  cache writes the region's DRAM while the thread runs, and the hand-back at the end
  would write every dirty line anyway.
- copy-on-write (strict mode, where prior lines hold other bytes than DRAM's): the view is
  memory of its own (sim.memory.dram.View) that shows the region as loaded until written: a fill
  copies nothing, unless a flush has changed DRAM's page since (then it copies). A
  page's clean bytes are DRAM's; a prior page's are copied at its first write.
- copying: a fill copies DRAM's page into the view, and the first write to a page copies
  it aside, to compare with. Used where something else may write the region's DRAM during
  the run: a region of cluster 2 or 3 that the other cluster's thread can reach in bank
  D7 (sim.machine.cluster), and a view that is not over sim.memory.dram storage (the unit tests).

Every region operation works on whole regions, and a region's pages hold only its own
lines, so page-level flags describe each line exactly. One thing is approximate: a store
that writes a line's own value back leaves the line equal to its clean bytes, and the
model counts it clean. On a card that line would be dirty and written back with the same
bytes; no program can tell the two apart unless something else writes DRAM meanwhile.
Where something can (a Tensix stand-in, the uncached alias), the region's lines are known
one by one (know_lines): every access is watched (sim/native/watch.c), a line is in the
cache once a core touched it, and dirty once a core wrote it, whatever it stored.

The model never calls the engine. After `invalidate`, `flush` and `hand_back` the caller
must drop the engines' TLB entries, so that the next access comes through the fill hook
again.

Strict mode (docs/memory-model.md) starts every line cached and clean, a *prior* line: the view
holds PRIOR_BYTE everywhere, not DRAM's bytes, until an invalidate drops the lines. (A prior
page's clean bytes are not DRAM's: its first write copies it aside, as when copying.)

Words. Each of these means one thing, in the model, sim/native and the checker alike:
- *stale*: bytes a cached line holds that are not DRAM's, and that the thread did not write
  there. A read of them is a stale read (the checker's stale-read); a flush that writes them
  back wrote stale bytes (flush-wrote-stale-bytes). A line comes to hold them in two ways:
- *prior* (strict mode): a line cached from before Python wrote the region, holding
  PRIOR_BYTE. `prior` (per page): its lines came in so, until an invalidate drops them;
  `fresh` (per line): the bytes the thread wrote since (all, once the line was written back
  or left the cache); `prior_lines` (per page): how many
  of its lines still hold a prior byte the thread did not write.
- *DRAM changed under* a cached line: an uncached store, or a Tensix stand-in's noc.write,
  wrote DRAM past the cache while it held the line, which keeps its old bytes.
  `dram_changed` (per line): those bytes; a stale read of them says so (its event's `under`).
- *read early*: a page read before the thread's first invalidate of the region and before
  the page's first write (`read_early`: a bit a core): the checker's read-before-invalidate,
  stale on a card whose cache held the lines from before. A line marked READ_STALE (the
  picture's `s`) was read early, or had a stale read.
- *peek*: to read bytes with no side effect, for the simulator's own eyes (`peek`); a core
  asked where it is from another thread is not peeked but asked (sim.hart.core, `place`).
A build, a page translation or a decoded instruction that no longer holds is out of date,
not stale.

What happened to each line is kept for the checker and the picture (sim.cache.checker): per page,
whether it was filled from DRAM and which cores read it before any invalidate and before
any write (seen at the fill), and the pc, return address and core of the first write
since the page was clean; per line, which cores read it before any invalidate (the page
is watched from its first such read: sim/native/watch.c), whether a flush wrote it back,
an invalidate dropped its writes, or it was still dirty when the thread ended.
"""

from __future__ import annotations

import ctypes
import weakref
from enum import Enum
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..._records import LineState
from ..native import hooks
from ..layout import LINE, PAGE, runs
from .events import Flushed, HandedBack, Invalidated, LeftDirty, NocRead, NocWrote

if TYPE_CHECKING:
    from ..memory.dram import Storage, View

LINES_PER_PAGE = PAGE // LINE
_NO_LINES = np.zeros(0, dtype=np.int64)
CHUNK_PAGES = 1024  # pages compared and written back at a time (4 MiB): no big temporaries

PRIOR_BYTE = 0xA5  # what a prior line holds (strict mode): a uint32 of them is 2779096485
PRIOR_WORD = 0xA5A5A5A5

# What happened to a line, in rising order of importance: the picture shows the highest
# (the seam's LineState, komorebi._records, whose numbers these are).
# FLUSHED_STALE: a flush wrote it back carrying stale bytes the thread never wrote.
UNTOUCHED, FRESH, FLUSHED, READ_STALE, FLUSHED_STALE, DROPPED, UNFLUSHED = (int(state) for state in LineState)


def _uncached(region: "weakref.ref[CachedRegion]") -> Callable[[int, int, int, int], None]:
    """watch.c's call at the thread's first access to the region through the uncached
    alias: its lines are known one by one from then on (know_lines). An error cannot cross
    the engine: it is kept for sim.hart.core to raise after the run. (What the model saw
    that Python words is queued instead: sim/cache/events.py.)"""

    def called(_token: int, _kind: int, _offset: int, _size: int) -> None:
        cache = region()
        if cache is None:
            return
        try:
            cache.know_lines()
        except BaseException as error:  # noqa: BLE001 - raised after the run
            cache.hook_error = cache.hook_error or error
            if cache.on_hook_error is not None:
                cache.on_hook_error()

    return called


UNBOUNDED, CARD_SIZE = "unbounded", "card-size"  # the two caches a session may have
LEVELS = ("L1D", "L2", "L3")


class Tile:
    """The tile's caches at the card's size, which every region of a cluster shares
    (sim/native/tile.c says what they hold and how a set chooses a victim: a generator
    seeded by SEED)."""

    def __init__(self, seed: int = 0) -> None:
        self.state = hooks.Tile()
        # xorshift64 needs a state that is not 0: the seed, mixed, then never 0
        self.state.random = ((int(seed) * 0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D) % 2**64 or 1
        self.address = ctypes.addressof(self.state)

    def access(self, hart: int, line: int, write: bool) -> int:
        """The level that held LINE (an address over 64) for HART: 1 to 3, 0 for DRAM
        (the tests' way in: the cores' accesses come through sim/native/watch.c)."""
        return hooks.library().tile_access(self.address, hart, line, int(write))

    @property
    def evicted(self) -> int | None:
        """The line the last access evicted from the L3, or None."""
        return self.state.evicted - 1 if self.state.evicted else None


class Holding(Enum):
    """How the cache holds a region (see the module's docstring), chosen once, when the
    region is placed (`holding_for`)."""

    DIRECT = "direct"
    COPY_ON_WRITE = "copy-on-write"
    COPYING = "copying"


def holding_for(coherence: str, reached_by_another: bool) -> Holding:
    """How a region is held in COHERENCE mode ("card", "strict") when another cluster's
    thread can, or cannot, write its DRAM while this one runs."""
    if reached_by_another:
        return Holding.COPYING
    return Holding.DIRECT if coherence == "card" else Holding.COPY_ON_WRITE


class CachedRegion:
    """The cache's lines of one region, over the region's page-aligned span.

    `view` is what the engines map; `dram` is the span's DRAM. Both are uint8 arrays of
    the same size, a multiple of PAGE. HOLDING says how the view relates to DRAM.
    COPY_ON_WRITE needs MEMORY, the sim.memory.dram.View that holds `view`, which lets the
    model hand the view's copies back to the kernel (`forget`) and know DRAM's own pages
    over a snapshot (`own_pages`). DIRECT needs STORAGE, the span's sim.memory.dram.Storage,
    whose DRAM is the view. BASE: the span's address (where a core's stores land, for
    sim/native/reserve.c and the card-size cache).
    """

    def __init__(
        self,
        view: np.ndarray,
        dram: np.ndarray,
        holding: Holding = Holding.COPYING,
        memory: "View | None" = None,
        storage: "Storage | None" = None,
        base: int = 0,
    ) -> None:
        if view.size != dram.size or view.size % PAGE:
            raise ValueError("view and dram must be the same whole number of pages")
        if holding is Holding.DIRECT and (storage is None or view is not dram):
            raise ValueError("a direct region's view is its storage's DRAM")
        if holding is Holding.COPY_ON_WRITE and memory is None:
            raise ValueError("a copy-on-write region needs the View that holds its view")
        self.holding = holding
        self.view = view
        self.dram = dram
        self.pages = pages = view.size // PAGE
        self._memory = memory
        self._clean: np.ndarray | None = None
        self._filled = np.zeros(pages, np.uint8)
        self._writable = np.zeros(pages, np.uint8)
        # copy_fill: a fill must copy the page from DRAM, because what the view shows
        # under its copies is not DRAM's page (DRAM's own over a snapshot, or a page the
        # view could not share).
        own = memory.own_pages if memory is not None else storage.own_pages if storage is not None else None
        self._copy_fill = np.zeros(pages, np.uint8) if own is None else own
        self._own_pages = own
        # What happened, for the checker and the picture.
        self.prior = np.zeros(pages, np.uint8)  # strict mode: the page's lines are prior ones
        self.loaded = np.zeros(pages, np.uint8)  # filled from DRAM at least once
        self.written = np.zeros(pages, np.uint8)  # written by the thread at least once
        self.read_early = np.zeros(pages, np.uint8)  # read before any invalidate or write: a bit a core
        self.read_cores = np.zeros(pages * LINES_PER_PAGE, np.uint8)  # the lines so read: a bit a core
        self.write_pc = np.zeros(pages, np.uint64)  # the first write since the page was clean
        self.write_ra = np.zeros(pages, np.uint64)
        self.write_core = np.full(pages, -1, np.int8)
        self.read_pc = np.zeros(pages, np.uint64)  # the first read the fill hook saw
        self.read_ra = np.zeros(pages, np.uint64)
        self.line_events = np.zeros(pages * LINES_PER_PAGE, dtype=np.uint8)
        self._unpainted: np.ndarray | None = None  # strict mode: prior pages not yet painted
        # An access at a time (sim/native/watch.c): per page, a bit per line a line flush
        # dropped before any invalidate; strict mode (start_prior_lines): per line, the bytes the
        # thread wrote since the line was prior, and whether its stale read was told; per
        # page, how many of its lines still hold prior bytes.
        self.dropped = np.zeros(pages, np.uint64)
        self._fresh: np.ndarray | None = None
        self._prior_lines: np.ndarray | None = None
        self._told: np.ndarray | None = None
        # Lines known one by one (know_lines): per page, the lines in the cache, those written
        # since clean, and those touched through each alias; per line, the bytes DRAM changed
        # under (and, direct, DRAM's bytes there); per page, copy-on-write: its clean bytes
        # are a copy.
        self.lines_known = False
        self.tile: Tile | None = None  # the card-size cache (use_tile)
        self.rescued: np.ndarray | None = None
        self._cached_lines = self._dirty_mask = self._dram_changed = self._side_mask = self._side = self._own_clean = None
        self.hook_error: BaseException | None = None  # raised in the on_uncached call (_uncached), for sim.hart.core
        self.on_hook_error: Callable[[], None] | None = None  # told at once (sim.machine.cluster: the turn goes to Python)
        self._on_uncached = hooks.LINE_EVENT(_uncached(weakref.ref(self)))
        self.state = hooks.RegionState(
            view=hooks.pointer(view),
            dram=hooks.pointer(dram),
            filled=hooks.pointer(self._filled),
            writable=hooks.pointer(self._writable),
            prior=hooks.pointer(self.prior),
            loaded=hooks.pointer(self.loaded),
            written=hooks.pointer(self.written),
            read_early=hooks.pointer(self.read_early),
            copy_fill=hooks.pointer(self._copy_fill),
            write_pc=hooks.pointer(self.write_pc, ctypes.c_uint64),
            write_ra=hooks.pointer(self.write_ra, ctypes.c_uint64),
            write_core=hooks.pointer(self.write_core, ctypes.c_int8),
            read_pc=hooks.pointer(self.read_pc, ctypes.c_uint64),
            read_ra=hooks.pointer(self.read_ra, ctypes.c_uint64),
            dropped=hooks.pointer(self.dropped, ctypes.c_uint64),
            line_events=hooks.pointer(self.line_events),
            on_uncached=self._on_uncached,
            read_cores=hooks.pointer(self.read_cores),
        )
        self.base = self.state.base = base
        self.state.pages = pages
        self.state_address = ctypes.addressof(self.state)  # (for the native calls that take it: sim/native/noc.c)
        self.overwritten = _NO_LINES  # the last flush's lines written back over DRAM's newer bytes (flush)
        self.events = None  # the cluster's sim.cache.events.CacheEvents, which tells the door's events (attach)
        self.unflushed_found = False  # the checker found its unflushed write: a submission need not look again
        self.released = False  # (release)
        self.direct = holding is Holding.DIRECT
        self.copying = holding is Holding.COPYING
        if memory is not None and not self.direct:  # (a drop gives the view's copies back: region_drop)
            here = memory.madvise_forgets and memory.address == view.ctypes.data
            self.state.forget_view = hooks.FORGET_HERE if here else hooks.FORGET_IN_PYTHON
        self._as_loaded: np.ndarray | None = None
        self._loaded_bytes: np.ndarray | None = None
        if self.direct:
            self._keep_clean_copies()
            self._as_loaded = np.ones(pages, np.uint8)
            self._loaded_bytes = storage.loaded_bytes()  # None: zeros
            self.state.as_loaded = hooks.pointer(self._as_loaded)
            self.state.loaded_bytes = hooks.pointer(self._loaded_bytes)
            self.state.direct = 1
        elif self.copying:
            self._keep_clean_copies()
            self.state.copy_all = 1

    def _keep_clean_copies(self) -> None:
        if self._clean is None:
            self._clean = np.empty_like(self.view)  # touched page by page: resident only when used
            self.state.clean = hooks.pointer(self._clean)

    @property
    def invalidated(self) -> bool:
        """The thread has invalidated the region at least once."""
        return bool(self.state.invalidated)

    def start_prior_lines(self) -> None:
        """Strict mode: every line cached and clean, a prior line: PRIOR_BYTE, not DRAM's bytes.
        A page is painted with them at its first touch, so that an untouched region
        costs no memory."""
        self._keep_clean_copies()  # a prior page's clean bytes are not DRAM's
        self._filled[:] = 1
        self.prior[:] = 1
        self._unpainted = np.ones(self.pages, np.uint8)
        self.state.unpainted = hooks.pointer(self._unpainted)
        lines = self.pages * LINES_PER_PAGE
        self._fresh = np.zeros(lines, np.uint64)  # (zeros: calloc's, untouched pages)
        self._prior_lines = np.full(self.pages, LINES_PER_PAGE, np.uint8)
        self._told = np.zeros(lines, np.uint8)
        self.state.fresh = hooks.pointer(self._fresh, ctypes.c_uint64)
        self.state.prior_lines = hooks.pointer(self._prior_lines)
        self.state.told = hooks.pointer(self._told)
        self._keep_dirty_mask()  # (a store to a prior line is seen: dirty, whatever it stores)

    def _keep_dirty_mask(self) -> None:
        """Keep, per line, whether a store the watch saw (sim/native/watch.c) made it dirty."""
        if self._dirty_mask is None:
            self._dirty_mask = np.zeros(self.pages, np.uint64)
            self.state.dirty_mask = hooks.pointer(self._dirty_mask, ctypes.c_uint64)

    def know_lines(self) -> None:
        """From now on, every page of the region is watched (sim/native/watch.c) and its
        lines are known one by one: which are in the cache, which were written since clean,
        which DRAM changed under. From the load on where a Tensix stand-in may write DRAM
        (sim.machine.cluster), else from the thread's first access through the uncached
        alias. Then a line of a page filled before is taken to be in the cache (the pages were
        not watched: which of their lines were touched is not known), and so touched through
        the cached alias; a line is dirty if its bytes differ from its clean ones."""
        if self.lines_known:
            return
        full = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
        lines = self.pages * LINES_PER_PAGE
        self._cached_lines = np.where(self._filled == 1, full, np.uint64(0)).astype(np.uint64)
        dirty = self.dirty_lines()  # (compared with their clean bytes, or seen, as until now)
        self._keep_dirty_mask()
        np.bitwise_or.at(self._dirty_mask, dirty // LINES_PER_PAGE, np.uint64(1) << (dirty % LINES_PER_PAGE).astype(np.uint64))
        touched = (self.loaded == 1) | (self.written == 1)
        if self._unpainted is not None:
            touched |= self._unpainted == 0
        self._cc_touched = np.where(touched, full, np.uint64(0)).astype(np.uint64)
        self._uc_touched = np.zeros(self.pages, np.uint64)
        self._mixed_told = np.zeros(self.pages, np.uint64)
        self._dram_changed = np.zeros(lines, np.uint64)
        if self._told is None:
            self._told = np.zeros(lines, np.uint8)
            self.state.told = hooks.pointer(self._told)
        state = self.state
        if self.direct:
            self._keep_clean_copies()
            self._side = np.zeros(self.view.size, np.uint8)  # (zeros: calloc's, untouched pages)
            self._side_mask = np.zeros(lines, np.uint64)
            state.side, state.side_mask = hooks.pointer(self._side), hooks.pointer(self._side_mask, ctypes.c_uint64)
        else:
            self._own_clean = np.zeros(self.pages, np.uint8)
            state.own_clean = hooks.pointer(self._own_clean)
        for name in ("cached_lines", "cc_touched", "uc_touched", "mixed_told", "dram_changed"):
            setattr(state, name, hooks.pointer(getattr(self, "_" + name), ctypes.c_uint64))
        state.lines_known = 1
        self.lines_known = True

    def read_again(self, start: int, end: int) -> bool:
        """Whether the stale bytes of a line of span bytes [START, END) were read again at once
        (sim/native/watch.c: a loop that waits on those bytes)."""
        if self._told is None:
            return False
        return bool((self._told[start // LINE : -(-end // LINE)] & hooks.TOLD_AGAIN).any())

    def use_tile(self, tile: Tile) -> None:
        """The card-size cache: every page watched, each access counted in TILE's levels,
        and a dirty line the L3 evicts written back."""
        self.tile = tile
        self.level_counts = np.zeros(8, np.uint64)
        self.rescued = np.zeros(self.pages * LINES_PER_PAGE, np.uint8)
        self.state.tile = tile.address
        self.state.level_counts = hooks.pointer(self.level_counts, ctypes.c_uint64)
        self.state.rescued = hooks.pointer(self.rescued)

    def counts(self) -> dict[str, tuple[int, int]]:
        """(hits, misses) at each level, and the L3's evictions of the region's lines:
        ("evicted", (all, the dirty ones written back))."""
        c = [int(n) for n in self.level_counts]
        return {"L1D": (c[0], c[1]), "L2": (c[2], c[3]), "L3": (c[4], c[5]), "evicted": (c[6], c[7])}

    def _side_bytes(self) -> tuple[np.ndarray, np.ndarray]:
        """Direct: (the span's byte offsets, DRAM's bytes there) that an uncached store
        wrote under a line the cache holds."""
        lines = np.flatnonzero(self._side_mask)
        if lines.size == 0:
            return _NO_LINES, np.zeros(0, np.uint8)
        bits = np.unpackbits(self._side_mask[lines].view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
        row, byte = np.nonzero(bits)
        offsets = lines[row] * LINE + byte
        return offsets, self._side[offsets]

    # -- what the cores do (through the engine's TLB-fill hook) --------------------------

    def peek(self, offset: int, size: int) -> bytes:
        """SIZE bytes at OFFSET of the span as a core's load would see them, changing
        nothing (a debugger's look, sim.debug.stub): a page not in the cache reads as the
        fill would load it (sim/native/fill.c, access), DRAM's bytes or, strict mode's
        prior page, PRIOR_BYTE."""
        out = bytearray()
        for page in range(offset // PAGE, (offset + max(size, 1) - 1) // PAGE + 1):
            start = page * PAGE
            data = self.view[start : start + PAGE]
            if self._unpainted is not None and self._unpainted[page] and self.prior[page]:
                data = np.full(PAGE, PRIOR_BYTE, np.uint8)  # (painted at the first touch)
            if not self._filled[page] and (self.state.copy_all or self._copy_fill[page]):
                data = self.dram[start : start + PAGE]
            out += data.tobytes()
        first = offset - (offset // PAGE) * PAGE
        return bytes(out[first : first + size])

    def access(self, page: int, write: bool, core=None) -> bool:
        """A core reads (or writes) page PAGE of the span (what sim/native/fill.c does at a TLB
        fill). Returns whether the page may be written without coming back here."""
        return self.touch(page * PAGE, 0, write, core)

    def touch(self, offset: int, size: int, write: bool, core=None) -> bool:
        """Python reads (or writes) [OFFSET, OFFSET + SIZE) of the span on a thread's behalf,
        CORE's (a sim.hart.core.Core in a kmx call) or its own (None): what a fill does for
        each page, and the lines a read touched kept as a core's accesses keep them. SIZE
        0: the page of OFFSET, no line. Returns whether the last page may be written
        without coming back here."""
        if not (0 <= offset < self.pages * PAGE and offset + size <= self.pages * PAGE):
            raise IndexError(f"bytes {offset} to {offset + size} of a span of {self.pages * PAGE}")
        native, engine = (None, None) if core is None else core.native_arguments()
        if native is None:
            return bool(hooks.library().region_access(ctypes.byref(self.state), offset, size, int(write), None, None))
        was, core.native.site_pc = core.native.site_pc, core.call_pc()  # (what the model sees is the call's: events.c)
        try:
            return bool(hooks.library().region_access(ctypes.byref(self.state), offset, size, int(write), native, engine))
        finally:
            core.native.site_pc = was

    def is_filled(self, page: int) -> bool:
        return bool(self._filled[page])

    # -- DRAM past the cache: a Tensix stand-in's NoC (sim/native/noc.c, watch.c) ---------------

    def noc_read(self, offset: int, size: int) -> np.ndarray:
        """SIZE bytes of DRAM at OFFSET of the span, as the NoC reads them past the cache: a
        dirty line's bytes are not there yet."""
        out = np.empty(size, np.uint8)
        hooks.library().noc_read(self.state_address, offset, size, out.ctypes.data)
        return out

    def noc_holds(self, offset: int, size: int, value: int) -> bool:
        """DRAM holds VALUE (SIZE bytes, little-endian) at OFFSET of the span (a noc.wait's)."""
        return bool(hooks.library().noc_holds(self.state_address, offset, size, value))

    def noc_write(self, offset: int, data: np.ndarray) -> None:
        """DATA (bytes) to DRAM at OFFSET of the span, past the cache, as an uncached store
        writes it (watch.c, dram_store): a line the cache holds keeps its bytes, stale now
        (its lines are known one by one: know_lines); one it does not hold brings DRAM's new
        bytes at its next fill."""
        hooks.library().dram_store(self.state_address, offset, data.size, data.ctypes.data, None)

    # -- the door: each way in, told who did it (sim.cache.events) ------------------------------

    def _tell(self, event) -> None:
        if self.events is not None:
            self.events.tell(event)

    def _took(self, core, level: int) -> None:
        """The door for time (sim/native/latency.c): CORE's flush or invalidate (LEVEL)
        walked the span's lines; a core with a timing model's table is answered its cycles."""
        native = getattr(core, "native", None)
        if native is not None and (native.memory.latency or native.timing):
            hooks.library().access_took(ctypes.byref(native), level, self.pages * LINES_PER_PAGE)
        if native is not None and native.timing and level == hooks.LEVEL_INVALIDATE:
            hooks.library().timing_invalidated(native.timing, self.base, self.pages * PAGE)

    def flush_by(self, core, find_stale: bool, region_start: int) -> np.ndarray:
        """CORE's kmx_flush (`flush`), told as Flushed. Returns the lines written back."""
        self._took(core, hooks.LEVEL_FLUSH)
        lines, stale = self.flush(find_stale, region_start)
        self._tell(Flushed(self.state.token, core, lines, stale, self.overwritten))
        return lines

    def invalidate_by(self, core) -> np.ndarray:
        """CORE's kmx_invalidate (`invalidate`), told as Invalidated. Returns the lines lost."""
        self._took(core, hooks.LEVEL_INVALIDATE)
        lost = self.invalidate()
        self._tell(Invalidated(self.state.token, core, lost))
        return lost

    def noc_read_by(self, agent, call, offset: int) -> np.ndarray:
        """AGENT's noc.read CALL of CALL.size bytes at OFFSET of the span (`noc_read`), told
        as NocRead with the lines of them the cache holds dirty."""
        out = self.noc_read(offset, call.size)
        self._tell(NocRead(self.state.token, agent, call, self.dirty_lines_in(offset, offset + call.size)))
        return out

    def noc_write_by(self, agent, call, offset: int, data: np.ndarray) -> None:
        """AGENT's noc.write CALL of DATA at OFFSET of the span (`noc_write`), told as NocWrote."""
        self.noc_write(offset, data)
        self._tell(NocWrote(self.state.token, agent, call, offset, offset + data.size))

    def submitted_by(self, core) -> None:
        """CORE called kmx_submit: its dirty lines, told as LeftDirty (none once the checker
        found the region's unflushed write: no need to compare its pages again)."""
        if self.unflushed_found:
            return
        lines = self.dirty_lines()
        if lines.size:
            self._tell(LeftDirty(self.state.token, lines, _NO_LINES, core))

    def thread_ended(self, tell: bool = True) -> None:
        """The thread has ended (`mark_unflushed`); its dirty lines and those an eviction
        rescued, told as LeftDirty (unless not TELL: the thread faulted)."""
        lines, rescued = self.mark_unflushed()
        if lines.size and tell:
            self._tell(LeftDirty(self.state.token, lines, rescued))

    # -- the thread's kmx calls -----------------------------------------------------------

    def _dirty(self, first: int = 0, end: int | None = None) -> np.ndarray:
        """The dirty lines of the written pages among [FIRST, END) (by default all), sorted:
        by the one rule, C's (sim/native/watch.c, dirty: written since clean where lines are
        known one by one, a store of a line's own bytes too; elsewhere a store the watch saw
        made it dirty, strict mode's prior lines, or its bytes differ from its clean ones,
        wherever those are: clean_place). A chunk of pages at a time: no big temporaries."""
        end = self.pages if end is None else end
        found = []
        for start, stop in runs(np.flatnonzero(self._writable[first:end]) + first, CHUNK_PAGES):
            self._not_released()
            out = np.empty((stop - start) * LINES_PER_PAGE, np.int64)
            count = hooks.library().region_dirty_lines(self.state_address, start, stop, out.ctypes.data)
            if count:
                found.append(out[:count])
        return np.concatenate(found) if len(found) > 1 else found[0].copy() if found else _NO_LINES

    def dirty_lines(self) -> np.ndarray:
        """Indices of the span's lines that were written since they were last clean."""
        return self._dirty()

    def dirty_lines_in(self, start: int, end: int) -> np.ndarray:
        """The dirty lines among those of bytes [START, END) of the span (a Tensix
        stand-in's noc.read: sim.noc.agent); none at once where no page of them was written."""
        first, last = start // PAGE, -(-end // PAGE)
        if not (self._writable[first] if last - first == 1 else self._writable[first:last].any()):
            return _NO_LINES
        lines = self._dirty(first, last)
        return lines[(lines >= start // LINE) & (lines < -(-end // LINE))]

    def _put_clean(self, lines: np.ndarray, into: np.ndarray) -> None:
        """The clean bytes of LINES (C's rule of where they are: clean_place) into INTO."""
        lines = np.ascontiguousarray(lines, np.int64)
        if lines.size:
            self._not_released()
        hooks.library().region_put_clean(self.state_address, lines.ctypes.data, lines.size, into.ctypes.data)

    def dram_as_on_a_card(self) -> np.ndarray:
        """A copy of what a card's DRAM holds now. Direct, DRAM is the view: the dirty
        lines' clean bytes stand in for them (elsewhere DRAM is its own storage)."""
        dram = self.dram.copy()
        if self.direct:
            self._put_clean(self.dirty_lines(), dram)
            if self._side_mask is not None:  # what uncached stores wrote under cached lines
                offsets, values = self._side_bytes()
                dram[offsets] = values
        return dram

    def stale_bytes(self, lines: np.ndarray) -> np.ndarray:
        """Byte offsets of the bytes of LINES that the thread has not written since the line
        was prior (strict mode: sim/native/watch.c keeps the bytes it wrote, `fresh`): what a
        flush of them writes back of the cache's stale bytes. Which bytes were written is
        known, not guessed from the bytes they hold."""
        if self._fresh is None or lines.size == 0:
            return _NO_LINES
        lines = lines[self.prior[lines // LINES_PER_PAGE] == 1]
        unwritten = ~self._fresh[lines]
        lines, unwritten = lines[unwritten != 0], unwritten[unwritten != 0]
        if lines.size == 0:
            return _NO_LINES
        bits = np.unpackbits(unwritten.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
        row, byte = np.nonzero(bits)
        return lines[row] * LINE + byte

    def flush(self, find_stale: bool = False, region_start: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """kmx_flush: write the dirty lines back to DRAM; they stay cached, clean. Returns
        the lines written and (FIND_STALE) the `stale_bytes` among them from byte
        REGION_START of the span on, found before they were written. Each line goes back
        by the rule a line flush follows too (sim/native/watch.c, region_write_back); the
        pages' flags are set here."""
        lines = self.dirty_lines()
        stale = _NO_LINES
        if find_stale and lines.size:
            stale = self.stale_bytes(lines)
            stale = stale[stale >= region_start]
        # (the lines written back over bytes that reached DRAM past the cache since they were
        # cached: a Tensix stand-in's noc.write, or the uncached alias's store; the checker's)
        self.overwritten = lines[self._dram_changed[lines] != 0] if self.lines_known and lines.size else _NO_LINES
        if lines.size:
            hooks.library().region_write_back(self.state_address, lines.ctypes.data, lines.size)
        self._clean_again(np.flatnonzero(self._writable))
        self._writable[:] = 0
        if self._dirty_mask is not None:
            self._dirty_mask[:] = 0
        if self.rescued is not None:  # the region is flushed now, as it should have been
            self.rescued[:] = 0
        if stale.size:
            marked = np.unique(stale // LINE)
            self.line_events[marked] = np.maximum(self.line_events[marked], FLUSHED_STALE)
        return lines, stale

    def _clean_again(self, pages: np.ndarray) -> None:
        """PAGES were just written back: DRAM's pages changed. Direct: their clean bytes
        are no longer those loaded. Otherwise what lies under the view's copies (zeros, the
        snapshot) is no longer DRAM's page: after an invalidate, a fill copies them."""
        if self.direct:
            self._as_loaded[pages] = 0
            if self._own_pages is not None:  # DRAM's own pages, over its snapshot
                self._own_pages[pages] = 1
        else:  # the view's pages equal DRAM's, but what is under them does not
            self._copy_fill[pages] = 1  # (over a snapshot: DRAM's own pages, sim.memory.dram)

    def invalidate(self) -> np.ndarray:
        """kmx_invalidate: drop every line, dirty ones too. Returns the dirty lines whose
        writes were lost."""
        lost = self.dirty_lines()
        if lost.size and self.direct:  # DRAM is the view: put the clean bytes back
            self._put_clean(lost, self.view)
        self._mark(lost, DROPPED)
        self._drop()
        hooks.library().region_invalidated(self.state_address)  # (every level of the tile too: calls.c)
        return lost

    def _drop(self) -> None:
        """Every line leaves the cache (sim/native/calls.c, region_drop: the rule, which a
        kmx_invalidate answered in C follows too); the view's copies go back to the kernel."""
        hooks.library().region_drop(self.state_address, 1)
        self._unpainted = None
        if self.state.forget_view == hooks.FORGET_IN_PYTHON:
            self._memory.forget(0, self.view.size)

    def _mark(self, lines: np.ndarray, state: int) -> None:
        """Raise LINES (sorted) to at least STATE; a slice when they are one run."""
        if lines.size == 0:
            return
        if lines[-1] - lines[0] + 1 == lines.size:
            run = self.line_events[lines[0] : lines[-1] + 1]
            np.maximum(run, state, out=run)
        else:
            self.line_events[lines] = np.maximum(self.line_events[lines], state)

    def mark_unflushed(self) -> tuple[np.ndarray, np.ndarray]:
        """The thread has ended: remember its dirty lines as never flushed, and with the
        card-size cache the lines an eviction wrote back dirty that no flush followed.
        Returns (all of them, sorted; those an eviction rescued)."""
        lines = self.dirty_lines()
        rescued = np.flatnonzero(self.rescued) if self.rescued is not None else _NO_LINES
        if rescued.size:
            lines = np.union1d(lines, rescued)
        self.line_events[lines] = UNFLUSHED
        return lines, rescued

    def line_states(self) -> np.ndarray:
        """What happened to each line of the span: the highest of UNTOUCHED to UNFLUSHED."""
        pages = np.zeros(self.pages, dtype=np.uint8)
        pages[self.loaded == 1] = FRESH
        states = np.maximum(self.line_events, np.repeat(pages, LINES_PER_PAGE))
        # read before an invalidate: the lines a core read (sim/native/fill.c keeps them),
        # or the whole page where no line is known (a page-level access of Python's)
        read = self.read_cores != 0
        unknown = (self.read_early != 0) & ~read.reshape(self.pages, LINES_PER_PAGE).any(axis=1)
        read |= np.repeat(unknown, LINES_PER_PAGE)
        states[read] = np.maximum(states[read], READ_STALE)
        return states

    def hand_back(self) -> np.ndarray:
        """The library's hand-back when a thread ends (card mode): write back, then drop.
        Returns the lines written back. (Not a flush of the thread's: the lines keep the
        mark they had.)"""
        events = self.line_events.copy()
        written, _ = self.flush()
        self.line_events[:] = events
        self._drop()
        self._tell(HandedBack(self.state.token, written))
        return written

    def release(self) -> None:
        """Nothing will touch the lines again: drop the clean copies (DRAM and each
        line's story stay)."""
        self._clean = None
        self.state.clean = None
        self.released = True

    def _not_released(self) -> None:
        """C's line rules read the clean copies, which release dropped."""
        if self.released:
            raise RuntimeError("the region's cache was released (its thread's run has ended): its lines "
                               "are no longer known one by one; read DRAM (run.thread.read) instead")


class ClusterCache:
    """The one cache of a cluster, shared by its cores: a CachedRegion per region of its
    thread, in ID order, then one per region of the cluster it shares bank D7 with."""

    def __init__(self) -> None:
        self.regions: list[CachedRegion] = []

    def add_region(self, region: CachedRegion) -> CachedRegion:
        self.regions.append(region)
        return region

    def hand_back(self) -> None:
        for region in self.regions:
            region.hand_back()
