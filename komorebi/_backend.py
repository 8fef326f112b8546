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
    machine.agents(cluster)              the Tensix stand-ins (ThreadSpec.agents): what each did

What crosses the seam is plain data: numbers, strings, numpy arrays, Options below and
the dataclasses of komorebi._records, which both sides import (the machine makes its
findings, handed items, pictures and profile rows as those types). One exception: a region's initial bytes, which Program.thread keeps as a snapshot
(komorebi._simulator.snapshot: host memory, copy-on-write on Linux, so that a big array
is copied once), an object with `array()` and `nbytes` that any backend can read. Errors
come as komorebi's own (CompileError, ValueError, FileNotFoundError), and two of the
simulator's that name its own limits (PlacementError: the thread does not fit the
cluster's memory; HostMemoryError: KMX_HOST_MEMORY names no way of this system).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Sequence

from komorebi._limits import DEFAULT_CLOCK_MHZ

if TYPE_CHECKING:
    import numpy as np

    from komorebi._profile import Profile
    from komorebi._records import (
        AgentReport, CacheCounts, CacheStory, CorePlace, CoreTiming, Finding, Handed, Output, RegionPicture, ThreadSpec,
    )
    from komorebi._schedule import Schedule


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
    timing: str | None = None  # the timing model ("x280"), or None: a cycle an instruction
    clock_mhz: float = float(DEFAULT_CLOCK_MHZ)  # the cores' clock in the timing model
    timing_parameters: tuple = ()  # (name, value) pairs that change the model's table (bench/, tests)


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
    def timing(self) -> list["CoreTiming"] | None: ...  # each core's modelled time (None: no timing model)
    def profile(self) -> "Profile | None": ...  # (after stop; None unless Options.profile)
    def story(self) -> CacheStory: ...  # (after stop)
    def schedule(self) -> "tuple[list[tuple[int, int, int]], dict[int, int]]": ...  # (after stop) turns, instructions
    def agents(self, cluster: int) -> "list[AgentReport]": ...  # the Tensix stand-ins of ThreadSpec.agents, in order


class Backend(Protocol):
    def load(self, threads: Sequence["ThreadSpec"], options: Options) -> Machine: ...
