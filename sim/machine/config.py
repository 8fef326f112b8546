"""A card's options: one frozen object, made once where a session's options enter
(komorebi._simulator, which also reads the documented environment variables into it) and
handed down to the card, each cluster, and (as the few flags they need) the cores. Nothing
of the machine reads the environment: what it is told is all here.

    config = MachineConfig(coherence="strict", plan=Plan.of_seed(500, 7))
    card = Card(config)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cache.model import CARD_SIZE, UNBOUNDED
from ..kmx import console
from ..timing.model import TimingOptions
from .schedule import Plan

COHERENCE_MODES = ("card", "strict")
CACHES = (UNBOUNDED, CARD_SIZE)


@dataclass(frozen=True)
class MachineConfig:
    """The options every thread of a card shares (what differs by thread, its cluster,
    image, regions, cores and heap, is the cluster's own: Card.place_thread)."""

    plan: Plan = Plan()  # how the cores take turns (sim.machine.schedule)
    coherence: str = "card"  # or "strict": the cache's rules (sim.cache.model)
    cache: str = UNBOUNDED  # or CARD_SIZE: the tile's levels at the card's sizes
    cache_seed: int = 0  # the card-size cache's choice of what to evict
    output_limit: int | None = console.KEEP  # characters of printed lines kept per thread (None: all)
    profiled: bool = False  # count every core's instructions by block (sim.observe.profile)
    trace: str | None = None  # where stop writes the run's Chrome trace (sim.observe.timeline), or None
    timing: TimingOptions | None = None  # the timing model (sim.timing), or None: a cycle an instruction
    # The simulator's ways of running, each on by default; off only to compare (tests, bench/):
    interpret: bool = True  # after an instruction the engine lacks, interpret hot code (isa.c); off: one trap each
    rewrite: bool = True  # the loader rewrites Zba and Zbb instructions into stubs (sim.isa.rewrite)
    turn_loop_in_c: bool = True  # the turns that need no Python run in C (sim/native/sched.c)
    finish_turns_in_c: bool = True  # a turn's rest inside a block runs in the interpreter (isa.c)

    def __post_init__(self) -> None:
        if self.coherence not in COHERENCE_MODES:
            raise ValueError(f"coherence must be one of {COHERENCE_MODES}, not {self.coherence!r}")
        if self.cache not in CACHES:
            raise ValueError(f"cache must be one of {CACHES}, not {self.cache!r}")

    @property
    def traced(self) -> bool:
        return self.trace is not None
