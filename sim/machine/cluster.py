"""One X280 cluster running one thread: its cores, its cache, its address space.

The cluster lays out its share of the DRAM bank (sim.layout): the image, a stack per core
with a guard page below it, and the regions, each in its own page-aligned span. A region
ends exactly where its span ends, so that a walk past its end leaves the span at once and
faults.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ... import kmx_runtime
from ..._records import AgentStopped, Handed, RegionPicture
from ..cache.checker import Checker
from ..cache.events import CacheEvents
from ..timing.model import ClusterTiming
from ..cache.model import CARD_SIZE, CachedRegion, ClusterCache, Holding, Tile, holding_for
from ..hart.explain import Explainer
from ..hart.core import BLOCKED, EXITED, READY, Core, HartContext
from ..hart.faults import CoreFault
from ..image.elf import ThreadImage
from ..image.original import Original
from ..kmx import console, linux
from ..kmx.heap import Heap
from ..kmx.outbox import Outbox
from ..kmx.traps import TrapTable
from ..layout import (
    GUARD_BYTES,
    LINE,
    PAGE,
    REGION_ALIGN,
    REGION_STAGGER,
    RESULT_WORDS,
    STACK_BYTES,
    STACK_GUARD_BYTES,
    DEFAULT_HEAP_BYTES,
    Share,
    align_up,
    human_bytes,
)
from ..memory.address_space import AddressSpace, Span
from ..memory.dram import Bank, Snapshot, Storage, View
from ..observe.profile import ThreadProfile
from ..observe.story import Story
from ..observe.timeline import Timeline
from ..observe.observers import Observers
from ..debug.control import Unattended
from ..native import hooks
from ..noc.agent import STEPS_AFTER_END, Agent, Call
from .config import MachineConfig
from .schedule import Plan, Schedule

RUNTIME = Path(kmx_runtime.__file__).resolve().parent


class PlacementError(ValueError):
    """The thread's image, stacks and regions do not fit in the cluster's share."""


@dataclass(frozen=True)
class Region:
    """A region as placed: its span, and where its bytes start inside it."""

    name: str
    id: int
    span: Span
    offset: int
    size: int
    storage: Storage

    @property
    def address(self) -> int:
        return self.span.base + self.offset

    @property
    def cache(self) -> CachedRegion:
        assert self.span.region is not None
        return self.span.region

    def dram_bytes(self) -> np.ndarray:
        """The region's bytes as DRAM holds them (a view)."""
        return self.storage.dram[self.offset : self.offset + self.size]

    def read(self) -> np.ndarray:
        """The region's bytes as DRAM holds them, as a new array (copy-on-write: it costs
        memory where the caller writes into it)."""
        return self.storage.copy(self.offset, self.size)

    def picture(self, cluster: int, coherence: str, states: np.ndarray | None = None,
                noc: tuple[str, ...] = ()) -> RegionPicture:
        """The region's lines, each a LineState: as STATES says (its lines only), else as
        they are now; NOC: what the Tensix stand-ins did to its DRAM (Cluster.noc_said)."""
        if states is None:
            states = self.cache.line_states()[self.offset // LINE : -(-(self.offset + self.size) // LINE)]
        return RegionPicture(cluster, coherence, self.name, self.id, self.size, LINE, self.offset % LINE, states, noc)


def _region_span(storage: Storage, name: str, base: int, holding: Holding) -> Span:
    """A region's span over STORAGE with the cache model's lines over it, held as HOLDING
    says (sim.cache.model): the engines map STORAGE's DRAM itself (direct), or a view of it
    (sim.memory.dram.View) of the cache's own. (Made here, where memory and the cache meet:
    memory does not import the cache.)"""
    if holding is Holding.DIRECT:
        return Span.over(storage, name, base, CachedRegion(storage.dram, storage.dram, holding, storage=storage,
                                                           base=base))
    view = View(storage)
    return Span.over(storage, name, base, CachedRegion(view.array, storage.dram, holding, memory=view, base=base),
                     view)


class Cluster:
    def __init__(
        self,
        *,
        number: int,
        share: Share,
        bank: Bank,
        image: ThreadImage,
        regions: Sequence[tuple[str, Snapshot | np.ndarray | int]],
        words: Sequence[int],
        cores: int,
        outbox: Outbox,
        config: MachineConfig = MachineConfig(),
        shares_bank: bool = False,
        heap: int = DEFAULT_HEAP_BYTES,
        debugged: bool = False,
        scheduled: bool = False,
    ) -> None:
        """Thread IMAGE on cluster NUMBER, in SHARE of BANK, with its REGIONS, WORDS and
        CORES; it hands its items to OUTBOX. CONFIG: the card's options (sim.machine.config).
        SHARES_BANK: another cluster's thread reaches its regions (its cache copies).
        DEBUGGED: gdb debugs it. SCHEDULED: its turns follow a plan other than round robin
        (sim.machine.schedule), which may give even a lone core a turn of exact length:
        its cores count."""
        self.number = number
        self.config = config
        self.debugger = Unattended()  # who controls the turns besides the schedule: gdb's, set by the card (sim.debug.control)
        self.coherence = coherence = config.coherence
        # The card-size cache (sim/native/tile.c): the tile's levels, which every region shares
        self.tile = Tile(config.cache_seed) if config.cache == CARD_SIZE else None
        # The timing model (sim.timing): the tile's tags for time, and each core's clock
        self.timing = ClusterTiming(config.timing, config.cache_seed) if config.timing is not None else None
        self._running: Core | None = None  # the core whose turn Python runs (one at a time)
        self.loop = None  # the turn loop in C, while it runs the cluster's turns (sim.machine.schedule.TurnLoop)
        self.faulted = False
        self.schedule = Schedule(Plan(), [number], [(number, n) for n in range(cores)])  # (the card's, once it starts)
        self.share = share
        self.bank = bank
        self.image = image
        self.words = list(words)
        self.result_words = np.zeros(RESULT_WORDS, dtype=np.uint32)
        self.outbox = outbox
        self.console = console.Console(number, cores, config.output_limit)
        self.memory = AddressSpace()
        self.cache = ClusterCache()
        self.traps = TrapTable(self)

        heap = align_up(heap, PAGE)
        stacks_end = image.size + cores * (STACK_GUARD_BYTES + STACK_BYTES) + GUARD_BYTES + heap
        if stacks_end > share.size:
            raise PlacementError(
                f"the thread's image (its code, data and .bss) is {human_bytes(image.size)}, "
                f"and with {'its' if cores == 1 else 'its ' + str(cores)} "
                f"stack{'s' if cores > 1 else ''} of {human_bytes(STACK_BYTES)} and its heap of "
                f"{human_bytes(heap)} it needs {human_bytes(stacks_end)}, but cluster {number}'s "
                f"share of DRAM bank {share.bank} is {human_bytes(share.size)}"
            )
        image_span = self.memory.add(Span.allocate("the thread's image", "image", share.base, image.size))
        image.place(image_span.array, share.base)
        # (what the thread reads of its code is what the compiler wrote: sim/native/code.c)
        self.original = image_span.code = Original.of(image, share.base, image_span.array)
        self.image_base = share.base
        cursor = image.size
        stacks = []
        for core in range(cores):
            cursor += STACK_GUARD_BYTES
            stacks.append(self.memory.add(Span.allocate(f"core {core}'s stack", "stack", share.base + cursor, STACK_BYTES)))
            cursor += STACK_BYTES
        cursor += GUARD_BYTES
        self.stacks = stacks
        # The C library's heap (sim.kmx.heap), after the stacks; a guard page after it.
        self.heap = Heap(self.memory.add(Span.allocate("the thread's heap", "heap", share.base + cursor, heap)))
        cursor += heap + GUARD_BYTES
        self.regions: list[Region] = []
        # Card mode, and no other cluster reaches it: the engines map DRAM itself.
        holding = holding_for(coherence, shares_bank)
        for index, (name, content) in enumerate(regions):
            if isinstance(content, np.ndarray):  # (the simulator's own callers)
                content = Snapshot(content)
            size = content if isinstance(content, int) else content.size
            cursor = align_up(cursor, REGION_ALIGN) + (index % 16) * REGION_STAGGER
            span_size = align_up(size, PAGE)
            if cursor + span_size > share.size:
                free = max(share.size - cursor, 0)
                raise PlacementError(
                    f"region {name!r} is {human_bytes(size)}, but cluster {number}'s share of "
                    f"DRAM bank {share.bank} is {human_bytes(share.size)} and only "
                    f"{human_bytes(free)} of it is left after the image, the stacks and the "
                    "regions before it"
                )
            storage = bank.storage(share.offset + cursor, span_size, None if isinstance(content, int) else content,
                                   anonymous=holding is Holding.DIRECT)
            span = self.memory.add(_region_span(storage, name, share.base + cursor, holding))
            offset = span_size - size  # the end is the span's: the first byte past it faults
            if coherence == "strict":
                span.region.start_prior_lines()
            if self.tile is not None:
                span.region.use_tile(self.tile)
            self.cache.add_region(span.region)
            span.region.on_hook_error = self._hook_failed
            self.regions.append(Region(name, index, span, offset, size, storage))
            cursor += span_size + GUARD_BYTES
        self.explainer = Explainer(image, self.image_base, self.memory, stacks, self.regions, RUNTIME)
        self.checker = Checker(number, coherence, self.explainer)
        # What the cache model sees an access at a time, as events (sim/cache/events.py)
        self.cache_events = CacheEvents()
        self.cache_events.listeners.append(self.checker)
        for region in self.regions:
            self.checker.watch(region)
            self.cache_events.attach(region.id, region.cache)
        self.core_count = cores
        # The cores, for lr/sc, where another core (or a Tensix stand-in, add_agent) may store
        # between a core's lr and its sc (sim/native/reserve.c)
        self.reservations = hooks.Reservations()
        context = HartContext(
            number, self.memory, image, self.image_base, self.explainer,
            counting=(image.uses_cycles or cores > 1 or debugged or config.profiled or config.traced or scheduled
                      or config.timing is not None),  # (a debugger steps turns of one)
            on_ecall=self.traps.dispatch, check_hooks=self.raise_hook_error,
            forget_translations=self._forget_translations,
            interpret=config.interpret, finish_turns_in_c=config.finish_turns_in_c,
            reservations=self.reservations if cores > 1 else None,
            original=self.original, timing=self.timing,
        )
        self.cores = []
        for n in range(cores):
            # What Linux gives a process at the top of its stack, for the C library's start.
            block_at, block = linux.start_block(stacks[n].end, image.program_headers, n)
            at = block_at - stacks[n].base
            stacks[n].array[at : at + len(block)] = np.frombuffer(block, np.uint8)
            self.cores.append(Core(n, context, share.base + image.entry, share.base + image.halt, block_at,
                                   (block_at, cores)))
        self.ended = False
        self._catching_up = False  # (catch_up: telling C's queues now)
        # The cache's story, step by step (run.cache_story; sim/observe/story.py)
        self.story = Story(self, config.timing.clock_mhz if config.timing is not None else None)
        # The profile (km.Session(profile=True)): the cores' counts, sim/observe/profile.py
        self.profile = ThreadProfile(self.cores, self.explainer) if config.profiled else None
        # The timeline (km.Session(trace=PATH)): turns, calls, waits, findings (sim/observe/timeline.py)
        self.timeline = (Timeline(number, cores, config.timing.clock_mhz if config.timing is not None else None)
                         if config.traced else None)
        # Who hears of the thread's turns, calls, findings and end (sim/observe/observers.py)
        self.observers = Observers(*(o for o in (self.story, self.profile, self.timeline) if o is not None),
                                   regions=self.regions)
        self.cache_events.listeners.insert(0, self.observers)  # (before the checker: a step, then its finding)
        self.checker.on_finding = self.observers.finding
        self.checker.on_change = self.observers.finding_changed
        # The calls that need no Python are answered in C (sim/native/calls.c), unless a
        # listener besides the story hears every call; the story hears of them after.
        others = self.observers.hearing("call_begins", "call_ends", "invalidated", "flushed") - {self.story}
        self.traps.answer_in_c(self.cores, self.cores[0].ecall_past, bool(others), self.story)
        self.observers.catch_up = self.catch_up
        self.agents: list[Agent] = []  # the Tensix stand-ins (sim.noc.agent), in the program's order
        # (region ID, stand-in, "read" or "write"): [calls, first byte, end, file, line of the last]
        self._noc_tally: dict[tuple[int, str, str], list] = {}

    def add_agent(self, name: str, function) -> Agent:
        """A Tensix stand-in of this cluster's (sim.noc.agent), placed before the run starts."""
        agent = Agent(name, function, self, len(self.agents))
        self.agents.append(agent)
        # Its noc.write may change DRAM under any line of any region: which lines are in the
        # cache must be known one by one from the start (sim/native/watch.c), as a card fills
        # a line at a time: a line no core touched is read from DRAM, new bytes and all.
        for region in self.regions:
            region.cache.know_lines()
        for core in self.cores:  # (a noc.write clears an lr's reservation of its line)
            core.reserve_in(self.reservations)
        return agent

    @property
    def agents_live(self) -> bool:
        return any(not agent.done for agent in self.agents)

    # -- a stand-in's step: its noc call, on the host thread --------------------------------

    def agent_call(self, agent: Agent, call: Call):
        """Do CALL, AGENT's noc call (sim.noc.agent.Agent.step): return its value, or raise
        what the function sees at the call."""
        if self.ended:
            agent.steps_after_end += 1
            if agent.steps_after_end > STEPS_AFTER_END:
                agent.stopped = True  # (its every call raises from now on: it cannot go on)
                raise AgentStopped(
                    f"agent {agent.name!r} made {STEPS_AFTER_END:,} noc calls after the thread ended, and was "
                    "stopped: nothing but the stand-ins runs then, and one that polls for ever would keep "
                    "run.stop() waiting"
                )
        if call.what == "raise":
            raise call.error
        region = call.region
        at = region.offset + call.offset
        # (the cache's door tells who listens: the story's step, the checker: sim.cache.events)
        if call.what == "read":
            out = region.cache.noc_read_by(agent, call, at)
            self._tally(region, agent, call)
            return out
        if call.what == "write":
            hooks.library().reservations_stored(self.reservations, -1, region.span.base + at, call.size)
            region.cache.noc_write_by(agent, call, at, np.frombuffer(call.data, np.uint8))
            self._tally(region, agent, call)
            return None
        # a wait: DRAM holds the value (the schedule chose the step for it), or its time is up
        now = region.cache.noc_read(at, call.size)
        if int.from_bytes(now.tobytes(), "little") != call.value:
            raise TimeoutError(
                f"noc.wait: DRAM did not hold {call._shown()!r} at byte {call.offset} of region "
                f"{region.name!r} within the timeout (it holds {now.view(call.dtype)[0].item()!r})"
            )
        self.observers.agent_step(agent, call)
        return now.view(call.dtype)[0]

    def _tally(self, region: Region, agent: Agent, call: Call) -> None:
        tally = self._noc_tally.setdefault((region.id, agent.name, call.what), [0, call.offset, call.offset, None, None])
        tally[0] += 1
        tally[1], tally[2] = min(tally[1], call.offset), max(tally[2], call.offset + call.size)
        tally[3], tally[4] = call.file, call.line

    def noc_said(self, region: Region) -> tuple[str, ...]:
        """What each Tensix stand-in did to REGION's DRAM, a line each, for the picture."""
        out = []
        for agent in self.agents:
            parts = []
            for what, verb in (("write", "wrote"), ("read", "read")):
                tally = self._noc_tally.get((region.id, agent.name, what))
                if tally is None:
                    continue
                calls, start, end, file, line = tally
                span = f"all {region.size} bytes" if (start, end) == (0, region.size) else f"bytes {start} to {end - 1}"
                where = f", the last at {Path(file).name}:{line}" if file else ""
                past = " to DRAM" if what == "write" else " from DRAM"
                parts.append(f"{verb} {span}{past} ({calls} noc.{what}{'s' if calls != 1 else ''}{where})")
            if parts:
                out.append(f"the Tensix side: agent {agent.name!r} " + "; ".join(parts))
        return tuple(out)

    def agents_ready(self) -> list[Agent]:
        """The stand-ins whose step can run now (sim.noc.agent.Agent.ready)."""
        return [agent for agent in self.agents if agent.ready()]

    def unanswerable_wait(self) -> Agent | None:
        """A stand-in waiting for DRAM that nothing is left to write: every core has
        returned (or the thread has ended) and no stand-in is ready. Its wait fails, the
        first one's: it may write what the others wait for."""
        if not self.agents or not (self.ended or self.all_exited):
            return None
        if any(agent.ready() for agent in self.agents):
            return None
        agent = next((a for a in self.agents if a.waiting), None)
        if agent is not None:
            call = agent.pending
            agent.fail_wait(RuntimeError(
                f"noc.wait: DRAM will never hold {call._shown()!r} at byte {call.offset} of region "
                f"{call.region.name!r}: the thread has ended, and no other stand-in is left to write it"
            ))
        return agent

    def share_bank_with(self, other: "Cluster") -> None:
        """Clusters 2 and 3 share bank D7 (sim.layout.SHARES): a core of one can reach the
        other's regions at their addresses, as on the card. It reaches them through its
        own cluster's cache, with no coherence between the two, and with no region ID to
        invalidate or flush them by: only the hand-back (card mode) writes them back."""
        for region in other.regions:
            # The other cluster writes this DRAM while this one runs: both caches copy.
            if region.cache.holding is not Holding.COPYING:
                raise RuntimeError(
                    f"cluster {other.number}'s regions were placed for no other cluster to "
                    "reach (place its thread with shares_bank=True)"
                )
            span = self.memory.add(_region_span(region.storage, region.name, region.span.base, Holding.COPYING))
            span.owner = other.number
            if self.coherence == "strict":
                span.region.start_prior_lines()
            if self.tile is not None:
                span.region.use_tile(self.tile)
            self.cache.add_region(span.region)
            span.region.on_hook_error = self._hook_failed
            for core in self.cores:
                core.map(span)

    # -- the thread's calls ----------------------------------------------------------------

    # (each through the cache's door, which tells who listens: sim.cache.events)

    def invalidate(self, region_id: int, core: Core) -> None:
        region = self.regions[region_id]
        self._forget_region(region)  # (before the drop: its filled pages)
        region.cache.invalidate_by(core)

    def flush(self, region_id: int, core: Core) -> None:
        region = self.regions[region_id]
        # (the bytes before the region's start, in its first line, are not its own)
        region.cache.flush_by(core, self.coherence == "strict", region.offset)
        self._forget_region(region)

    def _forget_region(self, region: Region) -> None:
        """Every core forgets its translations of REGION's filled pages, before an invalidate
        drops them or after a flush (sim/native/calls.c: the rule, which the calls answered
        in C follow too)."""
        hooks.library().region_forget_translations(self.traps.native, region.cache.state_address)

    def _forget_translations(self) -> None:
        for core in self.cores:
            core.flush_tlb()

    def submit(self, core: Core) -> None:
        for region in self.regions:  # a submission says "done so far": flushed?
            region.cache.submitted_by(core)
        words = self.result_words.copy()
        if not self.outbox.offer_submission(words):
            self._block(core, "kmx_submit", lambda: self.outbox.offer_submission(words))
        else:
            # Every submit ends its turn, stalled or not, so that whether Python had taken
            # the earlier ones cannot move where the next turn starts.
            core.stop_here()

    def barrier(self, core: Core) -> None:
        # (the count is the one sim/native/calls.c keeps, which answers the barriers after
        # the start code's in the turn loop, as here)
        calls = self.traps.native
        calls.barrier_arrivals += 1
        if calls.barrier_arrivals == len(self.cores):
            # The last to arrive releases the others and ends its turn, so that the next
            # turn starts at the same instruction whatever the quantum was.
            if core.timing is not None:  # (timed: the others waited until the last came: sim/native/timing.c)
                for other in self.cores:
                    if calls.barrier_waiting >> other.number & 1 and other.timing is not None:
                        hooks.library().timing_waited(other.timing.address, core.timing.cycles)
            calls.barrier_arrivals, calls.barrier_waiting = 0, 0
            calls.barrier_generation += 1
            if calls.barrier_generation == 1:  # the start code's (kmx_runtime/process.c): kmx_main begins
                self.schedule.main_begins(self.number)
            core.stop_here()
            return
        calls.barrier_waiting |= 1 << core.number
        self._wait_in_barrier(core)
        core.stop_here()

    def _wait_in_barrier(self, core: Core) -> None:
        """CORE is blocked in kmx_barrier until a release clears its bit."""
        calls, bit = self.traps.native, 1 << core.number
        core.state, core.waiting, core.blocked_in = BLOCKED, lambda: not calls.barrier_waiting & bit, "kmx_barrier"

    def settle_barrier(self) -> None:
        """Each core's state as the barriers answered in C left it (sim/native/calls.c, in
        the turn loop: sim.machine.schedule.TurnLoop asks as it comes back): one blocked
        there waits in kmx_barrier, one released there is ready."""
        waiting = self.traps.native.barrier_waiting
        for core in self.cores:
            if waiting >> core.number & 1:
                if core.state == READY:
                    self._wait_in_barrier(core)
            elif core.state == BLOCKED and core.blocked_in == "kmx_barrier":
                core.state, core.waiting, core.blocked_in = READY, None, ""

    def _block(self, core: Core, call: str, done) -> None:
        core.state, core.waiting, core.blocked_in = BLOCKED, done, call
        core.stop_here()

    def print(self, core: Core, text: str) -> None:
        self.console.print(core.number, text)

    def core_exited(self, core: Core, code: int) -> None:
        core.code = code
        core.state = EXITED
        self.traps.native.exited += 1  # (no barrier completes now: C leaves each to Python)
        core.stop_here()

    def every_core_exited(self, core: Core, code: int) -> None:
        """C's exit (the exit_group system call): every core of the thread ends, each
        that had not returned with CODE."""
        for other in self.cores:
            if other.state != EXITED:
                other.code, other.state, other.waiting, other.blocked_in = code, EXITED, None, ""
        self.traps.native.exited, self.traps.native.barrier_waiting = len(self.cores), 0
        core.stop_here()

    # -- the thread's end -------------------------------------------------------------------

    def finish(self) -> None:
        """All cores returned: hand the regions back, then hand Python the final result."""
        self.end()
        codes = tuple(core.code or 0 for core in self.cores)
        code = next((c for c in codes if c != 0), 0)
        self.observers.all_returned(codes)
        self.outbox.put_last(Handed(words=self.result_words.copy(), final=True, code=code, codes=codes))

    def fail(self, fault: CoreFault) -> None:
        core = self.cores[fault.core] if 0 <= fault.core < len(self.cores) else None
        self.observers.fault(core, fault)
        self.faulted = True
        self.end()
        self.outbox.put_last(Handed(fault=fault.report()))

    def hand_back(self) -> None:
        """Card mode: write every dirty line back and drop every line. Strict mode: nothing;
        what the thread did not flush never reaches DRAM."""
        if self.coherence == "card":
            self.cache.hand_back()

    def acting(self, core: Core | None) -> None:
        """Python's own accesses of the regions, from now until None, are CORE's kmx call's
        (its reads of a result's words, a print's string, a system call's buffer): the
        cache model's events name the core and the call (sim/cache/events.py)."""
        self.cache_events.acting(core)

    def catch_up(self) -> None:
        """Tell the listeners what C raised since they last heard: the calls answered in C,
        then the cache model's events (each queue in its order). A new finding's event stops
        the run after its block (sim/native/events.c), so the calls queued before it came
        before its access: the story's steps are in the order they happened. (While one
        queue is told, what its listeners hear does not tell the other: a point inside.)"""
        if self._catching_up:
            return
        self._catching_up = True
        try:
            self.traps.tell_answered()
            self.cache_events.deliver()
        finally:
            self._catching_up = False

    def end(self) -> None:
        if self.ended:
            return
        self.cache_events.deliver(anywhere=True)  # (no core runs again)
        self.ended = True
        self.console.finish()
        for region in self.regions:
            region.cache.thread_ended(tell=not self.faulted)
        self.hand_back()
        self.observers.ended()

    def _hook_failed(self) -> None:
        """A hook's Python failed in a run, on the running core's host thread (its error
        is kept: raise_hook_error): the core's turn goes to Python at its next block, which
        raises it on that core (the turn loop in C would run on)."""
        core = self.running
        if core is not None:  # (its block hook stops it before the next block; a lone core that
            core.native.turn.stop_asked = 1  # does not count raises it at its run's end: its own)

    def raise_hook_error(self) -> None:
        """After a core's run: raise what went wrong in Python inside an engine's hook
        during it, then tell the listeners what the cache model saw (sim/cache/events.py)."""
        for region in self.cache.regions:
            error, region.hook_error = region.hook_error, None
            if error is not None:
                raise RuntimeError(f"the cache model failed: {error!r}") from error
        self.catch_up()

    def release(self) -> None:
        """Free the engines and the cache's memory once nothing will run again; DRAM, the
        findings and each line's story stay for reading. Idempotent."""
        self.cache_events.close()
        if self.checker is not None:
            self.checker.settle()  # (the findings' bytes, for the trace and the story)
        self.observers.released(self)  # (the profile counts up before the memory goes)
        if self.traps.native is not None:  # (calls.c reaches every core's engine: none from now on)
            self.traps.native.on = 0
        for core in self.cores:
            core.close()
        for span in self.memory.spans:
            span.release()
        for region in self.cache.regions:
            region.release()
            region.on_hook_error = None  # (a cycle through the cluster)
            region.state.events = None  # (the queue's memory is freed)
            region.events = None
        for region in self.regions:
            region.storage.release()

    def discard(self) -> None:
        """Nobody will read the thread's memory again: let go of all of it, DRAM too (each
        piece is freed when nothing refers to it any more)."""
        self.release()
        self.regions = []
        self.cores = []
        self.memory = AddressSpace()
        self.cache = ClusterCache()
        self.explainer = None  # (it holds the memory too)
        self.checker = None  # (a cycle through its view of the running core)
        self.observers.regions = ()  # (the regions' memory: the observers hear the door's events by region)
        self.cache_events.listeners.clear()  # (the checker, and through it the regions' memory)
        self.cache_events.acting(None)
        self.traps.thread = None

    # -- scheduling -------------------------------------------------------------------------

    @property
    def running(self) -> Core | None:
        """The core whose turn it is: Python's, or the turn loop's in C (from any thread);
        while the cache model's events are told, the core whose access each was (it ran then)."""
        told = self.cache_events.core
        if told is not None and told < len(self.cores):
            return self.cores[told]
        loop = self.loop
        running = loop.running if loop is not None else None
        return running if running is not None and running.context.cluster == self.number else self._running

    @running.setter
    def running(self, core: Core | None) -> None:
        self._running = core

    def runnable(self) -> list[Core]:
        """The cores ready to run; none while a core waits for Python to take a
        submission: the cluster pauses, so that when Python reads cannot change the
        interleaving."""
        out = []
        for core in self.cores:
            if core.state == BLOCKED and core.waiting is not None and core.waiting():
                core.state, core.waiting, core.blocked_in = READY, None, ""
            if core.state == BLOCKED and core.blocked_in == "kmx_submit":
                return []
            if core.state == READY and not core.parked:
                out.append(core)
        return out + self.agents_ready()

    def deadlock(self) -> CoreFault | None:
        """A fault when the cores left can never run again: they wait in kmx_barrier for
        a core that has already returned from kmx_main."""
        waiting = [c for c in self.cores if c.state == BLOCKED and c.blocked_in == "kmx_barrier"]
        if not waiting or any(c.state == READY or c.blocked_in == "kmx_submit" for c in self.cores):
            return None
        gone = [c.number for c in self.cores if c.state == EXITED]
        core = waiting[0]
        names = ", ".join(str(n) for n in gone)
        return core.fault(
            core.call_pc(),
            f"kmx_barrier: core {core.number} waits for all {len(self.cores)} cores of the "
            f"thread, but core{'s' if len(gone) > 1 else ''} {names} returned from kmx_main "
            "without reaching the barrier, so it can never complete. Every core must call "
            "kmx_barrier the same number of times.",
        )

    def places(self) -> list[tuple[Core, str, object, str]]:
        """Where each core is, for a message: (core, what it is doing, its user frame or
        None, the kmx call it waits in). Asked from another thread while the cluster
        runs: each core's state is read once, after it said where it is, so the four agree."""
        out = []
        running, loop = self.running, self.loop
        for core in self.cores:
            if core.state == EXITED:
                out.append((core, "returned", None, ""))
                continue
            # (the turn loop in C runs any of them: it comes back to say, at the turn's end,
            # and says what its barriers did to their states first: settle_barrier)
            place = core.place(running=core is running or loop is not None, ask=loop.ask if loop is not None else None)
            state, blocked_in = core.state, core.blocked_in
            if state == EXITED:
                out.append((core, "returned", None, ""))
                continue
            if place is None:
                out.append((core, state.value, None, ""))
                continue
            pc, fp = place
            if state == BLOCKED:
                pc = core.call_pc_from(pc)  # stopped just after the kmx call's ecall
            frame = self.explainer.user_frame(self.explainer.frames(pc, fp))
            doing = "running" if core is running else "waiting" if state == BLOCKED else state.value
            out.append((core, doing, frame, blocked_in if state == BLOCKED else ""))
        return out

    @property
    def all_exited(self) -> bool:
        return all(core.state == EXITED for core in self.cores)
