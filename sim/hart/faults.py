"""How the machine reports a thread that went wrong.

Whatever stops a core (an access outside the thread's memory, an illegal instruction, a
kmx call with bad arguments) becomes one CoreFault, caught in one place per core
(sim.hart.core.Core.run). komorebi turns it into the user's km.ThreadFault. Each has a
Category, the thread's mistake unless its maker says otherwise: a system call the
simulator does not serve is NOT_SIMULATED, a bug of the simulator's own SIMULATOR
(sim.machine.card), never the thread's.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from pathlib import PurePath

from ..._records import Category, FaultReport
from ..image.dwarf import SourceLine


@dataclass(frozen=True)
class Frame:
    pc: int
    source: SourceLine | None
    function: str = ""  # the function's name, for a frame with no source line (the C library's)

    def __str__(self) -> str:
        where = self.source or (f"{self.function} (the C library)" if self.function else "(no source line)")
        return f"{where} (pc {self.pc:#x})"


def simulator_failure(error: BaseException) -> str:
    """The cause of a fault that is a bug of the simulator's (ERROR, raised in its Python):
    what was raised, and where, for a report."""
    root = error
    while root.__cause__ is not None:  # (a hook's error, raised again after the engine stopped)
        root = root.__cause__
    frames = traceback.extract_tb(root.__traceback__)
    at = f", raised at {PurePath(frames[-1].filename).name}:{frames[-1].lineno} ({frames[-1].name})" if frames else ""
    return f"the simulator failed: {error!r}{at}"


class CallError(Exception):
    """A kmx call that cannot be carried out: the trap layer names the call and line."""


@dataclass
class CoreFault(Exception):
    cluster: int
    core: int
    pc: int
    cause: str
    source: SourceLine | None = None
    backtrace: list[Frame] = field(default_factory=list)
    source_pc: int | None = None  # the pc of SOURCE's frame, when it is not PC's own
    category: Category = Category.MISTAKE

    def __str__(self) -> str:
        where = f" at {self.source}" if self.source else ""
        pc = self.pc if self.source_pc is None else self.source_pc
        return f"cluster {self.cluster} core {self.core}{where} (pc {pc:#x}): {self.cause}"

    def report(self) -> FaultReport:
        """The fault as plain data, for the thread's outbox (km.ThreadFault's words)."""
        source = self.source
        return FaultReport(self.cluster, self.core, self.pc, self.cause, source.file if source else None,
                           source.line if source else None, tuple(str(frame) for frame in self.backtrace),
                           self.source_pc, self.category)
