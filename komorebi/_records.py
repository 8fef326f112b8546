"""The plain data that crosses the seam (komorebi._backend), defined once for both sides.

What crosses, either way: a thread as Program.thread checked it (ThreadSpec, what a
backend loads); an item a thread handed (Handed, with a FaultReport, in a Category); a
failure of the simulator's own (SimulatorFailure); where a core is
(CorePlace); what a thread printed (Output); a coherence finding (Finding, km.Finding); the
regions' lines, as a picture and as a story (LineState, RegionPicture, StoryStep,
CacheStory); the card-size cache's counts (CacheCounts, km.CacheCounts); and the profile's
rows (LineCount, FunctionCount, CacheEvents, CoreProfile, km.*).

The simulator (komorebi.sim) makes its findings, handed items and profile rows as these
types, and its card answers the seam in the rest (sim.machine.card); komorebi's API reads
them; a backend of another kind (tests/fake_backend.py, a card) makes the same. This
module imports nothing of komorebi's or of the machine's, nor numpy (arrays are only named
in the annotations), so that either side may import it from anywhere without a circle
(docs/simulator.md, "The layers").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class ThreadSpec:
    """One X280 thread of a program, as `Program.thread` checked it: what a backend
    loads. HEAP is bytes, whole pages."""

    cluster: int
    sources: tuple[Path, ...]
    regions: tuple[tuple[str, Any], ...]  # a byte count, or an array's bytes copied at thread()
    words: tuple[int, ...]
    cores: int
    heap: int
    agents: tuple[tuple[str, Any], ...] = ()  # (name, function) of each Tensix stand-in (Program.noc_agent)


class AgentStopped(BaseException):
    """Raised inside a Tensix stand-in's noc call (program.noc_agent) when the run stops
    before the stand-in returned, or when it keeps calling long after the thread ended; its
    `error` then. A BaseException, so that `except Exception` in the function does not
    swallow the stop."""


@dataclass(frozen=True)
class AgentReport:
    """A Tensix stand-in of a run (program.noc_agent), as `run.agent(name)` reports it:
    what its function returned (RESULT) or raised (ERROR, with its traceback), whether it
    is DONE, how many STEPS (noc calls, and its start) it took, and what it is DOING, at
    FILE:LINE of its own Python where that is known."""

    name: str
    cluster: int
    done: bool
    result: Any
    error: BaseException | None
    steps: int
    doing: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        at = f", at {self.file}:{self.line}" if self.file else ""
        return f"agent {self.name!r}: {self.doing}{at}"


class Category(str, Enum):
    """What kind of thing a fault or a finding is, and so who is at fault: the `category`
    of each km.ThreadFault and km.Finding, whose words (`words`) begin its message.
    docs/errors.md groups its messages so. A str, its value: `fault.category ==
    "thread-mistake"` holds too.

    >>> try:
    ...     run.thread_result(timeout=10.0)
    ... except km.ThreadFault as fault:
    ...     if fault.category is km.Category.SIMULATOR:
    ...         print("a bug of the simulator's: please report it")
    """

    # The thread did what the card refuses too (it would trap, or hang): a bad access, an
    # illegal instruction, a bad kmx argument, a failed assert. The thread's code is at fault.
    MISTAKE = "thread-mistake"
    # The card does it without complaint, but what comes of it depends on what its caches
    # happen to hold: bytes it does not promise (every coherence finding). The thread's code
    # is at fault, though it may give the right answer on a card, for a while.
    UNPREDICTABLE = "unpredictable"
    # What the thread asked for is something the simulator does not model (a system call
    # it does not serve, a cache register it does not know): on a card it may work.
    NOT_SIMULATED = "not-simulated"
    # A bug of the simulator's own: the thread is not at fault. Please report it.
    SIMULATOR = "simulator-failure"
    # Stopped on request (gdb's kill): nobody's fault.
    STOPPED = "stopped"

    @property
    def words(self) -> str:
        """The words a message in this category begins with, before a colon."""
        return _CATEGORY_WORDS[self]

    def __str__(self) -> str:
        return self.value


_CATEGORY_WORDS = {
    Category.MISTAKE: "the thread's mistake",
    Category.UNPREDICTABLE: "unpredictable on a card",
    Category.NOT_SIMULATED: "not simulated",
    Category.SIMULATOR: "a simulator failure, not the thread's",
    Category.STOPPED: "stopped on request",
}


class SimulatorFailure(RuntimeError):
    """A failure of the simulator's own (a bug of ours, not the thread's) that `run.stop()`
    raises: what went wrong as a thread ended, once it could no longer be that thread's
    fault. Its message begins with its category's words."""

    category = Category.SIMULATOR


@dataclass(frozen=True)
class FaultReport:
    """A thread's crash, as km.ThreadFault tells it; CATEGORY says what kind it is (a
    simulator failure is never the thread's mistake)."""

    cluster: int
    core: int
    pc: int
    cause: str
    file: str | None = None
    line: int | None = None
    backtrace: tuple[str, ...] = ()
    line_pc: int | None = None
    category: Category = Category.MISTAKE


@dataclass(frozen=True)
class Handed:
    """One item a thread handed: a result (submitted, or FINAL) or a FAULT."""

    words: "np.ndarray | None" = None
    final: bool = False
    code: int | None = None
    codes: tuple[int, ...] = ()
    fault: FaultReport | None = None


@dataclass(frozen=True)
class CorePlace:
    """Where a core is: STATE is "running", "ready" (waiting for its turn), "waiting"
    (in the kmx call WAITING_IN), "returned" (from kmx_main) or "faulted"; FILE and LINE
    the user's source line it is at (None when there is none)."""

    core: int
    state: str
    pc: int | None = None
    file: str | None = None
    line: int | None = None
    waiting_in: str = ""


@dataclass(frozen=True)
class Output:
    """What a thread printed: the latest TEXT kept, how many earlier lines were DROPPED,
    and the error of the host's standard output, if it failed."""

    text: str = ""
    dropped: int = 0
    host_error: BaseException | None = None


def named_cores(numbers) -> str:
    """Cores in words: "core 0", "cores 0 and 2", "cores 0, 1, 2 and 3" (a finding's)."""
    numbers = sorted(numbers)
    if len(numbers) == 1:
        return f"core {numbers[0]}"
    listed = [str(n) for n in numbers]
    return "cores " + ", ".join(listed[:-1]) + f" and {listed[-1]}"


@dataclass(frozen=True)
class Finding:
    """One coherence mistake of a thread: what, where in the region, where in the source.

    `kind` is "read-before-invalidate", "unflushed-write", "invalidate-dropped-writes",
    "flush-wrote-stale-bytes", "stale-read", "mixed-alias", "noc-read-unflushed" or
    "flush-over-noc-write"; `start`
    and `end` are byte offsets in the region (end exclusive), the span of every byte the
    mistake touched; `file` and `line` are the thread's source line of its first
    occurrence; `message` says what went wrong and what the fix is, and `category` what
    kind of mistake it is (each kind's: sim.cache.checker). `core` is the core of
    the first occurrence; `cores` names every core that made the mistake, each with the
    bytes of the region it touched, as (core, start, end). Where a Tensix
    stand-in (program.noc_agent) took part, `agent` names it and `agent_file` and
    `agent_line` are the Python line of its noc call: the noc.write under a stale read,
    the noc.read of bytes a core had not flushed, the noc.write a flush wrote back over.

    >>> run.stop()
    >>> for finding in run.findings:
    ...     print(finding.where, finding.kind)
    """

    kind: str
    cluster: int
    core: int
    region: str
    region_id: int
    start: int
    end: int
    file: str | None
    line: int | None
    message: str
    agent: str | None = None
    agent_file: str | None = None
    agent_line: int | None = None
    cores: tuple[tuple[int, int, int], ...] = ()
    category: Category = Category.UNPREDICTABLE

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "(no source line)"

    def __str__(self) -> str:
        return f"{self.where}: {self.category.words}: {self.message}"

    def __repr__(self) -> str:
        place = f"{self.file.rsplit('/', 1)[-1]}:{self.line}" if self.file else "no source line"
        return (f"Finding({self.kind} in region {self.region!r}, bytes {self.start} to {self.end - 1}, at {place}, "
                f"{self.named_cores} of cluster {self.cluster})")

    @property
    def named_cores(self) -> str:
        """The cores that made the mistake, in words: "core 0", "cores 0, 1 and 3"."""
        return named_cores({n for n, _, _ in self.cores} or {self.core})


class LineState(IntEnum):
    """What happened to a region's 64-byte line, in rising order of importance: the
    picture shows the highest. (The cache model's own numbers: sim.cache.model.)"""

    UNTOUCHED = 0
    FRESH = 1  # filled from DRAM
    FLUSHED = 2  # written, then flushed
    READ_STALE = 3  # read before an invalidate: stale on a card
    FLUSHED_STALE = 4  # a flush wrote back stale bytes the thread never wrote
    DROPPED = 5  # written, then dropped by an invalidate
    UNFLUSHED = 6  # written, never flushed


@dataclass(frozen=True)
class RegionPicture:
    """Each line's story of one region: STATES (a LineState per line of LINE_BYTES
    holding the region's bytes, from the line that holds its first byte, which is
    FIRST_OFFSET bytes into its line)."""

    cluster: int
    coherence: str
    name: str
    id: int
    size: int
    line_bytes: int
    first_offset: int
    states: "np.ndarray" = field(repr=False)
    noc: tuple[str, ...] = ()  # what each Tensix stand-in (program.noc_agent) did to the region's DRAM, a line each


@dataclass(frozen=True)
class StoryStep:
    """One step of a thread's cache story: CORE (-1: none) did WHAT at FILE:LINE (a
    finding's or a fault's message in DETAIL), and the lines that changed since the step
    before: (region ID, runs), each run a row (first line, end, new state), the lines
    counted from the region's first. Timed (km.Session(timing=...)): CYCLES, the modelled
    clock of who made the step as it made it (the core's; a Tensix stand-in's own; the
    latest core's at the thread's end), and the same in MICROSECONDS; None otherwise."""

    cluster: int
    core: int
    what: str
    file: str | None
    line: int | None
    detail: str = ""
    changes: "tuple[tuple[int, np.ndarray], ...]" = field(default=(), repr=False)
    cycles: int | None = None
    microseconds: float | None = None


@dataclass(frozen=True)
class CacheStory:
    """The regions' lines before the first step (START), the steps, and why the story
    stopped early (STOPPED; "" when it did not)."""

    start: tuple[RegionPicture, ...]
    steps: tuple[StoryStep, ...]
    stopped: str = ""


@dataclass(frozen=True)
class CacheCounts:
    """How one region fared in the card-size cache (km.Session(cache="card-size")): its
    accesses' hits and misses at each level of the tile, and the lines of it the L3
    evicted, of which `written_back` were dirty (each a missing flush the eviction may
    have rescued). Every access to the region counts once at the L1D, its misses once at
    the L2, and the L2's misses once at the L3."""

    cluster: int
    region: str
    l1d_hits: int
    l1d_misses: int
    l2_hits: int
    l2_misses: int
    l3_hits: int
    l3_misses: int
    evicted: int
    written_back: int


@dataclass(frozen=True)
class CoreTiming:
    """One core's time in the timing model (km.Session(timing="x280"); docs/timing.md):
    its clock in the X280's cycles, the instructions it ran, and where the cycles went
    (`went`: a cycle count for each of WENT's names, summing to `cycles`). `counts` are
    the model's events: branches and those it guessed wrong, accesses at each level, the
    vector unit's instructions, and the instructions the engine ran (timed from their
    encodings, each access an L1D hit)."""

    cluster: int
    core: int
    cycles: int
    instructions: int
    clock_mhz: float
    went: dict
    counts: dict

    @property
    def cpi(self) -> float:
        """Cycles per instruction (0 before the first)."""
        return self.cycles / self.instructions if self.instructions else 0.0

    @property
    def microseconds(self) -> float:
        """The cycles at the session's clock."""
        return self.cycles / self.clock_mhz

    def __str__(self) -> str:
        parts = [f"{name} {cycles:,} ({100 * cycles / self.cycles:.0f}%)" for name, cycles in self.went.items()
                 if cycles and self.cycles and 100 * cycles / self.cycles >= 1]
        return (f"cluster {self.cluster} core {self.core}: {self.cycles:,} cycles ({self.microseconds:,.1f} us at "
                f"{self.clock_mhz:g} MHz), {self.instructions:,} instructions, {self.cpi:.2f} cycles an "
                f"instruction; went to: {', '.join(parts) or 'nothing yet'}")


@dataclass(frozen=True)
class LineCount:
    """Instructions one core ran at one source line, and with the timing model the cycles
    they took (0 without it). FILE is None for the C library's code, which has no source
    lines here: then FUNCTION names it."""

    file: str | None
    line: int
    function: str
    instructions: int
    cycles: int = 0

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else f"(C library) {self.function}"


@dataclass(frozen=True)
class FunctionCount:
    """One function on one core: its own instructions, and with what it called
    (inclusive); how often it was called (or tail-called); with the timing model the
    same in cycles (0 without it)."""

    name: str
    file: str | None
    line: int
    own: int
    inclusive: int
    calls: int
    own_cycles: int = 0
    inclusive_cycles: int = 0


@dataclass(frozen=True)
class CacheEvents:
    """What the cache did at one source line of a thread (all its cores): the region
    pages it filled (a first load of a page since it was last dropped), the pages it
    first wrote (since they were clean), the bytes its kmx_flush wrote back, and the
    coherence findings found there."""

    cluster: int
    file: str | None
    line: int
    pages_filled: int = 0
    pages_first_written: int = 0
    bytes_flushed: int = 0
    findings: int = 0

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "(no source line)"


@dataclass(frozen=True)
class CoreProfile:
    """One core's profile: INSTRUCTIONS it ran in all, LINES and FUNCTIONS most first,
    STACKS its call stacks (root first) with the instructions run in the innermost."""

    cluster: int
    core: int
    instructions: int
    lines: tuple[LineCount, ...]
    functions: tuple[FunctionCount, ...]
    stacks: tuple[tuple[tuple[str, ...], int], ...]
    dropped: int = 0  # blocks or calls the simulator's tables had no room for (counted in their caller)
    cycles: int = 0  # the timing model's cycles in all (km.Session(timing=...); 0 without it)
    stack_cycles: tuple[tuple[tuple[str, ...], int], ...] = ()  # timed: STACKS in cycles (the cycles in the innermost)
