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

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING

from komorebi._errors import (
    CoherenceWarning,
    CompileError,
    CompileWarning,
    KomorebiError,
    NotSimulatedWarning,
    OutputWarning,
    ThreadFault,
)

# The rest is imported when first used (PEP 562), so that `import komorebi` costs what it
# uses: numpy comes with the first Program, the simulator with the first Session.
_LAZY = {
    "ExploreReport": "_explore", "Failure": "_explore", "explore": "_explore",
    "CacheEvents": "_records", "CoreProfile": "_records", "CoreTiming": "_records", "FunctionCount": "_records",
    "LineCount": "_records", "Profile": "_profile",
    "Program": "_program",
    "CacheCounts": "_records", "Category": "_records", "Finding": "_records", "AgentReport": "_records", "AgentStopped": "_records", "ThreadResult": "_results",
    "Schedule": "_schedule",
    "Run": "_session", "Session": "_session", "Thread": "_session",
}

if _TYPE_CHECKING:
    from komorebi._explore import ExploreReport, Failure, explore
    from komorebi._profile import Profile
    from komorebi._program import Program
    from komorebi._records import (AgentReport, AgentStopped, CacheCounts, CacheEvents, Category, CoreProfile,
                                   CoreTiming, Finding, FunctionCount, LineCount)
    from komorebi._results import ThreadResult
    from komorebi._schedule import Schedule
    from komorebi._session import Run, Session, Thread


if not _TYPE_CHECKING:  # (a type checker sees the imports above, and no catch-all)

    def __getattr__(name: str):
        module = _LAZY.get(name)
        if module is None:  # (a submodule: komorebi.sim, komorebi._session, ...)
            try:
                return _importlib.import_module(f"komorebi.{name}")
            except ModuleNotFoundError as error:
                if error.name != f"komorebi.{name}":
                    raise
            raise AttributeError(f"module 'komorebi' has no attribute {name!r}")
        value = getattr(_importlib.import_module(f"komorebi.{module}"), name)
        globals()[name] = value  # (found directly from now on)
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "AgentReport",
    "AgentStopped",
    "CacheCounts",
    "CacheEvents",
    "Category",
    "CoherenceWarning",
    "CompileError",
    "CompileWarning",
    "CoreProfile",
    "CoreTiming",
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
