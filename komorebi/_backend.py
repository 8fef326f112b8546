"""The seam between komorebi's API and the machine that runs a program.

komorebi/ reaches a machine only through this interface, the way httpx's client reaches
the network only through its transports. The simulator (komorebi._simulator) is one
backend, the default; a real card would be another, and tests use a small fake.

    backend.load(threads, options)       compile and place; returns a Machine
    machine.start()                      the cores begin (once the session holds the machine)
    machine.take(cluster, timeout)       the thread's next item (a result or a fault)
    machine.ended(cluster)               why nothing more comes: (closed, last item taken)
    machine.places(cluster)              where each core is (for a TimeoutError)
    machine.stop() / machine.abandon()   halt and hand back / nobody can reach it: free it
    machine.read(cluster, name)          a region as DRAM holds it, a new array
    machine.findings()                   the coherence findings
    machine.pictures()                   each region line's story, for the picture
    machine.output(cluster)              what the thread printed, and the host's trouble

What crosses the seam is plain data: numbers, strings, numpy arrays and the dataclasses
below. One exception: a region's initial bytes, which Program.thread keeps as a snapshot
(komorebi._simulator.snapshot: host memory, copy-on-write on Linux, so that a big array
is copied once), an object with `array()` and `nbytes` that any backend can read. Errors
come as komorebi's own (CompileError, ValueError, FileNotFoundError), and two of the
simulator's that name its own limits (PlacementError: the thread does not fit the
cluster's memory; HostMemoryError: KMX_HOST_MEMORY names no way of this system).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Protocol, Sequence

import numpy as np

if TYPE_CHECKING:
    from komorebi._profile import Profile
    from komorebi._program import ThreadSpec
    from komorebi._results import CacheCounts, Finding
    from komorebi._schedule import Schedule


class LineState(IntEnum):
    """What happened to a region's 64-byte line, in rising order of importance: the
    picture shows the highest."""

    UNTOUCHED = 0
    FRESH = 1  # filled from DRAM
    FLUSHED = 2  # written, then flushed
    READ_STALE = 3  # read before an invalidate: stale on a card
    FLUSHED_STALE = 4  # a flush wrote back stale bytes the thread never wrote
    DROPPED = 5  # written, then dropped by an invalidate
    UNFLUSHED = 6  # written, never flushed


@dataclass(frozen=True)
class Options:
    """A session's choices, for every load it makes (km.Session's arguments)."""

    coherence: str
    quantum: int
    schedule_seed: int | None
    output_limit: int | None
    cache: str = "unbounded"  # or "card-size"
    cache_seed: int = 0
    gdb: int | None = None  # serve gdb on this port of 127.0.0.1 (0: any free one); None: no gdb
    profile: bool = False  # count each core's instructions by source line (Run.profile)
    trace: str | None = None  # write the run's Chrome trace here when it stops
    schedule: "Schedule | None" = None  # how the cores take turns (km.Schedule); None: quantum and schedule_seed


@dataclass(frozen=True)
class FaultReport:
    """A thread's crash, as km.ThreadFault tells it."""

    cluster: int
    core: int
    pc: int
    cause: str
    file: str | None = None
    line: int | None = None
    backtrace: tuple[str, ...] = ()
    line_pc: int | None = None


@dataclass(frozen=True)
class Handed:
    """One item a thread handed: a result (submitted, or FINAL) or a FAULT."""

    words: np.ndarray | None = None
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
    states: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class StoryStep:
    """One step of a thread's cache story: CORE (-1: none) did WHAT at FILE:LINE (a
    finding's or a fault's message in DETAIL), and the lines that changed since the step
    before: (region ID, runs), each run a row (first line, end, new state), the lines
    counted from the region's first."""

    cluster: int
    core: int
    what: str
    file: str | None
    line: int | None
    detail: str = ""
    changes: tuple[tuple[int, np.ndarray], ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class CacheStory:
    """The regions' lines before the first step (START), the steps, and why the story
    stopped early (STOPPED; "" when it did not)."""

    start: tuple[RegionPicture, ...]
    steps: tuple[StoryStep, ...]
    stopped: str = ""


class Machine(Protocol):
    """A loaded program, running (see the module's docstring)."""

    clusters: Sequence[int]
    warnings: str  # what the compiler warned of, for km.CompileWarning ("" for nothing)
    foreign: bool  # this is a forked child's copy of its parent's machine
    pid: int  # the process the machine belongs to

    def start(self) -> None: ...  # the threads start (once the session holds the machine)
    def wait_for_debugger(self) -> None: ...  # (once started) until gdb attached, with Options.gdb; else at once
    def cores(self, cluster: int) -> int: ...
    def region_names(self, cluster: int) -> list[str]: ...
    def take(self, cluster: int, timeout: float | None) -> Handed | None: ...
    def ended(self, cluster: int) -> tuple[bool, Handed | None]: ...
    def places(self, cluster: int) -> list[CorePlace]: ...
    def stop(self) -> None: ...
    def abandon(self) -> None: ...
    def read(self, cluster: int, name: str) -> np.ndarray: ...
    def findings(self) -> list["Finding"]: ...
    def pictures(self) -> list[RegionPicture]: ...
    def output(self, cluster: int) -> Output: ...
    def cache_counts(self) -> list["CacheCounts"]: ...  # (the card-size cache; [] for the unbounded one)
    def profile(self) -> "Profile | None": ...  # (after stop; None unless Options.profile)
    def story(self) -> CacheStory: ...  # (after stop)
    def schedule(self) -> "tuple[list[tuple[int, int, int]], dict[int, int]]": ...  # (after stop) turns, instructions


class Backend(Protocol):
    def load(self, threads: Sequence["ThreadSpec"], options: Options) -> Machine: ...
