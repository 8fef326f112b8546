"""Processes a test starts, ended whatever the test's outcome (passed, failed, timed out,
interrupted): each child in a process group of its own, and the whole group killed and the
child waited for when the test is done with it, so that nothing it started (a forked child,
a pool's workers, a browser's helpers) runs on after the test.

INTERRUPTIBLE is the first line of a Python child that a test sends SIGINT (Ctrl-C): a
shell starts a background job's commands with SIGINT ignored, and a Python started so
keeps it ignored, so no KeyboardInterrupt would ever come and the child would run on.
"""

from __future__ import annotations

import os
import signal
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

INTERRUPTIBLE = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"


@contextmanager
def started(args: Sequence[str], **popen) -> Iterator[subprocess.Popen]:
    """subprocess.Popen(ARGS, **POPEN) in a new session (its own process group), ended with
    its group when the block is left, however."""
    child = subprocess.Popen(args, start_new_session=True, **popen)
    try:
        yield child
    finally:
        end(child)


def end(child: subprocess.Popen) -> None:
    """Kill CHILD's process group (CHILD was started in a session of its own), wait for
    CHILD, and close its pipes."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:  # (the group has ended: nothing of it is left)
        pass
    child.wait()
    for stream in (child.stdin, child.stdout, child.stderr):
        if stream is not None:
            stream.close()


def run(args: Sequence[str], *, timeout: float, input=None, capture_output: bool = False,
        **popen) -> subprocess.CompletedProcess:
    """subprocess.run, but its child's whole group is ended in every outcome (subprocess.run
    kills the child alone, on a timeout: what it started would run on)."""
    if capture_output:
        popen.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if input is not None:
        popen["stdin"] = subprocess.PIPE
    with started(args, **popen) as child:
        out, err = child.communicate(input, timeout=timeout)
        return subprocess.CompletedProcess(args, child.returncode, out, err)


def marked(name: str, value: str) -> list[int]:
    """The pids of the live processes whose environment has NAME=VALUE (a test gives its
    children a mark of its own, which their children inherit, to find what outlived them)."""
    wanted = f"{name}={value}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if wanted not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            if "State:\tZ" in (entry / "status").read_text():  # (ended, not yet waited for)
                continue
        except OSError:  # (it ended while we looked, or is not ours to read)
            continue
        found.append(int(entry.name))
    return found


def kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
