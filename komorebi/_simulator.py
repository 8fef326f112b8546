"""The simulator as a backend (komorebi._backend): the one module of komorebi/ that
imports the machine (komorebi.sim). It hands on what the card answers (komorebi._records'
plain data, which the machine makes) and turns the machine's errors into komorebi's.

Here a session's options become the machine's one configuration (sim.machine.config),
and the simulator's own environment variables are read (docs/simulator.md, "The
machine's options"): KMX_HOST_MEMORY (how host memory is held, docs/install.md), and
KMX_INTERPRET and KMX_REWRITE (0 turns a way of running the X280's extra instructions
off, to compare). The machine reads no environment."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence

import numpy as np

from komorebi._backend import Options
from komorebi import _limits
from komorebi._errors import CompileError
from komorebi._cache_map import cache_report
from komorebi._profile import Profile
from komorebi._records import (AgentReport, CacheCounts, CacheStory, CorePlace, CoreTiming, Finding, Handed, Output,
                               RegionPicture)
from komorebi.sim.build.cache import BuildError
from komorebi.sim.build.thread import CompileFailed, build_thread, compile_commands
from komorebi.sim.image.elf import ImageError, load_image
from komorebi.sim.kmx.console import KEEP as OUTPUT_KEPT
from komorebi.sim.machine.config import MachineConfig
from komorebi.sim.timing import x280
from komorebi.sim.timing.model import TimingOptions
from komorebi.sim.memory import host
from komorebi.sim.layout import CLUSTERS, CORES_PER_CLUSTER, DEFAULT_HEAP_BYTES, MAX_REGIONS, MAX_WORDS, PAGE
from komorebi.sim.memory.dram import Snapshot
from komorebi.sim.machine.schedule import DEFAULT_QUANTUM, Plan
from komorebi.sim.noc.agent import MAX_AGENTS

if TYPE_CHECKING:  # (the card and its engine are imported by the first load, not with the seam)
    from komorebi.sim.machine.card import Card

__all__ = [
    "CLUSTERS", "CORES_PER_CLUSTER", "DEFAULT_HEAP_BYTES", "DEFAULT_QUANTUM", "PAGE", "MAX_REGIONS", "MAX_WORDS", "OUTPUT_KEPT",
    "Simulator", "compile_commands", "snapshot",
]

# The API's copy of the machine's numbers (komorebi._limits, which imports no simulator
# module) says what the machine says.
_machine = {"PAGE": PAGE, "CLUSTERS": CLUSTERS, "CORES_PER_CLUSTER": CORES_PER_CLUSTER, "MAX_REGIONS": MAX_REGIONS,
            "MAX_WORDS": MAX_WORDS, "DEFAULT_HEAP_BYTES": DEFAULT_HEAP_BYTES, "DEFAULT_QUANTUM": DEFAULT_QUANTUM,
            "OUTPUT_KEPT": OUTPUT_KEPT, "MAX_AGENTS": MAX_AGENTS, "TIMING_MODELS": x280.MODELS,
            "DEFAULT_CLOCK_MHZ": x280.CLOCK_MHZ}
_differ = {name: (getattr(_limits, name), value) for name, value in _machine.items() if getattr(_limits, name) != value}
if _differ:
    raise RuntimeError(f"komorebi._limits and the simulator disagree (API's, machine's): {_differ}")


def snapshot(array: np.ndarray) -> Snapshot:
    """A private copy of ARRAY's bytes for a region, taken once (Program.thread): host
    memory, no engine."""
    _ask_host_memory()
    return Snapshot(array)


def _ask_host_memory() -> None:
    """Before each use of host memory: the way KMX_HOST_MEMORY asks for (the first use
    fixes it for the process: sim.memory.host.way)."""
    host.ask(os.environ.get(host.VARIABLE, ""))


def _switch(name: str) -> bool:
    """An environment variable of the simulator's that turns a way of running off with 0."""
    return os.environ.get(name, "1").strip() != "0"


class Simulator:
    """The simulated card (the default backend).

    >>> km.Session(backend=Simulator(turn_loop_in_c=False))  # every turn from Python
    """

    def __init__(self, *, interpret: bool | None = None, rewrite: bool | None = None,
                 turn_loop_in_c: bool = True, finish_turns_in_c: bool = True) -> None:
        """The simulator's ways of running, each on unless turned off to compare them (as
        the tests and bench/ do; the results are the same, the speed is not). INTERPRET:
        after an instruction the engine lacks, the interpreter runs the hot code after it
        (None: unless KMX_INTERPRET=0). REWRITE: the loader rewrites Zba and Zbb
        instructions into RV64GC stubs (None: unless KMX_REWRITE=0). TURN_LOOP_IN_C: the
        turns that need no Python run in C. FINISH_TURNS_IN_C: a turn that ends inside a
        block runs its rest in the interpreter."""
        self.interpret = _switch("KMX_INTERPRET") if interpret is None else bool(interpret)
        self.rewrite = _switch("KMX_REWRITE") if rewrite is None else bool(rewrite)
        self.turn_loop_in_c = bool(turn_loop_in_c)
        self.finish_turns_in_c = bool(finish_turns_in_c)

    def config(self, options: Options) -> MachineConfig:
        """The machine's configuration for a load with the session's OPTIONS."""
        if options.timing is not None and not self.interpret:
            raise ValueError("the timing mode runs the thread's code in the interpreter, which this simulator "
                             "has off (interpret=False, or KMX_INTERPRET=0): turn it on, or drop timing")
        if options.timing is None and options.timing_parameters:
            raise ValueError("session.timing_parameters change the timing model's table: open the session with "
                             "timing='x280' to use them")
        if options.timing is not None:
            x280.table(dict(options.timing_parameters))  # (an unknown name or a bad value: said at load)
        return MachineConfig(
            plan=_plan(options), coherence=options.coherence, cache=options.cache, cache_seed=options.cache_seed,
            output_limit=options.output_limit, profiled=options.profile, trace=options.trace,
            # (timed, the interpreter runs the thread's code: Zba and Zbb as written, no stubs)
            interpret=self.interpret, rewrite=self.rewrite and options.timing is None, turn_loop_in_c=self.turn_loop_in_c,
            finish_turns_in_c=self.finish_turns_in_c,
            timing=(None if options.timing is None else
                    TimingOptions(options.timing, options.clock_mhz, tuple(options.timing_parameters))),
        )

    def load(self, threads: Sequence, options: Options) -> "SimulatedRun":
        try:  # (the first import of the machine builds the engine, once per machine: sim/build/engine.py)
            from komorebi.sim.machine.card import Card
            from komorebi.sim.debug.stub import DebugOptions
        except BuildError as error:
            raise CompileError(str(error)) from None

        config = self.config(options)
        _ask_host_memory()
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
                images[spec.cluster] = load_image(built.elf, config.rewrite)
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
        card = Card(config, debug)
        if debug is not None:
            debug.monitor = lambda words: _monitor(card, first, words)
        sharing = card.bank_sharers(spec.cluster for spec in threads)
        try:
            for spec in sorted(threads, key=lambda t: t.cluster):
                card.place_thread(spec.cluster, images[spec.cluster], spec.regions, spec.words, spec.cores,
                                  shares_bank=spec.cluster in sharing, heap=spec.heap, agents=spec.agents)
        except BaseException as error:
            card.stop()  # frees what was placed
            if isinstance(error, BuildError):  # the simulator's own hooks or engine could not be built
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
    """A program loaded on the simulated card (a komorebi._backend.Machine): the card's own
    methods, which answer in komorebi._records' data. Not started until `start`: the
    session starts it once it has it in hand."""

    def __init__(self, card: Card, warnings: str) -> None:
        self._card = card
        self.clusters = card.numbers()
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
        return self._card.core_count(cluster)

    def region_names(self, cluster: int) -> list[str]:
        return self._card.region_names(cluster)

    def take(self, cluster: int, timeout: float | None) -> Handed | None:
        return self._card.take(cluster, timeout)

    def ended(self, cluster: int) -> tuple[bool, Handed | None]:
        return self._card.ended(cluster)

    def places(self, cluster: int) -> list[CorePlace]:
        return self._card.places(cluster)

    def stop(self) -> None:
        self._card.stop()

    def abandon(self) -> None:
        self._card.abandon()

    def read(self, cluster: int, name: str) -> np.ndarray:
        return self._card.read(cluster, name)

    def findings(self) -> list[Finding]:
        return self._card.findings()

    def cache_counts(self) -> list[CacheCounts]:
        return self._card.cache_counts()

    def timing(self) -> list[CoreTiming] | None:
        rows = self._card.timing()
        return None if rows is None else [CoreTiming(*row) for row in rows]

    def profile(self) -> Profile | None:
        counted = self._card.profile()
        return None if counted is None else Profile(*counted)

    def schedule(self) -> tuple[list[tuple[int, int, int]], dict[int, int]]:
        return self._card.schedule_record()

    def story(self) -> CacheStory:
        return self._card.story()

    def pictures(self) -> list[RegionPicture]:
        return self._card.pictures()

    def output(self, cluster: int) -> Output:
        return self._card.output(cluster)

    def agents(self, cluster: int) -> list[AgentReport]:
        return self._card.agents(cluster)


def _monitor(card: Card, number: int, words: list[str]) -> str:
    """gdb's `monitor cache REGION` and `monitor findings`, for the thread on cluster NUMBER
    (asked while its cores are stopped for gdb)."""
    findings = card.findings(number)
    if words[0] == "findings":
        if not findings:
            return "no findings so far"
        return "\n".join(str(f) for f in findings)
    names = card.region_names(number)
    if len(words) != 2 or words[1] not in names:
        return f"monitor cache REGION: REGION is one of {', '.join(names) or '(no regions)'}"
    pictures = [p for p in card.pictures(number) if p.name == words[1]]
    return cache_report(pictures, [f for f in findings if f.region == words[1]])
