"""What a cluster's thread did, on a timeline (km.Session(trace=PATH)): the Chrome trace
event file that Perfetto and chrome://tracing open.

Time is the cluster's instructions: the clock is how many its cores have run so far (one
core runs at a time, sim.schedule), so a turn of core 2 that ran 100,000 instructions is a
slice 100,000 long on core 2's track, and two runs of a program give the same file. (The
format counts in microseconds: read one as one instruction.) On each core's track:

- a slice for each turn;
- an instant event for each kmx call (and each system call of the C library's), with its
  source line: kmx_invalidate and kmx_flush with the region and the bytes they dropped or
  wrote back;
- a slice for each kmx_barrier and kmx_submit, from the call until the core's next turn:
  the wait for the other cores, or for the schedule (and for Python to take a submission);
- an instant event for each finding of the coherence checker, and for a fault.

Each cluster is a process of the trace (its own clock), each core a thread.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .hart.core import Core
    from .hart.faults import CoreFault

WAITS = ("kmx_barrier", "kmx_submit")  # the calls a slice follows, until the core's next turn


class Timeline:
    def __init__(self, cluster: int, cores: int) -> None:
        self.cluster = cluster
        self.cores = cores
        self.clock = 0  # instructions the cluster's cores ran before the current turn
        self.events: list[dict[str, Any]] = []
        self._turn: tuple["Core", int, int] | None = None  # (core, clock at its start, its cycles then)
        self._waiting: dict[int, dict[str, Any]] = {}  # core -> the slice of the call it waits in
        self._last: dict[str, Any] | None = None  # the last call's event (its handler adds to it)

    def now(self) -> int:
        """The cluster's clock: in a turn, its start and what the core has run since."""
        if self._turn is None:
            return self.clock
        core, start, cycles = self._turn
        return start + core.cycles - cycles

    # -- turns -----------------------------------------------------------------------------------

    def turn_starts(self, core: "Core") -> None:
        self._turn = (core, self.clock, core.cycles)
        waited = self._waiting.pop(core.number, None)
        if waited is not None:
            waited["dur"] = self.clock - waited["ts"]
            self.events.append(waited)

    def turn_ends(self, core: "Core") -> None:
        if self._turn is None:
            return
        _, start, cycles = self._turn
        ran = core.cycles - cycles
        self._turn = None
        if ran:
            self.events.append(self._event("turn", "turn", core.number, start, dur=ran, ph="X"))
        self.clock = start + ran

    # -- what happened -----------------------------------------------------------------------------

    def call(self, core: "Core", name: str, source, args: dict[str, Any], category: str = "kmx") -> None:
        """CORE made the call NAME at SOURCE (a SourceLine or None)."""
        if source is not None:
            args = {**args, "line": f"{source.file}:{source.line}"}
        event = self._event(name, category, core.number, self.now(), args=args)
        self.events.append(event)
        self._last = event
        if name in WAITS:  # a slice until the core's next turn
            self._waiting[core.number] = self._event(f"{name} (waiting)", "wait", core.number, self.now(), ph="X",
                                                     args=dict(args))

    def note(self, **args: Any) -> None:
        """More about the last call (its handler's: the bytes a flush wrote back)."""
        if self._last is not None:
            self._last["args"].update(args)

    def finding(self, finding) -> None:
        """A finding of the checker, on the track of the core that ran when it was found."""
        core = self._turn[0].number if self._turn is not None else max(finding.core, 0)
        self.events.append(self._event(f"finding: {finding.kind}", "finding", core, self.now(), args={"core": finding.core, "region": finding.region, "message": finding.message,
                                                         "line": f"{finding.file}:{finding.line}" if finding.file else ""}))

    def fault(self, fault: "CoreFault") -> None:
        self.events.append(self._event("fault", "fault", fault.core, self.now(), args={"cause": fault.cause, "where": str(fault)}))

    def ended(self, codes) -> None:
        self.events.append(self._event("the thread ended", "end", 0, self.now(), args={"codes": list(codes)}))

    def _event(self, name: str, category: str, core: int, ts: int, ph: str = "i", dur: int | None = None,
               args: dict[str, Any] | None = None) -> dict[str, Any]:
        event: dict[str, Any] = {"name": name, "cat": category, "ph": ph, "ts": ts, "pid": self.cluster, "tid": core,
                                 "args": args or {}}
        if ph == "i":
            event["s"] = "t"  # (an instant on its thread's track)
        if dur is not None:
            event["dur"] = dur
        return event

    def chrome_events(self) -> list[dict[str, Any]]:
        """The events as the trace file holds them, the tracks' names first."""
        out: list[dict[str, Any]] = [{"name": "process_name", "ph": "M", "pid": self.cluster, "tid": 0,
                                      "args": {"name": f"cluster {self.cluster}"}}]
        out += [{"name": "thread_name", "ph": "M", "pid": self.cluster, "tid": n, "args": {"name": f"core {n}"}}
                for n in range(self.cores)]
        for waited in self._waiting.values():  # (a wait the thread's end cut short)
            waited["dur"] = self.clock - waited["ts"]
            out.append(waited)
        self._waiting.clear()
        return out + sorted(self.events, key=lambda e: (e["ts"], e["tid"]))  # (stable: the order they came in)


def write(path, timelines: list[Timeline]) -> None:
    """The Chrome trace event file of TIMELINES at PATH."""
    events = [event for timeline in timelines for event in timeline.chrome_events()]
    document = {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"clock": "instructions: each cluster's cores' instructions so far (a 'us' is one instruction)",
                      "simulator": "komorebi-sim"},
    }
    with open(path, "w") as out:
        json.dump(document, out, indent=0)
