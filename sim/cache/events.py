"""What happened at the cache's door, as typed events, for whoever listens (as gem5's
probe listeners do): the checker (sim.cache.checker.Checker.heard) and the run's observers
(sim.observe.observers.Observers.heard: the story, the trace, the profile).

Two kinds of event, one queue, one order:

- Raised in C (CacheEvent): what the cache model saw an access at a time: a stale read, a
  stale line written back by a line flush, a line touched through both aliases, the first
  touch of a page through each, a dirty line the card-size cache's eviction rescued, a read
  before any invalidate. Each names its region, its bytes, the core whose access it was,
  the access's pc and the return addresses of its frames. sim/native/events.c raises them
  inside the engine's callbacks and the interpreter, where the access is made, and keeps
  them in the cluster's queue (CacheEvents), in order. Python hears them here, where the
  turn loop hands it the cores (sim.machine.card, between turns), before any point the
  observers hear (sim.observe.observers: catch_up), and when the thread ends: never
  inside the engine.
- Raised in Python, by the door's region-wide operations (sim.cache.model.CachedRegion's
  `*_by` methods), each with who did it: a kmx_flush (Flushed) or kmx_invalidate
  (Invalidated) and the lines it wrote back or lost; a Tensix stand-in's noc.read (NocRead)
  and noc.write (NocWrote); the dirty lines left at a submission or the thread's end
  (LeftDirty); the library's hand-back (HandedBack). The queue's C events are told first:
  they happened before.

What is not an event: a core's fill, read and write one at a time. Those stay in C (a
Python call for each would cost more than the access): the story reads the lines' states
at its steps (CachedRegion.line_states), the profile counts the card-size cache's levels
in C (sim/native/profile.c).
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Protocol

import numpy as np

from ..native import hooks


class Kind(IntEnum):
    """hooks.h's EVENT_* that events.c queues."""

    STALE_READ = hooks.EVENT_STALE_READ
    STALE_FLUSH = hooks.EVENT_STALE_FLUSH
    MIXED_CACHED = hooks.EVENT_MIXED_CACHED
    MIXED_UNCACHED = hooks.EVENT_MIXED_UNCACHED
    FIRST_CACHED = hooks.EVENT_FIRST_CACHED
    FIRST_UNCACHED = hooks.EVENT_FIRST_UNCACHED
    RESCUED = hooks.EVENT_RESCUED
    READ_BEFORE_INVALIDATE = hooks.EVENT_READ_BEFORE_INVALIDATE


@dataclass(frozen=True)
class CacheEvent:
    """KIND, about [OFFSET, OFFSET + SIZE) of REGION's span (its ID), seen at core CORE's
    access (None: Python's own, or a Tensix stand-in's) at PC, whose frames' return
    addresses are RETURNS (innermost first). UNDER: a stale read's bytes are ones DRAM
    changed under the cached line (an uncached store's, a stand-in's), not a prior line's
    (strict mode: cached from before Python wrote the region)."""

    kind: Kind
    region: int
    offset: int
    size: int
    under: bool
    core: int | None
    pc: int | None
    returns: tuple[int, ...]
    before: tuple[int, int, int | None] = (0, 0, None)  # a mixed alias's: (pc, ra, core) of the page's first cached touch the fill hook kept

    @staticmethod
    def of(raw: hooks.CacheEvent) -> "CacheEvent":
        """The event C queued as RAW."""
        returns = []
        for address in raw.returns:
            if not address:
                break
            returns.append(int(address))
        core = None if raw.core < 0 else int(raw.core)
        before = (int(raw.before_pc), int(raw.before_ra), None if raw.before_core < 0 else int(raw.before_core))
        return CacheEvent(Kind(raw.kind), int(raw.region), int(raw.offset), int(raw.size), bool(raw.under), core,
                          int(raw.pc) if core is not None else None, tuple(returns), before)


# -- raised in Python, by the door's region-wide operations (sim.cache.model) -------------------
# REGION is the region's ID; CORE the sim.hart.core.Core whose kmx call it was; AGENT the
# sim.noc.agent.Agent whose noc call, and CALL that call (its offset, size, source line).
# Lines are indices of lines of the region's span; bytes are offsets in it.


@dataclass(frozen=True, eq=False)
class Flushed:
    """CORE's kmx_flush wrote LINES back (they stay cached, clean). STALE: the bytes among
    them that were stale (strict mode's prior lines); OVERWRITTEN: the lines written back
    over bytes that reached DRAM past the cache since they were cached."""

    region: int
    core: Any
    lines: np.ndarray
    stale: np.ndarray
    overwritten: np.ndarray


@dataclass(frozen=True, eq=False)
class Invalidated:
    """CORE's kmx_invalidate dropped every line of the region; LOST: those that were dirty."""

    region: int
    core: Any
    lost: np.ndarray


@dataclass(frozen=True, eq=False)
class NocRead:
    """AGENT's noc.read (CALL) read DRAM past the cache; DIRTY: lines of it the cache held
    dirty then (DRAM had their old bytes)."""

    region: int
    agent: Any
    call: Any
    dirty: np.ndarray


@dataclass(frozen=True, eq=False)
class NocWrote:
    """AGENT's noc.write (CALL) wrote bytes [START, END) of the span to DRAM, past the cache."""

    region: int
    agent: Any
    call: Any
    start: int
    end: int


@dataclass(frozen=True, eq=False)
class LeftDirty:
    """LINES were dirty when SUBMIT_CORE called kmx_submit (None: when the thread ended);
    RESCUED: those of them the card-size cache's evictions wrote back, no flush after."""

    region: int
    lines: np.ndarray
    rescued: np.ndarray
    submit_core: Any = None


@dataclass(frozen=True, eq=False)
class HandedBack:
    """The library's hand-back as the thread ended (card mode) wrote LINES back, then
    dropped every line."""

    region: int
    lines: np.ndarray


Event = CacheEvent | Flushed | Invalidated | NocRead | NocWrote | LeftDirty | HandedBack


class Listener(Protocol):
    def heard(self, event: Event) -> None: ...


class CacheEvents:
    """A cluster's queue of the cache model's events: REGIONS' (each a CachedRegion, by its
    ID) raise them into it; LISTENERS hear them, in order, when they are delivered."""

    def __init__(self) -> None:
        self.native = hooks.CacheEvents()
        self.listeners: list[Listener] = []
        self.host: int | None = None  # the host thread that runs the cluster's cores (sim.machine.card)
        self._delivering = False
        self._acting = None  # (the core whose call Python answers: acting)
        self.core: int | None = None  # while an event is told: the core whose access it was

    def acting(self, core) -> None:
        """Python's own accesses, until None, are CORE's (a sim.hart.core.Core in a kmx call):
        at the call's pc, with the core's frames (events.c)."""
        if core is None or core.engine is None:
            if self._acting is not None:
                self._acting.native.site_pc = 0
            self.native.acting, self._acting = None, None
            return
        core.native.site_pc = core.call_pc()
        self.native.acting, self._acting = ctypes.addressof(core.native), core

    def attach(self, region_id: int, cache) -> None:
        """CACHE (a region's CachedRegion) raises its events here, as region REGION_ID's."""
        cache.state.events = ctypes.pointer(self.native)
        cache.state.token = region_id
        cache.events = self  # (the door's events raised in Python: sim.cache.model, CachedRegion.*_by)

    def deliver(self, anywhere: bool = False) -> None:
        """Tell the listeners the events queued since they last heard, in order: on the
        cores' host thread (C adds to the queue while they run there), before any ran, or
        ANYWHERE once none runs again."""
        native = self.native
        if not native.count or self._delivering:
            return
        if self.host is not None and threading.get_ident() != self.host and not anywhere:
            return
        self._delivering = True
        try:
            while native.count:
                events = [CacheEvent.of(native.events[i]) for i in range(native.count)]
                native.count = 0
                for event in events:
                    self.core = event.core  # (the core whose access it was: the one that ran then)
                    for listener in self.listeners:
                        listener.heard(event)
        finally:
            self._delivering, self.core = False, None
        if native.lost:
            raise MemoryError(f"the cache model had no memory to keep {native.lost:,} of its events "
                              "(sim/native/events.c): the findings would be incomplete")

    def tell(self, event: Event) -> None:
        """The door's EVENT (raised in Python): the listeners hear what C queued before it
        first, then it."""
        self.deliver()
        for listener in self.listeners:
            listener.heard(event)

    def close(self) -> None:
        """Deliver what is left, then free the queue's memory (C's)."""
        try:
            self.deliver(anywhere=True)
        finally:
            hooks.library().cache_events_free(ctypes.byref(self.native))

