"""Who controls a cluster's turns besides the schedule: no one, or gdb.

The card's scheduler (sim.machine.card) runs each turn through its cluster's control, and asks it
what to do when a core faults and when no core can run. `Unattended`, every cluster's
control when no gdb is attached, does what the scheduler would do alone: it runs the turn
and has no say. `Attached` is gdb's (sim.debug.stub): its turns stop for breakpoints,
watchpoints and steps, a fault is gdb's to see first, and a Ctrl-C may come while no core
can run. The scheduler holds no test of whether a debugger is there: only what the
control says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._records import Category
from ..hart.faults import CoreFault
from .stub import DebuggerGone, GdbStub, Thread

if TYPE_CHECKING:
    from ..hart.core import Core


class Unattended:
    """No debugger: turns run as the schedule gives them."""

    alone = False  # the cluster may share its host thread with another (clusters 2 and 3)
    turns_in_c = True  # the turn loop in C may run its turns (sim/native/sched.c)

    def run_turn(self, core: "Core", count: int, error: int | None) -> bool:
        """Run CORE's turn of COUNT instructions (ERROR not None: finish the turn the turn
        loop in C began, whose engine stopped with that error). Raises CoreFault. Says
        whether the cluster's host thread goes on."""
        if error is not None:
            core.finish_turn(core.pc, error)
        else:
            core.run(count)
        return True

    def faulted(self, core: "Core", fault: CoreFault) -> bool:
        """CORE faulted: whether the thread goes on all the same (it ends with FAULT)."""
        return False

    def idle(self) -> bool:
        """No core can run (Python has a submission to take): whether the run goes on."""
        return True

    def finished(self) -> None:
        """The thread ended."""


class Attached(Unattended):
    """gdb debugs the cluster's thread (sim.debug.stub.GdbStub): the cluster runs alone
    on its host thread, every turn from Python, one instruction at a time where gdb
    steps."""

    alone = True
    turns_in_c = False

    def __init__(self, cluster: Thread, stub: GdbStub) -> None:
        self.cluster, self.stub = cluster, stub

    def run_turn(self, core: "Core", count: int, error: int | None) -> bool:
        # (error is always None: no turn of a debugged cluster runs in C)
        try:
            self.stub.run_turn(core, count)
        except DebuggerGone:
            self._gone()
            return False
        return True

    def faulted(self, core: "Core", fault: CoreFault) -> bool:
        try:
            return self.stub.faulted(core, fault)
        except DebuggerGone:
            return False

    def idle(self) -> bool:
        """No core can run: a Ctrl-C from gdb stops them there."""
        try:
            self.stub.idle()
        except DebuggerGone:
            self._gone()
            return False
        return True

    def finished(self) -> None:
        self.stub.finished()

    def _gone(self) -> None:
        """The run ends for gdb's sake: its kill command ends the thread with a fault."""
        if self.stub.killed:
            cluster = self.cluster
            core = cluster.running or next((c for c in cluster.cores if c.state != "exited"), cluster.cores[0])
            cluster.fail(core.fault(core.pc, "gdb killed the thread (its kill command)", category=Category.STOPPED))
