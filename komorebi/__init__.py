"""komorebi: program Tenstorrent Blackhole cards from Python; here over a simulated card.

    import komorebi as km
    program = km.Program("sharing_memory", kernels=HERE / "kernels")
    program.thread(cluster=1, sources=[HERE / "thread" / "triple.c"],
                   regions={"numbers": numbers, "tripled": 4096})
    with km.Session() as session:
        run = session.load(program)
        result = run.thread_result(timeout=10.0)
        run.stop()
        tripled = run.thread.read("tripled").view(np.uint32)
"""

from komorebi._errors import (
    CoherenceWarning,
    CompileError,
    CompileWarning,
    KomorebiError,
    NotSimulatedWarning,
    OutputWarning,
    ThreadFault,
)
from komorebi._explore import ExploreReport, Failure, explore
from komorebi._profile import CacheEvents, CoreProfile, FunctionCount, LineCount, Profile
from komorebi._program import Program
from komorebi._results import CacheCounts, Finding, ThreadResult
from komorebi._schedule import Schedule
from komorebi._session import Run, Session, Thread

__all__ = [
    "CacheCounts",
    "CacheEvents",
    "CoherenceWarning",
    "CompileError",
    "CompileWarning",
    "CoreProfile",
    "ExploreReport",
    "Failure",
    "Finding",
    "FunctionCount",
    "KomorebiError",
    "LineCount",
    "NotSimulatedWarning",
    "OutputWarning",
    "Profile",
    "Program",
    "Run",
    "Schedule",
    "Session",
    "Thread",
    "ThreadFault",
    "ThreadResult",
    "explore",
]
