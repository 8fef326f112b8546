"""Running a compiler: a time limit, nothing left running, zig's own cache folder.

Every compiler the simulator runs (the thread's, sim.build.thread; the hooks', sim.native.hooks)
runs through `run`. It has a time limit, `KMX_COMPILE_TIMEOUT` seconds (default
DEFAULT_TIMEOUT), and runs in a process group of its own, so that when the limit passes
or the caller is interrupted (Ctrl-C) the compiler and every process it started (zig
starts clang) are killed, not left running.

Long work says so: a build still running after PROGRESS_AFTER seconds (or at once, for one
known to be long: the native hooks' first build) prints one line to stderr, and another
when it ends. `KMX_PROGRESS=0` turns the lines off; the pytest plugin sets it unless asked
(--km-progress).

zig keeps a cache of its own (`ZIG_GLOBAL_CACHE_DIR`, or ~/.cache/zig). When that is not
set and there is no home folder to put it in, the simulator points it into the build
cache, so that a machine with no HOME still compiles.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import math
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .cache import BuildError, cache_dir
from .libc import stop_group

DEFAULT_TIMEOUT = 300.0  # seconds: a first build on a new machine takes several
TIMEOUT_VARIABLE = "KMX_COMPILE_TIMEOUT"

PROGRESS_VARIABLE = "KMX_PROGRESS"
PROGRESS_AFTER = 2.0  # seconds: a build still running then says so

# What zig prints when its cache folder cannot be used.
_ZIG_CACHE_FAILURES = ("zig cache directory", "global cache directory", "AppDataDirUnavailable")


class CompilerTimeout(BuildError):
    """The compiler ran past the time limit and was stopped."""


@dataclass(frozen=True)
class Done:
    returncode: int
    output: str  # what the compiler printed, stderr and stdout together


def time_limit() -> float:
    """KMX_COMPILE_TIMEOUT, checked: seconds > 0 (inf: none)."""
    text = os.environ.get(TIMEOUT_VARIABLE)
    if not text:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not seconds > 0:
        raise BuildError(
            f"{TIMEOUT_VARIABLE}={text!r} is not a time limit: give a number of seconds > 0 "
            "(inf for none)"
        )
    return seconds


def zig() -> list[str]:
    """The `ziglang` package's zig."""
    return [sys.executable, "-m", "ziglang"]


@functools.lru_cache(maxsize=None)
def zig_folder() -> Path:
    """Where the `ziglang` package is: its compiler and its headers."""
    spec = importlib.util.find_spec("ziglang")
    return Path(spec.origin).resolve().parent


@functools.lru_cache(maxsize=None)
def zig_identity() -> str:
    """What stands for the `ziglang` compiler's version in build keys: where its binary
    is, its size and its time (reading the package's version costs more than a build
    found in the cache)."""
    binary = zig_folder() / ("zig.exe" if os.name == "nt" else "zig")
    stat = binary.stat()
    return f"ziglang {binary} {stat.st_size} {stat.st_mtime_ns}"


def environment() -> dict[str, str] | None:
    """The compiler's environment: ours, and a folder for zig's cache where zig would find
    none (it looks at these three variables, nothing else)."""
    if any(os.environ.get(name) for name in ("ZIG_GLOBAL_CACHE_DIR", "XDG_CACHE_HOME", "HOME")):
        return None
    return {**os.environ, "ZIG_GLOBAL_CACHE_DIR": str(cache_dir() / "zig")}


def progress_on() -> bool:
    """The progress lines are printed (KMX_PROGRESS is not 0, no, off or false)."""
    return os.environ.get(PROGRESS_VARIABLE, "1").strip().lower() not in ("0", "no", "off", "false")


class _Progress:
    """The two lines of a long build: one when it starts (at once when ANNOUNCE says it is
    known to be long, else after PROGRESS_AFTER seconds), one when it ends."""

    def __init__(self, what: str, announce: str | None) -> None:
        self.what, self.started, self.said, self.ended = what, time.monotonic(), False, False
        self._lock = threading.Lock()
        self._timer = None
        if not progress_on():
            return
        if announce is not None:
            self._say(f"komorebi-sim: building {announce}...")
        else:
            self._timer = threading.Timer(PROGRESS_AFTER, self._say, [f"komorebi-sim: still compiling {what}..."])
            self._timer.daemon = True
            self._timer.start()

    def _say(self, text: str) -> None:
        with self._lock:
            if self.ended:  # (the timer fired as the build ended)
                return
            self.said = True
            print(text, file=sys.stderr, flush=True)

    def seconds(self) -> float:
        return time.monotonic() - self.started

    def end(self, outcome: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self.ended = True
            if self.said:
                print(f"komorebi-sim: {outcome} {self.what} ({self.seconds():.1f} s)", file=sys.stderr, flush=True)


def run(argv: Sequence[str], *, what: str, announce: str | None = None, kind: str = "compile",
        limit: float | None = None) -> Done:
    """Run the compiler command ARGV (WHAT it builds, for messages) and wait for it, at
    most the time limit. ANNOUNCE, for a build known to be long, is its progress line
    (what, "once", about how long); KIND, for the advice when the time limit stops it, is
    "compile" (a source), "link" or "first" (a one-off build for this machine); LIMIT, when
    given, is the time limit in place of KMX_COMPILE_TIMEOUT's. Raises CompilerTimeout when the limit passes; whatever happens, including an
    interrupt, the compiler's whole process group is gone on return."""
    return run_together([argv], what=what, announce=announce, kind=kind, limit=limit)


def run_together(commands: Sequence[Sequence[str]], *, what: str, announce: str | None = None,
                 kind: str = "compile", limit: float | None = None) -> Done:
    """Run the compiler COMMANDS side by side (each its own process group, all started at
    once: zig cc compiles its files one after another, and a build of many files is then
    as long as all of them) and wait for them all, under one progress line and one time
    limit, as run() does for one. Done's returncode is the first failing command's (0 when
    none failed) and its output every command's, in order. Whatever happens, including an
    interrupt, every compiler's process group is gone on return."""
    import subprocess  # (only a build needs these: not imported for a hit)
    import tempfile

    limit = time_limit() if limit is None else limit
    processes: list[subprocess.Popen] = []
    with contextlib.ExitStack() as files:
        outputs = [files.enter_context(tempfile.TemporaryFile()) for _ in commands]
        # A timer kills the compilers when the limit passes, and the wait itself blocks
        # (Popen's wait with a timeout polls, which costs tens of milliseconds a compile).
        expired = threading.Event()
        progress = timer = None

        def expire() -> None:
            expired.set()
            for process in list(processes):
                stop_group(process)

        try:  # (from the first compiler's start: a Ctrl-C while the progress line is set up stops them too)
            for argv, output in zip(commands, outputs):
                processes.append(subprocess.Popen(
                    list(argv), stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    env=environment(), start_new_session=os.name == "posix",
                ))
            progress = _Progress(what, announce)  # (once the compilers run: one that cannot start says nothing)
            timer = None if math.isinf(limit) else threading.Timer(limit, expire)
            if timer is not None:
                timer.daemon = True
                timer.start()
            returncodes = [process.wait() for process in processes]
        except BaseException:  # Ctrl-C, the caller's thread told to stop, or a compiler that cannot start
            for process in processes:
                stop_group(process)
            if progress is not None:
                progress.end("stopped")
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if expired.is_set():
            progress.end("stopped")
            raise CompilerTimeout(_timeout_message(what, limit, progress.seconds(), kind))
        returncode = next((code for code in returncodes if code != 0), 0)
        progress.end("built" if returncode == 0 else "failed")
        text = ""
        for output in outputs:
            output.seek(0)
            text += output.read().decode(errors="replace")
    return Done(returncode, text)


def _timeout_message(what: str, limit: float, seconds: float, kind: str) -> str:
    """Why a build that the time limit stopped may have been so long, and what to do."""
    more = f"{TIMEOUT_VARIABLE}={max(2 * limit, 600):g} (seconds, inf for none)"
    head = (f"building {what} ran {seconds:.1f} s, past the time limit of {limit:g} s "
            f"(the machine's load: {_load()}), so the compiler was stopped. ")
    if kind == "first":
        return head + f"It is a one-off build for this machine: on a slow or busy machine, raise the limit with {more}"
    if kind == "link":  # (no macro to blame)
        return head + f"If the machine is slow or busy, raise the limit with {more}"
    return head + (f"If the machine is slow or busy, raise the limit with {more}; if not, a compile that "
                   f"never ends is usually a macro or a template in {what} that expands without end")


def _load() -> str:
    """The machine's load average over the last minute, and its cores."""
    try:
        load = f"{os.getloadavg()[0]:.1f}"
    except (AttributeError, OSError):  # (Windows)
        load = "not known"
    return f"{load} on {os.cpu_count() or 1} cores"


def zig_cache_problem(output: str) -> str | None:
    """A message for OUTPUT when it says zig's cache folder could not be used."""
    if not any(sign in output for sign in _ZIG_CACHE_FAILURES):
        return None
    folder = os.environ.get("ZIG_GLOBAL_CACHE_DIR") or "~/.cache/zig"
    return (
        f"zig could not use its cache folder ({folder}). Set ZIG_GLOBAL_CACHE_DIR to a "
        f"folder you can write. zig said:\n{output.strip()}"
    )
