"""What the cache model saw that Python words, as typed events: a stale read, a stale line
written back by a line flush, a line touched through both aliases, the first touch of a
page through each, a dirty line the card-size cache's eviction rescued, a read before any
invalidate. Each names its region, its bytes, the core whose access it was, the access's pc
and the return addresses of its frames.

sim/native/events.c raises them inside the engine's callbacks and the interpreter, where
the access is made, and keeps them in the cluster's queue (CacheEvents), in order. Python
hears them here, where the turn loop hands it the cores (sim.machine.card, between
turns), before any point the observers hear (sim.observe.observers: catch_up), and when
the thread ends: never inside the engine. The listeners (the checker,
sim.cache.checker.Checker.heard) hear them in the order they happened.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

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


class Listener(Protocol):
    def heard(self, event: CacheEvent) -> None: ...


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
        self._acting = None  # (the core whose call Python answers: acting)
        self.core: int | None = None  # while an event is told: the core whose access it was
        if native.lost:
            raise MemoryError(f"the cache model had no memory to keep {native.lost:,} of its events "
                              "(sim/native/events.c): the findings would be incomplete")

    def close(self) -> None:
        """Deliver what is left, then free the queue's memory (C's)."""
        try:
            self.deliver(anywhere=True)
        finally:
            hooks.library().cache_events_free(ctypes.byref(self.native))

