"""The library's errors and warnings.

    Exception
     └── KomorebiError            the base of the library's own errors
          ├── CompileError        a thread did not compile: the compiler's own messages
          └── ThreadFault         a thread crashed: category, cluster, core, pc, source line, cause

    UserWarning
     ├── CoherenceWarning        a coherence finding, at the thread's file and line
     ├── CompileWarning          the compiler warned about a thread's code
     ├── NotSimulatedWarning     a Tensix kernel that does something (the simulator runs none)
     └── OutputWarning           a thread's printed lines could not be written to stdout

A ThreadFault and a CoherenceWarning each have a category (km.Category: the thread's
mistake, unpredictable on a card, not simulated, a simulator failure, stopped on request),
whose words begin the message. Every message, its cause and what to do: docs/errors.md,
by category.

Bad arguments raise TypeError, ValueError, KeyError or FileNotFoundError, naming the
parameter and what was expected. A turn length that is not an int is both a TypeError and
a ValueError (NotAnInteger).
"""

from __future__ import annotations

import functools
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # (imported where used: `import komorebi` imports this module alone)
    from komorebi._records import Category, Finding

_HERE = Path(__file__).resolve().parent


def warn_at_caller(warning: Warning) -> None:
    """Issue WARNING at the user's line: the first frame outside komorebi's own files."""
    frame, level = sys._getframe(1), 2
    while frame is not None and Path(frame.f_code.co_filename).resolve().parent == _HERE:
        frame, level = frame.f_back, level + 1
    warnings.warn(warning, stacklevel=level)


class NotAnInteger(TypeError, ValueError):
    """A count (a turn's instructions) that is not an int: a wrong type, and as much a
    wrong value, so `except TypeError` and `except ValueError` both catch it."""


class KomorebiError(Exception):
    """The base of komorebi's own errors."""


class CompileError(KomorebiError):
    """A thread's sources did not compile. `str(error)` is the compiler's own messages,
    with file:line:column; `command` is the command that ran."""

    def __init__(self, messages: str, *, command: Sequence[str] = ()) -> None:
        super().__init__(messages)
        self.messages = messages
        self.command = list(command)


class ThreadFault(KomorebiError):
    """A thread crashed, or was stopped: CATEGORY (a km.Category) says whose fault it is,
    and its words begin the message. A simulator failure is a ThreadFault too, so that a
    thread's result call always ends, but it is never the thread's mistake.

    >>> try:
    ...     run.thread_result(timeout=10.0)
    ... except km.ThreadFault as fault:
    ...     print(fault.category, fault.file, fault.line, fault.cause)
    """

    def __init__(
        self,
        *,
        cluster: int,
        core: int,
        pc: int,
        cause: str,
        file: str | None,
        line: int | None,
        backtrace: Sequence[str] = (),
        line_pc: int | None = None,
        category: "Category | str" = "thread-mistake",
    ) -> None:
        """PC is where the core stopped; LINE_PC, when given, the pc in FILE:LINE that
        led there (a kmx call's own instructions are in kmx.h, not in your file)."""
        from komorebi._records import Category

        self.category = Category(category)
        self.cluster = cluster
        self.core = core
        self.pc = pc
        self.cause = cause
        self.file = file
        self.line = line
        self.backtrace = list(backtrace)
        self.line_pc = pc if line_pc is None else line_pc
        where = f"{file}:{line}" if file else "no source line"
        shown = pc if line_pc is None else line_pc
        # (a thread the simulator failed, or one stopped on request, did not crash)
        how = "stopped" if self.category in (Category.SIMULATOR, Category.STOPPED) else "crashed"
        text = (f"{self.category.words}: thread on cluster {cluster}, core {core}, {how} at {where} "
                f"(pc {shown:#x}): {cause}")
        if len(self.backtrace) > 1:
            text += "\n  backtrace:\n" + "\n".join(f"    {frame}" for frame in self.backtrace)
        super().__init__(text)

    def __reduce__(self):
        # (its arguments are keywords: pickled as them, so that a fault crosses to another process)
        fields = dict(cluster=self.cluster, core=self.core, pc=self.pc, cause=self.cause, file=self.file,
                      line=self.line, backtrace=tuple(self.backtrace), line_pc=self.line_pc,
                      category=self.category.value)
        return functools.partial(type(self), **fields), ()


class CoherenceWarning(UserWarning):
    """A coherence mistake of a thread (a km.Finding, its `finding`), issued when the run
    stops. The warning names the thread's source file and line; its text is the finding's
    category's words and its message, and `category` is the finding's."""

    def __init__(self, finding: "Finding") -> None:
        super().__init__(f"{finding.category.words}: {finding.message}")
        self.finding = finding
        self.category = finding.category

    def __reduce__(self):
        return type(self), (self.finding,)


class CompileWarning(UserWarning):
    """The compiler built a thread but warned about its code; the text is the compiler's
    own messages, with file:line:column. Issued at every load of that build."""


class NotSimulatedWarning(UserWarning):
    """A Tensix kernel does something, and the simulator runs no Tensix code."""


class OutputWarning(UserWarning):
    """Python's standard output could not take what a thread printed (a closed pipe, a
    closed file): the host's trouble, not the thread's, which went on. Issued when the run
    stops; the lines are in `Thread.output`."""
