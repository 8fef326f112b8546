"""What a core's engine reaches, and how its native hooks find it: the address space's
spans mapped into the engine (a region's also at its watch alias and its uncached alias,
as devices that call sim/native/watch.c), the span table the fill hook searches, the
stubs' scratch page, the cache's registers, and the hooks themselves.

The engine knows nothing of spans: it maps host memory at addresses. The native hooks
(sim/native/) know what each span is (its kind, its cache region) from the table built
here, once, and again when a span is added (clusters 2 and 3 reach each other's regions).
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

from ..layout import PAGE, STUB_SCRATCH, STUB_SCRATCH_PHYSICAL, UNCACHED_OFFSET
from ..memory import host
from ..native import hooks

if TYPE_CHECKING:
    from ..memory.address_space import AddressSpace
    from .engine import Engine


class Mapping:
    """MEMORY as ENGINE reaches it, for the core whose native state is NATIVE. COUNTING:
    the block hook counts instructions (and ends turns of exact length)."""

    def __init__(self, engine: "Engine", native: hooks.CoreState, memory: "AddressSpace", counting: bool) -> None:
        self._engine, self._native, self._memory = engine, native, memory
        self._watches: list[hooks.Watch] = []  # kept alive for as long as the engine runs
        for span in memory.spans:
            self._map_span(span)
        self._span_table()
        # The stubs' scratch page (sim.isa.rewrite): the core's own, at the address space's end.
        assert all(span.end <= STUB_SCRATCH_PHYSICAL or span.base >= STUB_SCRATCH_PHYSICAL + PAGE
                   for span in memory.spans), "a span reaches the stubs' scratch page"
        self._scratch_page = host.anonymous(PAGE)
        engine.map(STUB_SCRATCH_PHYSICAL, PAGE, self._scratch_page.address)
        native.table.scratch_virtual, native.table.scratch_physical = STUB_SCRATCH, STUB_SCRATCH_PHYSICAL
        native.table.scratch_host = hooks.host_pointer(self._scratch_page.address)
        state = ctypes.addressof(native)
        for _, base, size, read, write in hooks.DEVICE_BLOCKS:  # the cache's registers (watch.c)
            engine.map_device(base, size, hooks.function(read), hooks.function(write), state)
        engine.hook_native("tlb_fill", hooks.function("tlb_fill"), state)
        # The block hook counts cycles and ends turns of exact length (several cores);
        # added before the first run, as later hooks may not fire.
        if counting:
            engine.hook_native("block", hooks.function("count_block"), state)
            native.turn.counting = 1
        engine.hook_native("interrupt", hooks.function("isa_trap"), state)

    def add(self, span) -> None:
        """Map one more span of the address space (before the first run)."""
        self._map_span(span)
        self._span_table()

    def _map_span(self, span) -> None:
        """Map SPAN; a region's span also at its watch alias, as a device whose every
        access calls sim/native/watch.c (the fill hook maps watched pages there)."""
        engine = self._engine
        engine.map(span.base, span.size, span.host_address)
        if span.region is None:  # (at its watch alias too, for a page another core's lr reserved: reserve.c)
            watch = hooks.SpanWatch(host=hooks.host_pointer(span.host_address), base=span.base,
                                    core=ctypes.addressof(self._native))
            self._watches.append(watch)
            engine.map_device(span.base + hooks.WATCH_ALIAS, span.size, hooks.function("span_device_read"),
                              hooks.function("span_device_write"), ctypes.addressof(watch))
        else:  # (and at its uncached alias, a device that reaches DRAM past the cache)
            watch = hooks.Watch(region=ctypes.pointer(span.region.state), core=ctypes.addressof(self._native))
            self._watches.append(watch)
            engine.map_device(span.base + hooks.WATCH_ALIAS, span.size, hooks.function("watch_device_read"),
                              hooks.function("watch_device_write"), ctypes.addressof(watch))
            engine.map_device(span.base - UNCACHED_OFFSET, span.size, hooks.function("uncached_device_read"),
                              hooks.function("uncached_device_write"), ctypes.addressof(watch))

    def _span_table(self) -> None:
        """The address space as the native hooks search it: the spans, sorted, with their kinds
        and cache regions."""
        spans = self._memory.spans
        table = (hooks.SpanEntry * len(spans))()
        for entry, span in zip(table, spans):
            entry.base, entry.end = span.base, span.end
            entry.kind = hooks.SPAN_KINDS[span.kind]
            entry.host = hooks.host_pointer(span.host_address)
            if span.region is not None:
                entry.region = ctypes.pointer(span.region.state)
        self._spans = table  # kept alive for as long as the hooks may read it
        self._native.table.spans = table
        self._native.table.count = len(spans)
