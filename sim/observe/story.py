"""The story of a thread's cache, step by step (run.cache_story): after each kmx call that
can change what the cache holds or says (an invalidate, a flush, a result, a submission, a
barrier, a print, the return), after each noc call of a Tensix stand-in (sim.noc.agent)
and after each finding, what each region's lines are (the
states of the cache map, sim.cache.model.line_states), kept as the lines that changed.

Recorded for every run, within a budget: a step costs a pass over every line of every
region, so the story stops (and says so) once it has looked at STORY_LINES lines in all,
or kept STORY_STEPS steps. A lesson's regions take a few thousand lines a step.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..._records import StoryStep
from ..image.dwarf import SourceLine
from ..layout import LINE
from .observers import Observer, Thread

if TYPE_CHECKING:
    from ..hart.core import Core
    from ..hart.faults import CoreFault
    from ..kmx.traps import KmxCall

STORY_LINES = 64 * 2**20  # lines looked at, all steps together
STORY_STEPS = 5000
STEPPING_CALLS = ("kmx_invalidate", "kmx_flush", "kmx_result", "kmx_submit", "kmx_barrier", "kmx_print", "kmx_exit")


@dataclass
class Step:
    core: int  # -1: none (the thread's end)
    what: "str | Callable[[], str]"  # "kmx_flush(1)", "finding: unflushed-write", ... (or made when read)
    file: str | None
    line: int | None
    changes: dict[int, np.ndarray] = field(default_factory=dict)  # region ID -> runs: rows of (first line, end, state)
    detail: str = ""  # a finding's message
    cycles: int | None = None  # timed: the clock of who made the step, as it was made (None: not timed)


def _runs(before: np.ndarray, after: np.ndarray) -> np.ndarray | None:
    """The lines that differ between BEFORE and AFTER (states), as runs: rows of (first,
    end, state), each run consecutive lines of one new state (a flush of a whole region is
    one run); None when none differ. (No array of line numbers is made: a region of a
    million lines costs a few of its size in bytes.)"""
    changed = before != after
    if not changed.any():  # (a step changes one region of several, most often: no more passes)
        return None
    key = np.where(changed, after.view(np.int8), np.int8(-1))  # (-1: unchanged)
    edges = np.flatnonzero(np.diff(key)) + 1
    starts = np.concatenate(([0], edges))
    ends = np.concatenate((edges, [key.size]))
    keep = key[starts] >= 0
    if not keep.any():
        return None
    return np.stack([starts[keep], ends[keep], key[starts][keep].astype(np.int64)], axis=1)


class Story(Observer):
    """The steps of one cluster's thread: a listener of its probe points (sim.observe.observers)."""

    def __init__(self, cluster: Thread, clock_mhz: float | None = None) -> None:
        self._cluster = cluster
        self.clock_mhz = clock_mhz  # timed (km.Session(timing=...)): each step says its modelled time
        self.steps: list[Step] = []
        # (a region's lines start untouched: zeros, which cost no memory until written)
        self.start = [np.zeros(self._lines(region), np.uint8) for region in cluster.regions]
        self._now = list(self.start)
        self._looked = 0
        self._held: list | None = None  # findings made inside the kmx call that runs (called)
        self._findings: dict[tuple[int, str], Step] = {}  # a finding's key -> its step
        self.stopped = ""  # why the story stopped early ("": it did not)
        self._agent_last: tuple | None = None  # a stand-in's last step: (what it was, the step, how many times)
        # The calls answered in C (sim/native/calls.c; set by sim.kmx.traps): told when the
        # story looks at the lines (looked), and when it stops (story)
        self.calls = None
        self._call_last: list | None = None  # the last call's step: [what it was, the step, how many times]

    @staticmethod
    def _lines(region) -> int:
        return -(-(region.offset + region.size) // LINE) - region.offset // LINE

    @staticmethod
    def _states(region) -> np.ndarray:
        first = region.offset // LINE
        last = -(-(region.offset + region.size) // LINE)
        return region.cache.line_states()[first:last]

    def _cycles(self, core: "Core | None", agent=None) -> int | None:
        """Timed: the clock of who makes a step, CORE's, AGENT's (a stand-in's), or (neither:
        the thread's end) the latest core's; None when not timed."""
        if not self.clock_mhz:
            return None
        if core is not None:
            return core.clock
        if agent is not None and agent.timed is not None:
            return agent.timed.cycles
        return max((c.clock for c in self._cluster.cores), default=0)

    def step(self, core: "Core | None", what: "str | Callable[[], str]", source, detail: str = "",
             look: bool = True, known: bool = False, states: list | None = None, agent=None) -> Step | None:
        """A step: CORE did WHAT at SOURCE (a SourceLine, or None); the lines as they are now
        (LOOK False: the step changed no line's state, and they are not looked at; KNOWN:
        it is known that none changed since the story last looked, a call answered in C,
        and the look is counted as made; STATES: the look made already, each region's lines'
        states). Returns it (None: the story has stopped)."""
        if self.stopped:
            return None
        lines = sum(states.size for states in self._now) if look else 0
        if len(self.steps) >= STORY_STEPS or self._looked + lines > STORY_LINES:
            self.stopped = (f"the story stops after {len(self.steps):,} steps: it keeps at most {STORY_STEPS:,} "
                            f"steps and looks at most {STORY_LINES:,} lines in all")
            if self.calls is not None:
                self.calls.story = 0
            return None
        self._looked += lines
        step = Step(core.number if core is not None else -1, what, source.file if source else None,
                    source.line if source else None, detail=detail, cycles=self._cycles(core, agent))
        for n, region in enumerate(self._cluster.regions if look and not known else ()):
            now = states[n] if states is not None else self._states(region)
            runs = _runs(self._now[n], now)
            if runs is not None:
                step.changes[n] = runs
                self._now[n] = now
        if look and not known and self.calls is not None:
            self.calls.looked = self.calls.generation
        self.steps.append(step)
        return step

    def _unchanged(self) -> "bool | list":
        """True when no region's lines changed since the story last looked (a look that uses
        none of its budget: the step it would make is the last one again); else the lines'
        states now, for the step to use rather than look again."""
        states = [self._states(region) for region in self._cluster.regions]
        if any(_runs(now, new) is not None for now, new in zip(self._now, states)):
            return states
        if self.calls is not None:
            self.calls.looked = self.calls.generation
        return True

    def records(self) -> list[StoryStep]:
        """The steps, as komorebi's story reads them (komorebi._records)."""
        number, mhz = self._cluster.number, self.clock_mhz
        return [StoryStep(number, s.core, s.what if isinstance(s.what, str) else s.what(), s.file, s.line, s.detail,
                          tuple(sorted(s.changes.items())), s.cycles,
                          None if s.cycles is None else s.cycles / mhz)
                for s in self.steps]

    # -- the probe points (sim.observe.observers) -------------------------------------------------

    def call_begins(self, call: "KmxCall") -> None:
        if call.known:  # (a system call of the C library's is no step)
            self.calling()

    def call_ends(self, call: "KmxCall") -> None:
        if call.known:
            name, region = call.name, call.region_id
            self.called(call.core, name, "" if region is None else str(region),
                        call.source() if name in STEPPING_CALLS else None, call.answered, call.times)

    def fault(self, core: "Core | None", fault: "CoreFault") -> None:
        self.step(core, "fault", fault.source, fault.cause)

    def agent_step(self, agent, call) -> None:
        # (a stand-in that polls: the same call again and again, nothing between, is one
        # step that counts them, so that polling does not use up the story's steps)
        same = (agent.name, call.what, call.region.name if call.region is not None else None, call.offset, call.size,
                call.file, call.line)
        if self._agent_last is not None and self._agent_last[0] == same and self.steps and self.steps[-1] is self._agent_last[1]:
            step, times = self._agent_last[1], self._agent_last[2] + 1
            step.detail = f"{times} times in a row"
            self._agent_last = (same, step, times)
            return
        step = self._agent_step(agent, call)
        self._agent_last = (same, step, 1) if step is not None else None

    def _agent_step(self, agent, call) -> "Step | None":
        """A Tensix stand-in's noc call (sim.noc.agent): a step of no core's, named after the
        stand-in, at its own Python line. A noc.read of unflushed bytes is a finding, after
        this step."""
        # (no line's state changes at a noc call: DRAM changes, not the cache's picture)
        return self.step(None, functools.partial(call.describe, agent.name),
                         SourceLine(call.file, call.line) if call.file else None, look=False, agent=agent)

    def ended(self) -> None:
        card = self._cluster.coherence == "card"
        self.step(None, "the thread ended" + (": the library's hand-back" if card else ""), None)

    def calling(self) -> None:
        """A kmx call begins: a finding it makes is a step after the call's own."""
        self._held = []

    def called(self, core: "Core", name: str, argument: str, source, answered: bool = False, times: int = 1) -> None:
        """CORE's kmx call NAME(ARGUMENT) at SOURCE ended (or faulted): its step, when it is
        one that steps, then those of the findings it made. ANSWERED in C (sim/native/
        calls.c): no line changed since the story last looked, and it ran TIMES times in a
        row. The same call as the last step, nothing between and no line changed, is that
        step again, counted, whether C or Python answered it (a thread that spins on
        kmx_invalidate does not use up the story's steps)."""
        held, self._held = self._held, None
        if name in STEPPING_CALLS and source is not None and self._cluster.explainer.in_runtime(source):
            # (no frame of the user's: the C library's start, whose barrier every core passes
            # before kmx_main, or its end, after kmx_main returns)
            end = name == "kmx_exit"
            self.step(core, f"the {'end' if end else 'start'}: {name}({argument})", None,
                      f"the thread's {'end' if end else 'start'} (kmx_runtime), {'after kmx_main returned' if end else 'before kmx_main'}: "
                      "not the thread's own code")
        elif name in STEPPING_CALLS:
            same = (core.number, name, argument, source)
            last = self._call_last
            again = (last is not None and last[0] == same and self.steps and self.steps[-1] is last[1]
                     and not self.stopped)
            looked = True if answered or not again else self._unchanged()
            if again and looked is True:  # (the rule is the same whoever answered)
                last[2] += times
                last[1].detail = f"{last[2]} times in a row"
            else:
                step = self.step(core, f"{name}({argument})", source, known=answered,
                                 states=None if looked is True else looked)
                self._call_last = [same, step, times] if step is not None else None
                if step is not None and times > 1:
                    step.detail = f"{times} times in a row"
        for finding in held or ():
            self.finding(finding)

    def finding(self, finding) -> None:
        if self._held is not None:  # (inside a call: after its step)
            self._held.append(finding)
            return
        core = self._cluster.running
        source = SourceLine(finding.file, finding.line) if finding.file else None
        # (no core runs: a stand-in's step found it, at the stand-in's clock; a listener of
        # turns would bring every turn to Python, so the finding's own name for it is used)
        named = getattr(finding, "agent", None)
        agent = next((a for a in getattr(self._cluster, "agents", ()) if a.name == named), None) if core is None else None
        step = self.step(core, f"finding: {finding.kind}", source, finding.message, agent=agent)
        if step is not None:
            self._findings[(finding.region_id, finding.kind)] = step

    def finding_changed(self, finding) -> None:
        """The checker named FINDING's bytes once more (settle): its step says what
        run.findings says."""
        step = self._findings.get((finding.region_id, finding.kind))
        if step is not None:
            step.detail = finding.message
