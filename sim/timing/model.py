"""The timing model's state, a cluster's and each core's (sim/native/timing.c runs it):
Python allocates it, points it at the parameter table, and reads what it counted."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from ..native import hooks
from . import x280


@dataclass(frozen=True)
class TimingOptions:
    """A session's timing mode: the model's name, the clock in MHz, and parameters changed
    from the model's table (bench/ and the tests try other values)."""

    model: str = "x280"
    clock_mhz: float = x280.CLOCK_MHZ
    overrides: tuple[tuple[str, int], ...] = ()


class ClusterTiming:
    """A cluster's part of the model: its tile's tags (sim/native/tile.c: the same caches
    as the card-size cache, for time only) and the uncached alias's readers. SEED seeds the
    tile's choice of what to evict."""

    def __init__(self, options: TimingOptions, seed: int = 0) -> None:
        self.options = options
        self.table = x280.table(dict(options.overrides))
        names = x280.names()
        self._noc = tuple(int(self.table[names.index(name)]) for name in ("noc_step_ns", "noc_mb_per_s"))
        self.shared = hooks.TimingTile()
        self.shared.tile.random = ((int(seed) * 0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D) % 2**64 or 1

    def core(self, hart: int) -> "CoreTiming":
        return CoreTiming(self, hart)

    def noc_call_cycles(self, what: str, size: int) -> int:
        """What a Tensix stand-in's noc call WHAT ("read", "write", "wait", ...) of SIZE
        bytes costs, in cycles at the session's clock: a NoC call's noc_step_ns for its first
        64 bytes, and its bytes past them at noc_mb_per_s. A stand-in's start costs nothing."""
        if what not in ("read", "write", "wait"):  # (a start, or a wait's timeout raised)
            return 0
        step_ns, mb_per_s = self._noc
        return round((step_ns + max(0, int(size) - 64) * 1000 / mb_per_s) * self.options.clock_mhz / 1000)


class AgentClock:
    """A Tensix stand-in's clock, timed: a cell of the schedule's that each of its steps
    moves on (sim/native/sched.c, agent_clock); the cell that holds what its next step
    costs, and the one that says whose clocks a step that waits catches up with (PEERS,
    its cluster's participants, a bit each), set as the stand-in makes each noc call
    (sim.noc.agent.Agent.step)."""

    def __init__(self, clock: np.ndarray, cost: np.ndarray, wake: np.ndarray, peers: int,
                 cluster: ClusterTiming) -> None:
        self._clock, self._cost, self._wake, self._peers, self._cluster = clock, cost, wake, peers, cluster

    @property
    def cycles(self) -> int:
        return int(self._clock[0])

    def calls(self, call) -> None:
        """The stand-in's next step does CALL (sim.noc.agent.Call; None: it returned)."""
        what = call.what if call is not None else None
        self._cost[0] = self._cluster.noc_call_cycles(what, call.size) if call is not None else 0
        self._wake[0] = self._peers if what in ("wait", "start") else 0


class CoreTiming:
    """A core's clock and where its cycles went (hooks.h, Timing)."""

    def __init__(self, cluster: ClusterTiming, hart: int) -> None:
        library = hooks.library()
        if library.timing_head_size() != ctypes.sizeof(hooks.TimingHead):
            raise RuntimeError("hooks.py's TimingHead and sim/native/hooks.h's Timing disagree")
        self.cluster = cluster
        self._memory = np.zeros(library.timing_size(), np.uint8)
        self.address = self._memory.ctypes.data
        self.head = hooks.TimingHead.from_address(self.address)
        self.head.on = 1
        self.head.param = cluster.table.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32))
        self.head.shared = ctypes.addressof(cluster.shared)
        self.head.hart = hart

    @property
    def cycles(self) -> int:
        return int(self.head.now)

    @property
    def instructions(self) -> int:
        return int(self.head.instructions)

    def went(self) -> dict[str, int]:
        return {name: int(self.head.went[i]) for i, name in enumerate(hooks.WENT)}

    def counts(self) -> dict[str, int]:
        h = self.head
        return {"branches": int(h.branches), "mispredicts": int(h.mispredicts), "scalar loads": int(h.loads),
                "L1D hits": int(h.misses[1]), "L2 hits": int(h.misses[2]), "L3 hits": int(h.misses[3]),
                "DRAM lines": int(h.misses[0]), "vector instructions": int(h.vector_ops),
                "engine blocks": int(h.engine_blocks), "engine instructions": int(h.engine_instructions)}
