"""Which of a cluster's cores runs next, and for how many instructions.

The cores of a cluster take turns on one host thread, so that a store by one is seen by
the next load of another, as through the cluster's shared cache. A turn lasts a quantum
of instructions while two or more cores are ready; a core alone runs until it blocks,
exits or releases a barrier, which ends the turn (sim.cluster). Every decision here
depends only on the cluster's own history, never on the wall clock, the host or other
clusters: the same program and inputs give the same interleaving, bit for bit.

Without a seed the order is round robin and every quantum is the same. With a seed the
order and the length of each quantum are drawn from a random generator seeded by it (and
by the cluster's number): another interleaving, the same one every time for that seed.
"""

from __future__ import annotations

import random
from typing import Sequence, TypeVar

DEFAULT_QUANTUM = 100_000  # instructions a turn, while several cores are ready

T = TypeVar("T")


class Schedule:
    def __init__(self, quantum: int = DEFAULT_QUANTUM, seed: int | None = None, cluster: int = 0) -> None:
        self.quantum = quantum
        self.seed = seed
        self._random = random.Random(f"komorebi-sim schedule {seed} cluster {cluster}") if seed is not None else None
        self._last = -1  # the number of the core that had the last turn

    def next_turn(self, ready: Sequence[T], number_of=lambda core: core.number) -> tuple[T, int]:
        """The core to run from READY (never empty) and its instruction count, 0 for no
        limit (it is the only ready core)."""
        if len(ready) == 1:
            self._last = number_of(ready[0])
            return ready[0], 0
        if self._random is not None:
            core = self._random.choice(list(ready))
            count = self._random.randint(1, 2 * self.quantum)
        else:  # the first ready core after the last one, in core order
            later = [c for c in ready if number_of(c) > self._last]
            core = later[0] if later else ready[0]
            count = self.quantum
        self._last = number_of(core)
        return core, count
