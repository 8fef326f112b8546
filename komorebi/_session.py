"""Sessions and runs: loading a program onto a card (here, by default, the simulated one)
and talking to it. Everything of the machine comes through the backend seam
(komorebi._backend)."""

from __future__ import annotations

import math
import numbers as _numbers
import os
import threading
import warnings
import weakref
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from komorebi._backend import Backend, Machine, Options
from komorebi._cache_map import cache_map_svg, cache_report
from komorebi._cache_story import cache_story_html
from komorebi._errors import CoherenceWarning, CompileWarning, OutputWarning, ThreadFault, warn_at_caller
from komorebi._profile import Profile
from komorebi._program import Program
from komorebi._records import AgentReport, CacheCounts, CorePlace, CoreTiming, FaultReport, Finding, Handed
from komorebi._results import ThreadResult
from komorebi._schedule import Schedule, check_quantum
from komorebi._limits import DEFAULT_CLOCK_MHZ, DEFAULT_QUANTUM, OUTPUT_KEPT, TIMING_MODELS

COHERENCE_MODES = ("card", "strict")
CACHES = ("unbounded", "card-size")


def _thread_fault(fault: FaultReport) -> ThreadFault:
    return ThreadFault(
        cluster=fault.cluster, core=fault.core, pc=fault.pc, cause=fault.cause, file=fault.file,
        line=fault.line, backtrace=list(fault.backtrace), line_pc=fault.line_pc, category=fault.category,
    )


def _where(place: CorePlace) -> str:
    """A core's place, in a line of a TimeoutError."""
    at = f", at {place.file}:{place.line}" if place.file else ""
    pc = f" (pc {place.pc:#x})" if place.pc is not None else ""
    doing = {
        "running": "running",
        "ready": "ready, waiting for its turn",
        "waiting": f"waiting in {place.waiting_in}",
        "returned": "returned from kmx_main",
    }.get(place.state, place.state)
    return f"core {place.core}: {doing}{at}{pc if place.state != 'returned' else ''}"


def _seconds(timeout: Any) -> float | None:
    """A checked timeout: None (wait for ever) or a finite number of seconds >= 0."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, _numbers.Real):
        raise TypeError(f"timeout must be a number of seconds or None, not {type(timeout).__name__}")
    try:
        seconds = float(timeout)
    except OverflowError:  # a whole number (or a fraction) too big for a float
        seconds = math.inf if timeout > 0 else -math.inf
    if math.isnan(seconds) or seconds < 0:
        raise ValueError(f"timeout must be a number of seconds >= 0, or None to wait for ever; not {timeout}")
    if seconds > threading.TIMEOUT_MAX:  # longer than the host can wait in one go
        return None
    return seconds


def _gdb_port(gdb: Any) -> int | None:
    """A checked gdb port: GDB, else the environment's KMX_GDB, else None (no gdb)."""
    where = "gdb"
    if gdb is None:
        text = os.environ.get("KMX_GDB", "").strip()
        if not text:
            return None
        where = "KMX_GDB"
        try:
            gdb = int(text)
        except ValueError:
            raise ValueError(f"KMX_GDB must be a port number (0 to 65535; 0: any free port), not {text!r}") from None
    if isinstance(gdb, bool) or not isinstance(gdb, _numbers.Integral):
        raise TypeError(f"gdb must be a port number (an int, 0 for any free port) or None, not {type(gdb).__name__}")
    if not 0 <= gdb <= 65535:
        raise ValueError(f"{where} must be a port number 0 to 65535 (0: any free port), not {gdb}")
    return int(gdb)


def _trace_path(trace: Any) -> Path | None:
    """A checked trace path: a file in a folder that exists, or None."""
    if trace is None:
        return None
    if not isinstance(trace, (str, PathLike)):
        raise TypeError(f"trace must be a file path (str or Path) or None, not {type(trace).__name__}")
    path = Path(trace)
    if path.is_dir():
        raise ValueError(f"trace: {str(path)!r} is a folder; give the path of the file to write the trace into")
    if not path.parent.is_dir():
        raise ValueError(f"trace: the folder {str(path.parent)!r} does not exist")
    return path


def _agents(machine: Machine, cluster: int) -> list[AgentReport]:
    """CLUSTER's Tensix stand-ins, as the machine reports them ([] for a backend without any)."""
    agents = getattr(machine, "agents", None)
    return agents(cluster) if agents is not None else []


class Threads(dict):
    """run.threads: cluster number -> Thread, saying which clusters have one."""

    def __missing__(self, cluster: Any) -> "Thread":
        raise KeyError(f"no thread on cluster {cluster!r}; the threads are on clusters {sorted(self)}")


class _Loaded:
    """What a load made, shared by its Run and its Threads: the machine, and whether the
    run is stopped. When neither the Run nor any of its Threads can be reached, the
    machine is abandoned: its cores stop and all it holds is freed."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.stopped = False
        self.timed = False  # loaded with the timing model (Session.load sets it)
        self._stopping = threading.Lock()
        weakref.finalize(self, machine.abandon)

    def check_process(self) -> None:
        if self.machine.foreign:
            raise RuntimeError(
                f"this run was loaded by process {self.machine.pid}; a forked child process "
                "cannot use it (its memory is the parent's). Load the program again in the "
                "child"
            )

    def stop(self) -> None:
        """See Run.stop. Nothing in a forked child: the run is the parent's to stop."""
        if self.machine.foreign:
            return
        with self._stopping:
            if self.stopped:
                return
            try:
                self.machine.stop()
            finally:
                self.stopped = True
            for finding in self.machine.findings():
                warnings.warn_explicit(
                    CoherenceWarning(finding), CoherenceWarning, finding.file or "<thread>", finding.line or 0
                )
            for number in self.machine.clusters:
                error = self.machine.output(number).host_error
                if error is not None:
                    warn_at_caller(OutputWarning(
                        f"the lines the thread on cluster {number} printed could not all be "
                        f"written to Python's standard output ({error!r}); the host's output "
                        f"failed, not the thread. The latest of them are kept in run.threads[{number}].output"
                    ))


class Thread:
    """A thread of a run, on one cluster: its results, its printed text, its regions."""

    def __init__(self, loaded: _Loaded, cluster: int) -> None:
        self._loaded = loaded
        self._machine = loaded.machine
        self.cluster = cluster
        self.cores = loaded.machine.cores(cluster)
        # The ThreadFault, held weakly: its traceback holds this object's frames, and a
        # cycle would keep the run (and its cores) alive after it is dropped.
        self._fault: weakref.ref | None = None
        self._fault_made = threading.Lock()
        self.results: list[ThreadResult] = []  # every result `result` returned, in order

    def __repr__(self) -> str:
        closed, last = self._machine.ended(self.cluster)
        if last is not None and last.fault is not None:
            state = "crashed"
        elif closed and last is not None and last.final:
            state = f"ended, code {last.code}"
        else:
            state = "stopped" if self._loaded.stopped else "running"
        cores = len(self.cores) if hasattr(self.cores, "__len__") else self.cores
        return f"<Thread on cluster {self.cluster}: {cores} core{'s' if cores != 1 else ''}, {state}>"

    @property
    def fault(self) -> ThreadFault | None:
        """The thread's km.ThreadFault once a result call raised it, else None."""
        _, last = self._machine.ended(self.cluster)
        if last is None or last.fault is None:
            return None
        return self._fault_of(last)

    @property
    def output(self) -> str:
        """What the thread printed with kmx_print, without the prefixes: its latest lines,
        at most km.Session's `output_limit` characters of them (`output_dropped` counts
        the older lines that were let go; all of them went to standard output)."""
        return self._machine.output(self.cluster).text

    @property
    def output_dropped(self) -> int:
        """How many of the thread's first lines `output` no longer holds."""
        return self._machine.output(self.cluster).dropped

    @property
    def region_names(self) -> list[str]:
        return self._machine.region_names(self.cluster)

    def result(self, timeout: float | None = None) -> ThreadResult:
        """The thread's next result; see Run.thread_result."""
        timeout = _seconds(timeout)
        self._loaded.check_process()
        item = self._machine.take(self.cluster, timeout)
        if item is None:
            closed, last = self._machine.ended(self.cluster)
            if last is not None and last.fault is not None:
                raise self._fault_of(last)
            if last is not None:  # taken before, here or by another Python thread
                raise RuntimeError(
                    f"the thread on cluster {self.cluster} has ended and its final result was "
                    "already returned"
                )
            if closed:  # stopped before, or while we waited
                raise RuntimeError(
                    f"the run was stopped before the thread on cluster {self.cluster} "
                    "handed another result"
                )
            places = "".join(f"\n  {_where(place)}" for place in self._machine.places(self.cluster))
            agents = _agents(self._machine, self.cluster)
            places += "".join(f"\n  {agent}" for agent in agents)
            failed = [agent for agent in agents if agent.error is not None]
            if failed:
                places += (f"\nagent{'s' if len(failed) > 1 else ''} {', '.join(repr(a.name) for a in failed)} "
                           "failed: a core waiting for what it would have written waits for ever "
                           "(run.agent(name).error has the exception and its traceback)")
            raise TimeoutError(f"the thread on cluster {self.cluster} handed no result in {timeout} s{places}")
        if item.fault is not None:
            raise self._fault_of(item)
        result = ThreadResult(item.words, item.final, item.code, item.codes)
        self.results.append(result)
        return result

    def _fault_of(self, item: Handed) -> ThreadFault:
        """The thread's ThreadFault: the same one every time, while anyone holds it."""
        with self._fault_made:
            fault = self._fault() if self._fault is not None else None
            if fault is None:
                fault = _thread_fault(item.fault)
                self._fault = weakref.ref(fault)
            return fault

    def read(self, name: str) -> np.ndarray:
        """Region NAME as DRAM holds it after the run: a new uint8 array.

        >>> run.stop()
        >>> tripled = run.thread.read("tripled").view(np.uint32)
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a region name (str), not {type(name).__name__}")
        self._loaded.check_process()
        if not self._loaded.stopped:
            raise RuntimeError("regions are read after run.stop()")
        if name not in self.region_names:
            raise KeyError(f"no region {name!r} on cluster {self.cluster}; its regions are {self.region_names}")
        return self._machine.read(self.cluster, name)


class Run:
    """A loaded program: its threads run at once. Stop it with `run.stop()`. A run that
    nobody can reach any more (its Run and its Threads dropped) is stopped and freed."""

    def __init__(self, loaded: _Loaded, session: "Session") -> None:
        self._loaded = loaded
        self._session = session  # a run keeps its session open
        self.threads = Threads({number: Thread(loaded, number) for number in loaded.machine.clusters})

    def __repr__(self) -> str:
        clusters = ", ".join(str(c) for c in sorted(self.threads))
        plural = "s" if len(self.threads) != 1 else ""
        timed = ""
        rows = getattr(self._loaded.machine, "timing", lambda: None)() if self.timed else None
        if rows:  # (the slowest core's modelled time)
            slowest = max(rows, key=lambda core: core.cycles)
            timed = f", {slowest.cycles:,} cycles ({slowest.microseconds:,.1f} us) on its slowest core"
        return f"<Run: thread{plural} on cluster{plural} {clusters}, {'stopped' if self.stopped else 'running'}{timed}>"

    @property
    def stopped(self) -> bool:
        return self._loaded.stopped

    @property
    def thread(self) -> Thread:
        """The thread, when the program has exactly one."""
        if len(self.threads) != 1:
            raise ValueError(
                f"the program has threads on clusters {sorted(self.threads)}; use "
                "run.threads[cluster]"
            )
        return next(iter(self.threads.values()))

    def thread_result(self, timeout: float | None = None, cluster: int | None = None) -> ThreadResult:
        """The next result of the thread (on CLUSTER, when there are several), waiting at
        most TIMEOUT wall-clock seconds (None: for ever). Raises TimeoutError when none
        comes (saying where each core is), km.ThreadFault when the thread crashed."""
        timeout = _seconds(timeout)
        if cluster is None:
            return self.thread.result(timeout)
        if isinstance(cluster, bool) or not isinstance(cluster, _numbers.Integral):
            raise TypeError(f"cluster must be an int (0 to 3) or None, not {type(cluster).__name__}")
        if cluster not in self.threads:
            raise KeyError(f"no thread on cluster {cluster!r}; the threads are on clusters {sorted(self.threads)}")
        return self.threads[cluster].result(timeout)

    def stop(self) -> None:
        """Halt whatever still runs and hand the regions back (in "card" mode). Each
        coherence finding is then issued as a km.CoherenceWarning. Idempotent, and safe
        from several Python threads: each returns once the regions are handed back. When
        every thread has ended, the Tensix stand-ins (program.noc_agent) still going finish
        first; a stand-in stopped before it returned has `error` AgentStopped."""
        self._loaded.stop()

    def agent(self, name: str) -> AgentReport:
        """The Tensix stand-in NAME (program.noc_agent) as it is now: what its function
        returned (`result`) or raised (`error`, with its traceback), and `done`. Read it
        after run.stop() for its last word.

        >>> run.stop()
        >>> frames_seen = run.agent("producer").result
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be an agent's name (str), not {type(name).__name__}")
        self._loaded.check_process()
        found = [agent for cluster in sorted(self.threads) for agent in _agents(self._loaded.machine, cluster)]
        for agent in found:
            if agent.name == name:
                return agent
        names = ", ".join(repr(agent.name) for agent in found) or "none (program.noc_agent adds one)"
        raise KeyError(f"no agent {name!r} in this run; its agents are {names}")

    @property
    def findings(self) -> list[Finding]:
        """The coherence mistakes the checker found, once per region and kind, cluster by
        cluster (complete once the run has stopped)."""
        return self._loaded.machine.findings()

    def cache_counts(self) -> list[CacheCounts]:
        """With km.Session(cache="card-size"): how each region fared in the tile's
        caches, a km.CacheCounts per region, cluster by cluster (complete once the run has
        stopped). [] with the unbounded cache, which has no levels to count."""
        return self._loaded.machine.cache_counts()

    @property
    def timed(self) -> bool:
        """Whether the run has the timing model (km.Session(timing="x280")): run.timing() answers."""
        return self._loaded.timed

    def timing(self) -> list[CoreTiming]:
        """With km.Session(timing="x280"): each core's modelled time, a km.CoreTiming per
        core, cluster by cluster (its cycles, instructions, and where the cycles went;
        docs/timing.md). Complete once the run has stopped; while it runs, as far as it got."""
        rows = self._loaded.machine.timing()
        if rows is None:
            raise ValueError("run.timing(): the session has no timing model; open it with "
                             "km.Session(timing='x280') to model the card's cycles")
        return rows

    def cache_report(self) -> str:
        """What happened to each line of each region, as text for a terminal."""
        self._require_stopped("run.cache_report()")
        return cache_report(self._loaded.machine.pictures(), self.findings)

    def _repr_svg_(self) -> str | None:
        """In Jupyter, a stopped run shows itself as its cache map (run.cache_map's
        picture); a running one as its repr."""
        if not self.stopped:
            return None
        return cache_map_svg(self._loaded.machine.pictures(), self.findings)

    def profile(self) -> Profile:
        """Where each core's instructions went (km.Session(profile=True)): by source line,
        by function, by call stack, and what the cache did at each line. After run.stop()."""
        self._require_stopped("run.profile()")
        profile = self._loaded.machine.profile()
        if profile is None:
            raise RuntimeError("run.profile() needs a profiled run: load the program with km.Session(profile=True)")
        return profile

    def cache_map(self, path: str | PathLike) -> Path:
        """Draw what happened to each line of each region into PATH (an .svg file) and
        return the path."""
        self._require_stopped("run.cache_map()")
        if not isinstance(path, (str, PathLike)):
            raise TypeError(f"path must be a file path (str or Path), not {type(path).__name__}")
        path = Path(path)
        if path.suffix.lower() != ".svg":
            raise ValueError(f"path must end in .svg (the map is drawn as SVG), not {path.name!r}")
        path.write_text(cache_map_svg(self._loaded.machine.pictures(), self.findings))
        return path

    def cache_story(self, path: str | PathLike) -> Path:
        """Write the cache map over time into PATH (an .html file, self-contained): a page
        that steps forwards and backwards through the run's kmx calls and findings and
        shows each region's lines after each. Returns the path."""
        self._require_stopped("run.cache_story()")
        if not isinstance(path, (str, PathLike)):
            raise TypeError(f"path must be a file path (str or Path), not {type(path).__name__}")
        path = Path(path)
        if path.suffix.lower() not in (".html", ".htm"):
            raise ValueError(f"path must end in .html (the story is a web page), not {path.name!r}")
        path.write_text(cache_story_html(self._loaded.machine.story()))
        return path

    @property
    def schedule(self) -> Schedule:
        """The turns the run's cores took, as a km.Schedule that replays them
        (km.Session(schedule=run.schedule)); read after run.stop()."""
        self._require_stopped("run.schedule")
        if self._session.gdb is not None:
            raise RuntimeError("run.schedule: a run under gdb does not replay (gdb's steps run cores out of "
                               "their turns); run without gdb=, then debug the replay")
        turns, instructions = self._loaded.machine.schedule()
        chosen = self._session.schedule
        quantum = chosen.quantum if chosen is not None else self._session.quantum
        return Schedule("replay", tuple(turns), quantum, instructions=tuple(sorted(instructions.items())))

    def _require_stopped(self, what: str) -> None:
        if not self.stopped:
            raise RuntimeError(f"{what} comes after run.stop(), when every line's story is complete")

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _timing_of(timing, clock_mhz) -> tuple[str | None, float]:
    """km.Session's TIMING and CLOCK_MHZ, checked: the model's name (or None) and its clock."""
    if timing is not None and not isinstance(timing, str):
        raise TypeError(f"timing must be a str ({', '.join(map(repr, TIMING_MODELS))}) or None, not {type(timing).__name__}")
    if timing is not None and timing not in TIMING_MODELS:
        raise ValueError(f"timing must be one of {', '.join(map(repr, TIMING_MODELS))} or None, not {timing!r}")
    if clock_mhz is None:
        return timing, float(DEFAULT_CLOCK_MHZ)
    if timing is None:
        raise ValueError("clock_mhz is the timing model's clock: give timing='x280' with it")
    if isinstance(clock_mhz, bool) or not isinstance(clock_mhz, _numbers.Real):
        raise TypeError(f"clock_mhz must be a number of MHz, not {type(clock_mhz).__name__}")
    if not 1 <= clock_mhz <= 10_000:
        raise ValueError(f"clock_mhz must be 1 to 10,000 MHz (the card runs its X280 at 800 to 1750), not {clock_mhz}")
    return timing, float(clock_mhz)


class Session:
    """A connection to a card; here, the simulated one.

    >>> with km.Session() as session:
    ...     run = session.load(program)
    """

    def __init__(
        self,
        coherence: str = "card",
        *,
        quantum: int = DEFAULT_QUANTUM,
        schedule_seed: int | None = None,
        output_limit: int | None = OUTPUT_KEPT,
        cache: str = "unbounded",
        cache_seed: int = 0,
        gdb: int | None = None,
        profile: bool = False,
        trace: str | PathLike | None = None,
        schedule: Schedule | None = None,
        backend: Backend | None = None,
        timing: str | None = None,
        clock_mhz: float | None = None,
    ) -> None:
        """COHERENCE is "card" (what a card does) or "strict". While several cores of a
        thread are ready they take turns of QUANTUM instructions, round robin; with
        SCHEDULE_SEED (an int) the order and the length of each turn are drawn from a
        generator seeded by it instead: another interleaving, the same every time.
        OUTPUT_LIMIT is how many characters of its latest printed lines each thread keeps
        for `Thread.output` (None: all of them). CACHE is "unbounded" (a line stays until
        an invalidate drops it) or "card-size" (the tile's L1D, L2 and L3 at the card's
        sizes: lines are evicted, a dirty one written back, and run.cache_counts() says
        how each region fared); CACHE_SEED seeds its choice of what to evict. BACKEND is
        the machine to run on (None: the simulator; komorebi._backend says what one is).
        GDB is a port of 127.0.0.1 to serve gdb's remote protocol on (0: any free one;
        None: the environment's KMX_GDB, else no gdb): `load` then stops every core of
        the program's first thread at kmx_main and waits for gdb to attach (docs/debugging.md).
        PROFILE: count every core's instructions by source line, function and call stack,
        for Run.profile(). TRACE: a file to write each run's timeline into when it stops,
        as a Chrome trace (Perfetto, chrome://tracing; time in instructions, or with TIMING
        each core's modelled clock in microseconds); a second
        run of the session writes PATH with "-2" before its suffix, and so on. SCHEDULE
        (a km.Schedule, instead of QUANTUM and SCHEDULE_SEED): how the cores take turns,
        e.g. a schedule km.explore found failing; it replays bit for bit. Under a
        SCHEDULE_SEED or a SCHEDULE, clusters 2 and 3 take turns on one host thread.
        TIMING: "x280" models the card's time (docs/timing.md): kmx_cycles, rdcycle and
        rdtime read the X280's modelled cycles at CLOCK_MHZ (default 1750, the clock the
        chip's measurements ran at), the cores take turns by their clocks, and
        run.timing() says where each core's cycles went; None (the default): each
        instruction is one cycle."""
        check_quantum(quantum)
        if schedule_seed is not None and (
            isinstance(schedule_seed, bool) or not isinstance(schedule_seed, _numbers.Integral)
        ):
            raise TypeError(f"schedule_seed must be an int or None, not {type(schedule_seed).__name__}")
        if output_limit is not None:
            if isinstance(output_limit, bool) or not isinstance(output_limit, _numbers.Integral):
                raise TypeError(
                    f"output_limit must be an int (characters kept) or None (keep all), not "
                    f"{type(output_limit).__name__}"
                )
            if output_limit < 0:
                raise ValueError(f"output_limit must be >= 0 characters, or None to keep all; not {output_limit}")
        if not isinstance(cache, str):
            raise TypeError(f"cache must be a str, 'unbounded' or 'card-size', not {type(cache).__name__}")
        if cache not in CACHES:
            raise ValueError(f"cache must be 'unbounded' or 'card-size', not {cache!r}")
        if isinstance(cache_seed, bool) or not isinstance(cache_seed, _numbers.Integral):
            raise TypeError(f"cache_seed must be an int, not {type(cache_seed).__name__}")
        if not isinstance(coherence, str):
            raise TypeError(f"coherence must be a str, 'card' or 'strict', not {type(coherence).__name__}")
        if coherence not in COHERENCE_MODES:
            raise ValueError(f"coherence must be 'card' or 'strict', not {coherence!r}")
        if schedule is not None:
            if not isinstance(schedule, Schedule):
                raise TypeError(f"schedule must be a km.Schedule or None, not {type(schedule).__name__}")
            if schedule_seed is not None:
                raise ValueError("give a schedule or a schedule_seed, not both (km.Schedule.random(seed) is the seed's)")
        self.schedule = schedule
        self.timing, self.clock_mhz = _timing_of(timing, clock_mhz)
        self.gdb = _gdb_port(gdb)
        if not isinstance(profile, bool):
            raise TypeError(f"profile must be True or False, not {type(profile).__name__}")
        self.profile = profile
        self.trace = _trace_path(trace)
        self._traces = 0  # runs that wrote a trace so far
        self.quantum = int(quantum)
        self.schedule_seed = None if schedule_seed is None else int(schedule_seed)
        self.output_limit = None if output_limit is None else int(output_limit)
        self.coherence = coherence
        self.cache, self.cache_seed = cache, int(cache_seed)
        if backend is None:
            from komorebi._simulator import Simulator  # (the machine is imported by the first Session)

            backend = Simulator()
        self.backend = backend
        self.timing_parameters: dict[str, int] = {}  # (the model's table changed: bench/timing.py)
        self.closed = False
        self._lock = threading.Lock()
        self._runs: "weakref.WeakSet[_Loaded]" = weakref.WeakSet()  # a dropped run goes

    def load(self, program: Program) -> Run:
        """Compile the program's threads (cached), place their regions, and start them."""
        if self.closed:
            raise ValueError("load: the session is closed; open a new km.Session()")
        if not isinstance(program, Program):
            raise TypeError(f"program must be a km.Program, not {type(program).__name__}")
        if not program.threads:
            raise ValueError(f"program {program.name!r} has no thread; add one with program.thread(...)")
        trace, number = self._next_trace()
        options = Options(self.coherence, self.quantum, self.schedule_seed, self.output_limit, self.cache,
                          self.cache_seed, self.gdb, self.profile, trace, self.schedule, self.timing,
                          self.clock_mhz, tuple(sorted(self.timing_parameters.items())))
        try:
            machine = self.backend.load([spec for _, spec in sorted(program.threads.items())], options)
        except BaseException:
            with self._lock:  # (no run: its trace's number goes to the next)
                if number and self._traces == number:
                    self._traces -= 1
            raise
        if machine.warnings:  # (a cache hit says again what the compiler said)
            warn_at_caller(CompileWarning(machine.warnings))
        loaded = _Loaded(machine)
        loaded.timed = options.timing is not None  # (the run's own, whatever the session's attribute says later)
        run = Run(loaded, self)
        with self._lock:  # a close() from another Python thread stops what loads return
            if self.closed:
                raise ValueError("load: the session was closed while the program loaded; nothing was started")
            self._runs.add(loaded)
            machine.start()
        machine.wait_for_debugger()  # (gdb: every core stopped at kmx_main until it attaches)
        return run

    def _next_trace(self) -> tuple[str | None, int]:
        """Where the next run's trace goes, TRACE, then TRACE-2, TRACE-3..., and its number
        (0: no trace)."""
        if self.trace is None:
            return None, 0
        with self._lock:
            self._traces += 1
            n = self._traces
        path = self.trace if n == 1 else self.trace.with_name(f"{self.trace.stem}-{n}{self.trace.suffix}")
        return str(path), n

    def close(self) -> None:
        """Stop every run still going. Idempotent. Every run is stopped even when one's
        stop raises (a CoherenceWarning turned into an error); the first error is raised
        after."""
        with self._lock:
            self.closed = True
            runs, self._runs = list(self._runs), weakref.WeakSet()
        first: BaseException | None = None
        for loaded in runs:
            try:
                loaded.stop()
            except BaseException as error:  # noqa: BLE001 - raised again below
                first = first or error
        if first is not None:
            raise first

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
