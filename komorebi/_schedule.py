"""km.Schedule: how the cores of a run take turns, as a value that replays.

    with km.Session(schedule=report.failures[0].schedule) as session:
        run = session.load(make_program())     # the failing run again, bit for bit

A schedule is one of:

- `Schedule.random(seed, quantum)`: each turn's core and length drawn at random (what
  `km.Session(schedule_seed=seed)` does);
- `Schedule.pct(seed, depth, instructions)`: probabilistic concurrency testing
  (docs/finding-races.md);
- `Schedule(turns=...)`: a list of turns, (cluster, core, instructions) each, run in
  order, then round robin at QUANTUM. This is what a run records (`Run.schedule`) and
  what km.explore reports: any run replays from it, whatever strategy chose it. A core
  of 4 or more is a Tensix stand-in's step (Program.noc_agent: 4 plus its index), of 1.

Under every schedule, clusters 2 and 3 (which share DRAM bank D7) take their turns on
one host thread, so that a race between them replays too.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

from komorebi._errors import NotAnInteger
from komorebi._limits import DEFAULT_QUANTUM, MAX_QUANTUM

STRATEGIES = ("random", "pct", "replay")
# How a "random" schedule draws its turns: 2 since the turn loop in C (issue 29), whose
# lengths are log-uniform (1 drew them uniformly). A schedule pickled by a komorebi-sim of
# other draws would not replay its run: it is refused (__setstate__).
DRAWS = 2


def check_quantum(value: Any, what: str = "quantum") -> int:
    """A turn length (Session's, a Schedule's and km.explore's quantum): an int of 1 to
    MAX_QUANTUM instructions."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise NotAnInteger(f"{what} must be an int (instructions a turn), not {type(value).__name__}")
    if not 1 <= value <= MAX_QUANTUM:
        raise ValueError(f"{what} must be 1 to 2**31 instructions, not {value}")
    return int(value)


def _count(value: Any, what: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    if not low <= value <= 2**63 - 1:
        raise ValueError(f"{what} must be {low} to 2**63 - 1, not {value}")
    return int(value)


@dataclass(frozen=True)
class Schedule:
    """How a run's cores take turns (see the module's text). TURNS: (cluster, core,
    instructions) each; 0 instructions is a turn without limit (until the core waits,
    returns, or releases a barrier). INSTRUCTIONS: for each cluster, how many its cores
    ran in a first run (pct draws its change points among them)."""

    strategy: str = "replay"
    turns: tuple[tuple[int, int, int], ...] = ()
    quantum: int = DEFAULT_QUANTUM
    seed: int | None = None
    depth: int = 3
    instructions: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"a schedule's strategy is one of {', '.join(map(repr, STRATEGIES))}, not {self.strategy!r}")
        check_quantum(self.quantum)
        _count(self.depth, "depth", 1)
        if self.seed is not None:
            _count(self.seed, "seed", -(2**63))
        if self.strategy != "replay" and self.seed is None:
            raise ValueError(f"a {self.strategy!r} schedule needs a seed (an int)")
        try:
            turns = tuple(tuple(turn) for turn in self.turns)
        except TypeError:
            raise NotAnInteger("turns must be a sequence of (cluster, core, instructions) triples of ints") from None
        for turn in turns:
            if len(turn) != 3 or any(isinstance(v, bool) or not isinstance(v, numbers.Integral) for v in turn):
                raise NotAnInteger(f"turns must be (cluster, core, instructions) triples of ints, not {turn!r}")
        turns = tuple((int(c), int(n), int(k)) for c, n, k in turns)
        for cluster, core, count in turns:
            if not (0 <= cluster <= 3 and 0 <= core < 64 and 0 <= count < 2 * MAX_QUANTUM):
                raise ValueError(
                    "a turn is (cluster 0-3, core 0-63, instructions 0 to 2**32 - 1; 0: no limit), "
                    f"not {(cluster, core, count)}"
                )
        object.__setattr__(self, "turns", turns)
        object.__setattr__(self, "_draws", DRAWS)
        object.__setattr__(self, "instructions", tuple(sorted((int(c), int(k)) for c, k in dict(self.instructions).items())))

    @classmethod
    def random(cls, seed: int, quantum: int = DEFAULT_QUANTUM) -> "Schedule":
        """Turns of a random core, each of 1 to 2 x QUANTUM instructions, drawn
        log-uniformly (docs/simulator.md, "The default turns")."""
        return cls("random", seed=seed, quantum=quantum)

    def __setstate__(self, state: dict) -> None:
        draws = state.get("_draws", 1)
        if draws != DRAWS and state.get("strategy") == "random":
            raise ValueError(
                f"this km.Schedule (random, seed {state.get('seed')}) was made by a komorebi-sim that drew "
                "random turns another way, so it would not replay the run it stood for; a recorded "
                "run.schedule (its turns) replays in any version"
            )
        for name, value in {**state, "_draws": DRAWS}.items():
            object.__setattr__(self, name, value)

    @classmethod
    def pct(cls, seed: int, depth: int = 3, instructions: "dict[int, int] | tuple[tuple[int, int], ...] | None" = None) -> "Schedule":
        """PCT of DEPTH: random priorities and DEPTH - 1 change points among the
        INSTRUCTIONS each cluster ran from kmx_main on (a first run's
        `Run.schedule.instructions`; without them, the change points all fall at the
        first instruction, and the priorities alone choose)."""
        return cls("pct", seed=seed, depth=depth, instructions=tuple(dict(instructions or {}).items()))

    @property
    def switches(self) -> int:
        """How often the next turn is another core's, cluster by cluster group."""
        last: dict[int, int] = {}
        count = 0
        for cluster, core, _ in self.turns:
            group = 2 if cluster in (2, 3) else cluster
            if group in last and last[group] != (cluster << 8 | core):
                count += 1
            last[group] = cluster << 8 | core
        return count

    def __str__(self) -> str:
        if self.strategy == "random":
            return f"random turns, seed {self.seed}, quantum {self.quantum:,}"
        if self.strategy == "pct":
            return f"PCT, seed {self.seed}, depth {self.depth}"
        if not self.turns:
            return f"round robin, quantum {self.quantum:,}"
        parts = [f"cluster {c} core {n} runs {'on' if k == 0 else f'{k:,}'}" for c, n, k in self.turns[:12]]
        more = f", and {len(self.turns) - 12} more turns" if len(self.turns) > 12 else ""
        return f"{len(self.turns)} turns ({self.switches} switches): " + "; ".join(parts) + more + \
            f"; then round robin, quantum {self.quantum:,}"
