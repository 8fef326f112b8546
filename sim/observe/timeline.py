"""What a cluster's thread did, on a timeline (km.Session(trace=PATH)): the Chrome trace
event file that Perfetto and chrome://tracing open.

Time is the cluster's instructions: the clock is how many its cores have run so far (one
core runs at a time, sim.machine.schedule), so a turn of core 2 that ran 100,000 instructions is a
slice 100,000 long on core 2's track, and two runs of a program give the same file. (The
format counts in microseconds: read one as one instruction.) On each core's track:

- a slice for each turn;
- an instant event for each kmx call (and each system call of the C library's), with its
  source line: kmx_invalidate and kmx_flush with the region and the bytes they dropped or
  wrote back;
- a slice for each kmx_barrier and kmx_submit, from the call until the core's next turn:
  the wait for the other cores, or for the schedule (and for Python to take a submission);
- an instant event for each finding of the coherence checker, and for a fault.

A Tensix stand-in (sim.noc.agent) has a track of its own ("agent NAME", after the cores'):
an instant event for each noc call, at its Python line.

Each cluster is a process of the trace (its own clock), each core a thread.

With the timing model (km.Session(timing="x280")) time is each core's own clock instead,
in microseconds at the session's clock: a core's turn is a slice from its clock as the turn
began to its clock as it ended, so the cores' tracks overlap as the cores ran at once on
the card, and a core that waited on DRAM shows it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..layout import LINE
from .observers import Observer

if TYPE_CHECKING:
    from ..hart.core import Core
    from ..hart.faults import CoreFault
    from ..kmx.traps import KmxCall

WAITS = ("kmx_barrier", "kmx_submit")  # the calls a slice follows, until the core's next turn
TRACE_EVENTS = 1_000_000  # events a cluster keeps; after them, the trace says it stopped


class Timeline(Observer):
    """One cluster's events: a listener of its probe points (sim.observe.observers; it hears
    every turn, each a slice)."""

    def __init__(self, cluster: int, cores: int, clock_mhz: float | None = None) -> None:
        self.cluster = cluster
        self.cores = cores
        self.clock_mhz = clock_mhz  # timed: the cores' clocks are the time (cycles; written as us)
        self.agents: dict[int, str] = {}  # a Tensix stand-in's track -> its name
        self.clock = 0  # instructions the cluster's cores ran before the current turn
        # (name, category, phase, ts, core, dur or None, args or None): compact, a run may make many
        self.events: list[tuple] = []
        self.stopped = 0  # the clock when the trace stopped keeping events (0: it did not)
        self._turn: tuple["Core", int, int] | None = None  # (core, clock at its start, its cycles then)
        self._agent = None  # the Tensix stand-in whose step ran last (timed: a finding between turns is at its clock)
        self._waiting: dict[int, tuple] = {}  # core -> the slice of the call it waits in, its duration to come
        self._last: dict[str, Any] | None = None  # the last call's args (its handler adds to them)
        self._findings: dict[tuple[int, str], dict[str, Any]] = {}  # a finding's key -> its event's args

    def now(self) -> int:
        """The cluster's clock: in a turn, its start and what the core has run since (timed:
        the running core's clock)."""
        if self._turn is None:
            return self.clock
        core, start, cycles = self._turn
        if self.clock_mhz:
            return core.clock
        return start + core.cycles - cycles

    def _add(self, name: str, category: str, phase: str, ts: int, core: int, dur: int | None = None,
             args: dict | None = None) -> None:
        if len(self.events) >= TRACE_EVENTS:  # (the earliest event dropped: a turn's slice starts before its calls)
            self.stopped = min(self.stopped, max(ts, 1)) if self.stopped else max(ts, 1)
            return
        self.events.append((name, category, phase, ts, core, dur, args))

    # -- turns -----------------------------------------------------------------------------------

    def turn_starts(self, core: "Core") -> None:
        start = core.clock if self.clock_mhz else self.clock
        self._turn = (core, start, core.cycles)
        waited = self._waiting.pop(core.number, None)
        if waited is not None:
            name, ts, args = waited
            self._add(name, "wait", "X", ts, core.number, start - ts, args)

    def turn_ends(self, core: "Core") -> None:
        if self._turn is None:
            return
        _, start, cycles = self._turn
        ran = core.clock - start if self.clock_mhz else core.cycles - cycles
        self._turn = None
        if ran:
            self._add("turn", "turn", "X", start, core.number, ran)
        self.clock = max(self.clock, start + ran) if self.clock_mhz else start + ran

    # -- what happened -----------------------------------------------------------------------------

    def call(self, core: "Core", name: str, source, args: dict[str, Any], category: str = "kmx") -> None:
        """CORE made the call NAME at SOURCE (a SourceLine or None)."""
        if source is not None:
            args = {**args, "line": f"{source.file}:{source.line}"}
        now = self.now()
        self._add(name, category, "i", now, core.number, None, args)
        self._last = args
        if name in WAITS:  # a slice until the core's next turn
            self._waiting[core.number] = (f"{name} (waiting)", now, dict(args))

    def call_begins(self, call: "KmxCall") -> None:
        self.call(call.core, call.name, call.source(), call.details(), category=call.category)

    def invalidated(self, core: "Core", region, lines_dropped: int) -> None:
        self.note(dirty_bytes_dropped=lines_dropped * LINE)

    def flushed(self, core: "Core", region, lines_written: int) -> None:
        self.note(bytes_written_back=lines_written * LINE)

    def note(self, **args: Any) -> None:
        """More about the last call (its handler's: the bytes a flush wrote back)."""
        if self._last is not None:
            self._last.update(args)

    def finding(self, finding) -> None:
        """A finding of the checker, on the track of the core that ran when it was found."""
        core = self._turn[0].number if self._turn is not None else max(finding.core, 0)
        args = {"core": finding.core, "cores": self._cores(finding), "region": finding.region,
                "message": finding.message, "line": f"{finding.file}:{finding.line}" if finding.file else ""}
        self._findings[(finding.region_id, finding.kind)] = args
        agent = self._agent  # (between turns, a finding that names the stand-in whose step made it: its clock)
        timed = (agent.timed if self.clock_mhz and self._turn is None and agent is not None
                 and agent.name == getattr(finding, "agent", None) else None)
        self._add(f"finding: {finding.kind}", "finding", "i", timed.cycles if timed is not None else self.now(), core,
                  None, args)

    def finding_changed(self, finding) -> None:
        """The checker named FINDING's bytes once more (settle): its event says what
        run.findings says."""
        args = self._findings.get((finding.region_id, finding.kind))
        if args is not None:
            args["message"], args["cores"] = finding.message, self._cores(finding)

    @staticmethod
    def _cores(finding) -> str:
        """Every core that made the mistake and its bytes: "0 (bytes 0 to 63), 1 (...)"."""
        return ", ".join(f"{n} (bytes {start} to {end - 1})" for n, start, end in finding.cores)

    def agent_step(self, agent, call) -> None:
        self._agent = agent
        self.agents[agent.number] = agent.name
        args = {"call": call.describe(agent.name)}
        if call.file:
            args["line"] = f"{call.file}:{call.line}"
        timed = agent.timed if self.clock_mhz else None  # (timed: the stand-in's own clock, as its call ended)
        self._add(f"noc.{call.what}", "noc", "i", timed.cycles if timed is not None else self.now(), agent.number,
                  None, args)

    def fault(self, core: "Core | None", fault: "CoreFault") -> None:
        self._add("fault", "fault", "i", self.now(), fault.core, None, {"cause": fault.cause, "where": str(fault)})

    def all_returned(self, codes) -> None:
        self._add("the thread ended", "end", "i", self.now(), 0, None, {"codes": list(codes)})

    def chrome_events(self):
        """The events as the trace file holds them (dicts, one at a time), the tracks' names first."""
        yield {"name": "process_name", "ph": "M", "pid": self.cluster, "tid": 0, "args": {"name": f"cluster {self.cluster}"}}
        for n in range(self.cores):
            yield {"name": "thread_name", "ph": "M", "pid": self.cluster, "tid": n, "args": {"name": f"core {n}"}}
        for n, name in sorted(self.agents.items()):
            yield {"name": "thread_name", "ph": "M", "pid": self.cluster, "tid": n, "args": {"name": f"agent {name}"}}
        for core, (name, ts, args) in sorted(self._waiting.items()):  # (a wait the thread's end cut short)
            self._add(name, "wait", "X", ts, core, self.clock - ts, args)
        self._waiting.clear()
        if self.stopped:  # (what was kept from then on would lie in no turn: it goes too)
            self.events = [e for e in self.events if e[3] < self.stopped]
            self.events.append(("the trace stopped here", "trace", "i", self.stopped, 0, None,
                                {"why": f"it keeps at most {TRACE_EVENTS:,} events a cluster"}))
        scale = 1 / self.clock_mhz if self.clock_mhz else 1  # (timed: cycles to us)
        for name, category, phase, ts, core, dur, args in sorted(self.events, key=lambda e: (e[3], e[4])):
            event = {"name": name, "cat": category, "ph": phase, "ts": ts * scale if self.clock_mhz else ts,
                     "pid": self.cluster, "tid": core, "args": args or {}}
            if phase == "i":
                event["s"] = "t"  # (an instant on its thread's track)
            if dur is not None:
                event["dur"] = dur * scale if self.clock_mhz else dur
            yield event


def write(path, timelines: list[Timeline]) -> None:
    """The Chrome trace event file of TIMELINES at PATH, written an event at a time."""
    with open(path, "w") as out:
        out.write('{"traceEvents": [\n')
        first = True
        for timeline in timelines:
            for event in timeline.chrome_events():
                out.write(("" if first else ",\n") + json.dumps(event, separators=(",", ":")))
                first = False
        timed = [t.clock_mhz for t in timelines if t.clock_mhz]
        other = {"clock": (f"the timing model's: each core's own clock, in microseconds at {timed[0]:g} MHz" if timed else
                           "instructions: each cluster's cores' instructions so far (a 'us' is one instruction)"),
                 "simulator": "komorebi-sim"}
        stopped = [f"cluster {t.cluster} from {t.stopped:,}" for t in timelines if t.stopped]
        if stopped:
            other["stopped"] = f"the trace keeps at most {TRACE_EVENTS:,} events a cluster: it stopped for " + ", ".join(stopped)
        out.write('\n], "otherData": ' + json.dumps(other) + "}\n")
