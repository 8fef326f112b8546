"""The coherence checker: the eight kinds of finding below (KINDS; docs/memory-model.md
says what each means for a thread), each found once per region and kind, named in the
user's own source line and explained.

| kind | found when |
| --- | --- |
| read-before-invalidate | a core reads a region page before the thread has invalidated the region (and before it wrote the page): on a card the cache may hold stale lines from before Python wrote it |
| unflushed-write | the thread ends, or calls kmx_submit, with dirty lines in a region (with the card-size cache, or lines that only an eviction wrote back) |
| invalidate-dropped-writes | kmx_invalidate drops dirty lines: their writes are lost |
| flush-wrote-stale-bytes | kmx_flush, or a line flush through CCACHE0_FLUSH64, writes back stale bytes the thread never wrote over Python's data (strict mode, where prior lines hold 0xA5 bytes) |
| stale-read | a core reads stale bytes, which it did not write: in strict mode, of a prior line (cached before Python wrote the region), on a page it wrote first (a page read before it was written has its read-before-invalidate finding, at that read); in either mode, bytes an uncached store or a stand-in's noc.write wrote to DRAM under a line the cache held |
| mixed-alias | a line is touched through the cached alias and through the uncached one |
| noc-read-unflushed | a Tensix stand-in's noc.read (sim.noc.agent) reads bytes a core wrote and has not flushed: it gets DRAM's old bytes |
| flush-over-noc-write | kmx_flush writes a line back over bytes a Tensix stand-in wrote to DRAM after the line was cached: a flush writes whole lines, and the stand-in's bytes are lost |

A stand-in's noc.write under a line the cache holds makes the line stale, as an uncached
store does: a core's read of it before an invalidate is a stale-read, which names the
stand-in and its Python line.

Reads are seen a page at a time, when a core's engine first translates the page (the TLB-fill
hook, sim/native/fill.c): the checker costs nothing on the fast path. A page read before any
invalidate is watched from then until the invalidate (or its first write), an access at a
time, so that a read-before-invalidate names the lines each core read (settle). A page that
may hold stale bytes is watched (sim/native/watch.c: one with a prior line the thread has not
wholly written, and every page of a region whose lines are known one by one): each access to
it is seen, with its bytes, so a stale read is found on any page, the reading instruction's
line with it. What the model sees so reaches the checker as events (sim.cache.events: heard),
on the cores' host thread, between turns. The first write to each page is remembered (its pc,
and its return address, so that a write inside memcpy names the caller), because an
unflushed write is only known to be one when the thread ends.

Each kind has its method, which says the kind's words (its message, a function of the bytes
the finding covers) and where it was made; `_mistake` does the rest for every kind: the
bytes clipped to the region, the finding of that kind in that region grown if there is one,
else a new one recorded (the words are said, and the source line found, only then).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Callable, Protocol

import numpy as np

from ..._records import Category, Finding, named_cores  # (km.Finding: the checker's findings are the API's, as they are)
from ..layout import CORES_PER_CLUSTER, LINE, PAGE
from .events import CacheEvent, Event, Flushed, Invalidated, Kind, LeftDirty, NocRead, NocWrote
from .model import CachedRegion

if TYPE_CHECKING:
    from ..image.dwarf import SourceLine

READ_BEFORE_INVALIDATE = "read-before-invalidate"
UNFLUSHED_WRITE = "unflushed-write"
INVALIDATE_DROPPED_WRITES = "invalidate-dropped-writes"
FLUSH_WROTE_STALE_BYTES = "flush-wrote-stale-bytes"
STALE_READ = "stale-read"
MIXED_ALIAS = "mixed-alias"
NOC_READ_UNFLUSHED = "noc-read-unflushed"
FLUSH_OVER_NOC_WRITE = "flush-over-noc-write"
KINDS = (READ_BEFORE_INVALIDATE, UNFLUSHED_WRITE, INVALIDATE_DROPPED_WRITES, FLUSH_WROTE_STALE_BYTES, STALE_READ,
         MIXED_ALIAS, NOC_READ_UNFLUSHED, FLUSH_OVER_NOC_WRITE)

# The finding an event of the cache model's may make, and the bits of the events that
# would make it (CachedRegion.found: once it is made, C no longer stops a run to tell one).
_FINDING_OF = {
    Kind.READ_BEFORE_INVALIDATE: (READ_BEFORE_INVALIDATE, 1 << Kind.READ_BEFORE_INVALIDATE),
    Kind.STALE_READ: (STALE_READ, 1 << Kind.STALE_READ),
    Kind.MIXED_CACHED: (MIXED_ALIAS, 1 << Kind.MIXED_CACHED | 1 << Kind.MIXED_UNCACHED),
    Kind.MIXED_UNCACHED: (MIXED_ALIAS, 1 << Kind.MIXED_CACHED | 1 << Kind.MIXED_UNCACHED),
    Kind.STALE_FLUSH: (FLUSH_WROTE_STALE_BYTES, 1 << Kind.STALE_FLUSH),
}

# Each kind's category (km.Category). A card refuses none of these mistakes: it carries
# each out without a trap, and what comes of it depends on what its caches happen to hold
# when (which lines an eviction wrote back, or dropped, before), so each is UNPREDICTABLE,
# not the thread's MISTAKE (a fault, which the card refuses too). Each, kind by kind:
CATEGORIES = {
    READ_BEFORE_INVALIDATE: Category.UNPREDICTABLE,  # the old bytes, if the cache still holds the lines
    UNFLUSHED_WRITE: Category.UNPREDICTABLE,  # in DRAM only if an eviction wrote them back in time
    INVALIDATE_DROPPED_WRITES: Category.UNPREDICTABLE,  # lost, unless an eviction wrote them back first
    FLUSH_WROTE_STALE_BYTES: Category.UNPREDICTABLE,  # stale bytes written back, if the cache held stale lines
    STALE_READ: Category.UNPREDICTABLE,  # the cache's bytes or DRAM's, as the cache happens to hold the line
    MIXED_ALIAS: Category.UNPREDICTABLE,  # which of the two copies a read sees depends on the cache
    NOC_READ_UNFLUSHED: Category.UNPREDICTABLE,  # DRAM's old bytes, unless an eviction wrote the new ones
    FLUSH_OVER_NOC_WRITE: Category.UNPREDICTABLE,  # the stand-in's bytes lost, if the line was cached before
}


def _at(source) -> str:
    return f"at line {source.line} " if source is not None else ""


def _bytes(start: int, end: int, size: int) -> str:
    if start == 0 and end == size:
        return f"all {size} bytes"
    return f"bytes {start} to {end - 1}"


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + f" and {parts[-1]}"


def _who(cores: dict[int, tuple[int, int]], default: str = "the thread") -> str:
    """The cores of a finding, in words: "core 0", "cores 0 and 2" (DEFAULT: none known)."""
    return named_cores(cores) if cores else default


def _each(cores: dict[int, tuple[int, int]], size: int) -> str:
    """Each core's bytes, after a finding's (nothing for one core): ": core 0 bytes 0 to 63 and ..."."""
    if len(cores) < 2:
        return ""
    return ": " + _and([f"core {n} {_bytes(start, end, size)}" for n, (start, end) in sorted(cores.items())])


def _span_of(lines: np.ndarray) -> tuple[int, int]:
    """The span's bytes [start, end) from the first of LINES to the last ((0, 0): none)."""
    if lines.size == 0:
        return 0, 0
    return int(lines.min()) * LINE, (int(lines.max()) + 1) * LINE


# A kind's words: given a new finding's key, core and source line, its message as a function
# of the bytes it covers (start, end), which grow as the mistake is found again.
Words = Callable[[tuple[int, str], int, "SourceLine | None"], Callable[[int, int], str]]


class Region(Protocol):
    """A region as the checker needs it (sim.machine.cluster.Region is one)."""

    name: str
    id: int
    offset: int  # where the region starts in its span
    size: int
    address: int  # the region's first byte
    cache: CachedRegion


class Sources(Protocol):
    """What names a finding's source line (sim.hart.explain.Explainer is one)."""

    def users_line(self, pc: int, ra: int | None = None) -> "SourceLine | None": ...

    def frames_of(self, pc: int, returns: tuple[int, ...]) -> list: ...

    def user_frame(self, frames: list): ...


class Core(Protocol):
    """A core as the checker needs it (sim.hart.core.Core is one)."""

    number: int

    def users_frame(self, pc: int | None = None): ...

    def call_pc(self) -> int: ...


class Checker:
    """The findings of the thread on cluster NUMBER, in COHERENCE mode. EXPLAINER names
    source lines. It hears what happened at the cache's door as events (sim.cache.events:
    heard): what C saw an access at a time, and the region-wide calls (a flush, an
    invalidate, a stand-in's noc call, the dirty lines at a submission or the end)."""

    def __init__(self, number: int, coherence: str, explainer: Sources) -> None:
        self.number = number
        self.coherence = coherence
        self._explainer = explainer
        self._watched: dict[int, "Region"] = {}  # by region ID: those whose events it hears
        self.on_finding: Callable[[Finding], None] | None = None  # told of each new finding (sim.observe.timeline)
        self._found: dict[tuple[int, str], Finding] = {}
        # (region ID, page, cached alias?): the core and source line of the page's first
        # touch through that alias, once the region was touched through the uncached one
        self._first_touch: dict[tuple[int, int, bool], CacheEvent] = {}
        # region ID: (core, source line) of the first access for which the L3 evicted a
        # dirty line of the region (the card-size cache): a missing flush rescued
        self._rescued_at: dict[int, CacheEvent] = {}
        self._explain: dict[tuple[int, str], Callable[[int, int], str]] = {}  # each finding's message, for its bytes
        # each finding's cores, and the bytes of the region each touched: core -> (start, end)
        self._cores: dict[tuple[int, str], dict[int, tuple[int, int]]] = {}
        # stale-read findings whose bytes a core read again and again (a loop that waits on them)
        self._again: set[tuple[int, str]] = set()
        # by region ID, the region of a read-before-invalidate or a stale-read (settle's); and for
        # a read-before-invalidate, the other cores that read it (core, start, end)
        self._regions: dict[int, "Region"] = {}
        self._others: dict[tuple[int, str], list[tuple[int, int, int]]] = {}
        self.on_change: Callable[[Finding], None] | None = None  # told of a finding that changed (grown, settled)
        # region ID: the Tensix stand-ins' writes to its DRAM since its last invalidate, the
        # last of each span, oldest first: (span start, end) -> (stand-in, file, line) (sim.noc.agent)
        self._noc_writes: dict[int, dict[tuple[int, int], tuple[str, str | None, int | None]]] = {}

    def has(self, region: "Region", kind: str) -> bool:
        return (region.id, kind) in self._found

    @property
    def findings(self) -> list[Finding]:
        self.settle()
        return sorted(self._found.values(), key=lambda f: f.region_id)  # then in the order found

    def watch(self, region: "Region") -> None:
        """Hear REGION's events (the cache model's, sim.cache.events; its fill hook also
        keeps the pc, the return address and the core of each page's first write)."""
        self._watched[region.id] = region

    # -- where a core is -------------------------------------------------------------------

    def _here(self, core: "Core | None", pc: int | None = None):
        """(core number, source line) of what CORE is doing now (at PC), by its frames."""
        if core is None:
            return 0, None
        frame = core.users_frame(pc)
        return core.number, frame.source if frame is not None else None

    def _site(self, event: CacheEvent):
        """(core number, source line) of EVENT's access, by the frames kept with it (None,
        None: Python's own access, or a stand-in's)."""
        if event.core is None:
            return None, None
        frame = self._explainer.user_frame(self._explainer.frames_of(event.pc, event.returns))
        return event.core, frame.source if frame is not None else None

    # -- events -------------------------------------------------------------------------------

    def heard(self, event: Event) -> None:
        """What happened at the cache's door (sim.cache.events), in order: C's events, an
        access at a time (sim/native/events.c), and the region-wide ones Python raises."""
        region = self._watched.get(event.region)
        if region is None:
            return
        if not isinstance(event, CacheEvent):
            self._heard_region(region, event)
            return
        kind, offset, core = event.kind, event.offset, event.core

        def site():  # (its source line, looked up only for a new finding: most events make none)
            return self._site(event)

        if kind == Kind.READ_BEFORE_INVALIDATE:
            self._read_before_invalidate(region, offset // PAGE, core, site)
        elif kind == Kind.STALE_READ:
            self._stale_read(region, offset, event.size, event.under, core, site)
        elif kind in (Kind.FIRST_CACHED, Kind.FIRST_UNCACHED):
            self._first_touch[(region.id, offset // PAGE, kind == Kind.FIRST_CACHED)] = event
        elif kind in (Kind.MIXED_CACHED, Kind.MIXED_UNCACHED):
            self._mixed(region, offset, kind == Kind.MIXED_CACHED, core, site, event.before)
        elif kind == Kind.RESCUED and region.id not in self._rescued_at:
            self._rescued_at[region.id] = event
        elif kind == Kind.STALE_FLUSH and core is not None:
            stale = np.array([offset, offset + event.size - 1])  # (the first and the last stale byte)
            self.stale_flush(region, stale, how="a line flush (CCACHE0_FLUSH64)", site=site, by=core)
        found = _FINDING_OF.get(kind)
        if found is not None and (region.id, found[0]) in self._found:  # (C's next such event waits: events.c)
            region.cache.state.found |= found[1]

    def _heard_region(self, region: "Region", event: Event) -> None:
        """A region-wide event of the door's (raised in Python: sim.cache.model, *_by)."""
        if isinstance(event, Flushed):
            self.stale_flush(region, event.stale, event.core)
            if event.overwritten.size:
                self.flush_over_noc(region, event.overwritten, event.core)
        elif isinstance(event, Invalidated):
            self.noc_forget(region)  # (no line of it is stale now)
            if event.lost.size:
                self.dropped(region, event.lost, event.core)
        elif isinstance(event, NocRead):
            if event.dirty.size:
                call = event.call
                self.unflushed_read(region, event.dirty, event.agent.name, call.file, call.line)
        elif isinstance(event, NocWrote):
            call = event.call
            self.noc_wrote(region, event.start, event.end, event.agent.name, call.file, call.line)
        elif isinstance(event, LeftDirty):
            self.unflushed(region, event.lines, submit_core=event.submit_core, rescued=event.rescued)

    def _read_before_invalidate(self, region: "Region", page: int, core: int | None, site) -> None:
        """Core CORE read PAGE before any invalidate (fill.c; each core's first read of each
        page), at SITE (a function that finds it). The finding is the first core's, at its line; the bytes each core
        read are known line by line (read_cores) and named when the findings are read
        (settle), not as they come."""

        def words(key, core: int, source) -> Callable[[int, int], str]:
            where = _at(source)
            return lambda start, end: (
                f"core {core} read region {region.name!r} ({_bytes(start, end, region.size)}) "
                f"{where}before the thread invalidated it.{self._others_text(key, region)} Python wrote "
                "the region to DRAM, past the cache, and the cache may still hold stale lines from "
                "before: on a card the core can read them instead of Python's data. Call "
                f"kmx_invalidate({region.id}) before the first read."
            )

        self._regions[region.id] = region  # (settle names the lines each core read)
        self._mistake(READ_BEFORE_INVALIDATE, region, page * PAGE, (page + 1) * PAGE, core, site, words,
                      again=False)

    def _others_text(self, key, region: "Region") -> str:
        others = self._others.get(key)
        if not others:
            return ""
        said = _and([f"core {n} ({_bytes(start, end, region.size)})" for n, start, end in others])
        return f" {said[0].upper()}{said[1:]} read it before the invalidate too."

    def settle(self) -> None:
        """Name in each read-before-invalidate finding the bytes its core read (from its
        first line to its last), and those the other cores read: the lines are kept an
        access at a time (sim/native/fill.c, read_before_invalidate). While the cache's
        memory is there; called when the findings are read and before it goes."""
        for (region_id, kind), found in list(self._found.items()):
            region = self._regions.get(region_id)
            if kind == STALE_READ and region is not None:
                self._settle_again((region_id, kind), region, found)
            if kind != READ_BEFORE_INVALIDATE or region is None:
                continue
            first = region.offset // LINE
            bits = region.cache.read_cores[first : (region.offset + region.size + LINE - 1) // LINE]
            key = (region_id, kind)
            mask = (1 << found.core) | 0x80  # (0x80: Python's reads on its behalf)
            start, end = self._read_by(region, bits, first, mask)
            if not end:  # (no line known: page-level reads only, Python's own)
                pages = np.flatnonzero(region.cache.read_early & np.uint8(mask))
                start, end = self._clip(region, int(pages[0]) * PAGE, (int(pages[-1]) + 1) * PAGE) if pages.size else (
                    found.start, found.end)
            others = [(n, *self._read_by(region, bits, first, 1 << n)) for n in range(CORES_PER_CLUSTER)]
            self._others[key] = [(n, a, b) for n, a, b in others if b and n != found.core]
            # (its message names the first core's bytes, then the others'; its fields, all of them)
            self._cores[key] = {found.core: (start, end), **{n: (a, b) for n, a, b in self._others[key]}}
            low, high = min(a for a, _ in self._cores[key].values()), max(b for _, b in self._cores[key].values())
            settled = replace(found, start=low, end=high, message=self._explain[key](start, end),
                              cores=self._cores_of(key))
            if settled != found:
                self._found[key] = settled
                if self.on_change is not None:
                    self.on_change(settled)

    def _settle_again(self, key, region: "Region", found: Finding) -> None:
        """A stale-read whose bytes were read again from the same byte (a loop that waits
        on them, the stand-in's flag, say): its advice is to invalidate inside the loop."""
        if key in self._again or not region.cache.read_again(found.start + region.offset, found.end + region.offset):
            return
        self._again.add(key)
        settled = replace(found, message=self._explain[key](found.start, found.end))
        self._found[key] = settled
        if self.on_change is not None:
            self.on_change(settled)

    def _before(self, region: "Region", page: int, cached: bool, before: tuple[int, int, int | None]):
        """(core, source line) of the first touch of PAGE through the CACHED alias (or the
        uncached one); for a cached touch from before the region was watched (the thread's
        first uncached access), BEFORE: the page's first read the fill hook saw, or its
        first write, as they were at the event (pc, ra, core)."""
        known = self._first_touch.get((region.id, page, cached))
        if known is not None:
            return self._site(known)
        pc, ra, core = before
        if cached and pc:
            return core, self._explainer.users_line(pc, ra)
        return None, None

    def _mixed(self, region: "Region", offset: int, now_cached: bool, core: int | None, site,
               before: tuple[int, int, int | None]) -> None:
        """The line at OFFSET of REGION's span was touched through both aliases, by core
        CORE at SITE (a function that finds it); NOW_CACHED: the cached one is this access's.
        BEFORE: the page's first cached touch the fill hook kept then (pc, ra, core)."""

        def words(key, core: int, source) -> Callable[[int, int], str]:
            _, other = self._before(region, offset // PAGE, not now_cached, before)
            this_way, that_way = ("cached", "uncached") if now_cached else ("uncached", "cached")
            where = _at(source)
            earlier = f"at line {other.line}" if other is not None else "before"
            return lambda start, end: (
                f"core {core} touched region {region.name!r} ({_bytes(start, end, region.size)}) "
                f"through the {this_way} alias {where}after the thread touched the same lines "
                f"through the {that_way} alias {earlier}. The two are not coherent: the "
                "uncached alias reads and writes DRAM past the cache, so a store through one "
                "is not seen through the other while the cache holds the line (until a flush "
                "writes a dirty line back, or an invalidate drops a stale one). Use one alias "
                "for a line; to change, flush the line (kmx_flush, or CCACHE0_FLUSH64) "
                "before the uncached access, and drop it again before the next cached one."
            )

        self._mistake(MIXED_ALIAS, region, offset, offset + LINE, core, site, words)

    def noc_wrote(self, region: "Region", start: int, end: int, agent: str, file: str | None, line: int | None) -> None:
        """Tensix stand-in AGENT's noc.write at FILE:LINE wrote [START, END) of REGION's span
        to DRAM (a stale read of those bytes names it)."""
        writes = self._noc_writes.setdefault(region.id, {})
        writes.pop((start, end), None)  # (a span written again is the newest: a stand-in that polls stays one entry)
        writes[(start, end)] = (agent, file, line)
        region.cache.state.noc_writes = 1  # (an invalidate of it is Python's: sim/native/calls.c)

    def noc_forget(self, region: "Region") -> None:
        """REGION's lines were all dropped: no stand-in's write lies under a cached line of it."""
        self._noc_writes.pop(region.id, None)
        region.cache.state.noc_writes = 0

    def _noc_writer(self, region: "Region", offset: int):
        """The last stand-in's write that covered OFFSET of REGION's span: (name, file, line), or None."""
        for (start, end), writer in reversed(self._noc_writes.get(region.id, {}).items()):
            if start // LINE <= offset // LINE < -(-end // LINE):
                return writer
        return None

    def unflushed_read(self, region: "Region", lines: np.ndarray, agent: str, file: str | None,
                       line: int | None) -> None:
        """Tensix stand-in AGENT's noc.read at FILE:LINE read LINES of REGION from DRAM while a
        core's writes to them were still dirty in the cache."""

        def words(key, core: int, source) -> Callable[[int, int], str]:
            wrote = f" at line {source.line}" if source is not None else ""
            at = f" at {PurePath(file).name}:{line}" if file else ""
            return lambda start, end: (
                f"agent {agent!r} read region {region.name!r} ({_bytes(start, end, region.size)}) from "
                f"DRAM{at} (noc.read), but {_who(self._cores[key])} had written those bytes{wrote}"
                f"{_each(self._cores[key], region.size)} and not flushed them: "
                "they were still dirty in the X280's cache, so the agent read DRAM's old bytes. A "
                "Tensix core reads DRAM past that cache. Call "
                f"kmx_flush({region.id}) after the last write and before the thread says the data "
                "is ready (before it writes or flushes its flag)."
            )

        self._mistake(NOC_READ_UNFLUSHED, region, *_span_of(lines), None, lambda: self._writer(region, lines), words,
                      cores=self._writers(region, lines), agent=(agent, file, line))

    def flush_over_noc(self, region: "Region", lines: np.ndarray, core: "Core") -> None:
        """CORE's kmx_flush of REGION wrote LINES back over bytes that reached DRAM past the
        cache since the lines were cached: a Tensix stand-in's (those named here; the uncached
        alias's own stores have their mixed-alias)."""
        writers = [(int(line), self._noc_writer(region, int(line) * LINE)) for line in lines.tolist()]
        writers = [(line, writer) for line, writer in writers if writer is not None]
        if not writers:
            return
        agent, file, line = writers[0][1]

        def words(key, number: int, source) -> Callable[[int, int], str]:
            where = _at(source)
            at = f" at {PurePath(file).name}:{line}" if file else ""
            return lambda start, end: (
                f"kmx_flush({region.id}) {where}wrote lines of region {region.name!r} "
                f"({_bytes(start, end, region.size)}) back over bytes agent {agent!r} had written to DRAM"
                f"{at} (noc.write) after the cache took the lines: a flush writes whole 64-byte lines, "
                "so DRAM got the cache's older copy of those bytes, and the agent's are lost. Keep what "
                "the Tensix side writes and what the thread writes on lines of their own (a flag each "
                f"way, 64 bytes apart), or drop the lines (kmx_invalidate({region.id})) before the "
                "thread writes them."
            )

        self._mistake(FLUSH_OVER_NOC_WRITE, region, *_span_of(np.array([line for line, _ in writers])), core.number,
                      lambda: self._here(core, core.call_pc()), words, agent=(agent, file, line))

    def _stale_read(self, region: "Region", offset: int, size: int, under: bool, core: int | None, site) -> None:
        """Core CORE's read at SITE (a function that finds it) of REGION's stale bytes
        [OFFSET, OFFSET + SIZE) of the span: UNDER,
        bytes DRAM changed under the cached line (a Tensix stand-in's noc.write names it),
        else a prior line's (strict mode)."""
        why = ("while an uncached store wrote DRAM under them" if under else
               "from before Python wrote the region")
        fix = (f"Drop the lines after an uncached store (kmx_invalidate({region.id}), or "
               "CCACHE0_FLUSH64 of each) before a cached read of them." if under else
               f"Call kmx_invalidate({region.id}) before the thread first reads or writes the region.")

        def words(key, core: int, source) -> Callable[[int, int], str]:
            where = _at(source)
            return lambda start, end: (
                f"{_who(self._cores[key])} read stale bytes of region {region.name!r} "
                f"({_bytes(start, end, region.size)}{_each(self._cores[key], region.size)})"
                f"{' ' + where.strip() if where else ''}: the "
                f"cache held those lines {why}, and the thread had not written those bytes, so "
                "it read what the cache held instead of "
                + ("DRAM's bytes." if under else "Python's data (in strict mode 0xA5 bytes, 2779096485 "
                   "as a uint32). A write refills nothing: the bytes the thread did not write stay as "
                   "the cache held them.")
                + f" {fix}"
            )

        self._regions[region.id] = region  # (settle looks for a read made again)
        writer = self._noc_writer(region, offset) if under else None
        if writer is not None:
            words = self._noc_stale_words(region, writer)
        self._mistake(STALE_READ, region, offset, offset + size, core, site, words, agent=writer)

    def _noc_stale_words(self, region: "Region", writer) -> Words:
        """The words of a stale-read of bytes of REGION that Tensix stand-in WRITER (name,
        file, line) had written to DRAM under the cached lines."""
        agent, file, line = writer
        at = f" at {PurePath(file).name}:{line}" if file else ""

        def words(key, core: int, source) -> Callable[[int, int], str]:
            where = _at(source)
            return lambda start, end: (
                f"{_who(self._cores[key])} read stale bytes of region {region.name!r} "
                f"({_bytes(start, end, region.size)}{_each(self._cores[key], region.size)})"
                f"{' ' + where.strip() if where else ''}: agent "
                f"{agent!r} had written them to DRAM{at} (noc.write), past the X280's cache, while the "
                "cache held those lines from before, so the core read the cache's old bytes instead of "
                "DRAM's new ones. "
                + (f"It read them again and again, as a loop that waits on them (a flag) does: the cache "
                   "keeps its old copy until an invalidate drops it, so the loop never sees the new value. "
                   f"Call kmx_invalidate({region.id}) inside the loop, before each read of them."
                   if key in self._again else
                   f"Call kmx_invalidate({region.id}) after the thread sees that the data is ready (its "
                   "flag) and before it reads the data.")
            )

        return words

    def _writer(self, region: "Region", lines: np.ndarray):
        """(core, source line) of the first write to the first of LINES."""
        cache = region.cache
        page = int(lines[0]) * LINE // PAGE
        if not cache.write_pc[page]:
            return None, None
        return int(cache.write_core[page]), self._explainer.users_line(int(cache.write_pc[page]), int(cache.write_ra[page]))

    def _writers(self, region: "Region", lines: np.ndarray) -> dict[int, tuple[int, int]]:
        """Each core that wrote LINES first since they were clean (a page's first write is
        known: sim/native/fill.c), and the bytes of its lines among them."""
        cores = region.cache.write_core[lines * LINE // PAGE]
        out = {}
        for number in np.unique(cores[cores >= 0]).tolist():
            out[number] = self._line_range(region, lines[cores == number])
        return {n: (a, b) for n, (a, b) in out.items() if a < b}

    def unflushed(self, region: "Region", lines: np.ndarray, submit_core: "Core | None" = None,
                  rescued: np.ndarray | None = None) -> None:
        """The thread ended (or SUBMIT_CORE called kmx_submit) with LINES of REGION dirty,
        or written back only by the L3's evictions (RESCUED, of them: the card-size cache)."""

        def words(key, core: int, source) -> Callable[[int, int], str]:
            if rescued is not None and rescued.size:
                return self._rescued_message(region, key, source, int(rescued.size))
            if submit_core is not None:
                _, at = self._here(submit_core, submit_core.call_pc())
                when = f"when core {submit_core.number} called kmx_submit" + (f" at line {at.line}" if at else "")
                why = (
                    "A submission says the work so far is done, but these bytes were only in the "
                    "cache: whatever reads the region's DRAM then (a Tensix kernel, the host) gets "
                    f"the old bytes. Call kmx_flush({region.id}) before kmx_submit()."
                )
            else:
                when = "when the thread ended"
                if self.coherence == "strict":
                    why = "Nothing hands them back in strict mode, so they never reached DRAM and Python reads the old bytes. On a card the library's hand-back would write them when the thread ended, too late for anything that reads the region's DRAM before (a Tensix kernel, the host)."
                else:
                    why = "The library's hand-back wrote them to DRAM when the thread ended, so Python sees them here. That comes only at the end: anything that reads the region's DRAM before it (a Tensix kernel, the host) gets the old bytes, and in strict mode, where nothing is handed back, so does Python."
                why += f" Call kmx_flush({region.id}) after the last write."
            where = _at(source)
            return lambda start, end: (
                f"{_who(self._cores[key])} wrote region {region.name!r} ({_bytes(start, end, region.size)}"
                f"{_each(self._cores[key], region.size)}){' ' + where.strip() if where else ''}, and the lines "
                f"were still dirty in the cache {when}. {why}"
            )

        self._mistake(UNFLUSHED_WRITE, region, *_span_of(lines), None, lambda: self._writer(region, lines), words,
                      cores=self._writers(region, lines))
        if self.has(region, UNFLUSHED_WRITE):  # (a submission need not compare its pages again: sim.cache.model)
            region.cache.unflushed_found = True

    def _rescued_message(self, region: "Region", key, source, count: int) -> Callable[[int, int], str]:
        """The unflushed-write KEY's message when COUNT of its lines reached DRAM only by the
        L3's evictions (the card-size cache); its first core wrote them first, at SOURCE."""
        rescued = self._rescued_at.get(region.id)
        _, at = self._site(rescued) if rescued is not None else (None, None)
        where, evicted_where = _at(source), (f" at line {at.line}" if at is not None else "")
        return lambda start, end: (
            f"{_who(self._cores[key])} wrote region {region.name!r} ({_bytes(start, end, region.size)}"
            f"{_each(self._cores[key], region.size)}){' ' + where.strip() if where else ''}, and never flushed the lines. "
            f"{count} of them reached DRAM anyway, rescued by eviction{evicted_where}: the L3 "
            "needed their place for another line and wrote them back. On a card that "
            "happens only when the cache is full enough, which depends on everything else "
            "the tile runs: it may work one day and not the next. "
            f"Call kmx_flush({region.id}) after the last write."
        )

    def dropped(self, region: "Region", lines: np.ndarray, core: "Core") -> None:
        """CORE's kmx_invalidate dropped LINES of REGION, which were dirty."""

        def words(key, number: int, source) -> Callable[[int, int], str]:
            _, written_at = self._writer(region, lines)
            wrote = f", written at line {written_at.line}," if written_at is not None else ""
            where = _at(source)
            return lambda start, end: (
                f"kmx_invalidate({region.id}) {where}dropped dirty lines of region "
                f"{region.name!r} ({_bytes(start, end, region.size)}){wrote} before they "
                "were flushed: those writes are lost, and DRAM keeps the old bytes. Flush "
                f"the region (kmx_flush({region.id})) before invalidating it, or invalidate "
                "it before the thread writes, not after."
            )

        self._mistake(INVALIDATE_DROPPED_WRITES, region, *_span_of(lines), core.number,
                      lambda: self._here(core, core.call_pc()), words)

    def stale_flush(self, region: "Region", stale: np.ndarray, core: "Core | None" = None,
                    how: str | None = None, site=None, by: int | None = None) -> None:
        """CORE's kmx_flush (HOW: another flush, core BY's, at SITE: a function that finds
        its core and source line) wrote back STALE bytes (span byte offsets) the thread
        never wrote."""
        if stale.size == 0:
            return
        flush = how or f"kmx_flush({region.id})"

        def words(key, number: int, source) -> Callable[[int, int], str]:
            where = _at(source)
            return lambda start, end: (
                f"{flush} {where}wrote back bytes of region {region.name!r} "
                f"({_bytes(start, end, region.size)}) that the thread never wrote: they "
                "came from stale lines in the cache, which the thread had written only in "
                "part, and they overwrote Python's data in DRAM. Call "
                f"kmx_invalidate({region.id}) before the thread first writes the region."
            )

        self._mistake(FLUSH_WROTE_STALE_BYTES, region, int(stale.min()), int(stale.max()) + 1,
                      by if site is not None else core.number,
                      site if site is not None else (lambda: self._here(core, core.call_pc())), words)

    # -- one finding, of any kind --------------------------------------------------------------

    def _mistake(self, kind: str, region: "Region", start: int, end: int, core: int | None, site, words: Words,
                 *, cores: dict[int, tuple[int, int]] | None = None, agent: tuple | None = None,
                 again: bool = True) -> None:
        """The mistake KIND in bytes [START, END) of REGION's span, clipped to the region
        (nothing where none of them is in it). A finding of KIND in REGION already made
        grows by them (AGAIN; CORE's bytes, or CORES', each its own); else a new one names
        SITE, (core number, source line) or a function that finds them (called only then),
        and AGENT, a Tensix stand-in's (name, file, line). WORDS(key, core, source) gives
        its message as a function of the bytes it covers (start, end)."""
        start, end = self._clip(region, start, end)
        if start >= end:
            return
        key = (region.id, kind)
        if key in self._found:
            if again:
                self._extend(key, start, end, core, cores)
            return
        number, source = site() if callable(site) else site
        number = 0 if number is None else number
        self._record(key, number, region, start, end, source, words(key, number, source), agent=agent, cores=cores)

    # -- bookkeeping ---------------------------------------------------------------------------

    def _read_by(self, region: "Region", bits: np.ndarray, first: int, mask: int) -> tuple[int, int]:
        """The bytes of REGION from the first to the last line whose BITS (read_cores from
        span line FIRST on) have any of MASK: (start, end), (0, 0) for none."""
        hit = (bits & np.uint8(mask)) != 0  # (a byte a line: no array of line numbers)
        if not hit.any():
            return 0, 0
        low, high = int(hit.argmax()), hit.size - 1 - int(hit[::-1].argmax())
        return self._clip(region, (first + low) * LINE, (first + high + 1) * LINE)

    @staticmethod
    def _clip(region: "Region", start: int, end: int) -> tuple[int, int]:
        """Span offsets [START, END) as region offsets, clipped to the region."""
        return max(start - region.offset, 0), min(end - region.offset, region.size)

    def _line_range(self, region: "Region", lines: np.ndarray) -> tuple[int, int]:
        """The bytes of REGION from the first of LINES to the last, clipped: (start, end)."""
        return self._clip(region, *_span_of(lines)) if lines.size else (0, 0)

    def _record(self, key, core: int, region: "Region", start: int, end: int, source,
                message: Callable[[int, int], str], agent: tuple | None = None,
                cores: dict[int, tuple[int, int]] | None = None) -> None:
        """A new finding: CORE's first (CORES: each core's bytes, where several made it; empty:
        no core's, Python's own)."""
        self._explain[key] = message
        self._cores[key] = dict(cores) if cores is not None else {core: (start, end)}
        name, agent_file, agent_line = agent or (None, None, None)
        found = self._found[key] = Finding(
            kind=key[1], cluster=self.number, core=core, region=region.name,
            region_id=region.id, start=start, end=end,
            file=source.file if source is not None else None,
            line=source.line if source is not None else None,
            message=message(start, end), agent=name, agent_file=agent_file, agent_line=agent_line,
            cores=self._cores_of(key), category=CATEGORIES[key[1]],
        )
        if self.on_finding is not None:
            self.on_finding(found)

    def _cores_of(self, key) -> tuple[tuple[int, int, int], ...]:
        return tuple((n, start, end) for n, (start, end) in sorted(self._cores[key].items()))

    def _extend(self, key, start: int, end: int, core: int | None = None,
                cores: dict[int, tuple[int, int]] | None = None) -> None:
        """The same mistake again, in [START, END): by CORE (or CORES, each its bytes)."""
        found = self._found[key]
        known = self._cores[key]
        for n, (low, high) in (cores or ({core: (start, end)} if core is not None else {})).items():
            was = known.get(n)
            known[n] = (low, high) if was is None else (min(was[0], low), max(was[1], high))
        start, end = min(start, found.start), max(end, found.end)
        changed = replace(found, start=start, end=end, message=self._explain[key](start, end), cores=self._cores_of(key))
        if changed != found:
            self._found[key] = changed
            if self.on_change is not None:  # (the trace and the story say what run.findings says)
                self.on_change(changed)
