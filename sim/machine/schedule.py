"""Which core runs next, and for how many instructions.

The cores of a cluster take turns on one host thread, so that a store by one is seen by
the next load of another, as through the cluster's shared cache. A turn lasts a number of
instructions while two or more cores are ready; a core alone runs until it blocks, exits
or releases a barrier, which ends the turn (sim.machine.cluster). Every decision here depends only
on the run's own history, never on the wall clock, the host or other clusters: the same
program, inputs and plan give the same interleaving, bit for bit.

Clusters 2 and 3 share DRAM bank D7. Under any plan but round robin they take their turns
together, on one host thread, as one group of cores (sim.machine.card); else each cluster is a
group of its own.

A plan (`Plan`, km.Schedule's machine side) chooses the turns:

- "round robin" (no seed): the next ready core after the last one, for QUANTUM
  instructions.
- "random" (a seed): a core drawn at random and a length drawn log-uniformly from 1 to
  2 x QUANTUM: as many turns of 1 to 10 instructions as of 10 to 100, and so on.
- "pct": probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi and
  Nagarakatte, ASPLOS 2010). Each core gets a random priority from DEPTH up, and the
  ready core of highest priority runs. DEPTH - 1 change points are drawn at random among
  the K instructions the group ran from kmx_main on in a first run (`instructions`); when
  the group's count reaches the i-th point drawn, the running core's priority drops to
  DEPTH - i, below every first priority. Ours, beyond the paper:
  - The C library's start, before the start code's barrier, is most of a small thread's
    instructions and none of its races: no change point falls in it (its turns go by
    priority alone), and the count starts at the barrier's release. (A cluster of one
    core has no such barrier: its start is counted.)
  - A core that runs K instructions in one turn (at least 1,000) is taken to spin on
    another: it drops below every core, and its turn's instructions do not count towards
    the change points (a spin is not a step of the program; else a spinning reader would
    use up the points before the writer runs). The paper's threads yield when they wait.
  - A core that yields (sched_yield, a futex wait, a sleep: the C library's locks) keeps
    its priority but gives its turns away: until a turn ends without a yield, the cores
    that yielded run only when no other core is ready.
- "replay": the turns a run recorded (`Schedule.turns`), then round robin. A turn whose
  core is not ready when its time comes is skipped, so that any list of turns is a plan
  (a shrunk one, sim's caller's: komorebi._explore).

Every plan records the turns it chose, in order, as (cluster, core, instructions; 0: no
limit): replaying them gives the same run.
"""

from __future__ import annotations

import ctypes
import random
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..layout import CORES_PER_CLUSTER
from ..native import hooks
from ..timing.model import AgentClock

DEFAULT_QUANTUM = 2_000  # instructions a turn, while several cores are ready (docs/simulator.md)
PATIENCE_FLOOR = 1_000  # pct: the fewest instructions a turn runs before its core is taken to spin
AGENT_PATIENCE = 64  # pct: steps a Tensix stand-in takes in a row, no core between, before it is taken to spin
STRATEGIES = ("round robin", "random", "pct", "replay")
RECORD_ROWS = 1 << 12  # turns the native side records before it asks for more room


@dataclass(frozen=True)
class Plan:
    """How turns are chosen (see the module's text). INSTRUCTIONS (pct): for each
    cluster, the instructions its group ran in a first run. TURNS (replay): (cluster,
    core, instructions) for every host thread's group, each group's in order."""

    strategy: str = "round robin"
    quantum: int = DEFAULT_QUANTUM
    seed: int | None = None
    depth: int = 3
    instructions: tuple[tuple[int, int], ...] = ()
    turns: tuple[tuple[int, int, int], ...] = ()

    @classmethod
    def of_seed(cls, quantum: int = DEFAULT_QUANTUM, seed: int | None = None) -> "Plan":
        """km.Session's quantum and schedule_seed."""
        return cls("round robin", quantum) if seed is None else cls("random", quantum, seed)

    @property
    def groups_clusters(self) -> bool:
        """Whether clusters that share a bank take their turns together."""
        return self.strategy != "round robin"


def key(core) -> tuple[int, int]:
    """A core's place in turn order: (cluster, core); a Tensix stand-in's (sim.noc.agent)
    after its cluster's cores: (cluster, CORES_PER_CLUSTER + its index)."""
    return core.context.cluster, core.number


def is_agent(participant) -> bool:
    return participant.number >= CORES_PER_CLUSTER


class Schedule:
    """The turns of one group of cores (one host thread's): chosen by PLAN and recorded
    in `turns`. CLUSTERS: the clusters of the group; KEYS: its cores, as `key` gives.

    Every plan but pct is the native side's (sim/native/sched.c, `native`): its choices,
    its record and its count of instructions, whether a turn runs in the turn loop there
    or here; pct's choices are made here."""

    def __init__(self, plan: Plan, clusters: Sequence[int], keys: Sequence[tuple[int, int]]) -> None:
        cores = {cluster: sum(1 for c, n in keys if c == cluster and n < CORES_PER_CLUSTER) for cluster in clusters}
        # The clusters whose start code still runs: those of several cores, whose start
        # ends in a barrier (kmx_runtime/process.c). A lone core's start has no barrier to
        # mark its end: it is counted with kmx_main's instructions.
        self._starting = {cluster for cluster, n in cores.items() if n > 1}
        self._begun = False  # the last of them released its start's barrier in this turn
        self.start_instructions = 0  # what the group ran before every kmx_main began
        if plan.strategy not in STRATEGIES:
            raise ValueError(f"a schedule's strategy is one of {STRATEGIES}, not {plan.strategy!r}")
        self.plan = plan
        self.quantum = plan.quantum
        self.clusters = tuple(sorted(clusters))
        self.keys = sorted(keys)  # the cores, in turn order: the native side's indexes
        self._index = {k: i for i, k in enumerate(self.keys)}
        self._turns: list[tuple[int, int, int]] = []  # pct's choices, in order
        self._instructions = 0  # pct: run by the group's cores so far
        self._last = (-1, -1)  # the key of the core that had the last turn
        first = self.clusters[0]
        self._priority: dict[tuple[int, int], int] = {}
        self._changes: list[tuple[int, int]] = []  # pct: (change point, the priority it gives), by point
        self.native: hooks.GroupState | None = None
        if plan.strategy == "pct":
            self._start_pct(plan, first, list(keys))
        else:
            self._start_native(plan, first)

    def use_clocks(self, participants: Sequence) -> None:
        """Timed (sim.timing): the cores take turns by their clocks, the one furthest
        behind first (sim/native/sched.c); PARTICIPANTS by the group's index. A Tensix
        stand-in's clock is a cell of the schedule's, which each of its steps moves on by its
        noc call's cost (sim.timing.model.ClusterTiming.noc_call_cycles: the stand-in sets
        it as it makes the call, sim.noc.agent); a step that waits first catches up with its
        cluster's ready participants (sim/native/sched.c, agent_clock)."""
        timed = [p.timing for p in participants if getattr(p, "timing", None) is not None]
        if self.native is None or not timed:
            return
        self._agent_clocks = np.zeros(len(participants), np.uint64)
        self._agent_costs = np.zeros(len(participants), np.uint64)
        self._agent_wake = np.zeros(len(participants), np.uint64)
        addresses = []
        for i, p in enumerate(participants):
            timing = getattr(p, "timing", None)
            if timing is not None:
                addresses.append(timing.address + hooks.TimingHead.now.offset)
            elif is_agent(p):
                addresses.append(self._agent_clocks.ctypes.data + 8 * i)
                peers = sum(1 << j for j, other in enumerate(participants)
                            if j != i and other.context.cluster == p.context.cluster)
                p.timed = AgentClock(self._agent_clocks[i:i + 1], self._agent_costs[i:i + 1],
                                     self._agent_wake[i:i + 1], peers, timed[0].cluster)
                p.timed.calls(p.pending)
            else:
                addresses.append(None)
        self._clocks = (ctypes.c_void_p * len(addresses))(*addresses)
        self.native.clocks = ctypes.addressof(self._clocks)
        self.native.agent_costs = self._agent_costs.ctypes.data
        self.native.agent_wake = self._agent_wake.ctypes.data

    def _start_native(self, plan: Plan, first: int) -> None:
        """The native side of a plan but pct's (sim/native/sched.c)."""
        group = self.native = hooks.GroupState()
        group.strategy = {"round robin": hooks.PLAN_ROUND_ROBIN, "random": hooks.PLAN_RANDOM,
                          "replay": hooks.PLAN_REPLAY}[plan.strategy]
        group.quantum, group.last, group.count, group.running = plan.quantum, -1, len(self.keys), -1
        agents = [i for i, (_, number) in enumerate(self.keys) if number >= CORES_PER_CLUSTER]
        group.agents, group.agents_live = sum(1 << i for i in agents), len(agents)
        self._waits = (hooks.AgentWait * max(len(self.keys), 1))()  # (the turn loop's: TurnLoop)
        if plan.strategy == "random":  # (the name as before groups)
            _, state, _ = random.Random(f"komorebi-sim schedule {plan.seed} cluster {first}").getstate()
            group.mt[:] = state[:hooks.MT_N]
            group.mt_index = state[hooks.MT_N]
        script = [(self._index.get((cluster, core), -1), count) for cluster, core, count in plan.turns
                  if cluster in self.clusters] if plan.strategy == "replay" else []
        self._script = np.array(script or [(0, 0)], np.int64)
        group.script, group.script_length = hooks.pointer(self._script, ctypes.c_int64), len(script)
        self._records: list[np.ndarray] = []  # full records, in order
        self._record = np.zeros((RECORD_ROWS, 2), np.int64)  # (zeros: calloc's, untouched pages)
        group.record, group.record_capacity = hooks.pointer(self._record, ctypes.c_int64), RECORD_ROWS
        self._pcs = np.zeros(len(self.keys), np.uint64)
        group.pcs = hooks.pointer(self._pcs, ctypes.c_uint64)

    def make_room(self) -> None:
        """A full record put aside, and an empty one for the native side."""
        group = self.native
        if group.record_length < group.record_capacity:
            return
        self._records.append(self._record)
        self._record = np.zeros((2 * len(self._record), 2), np.int64)
        group.record = hooks.pointer(self._record, ctypes.c_int64)
        group.record_capacity, group.record_length = len(self._record), 0

    @property
    def turns(self) -> list[tuple[int, int, int]]:
        """What was chosen, in order: (cluster, core, instructions; 0: no limit)."""
        if self.native is None:
            return list(self._turns)
        rows = [*self._records, self._record[: self.native.record_length]]
        return [(*self.keys[int(i)], int(n)) for part in rows for i, n in part]

    @property
    def instructions(self) -> int:
        """Run by the group's cores so far."""
        return self.native.instructions if self.native is not None else self._instructions

    @instructions.setter
    def instructions(self, value: int) -> None:
        if self.native is not None:
            self.native.instructions = value
        else:
            self._instructions = value

    def _start_pct(self, plan: Plan, first: int, keys: list[tuple[int, int]]) -> None:
        generator = random.Random(f"komorebi-sim pct {plan.seed} cluster {first}")
        k = max(1, dict(plan.instructions).get(first, 0))
        priorities = list(range(plan.depth, plan.depth + len(keys)))
        generator.shuffle(priorities)
        self._priority = dict(zip(keys, priorities))
        points = generator.sample(range(1, k + 1), min(plan.depth - 1, k))  # point i, drawn i-th, gives depth - i
        self._changes = sorted((point, plan.depth - i) for i, point in enumerate(points, 1))
        self._patience = max(k, PATIENCE_FLOOR)
        self._yielded: set[tuple[int, int]] = set()  # cores that yielded since a turn that did not
        self._in_a_row, self._last_agent = 0, (-1, -1)  # a stand-in's steps in a row (_agent_ran)
        self._steps_spun = 0  # instructions of turns that ran their whole patience: a spin

    def next_turn(self, ready: Sequence, agents_live: int = 0) -> tuple[object, int]:
        """The participant to run from READY (never empty; a core or a Tensix stand-in) and
        its instruction count, 0 for no limit. AGENTS_LIVE: the group's Tensix stand-ins
        that have not returned (a lone core's turn then has a length)."""
        if self.native is not None:
            self.native.agents_live = agents_live
            self.make_room()
            count = ctypes.c_uint64()
            by_index = {self._index[key(core)]: core for core in ready}
            index = hooks.library().group_choose(self.native, sum(1 << i for i in by_index), ctypes.byref(count))
            return by_index[index], count.value
        core, count = self._choose(ready)
        self._last = key(core)
        self._turns.append((*self._last, count))
        return core, count

    def _choose(self, ready: Sequence) -> tuple[object, int]:
        """pct's choice (see the module's text)."""
        others = [c for c in ready if key(c) not in self._yielded]  # (a yield gives turns away)
        core = max(others or ready, key=lambda c: self._priority.get(key(c), 0))
        if is_agent(core):
            return core, 1
        count = self._patience
        if self._changes and not self._starting:
            count = min(count, max(1, self._changes[0][0] - self._steps()))
        return core, count

    def _agent_ran(self, agent) -> None:
        """pct: a Tensix stand-in took a step. One that takes AGENT_PATIENCE steps in a row,
        no core's turn between (a stand-in that polls DRAM with noc.read), is taken to spin,
        as a core that runs its whole patience is: it drops below every participant, so
        that the cores it waits for run."""
        self._in_a_row = self._in_a_row + 1 if self._last_agent == key(agent) else 1
        self._last_agent = key(agent)
        if self._in_a_row >= AGENT_PATIENCE:
            self._priority[key(agent)] = min(self._priority.values()) - 1
            self._in_a_row = 0

    def main_begins(self, cluster: int) -> None:
        """CLUSTER's start code released its barrier (its first, sim.machine.cluster): its cores
        enter kmx_main once the turn that released it is counted (`ran`)."""
        if cluster in self._starting:
            self._starting.discard(cluster)
            self._begun = not self._starting

    @property
    def main_instructions(self) -> int:
        """What the group ran from kmx_main on (the instructions pct draws among)."""
        return self.instructions - self.start_instructions if not self._starting else 0

    def _steps(self) -> int:
        """The program's steps so far, as pct counts them: from kmx_main on, spins not."""
        return 0 if self._starting else self.instructions - self.start_instructions - self._steps_spun

    def ran(self, core, count: int, instructions: int) -> None:
        """CORE's turn of COUNT instructions (0: no limit) ran INSTRUCTIONS of them (a
        Tensix stand-in's step: 1 of 1)."""
        self.instructions += instructions
        if self._priority and is_agent(core):
            self._agent_ran(core)
            return
        self._in_a_row = 0
        if self._begun:  # (the start's last instructions were this turn's: not kmx_main's)
            self._begun = False
            self.start_instructions = self.instructions
            self._steps_spun = 0
            return
        if not self._priority:
            return
        if count == self._patience and instructions >= count:  # it spins: it yields, and the spin is no step
            self._priority[key(core)] = min(self._priority.values()) - 1
            if not self._starting:
                self._steps_spun += instructions
            self._yielded.clear()
            return
        lowered = False
        if not core.yielded:
            self._yielded.clear()  # (it ran on: whoever yielded may have something to see now)
        while self._changes and not self._starting and self._steps() >= self._changes[0][0]:
            _, self._priority[key(core)] = self._changes.pop(0)
            lowered = True
        if core.yielded and not lowered:
            self._yielded.add(key(core))


class TurnLoop:
    """The turn loop in C (sim/native/sched.c) for SCHEDULE's group of CORES: it runs
    their turns until one needs Python, which then finishes that turn as its own
    (sim.machine.card). The barriers it answers in C (sim/native/calls.c) block cores
    and release them: SETTLE tells Python as the loop comes back, before anything reads
    the cores' states."""

    def __init__(self, schedule: Schedule, cores: Sequence, agents: Sequence = (),
                 settle: Callable[[], None] = lambda: None) -> None:
        by_key = {key(p): p for p in (*cores, *agents)}
        self.schedule = schedule
        self._settle = settle
        self.participants = [by_key[k] for k in schedule.keys]  # by the group's index
        self._cores = [(i, p) for i, p in enumerate(self.participants) if not is_agent(p)]
        self._agents = [(i, p) for i, p in enumerate(self.participants) if is_agent(p)]
        self.cores = [p for _, p in self._cores]
        self._bit = {id(p): 1 << i for i, p in enumerate(self.participants)}
        group = schedule.native
        self._pointers = (ctypes.c_void_p * len(self.participants))(
            *(None if is_agent(p) else ctypes.addressof(p.native) for p in self.participants))
        group.cores = ctypes.cast(self._pointers, ctypes.POINTER(ctypes.c_void_p))
        self._pcs = np.ctypeslib.as_array(group.pcs, (len(self.participants),))
        for i, agent in self._agents:  # (each stand-in's wait is the loop's to ask)
            agent.wait = schedule._waits[i]
        group.waits = ctypes.addressof(schedule._waits) if self._agents else None
        for i, core in self._cores:  # (a barrier answered in C makes cores ready or not here: calls.c)
            if core.native.calls:
                calls = core.native.calls.contents
                calls.loop = ctypes.addressof(group)
                calls.loop_bits[core.number] = 1 << i

    def run(self, ready: Sequence, agents_live: int = 0) -> tuple[object, int, int, int] | None:
        """Run turns of the READY cores (and Tensix stand-ins, and those whose noc.wait DRAM
        answers: sim.noc.agent; AGENTS_LIVE: those not returned) until one needs Python: (that core, its turn's count, its
        cycles as the turn began, the engine's error), for Python to finish the turn, or
        (a stand-in, 1, 0, 0) for Python to run its step; None when the loop came back
        between turns (to stop, or to say where the cores are: `interrupt`, `ask`)."""
        schedule, group = self.schedule, self.schedule.native
        schedule.make_room()
        bit = self._bit
        group.ready = sum(bit[id(p)] for p in ready)
        group.agents_live = agents_live
        for i, core in self._cores:
            self._pcs[i] = core.pc
        for p in ready:
            if p.number < CORES_PER_CLUSTER:  # (a core's; a stand-in's step is Python's)
                p.before_turns()
        for core in self.cores:  # (and one a barrier in C may release, before its turns there)
            if core.blocked_in == "kmx_barrier":
                core.before_turns()
        status = hooks.library().group_run(group)
        self._settle()
        finishing = group.turn_core if status == hooks.LOOP_TURN else -1
        for i, core in self._cores:
            core.pc = int(self._pcs[i])
            # Another thread asks where a core is: answered here, but for the core whose
            # turn Python finishes, which answers as it goes on with the turn (the ask
            # that stopped its engine must not end its turn early: sim.hart.core._go_on).
            if core.where_asked and core.engine is not None and i != finishing:
                core.answer_where()
        if status == hooks.LOOP_TURN:
            return self.participants[group.turn_core], group.turn_count, group.turn_cycles, group.turn_error
        if status == hooks.LOOP_AGENT:
            return self.participants[group.turn_core], 1, 0, 0
        return None

    @property
    def running(self):
        """The core whose turn runs in the loop now (None: none), from any thread."""
        index = self.schedule.native.running
        return self.participants[index] if 0 <= index < len(self.participants) else None

    def interrupt(self) -> None:
        """Stop every core of the group (from any thread): the run is over."""
        self.schedule.native.stop = 1
        for core in self.cores:
            core.interrupt()

    def ask(self) -> None:
        """From another thread: come back to Python at the end of the turn that runs (a
        core's `place` is asked; the loop answers it there, or Python as it finishes the
        turn)."""
        self.schedule.native.stop = 1
