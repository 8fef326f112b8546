"""Those who watch a cluster's thread run: the probe points they hear of.

As gem5's probe points (ProbePoint and ProbeListener): the machine says, at each point,
what happened (a turn starts or ends, a kmx or system call begins or ends, a region is
invalidated or flushed, a Tensix stand-in's noc call reaches DRAM, the checker finds
something, a core faults, the thread ends),
to one list of listeners, and knows nothing of who listens. The listeners are the
observers of a run: the cache's story (sim.observe.story, always), the trace's timeline
(sim.observe.timeline, km.Session(trace=PATH)) and the profile (sim.observe.profile,
km.Session(profile=True)).

A listener is an Observer that overrides the points it hears; Observers calls, at each
point, only the listeners that override it, so that a point no one hears costs a loop
over an empty tuple. Observers is itself a listener of the cache's door (sim.cache.events):
a flush and an invalidate Python answers, and a stand-in's noc.read and noc.write, reach
its points from there, as the door tells them (a noc.wait, which the schedule decides,
is told by the cluster; a call answered in C reaches them through catch_up). A listener
that overrides turn_starts or turn_ends hears every turn: the turn loop in C then hands
each turn to Python (the trace's timeline does: each turn is a slice).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol, Sequence

from ..cache.events import Flushed, Invalidated, NocRead, NocWrote

if TYPE_CHECKING:
    from ..._records import Finding
    from ..cache.checker import Checker
    from ..cache.events import Event
    from ..hart.explain import Explainer
    from ..hart.core import Core
    from ..hart.faults import CoreFault
    from ..kmx.traps import KmxCall


class Thread(Protocol):
    """The thread its observers watch, as they read it (sim.machine.cluster.Cluster is one). A
    Protocol: the cluster makes its observers, and they import nothing above them."""

    number: int
    coherence: str
    regions: Sequence  # of sim.machine.cluster.Region, in ID order
    cores: list["Core"]
    explainer: "Explainer"
    checker: "Checker | None"  # (None once its memory has gone)
    running: "Core | None"  # the core whose turn it is

POINTS = ("turn_starts", "turn_ends", "call_begins", "call_ends", "invalidated", "flushed", "finding",
          "finding_changed", "fault", "all_returned", "ended", "released", "agent_step")


def _nothing() -> None:
    pass


class Observer:
    """A listener of a cluster's probe points: each point a method that does nothing."""

    def turn_starts(self, core: "Core") -> None:
        """CORE's turn starts (a turn of the schedule, or gdb's own)."""

    def turn_ends(self, core: "Core") -> None:
        """CORE's turn ended."""

    def call_begins(self, call: "KmxCall") -> None:
        """A core made a kmx call, or a system call of the C library's (sim.kmx.traps)."""

    def call_ends(self, call: "KmxCall") -> None:
        """CALL returned, or faulted."""

    def invalidated(self, core: "Core", region, lines_dropped: int) -> None:
        """CORE's kmx_invalidate of REGION dropped LINES_DROPPED dirty lines."""

    def flushed(self, core: "Core", region, lines_written: int) -> None:
        """CORE's kmx_flush of REGION wrote LINES_WRITTEN lines back."""

    def finding(self, finding: "Finding") -> None:
        """The checker found FINDING (sim.cache.checker)."""

    def finding_changed(self, finding: "Finding") -> None:
        """The checker named FINDING's bytes once more (settle)."""

    def fault(self, core: "Core | None", fault: "CoreFault") -> None:
        """The thread faulted: CORE's FAULT (CORE None: a fault of no core's)."""

    def all_returned(self, codes: tuple[int, ...]) -> None:
        """Every core returned from kmx_main (or called exit): their codes. (Heard after
        `ended`: the thread's end, its hand-back and what the checker found then, come
        first, and the result is handed to Python after.)"""

    def ended(self) -> None:
        """The thread ended (returned, faulted or stopped), after the hand-back."""

    def released(self, cluster: Thread) -> None:
        """Nothing runs on CLUSTER again; its memory is about to go."""

    def agent_step(self, agent, call) -> None:
        """A Tensix stand-in's noc call reached DRAM (sim.noc.agent): AGENT's CALL."""


class Observers:
    """A cluster's listeners, and each probe point as a call to those that hear it."""

    def __init__(self, *listeners: Observer, regions: Sequence = ()) -> None:
        self.regions = regions  # the thread's, by ID (the cache's events name them so: heard)
        self._listeners: list[Observer] = []
        self._hearing: dict[str, tuple[Observer, ...]] = {}
        for listener in listeners:
            self.add(listener)
        # Told of the points that came first (the calls answered in C: sim.kmx.traps,
        # tell_answered) before each point, so that the listeners hear them in order.
        self.catch_up: Callable[[], None] = _nothing

    def hearing(self, *points: str) -> set[Observer]:
        """The listeners that hear any of POINTS."""
        return {listener for point in points for listener in self._hearing[point]}

    def add(self, listener: Observer) -> None:
        self._listeners.append(listener)
        self._hearing = {point: tuple(l for l in self._listeners
                                      if getattr(type(l), point) is not getattr(Observer, point))
                         for point in POINTS}

    def __iter__(self):
        return iter(self._listeners)

    @property
    def hear_turns(self) -> bool:
        """Some listener hears turns, every one (the turn loop in C would not say them)."""
        return bool(self._hearing["turn_starts"] or self._hearing["turn_ends"])

    def turn_starts(self, core: "Core") -> None:
        self.catch_up()
        for listener in self._hearing["turn_starts"]:
            listener.turn_starts(core)

    def turn_ends(self, core: "Core") -> None:
        self.catch_up()
        for listener in self._hearing["turn_ends"]:
            listener.turn_ends(core)

    def call_begins(self, call: "KmxCall") -> None:
        self.catch_up()
        for listener in self._hearing["call_begins"]:
            listener.call_begins(call)

    def call_ends(self, call: "KmxCall") -> None:
        self.catch_up()
        for listener in self._hearing["call_ends"]:
            listener.call_ends(call)

    def heard(self, event: "Event") -> None:
        """The cache's door told EVENT (sim.cache.events): a kmx_invalidate's, a kmx_flush's,
        or a stand-in's noc.read or noc.write is its point (C's events, an access at a time,
        are the checker's)."""
        if isinstance(event, Flushed):
            self.flushed(event.core, self.regions[event.region], len(event.lines))
        elif isinstance(event, Invalidated):
            self.invalidated(event.core, self.regions[event.region], int(event.lost.size))
        elif isinstance(event, (NocRead, NocWrote)):
            self.agent_step(event.agent, event.call)

    def invalidated(self, core: "Core", region, lines_dropped: int) -> None:
        self.catch_up()
        for listener in self._hearing["invalidated"]:
            listener.invalidated(core, region, lines_dropped)

    def flushed(self, core: "Core", region, lines_written: int) -> None:
        self.catch_up()
        for listener in self._hearing["flushed"]:
            listener.flushed(core, region, lines_written)

    def finding(self, finding: "Finding") -> None:
        self.catch_up()
        for listener in self._hearing["finding"]:
            listener.finding(finding)

    def finding_changed(self, finding: "Finding") -> None:
        self.catch_up()
        for listener in self._hearing["finding_changed"]:
            listener.finding_changed(finding)

    def fault(self, core: "Core | None", fault: "CoreFault") -> None:
        self.catch_up()
        for listener in self._hearing["fault"]:
            listener.fault(core, fault)

    def all_returned(self, codes: tuple[int, ...]) -> None:
        self.catch_up()
        for listener in self._hearing["all_returned"]:
            listener.all_returned(codes)

    def ended(self) -> None:
        self.catch_up()
        for listener in self._hearing["ended"]:
            listener.ended()

    def released(self, cluster: Thread) -> None:
        self.catch_up()
        for listener in self._hearing["released"]:
            listener.released(cluster)

    def agent_step(self, agent, call) -> None:
        self.catch_up()
        for listener in self._hearing["agent_step"]:
            listener.agent_step(agent, call)
