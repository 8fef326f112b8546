"""The simulator as a backend (komorebi._backend): the one module of komorebi/ that
imports the machine (komorebi.sim). It turns the machine's objects into the seam's plain
data, and the machine's errors into komorebi's."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Sequence

import numpy as np

from komorebi._backend import (
    CacheStory, CorePlace, FaultReport, Handed, LineState, Options, Output, RegionPicture, StoryStep,
)
from komorebi import _limits
from komorebi._errors import CompileError
from komorebi._cache_map import cache_report
from komorebi._profile import CacheEvents, CoreProfile, FunctionCount, LineCount, Profile
from komorebi._results import CacheCounts, Finding
from komorebi.sim.build.cache import BuildError
from komorebi.sim.build.thread import CompileFailed, build_thread, compile_commands
from komorebi.sim.cache import model
from komorebi.sim.image.elf import ImageError, load_image
from komorebi.sim.kmx.console import KEEP as OUTPUT_KEPT
from komorebi.sim.kmx.outbox import Handed as MachineHanded
from komorebi.sim.layout import CLUSTERS, CORES_PER_CLUSTER, DEFAULT_HEAP_BYTES, LINE, MAX_REGIONS, MAX_WORDS, PAGE
from komorebi.sim.memory.dram import Snapshot
from komorebi.sim.schedule import DEFAULT_QUANTUM, Plan

if TYPE_CHECKING:  # (the card and its engine are imported by the first load, not with the seam)
    from komorebi.sim.card import Card

__all__ = [
    "CLUSTERS", "CORES_PER_CLUSTER", "DEFAULT_HEAP_BYTES", "DEFAULT_QUANTUM", "PAGE", "MAX_REGIONS", "MAX_WORDS", "OUTPUT_KEPT",
    "Simulator", "compile_commands", "snapshot",
]

# The API's copy of the machine's numbers (komorebi._limits, which imports no simulator
# module) says what the machine says.
_machine = {"PAGE": PAGE, "CLUSTERS": CLUSTERS, "CORES_PER_CLUSTER": CORES_PER_CLUSTER, "MAX_REGIONS": MAX_REGIONS,
            "MAX_WORDS": MAX_WORDS, "DEFAULT_HEAP_BYTES": DEFAULT_HEAP_BYTES, "DEFAULT_QUANTUM": DEFAULT_QUANTUM,
            "OUTPUT_KEPT": OUTPUT_KEPT}
_differ = {name: (getattr(_limits, name), value) for name, value in _machine.items() if getattr(_limits, name) != value}
if _differ:
    raise RuntimeError(f"komorebi._limits and the simulator disagree (API's, machine's): {_differ}")

# The picture's vocabulary is the machine's: the same numbers.
assert [s.value for s in LineState] == [
    model.UNTOUCHED, model.FRESH, model.FLUSHED, model.READ_STALE, model.FLUSHED_STALE, model.DROPPED, model.UNFLUSHED
]


def snapshot(array: np.ndarray) -> Snapshot:
    """A private copy of ARRAY's bytes for a region, taken once (Program.thread): host
    memory, no engine."""
    return Snapshot(array)


class Simulator:
    """The simulated card (the default backend)."""

    def load(self, threads: Sequence, options: Options) -> "SimulatedRun":
        from komorebi.sim.card import Card
        from komorebi.sim.debug.stub import DebugOptions

        images, elves, said = {}, {}, []
        for spec in threads:
            for source in spec.sources:
                if not source.is_file():
                    raise FileNotFoundError(
                        f"sources: the file {str(source)!r} of the thread on cluster {spec.cluster} "
                        "no longer exists (it did when program.thread was called)"
                    )
            try:
                built = build_thread(spec.sources)
                images[spec.cluster] = load_image(built.elf)
                elves[spec.cluster] = built.elf
            except CompileFailed as error:
                raise CompileError(error.messages, command=error.command) from None
            except BuildError as error:
                raise CompileError(str(error)) from None
            except ImageError as error:
                raise CompileError(
                    f"the thread on cluster {spec.cluster} was built, but the simulator cannot run "
                    f"it: {error}"
                ) from None
            if built.warned:
                said.append(built.messages)
        debug = None
        if options.gdb is not None:  # gdb debugs the first thread (the lowest cluster's)
            first = min(spec.cluster for spec in threads)
            debug = DebugOptions(options.gdb, elf=str(elves[first]))
        card = Card(options.quantum, options.schedule_seed, options.coherence, options.output_limit,
                    options.cache, options.cache_seed, debug, options.profile, options.trace, _plan(options))
        if debug is not None:
            debug.monitor = lambda words: _monitor(card, first, words)
        sharing = card.bank_sharers(spec.cluster for spec in threads)
        try:
            for spec in sorted(threads, key=lambda t: t.cluster):
                card.place_thread(spec.cluster, images[spec.cluster], spec.regions, spec.words, spec.cores,
                                  shares_bank=spec.cluster in sharing, heap=spec.heap)
        except BaseException as error:
            card.stop()  # frees what was placed
            if isinstance(error, BuildError):  # the simulator's own hooks could not be built
                raise CompileError(str(error)) from None
            raise
        return SimulatedRun(card, "\n".join(said))


def _plan(options: Options) -> Plan:
    """The machine's plan for km.Session's schedule (or its quantum and schedule_seed)."""
    schedule = options.schedule
    if schedule is None:
        return Plan.of_seed(options.quantum, options.schedule_seed)
    return Plan(schedule.strategy, schedule.quantum, schedule.seed, schedule.depth, schedule.instructions, schedule.turns)


class SimulatedRun:
    """A program loaded on the simulated card (a komorebi._backend.Machine). Not started
    until `start`: the session starts it once it has it in hand."""

    def __init__(self, card: Card, warnings: str) -> None:
        self._card = card
        self.clusters = sorted(card.clusters)
        self.warnings = warnings
        self.pid = card.pid

    @property
    def foreign(self) -> bool:
        return self._card.foreign

    def start(self) -> None:
        self._card.start()

    def wait_for_debugger(self) -> None:
        """With gdb: wait until it has attached (komorebi.Session's gdb)."""
        self._card.wait_for_debugger()

    def cores(self, cluster: int) -> int:
        return len(self._card.clusters[cluster].cores)

    def region_names(self, cluster: int) -> list[str]:
        return [region.name for region in self._card.clusters[cluster].regions]

    def take(self, cluster: int, timeout: float | None) -> Handed | None:
        return _handed(self._card.clusters[cluster].outbox.take(timeout))

    def ended(self, cluster: int) -> tuple[bool, Handed | None]:
        outbox = self._card.clusters[cluster].outbox
        return outbox.closed, _handed(outbox.last)

    def places(self, cluster: int) -> list[CorePlace]:
        out = []
        for core, doing, frame, waiting_in in self._card.clusters[cluster].places():
            source = frame.source if frame is not None else None
            out.append(CorePlace(
                core.number, doing, frame.pc if frame is not None else None,
                source.file if source else None, source.line if source else None, waiting_in,
            ))
        return out

    def stop(self) -> None:
        self._card.stop()

    def abandon(self) -> None:
        self._card.abandon()

    def read(self, cluster: int, name: str) -> np.ndarray:
        for region in self._card.clusters[cluster].regions:
            if region.name == name:
                return region.read()
        raise KeyError(name)

    def findings(self) -> list[Finding]:
        return [
            Finding(**dataclasses.asdict(f))
            for _, cluster in sorted(self._card.clusters.items())
            for f in cluster.checker.findings
        ]

    def cache_counts(self) -> list[CacheCounts]:
        out = []
        for number, cluster in sorted(self._card.clusters.items()):
            for region in cluster.regions:
                if region.cache.tile is None:
                    continue
                c = region.cache.counts()
                out.append(CacheCounts(number, region.name, *c["L1D"], *c["L2"], *c["L3"], *c["evicted"]))
        return out

    def profile(self) -> Profile | None:
        clusters = sorted(self._card.clusters.items())
        if not clusters or any(c.profile is None or c.profile.result is None for _, c in clusters):
            return None
        cores, cache = [], []
        for number, cluster in clusters:
            counted, events = cluster.profile.result
            for c in counted:
                cores.append(CoreProfile(
                    number, c.core, c.instructions,
                    tuple(LineCount(x.file, x.line, x.function, x.instructions) for x in c.lines),
                    tuple(FunctionCount(f.name, f.file, f.line, f.own, f.inclusive, f.calls) for f in c.functions),
                    tuple(c.stacks), c.dropped,
                ))
            cache += [CacheEvents(number, e.file, e.line, e.pages_filled, e.pages_first_written, e.bytes_flushed,
                                  e.findings) for e in events]
        return Profile(cores, cache)

    def schedule(self) -> tuple[list[tuple[int, int, int]], dict[int, int]]:
        return self._card.schedule_record()

    def story(self) -> CacheStory:
        start, steps, stopped = [], [], []
        for number, cluster in sorted(self._card.clusters.items()):
            story = cluster.story
            for region, states in zip(cluster.regions, story.start):
                start.append(RegionPicture(number, cluster.coherence, region.name, region.id, region.size, LINE,
                                           region.offset % LINE, states))
            steps += [StoryStep(number, s.core, s.what, s.file, s.line, s.detail,
                                tuple(sorted(s.changes.items())))
                      for s in story.steps]
            if story.stopped:
                stopped.append(f"cluster {number}: {story.stopped}")
        return CacheStory(tuple(start), tuple(steps), "; ".join(stopped))

    def pictures(self) -> list[RegionPicture]:
        out = []
        for number, cluster in sorted(self._card.clusters.items()):
            for region in cluster.regions:
                first = region.offset // LINE
                last = -(-(region.offset + region.size) // LINE)
                out.append(RegionPicture(
                    number, cluster.coherence, region.name, region.id, region.size, LINE, region.offset % LINE,
                    region.cache.line_states()[first:last],
                ))
        return out

    def output(self, cluster: int) -> Output:
        console = self._card.clusters[cluster].console
        return Output(console.text, console.dropped, console.host_error)


def _monitor(card: Card, number: int, words: list[str]) -> str:
    """gdb's `monitor cache REGION` and `monitor findings`, for the thread on cluster NUMBER
    (asked while its cores are stopped for gdb)."""
    cluster = card.clusters[number]
    findings = [Finding(**dataclasses.asdict(f)) for f in cluster.checker.findings]
    if words[0] == "findings":
        if not findings:
            return "no findings so far"
        return "\n".join(str(f) for f in findings)
    names = [region.name for region in cluster.regions]
    if len(words) != 2 or words[1] not in names:
        return f"monitor cache REGION: REGION is one of {', '.join(names) or '(no regions)'}"
    pictures = [p for p in SimulatedRun(card, "").pictures() if p.cluster == number and p.name == words[1]]
    return cache_report(pictures, [f for f in findings if f.region == words[1]])


def _handed(item: MachineHanded | None) -> Handed | None:
    if item is None:
        return None
    fault = item.fault
    report = None if fault is None else FaultReport(
        cluster=fault.cluster,
        core=fault.core,
        pc=fault.pc,
        cause=fault.cause,
        file=fault.source.file if fault.source else None,
        line=fault.source.line if fault.source else None,
        backtrace=tuple(str(frame) for frame in fault.backtrace),
        line_pc=fault.source_pc,
    )
    return Handed(item.words, item.final, item.code, item.codes, report)
