"""Running a compiler: a time limit, nothing left running, zig's own cache folder.

Every compiler the simulator runs (the thread's, sim.build.thread; the hooks', sim.native.hooks)
runs through `run`. It has a time limit, `KMX_COMPILE_TIMEOUT` seconds (default
DEFAULT_TIMEOUT), and runs in a process group of its own, so that when the limit passes
or the caller is interrupted (Ctrl-C) the compiler and every process it started (zig
starts clang) are killed, not left running.

zig keeps a cache of its own (`ZIG_GLOBAL_CACHE_DIR`, or ~/.cache/zig). When that is not
set and there is no home folder to put it in, the simulator points it into the build
cache, so that a machine with no HOME still compiles.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .cache import BuildError, cache_dir

DEFAULT_TIMEOUT = 300.0  # seconds: a first build on a new machine takes several
TIMEOUT_VARIABLE = "KMX_COMPILE_TIMEOUT"

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


def run(argv: Sequence[str], *, what: str) -> Done:
    """Run the compiler command ARGV (WHAT it builds, for messages) and wait for it, at
    most the time limit. Raises CompilerTimeout when the limit passes; whatever happens,
    including an interrupt, the compiler's whole process group is gone on return."""
    import subprocess  # (only a build needs these: not imported for a hit)
    import tempfile

    limit = time_limit()
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(
            list(argv), stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=environment(), start_new_session=os.name == "posix",
        )
        # A timer kills the compiler when the limit passes, and the wait itself blocks
        # (Popen's wait with a timeout polls, which costs tens of milliseconds a compile).
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            _kill(process)

        timer = None if math.isinf(limit) else threading.Timer(limit, expire)
        try:
            if timer is not None:
                timer.daemon = True
                timer.start()
            returncode = process.wait()
        except BaseException:  # Ctrl-C, or the caller's thread told to stop
            _kill(process)
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if expired.is_set():
            raise CompilerTimeout(
                f"compiling {what} took longer than {limit:g} s, so the compiler was stopped. "
                f"A compile that long is usually a macro or a template that expands without "
                f"end; if the build is only slow, raise the limit with {TIMEOUT_VARIABLE}="
                f"{max(2 * limit, 600):g} (seconds)"
            )
        output.seek(0)
        text = output.read().decode(errors="replace")
    return Done(returncode, text)


def zig_cache_problem(output: str) -> str | None:
    """A message for OUTPUT when it says zig's cache folder could not be used."""
    if not any(sign in output for sign in _ZIG_CACHE_FAILURES):
        return None
    folder = os.environ.get("ZIG_GLOBAL_CACHE_DIR") or "~/.cache/zig"
    return (
        f"zig could not use its cache folder ({folder}). Set ZIG_GLOBAL_CACHE_DIR to a "
        f"folder you can write. zig said:\n{output.strip()}"
    )


def _kill(process) -> None:
    """Kill the compiler and everything it started. The group goes first, while the
    compiler is not yet reaped, so that its number still names this group."""
    if process.returncode is not None:
        return
    if os.name == "posix":
        import signal

        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        process.kill()
    except OSError:
        pass
    process.wait()
