"""Helpers: small C threads written by the tests, run through the public API."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import komorebi as km

THREADS = Path(__file__).resolve().parent / "threads"


def program_for(source: str | Path, tmp_path: Path, *, cluster: int = 1, regions=None, words=(), cores: int = 1) -> km.Program:
    """A program with one thread: SOURCE is C text, or a file in tests/threads/."""
    if isinstance(source, str) and "\n" in source:
        path = tmp_path / "thread.c"
        path.write_text(source)
    else:
        path = THREADS / source
    kernels = tmp_path / "kernels"
    kernels.mkdir(exist_ok=True)
    program = km.Program("test", kernels=kernels)
    program.thread(cluster=cluster, sources=[path], regions=regions or {}, words=words, cores=cores)
    return program


def run_to_end(program: km.Program, timeout: float = 30.0, **session_options):
    """Load (in a km.Session of SESSION_OPTIONS), take the final result, stop. Returns
    (result, run)."""
    with km.Session(**session_options) as session:
        run = session.load(program)
        try:
            result = run.thread_result(timeout=timeout)
            while not result.final:
                result = run.thread_result(timeout=timeout)
        finally:
            run.stop()
    return result, run


def zig_wrapper(tmp_path: Path, *, before: str = "", after: str = "", name: str = "cc") -> Path:
    """A KMX_CC: a shell script that runs BEFORE, then zig's cc for the card's target
    with the driver's arguments, then AFTER, and exits with zig's status."""
    script = tmp_path / name
    zig = f'{sys.executable} -m ziglang cc -target riscv64-freestanding-none -mcpu=baseline_rv64 "$@"'
    script.write_text(f"#!/bin/sh\n{before}\n{zig}\nrc=$?\n{after}\nexit $rc\n")
    script.chmod(0o755)
    return script


def wait_for(condition, what: str, seconds: float = 600.0) -> None:
    """Wait until CONDITION() is true: an event of the run's, not a time (SECONDS only
    bounds a hang, far past what any machine's speed or load takes)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never happened")
        time.sleep(0.005)


def stalled_in(run: km.Run, call: str, cluster: int | None = None) -> bool:
    """Every core of the thread on CLUSTER (the only one: None) waits in the kmx call CALL
    or has returned, and one waits there."""
    thread = run.thread if cluster is None else run.threads[cluster]
    places = run._loaded.machine.places(thread.cluster)
    return (all(p.state == "returned" or (p.state == "waiting" and p.waiting_in == call) for p in places)
            and any(p.state == "waiting" for p in places))


def machine_cluster(run: km.Run, cluster: int):
    """The simulator's own cluster under RUN (for tests that look inside the machine)."""
    return run._loaded.machine._card.clusters[cluster]


def compiled_instructions(image) -> list[int]:
    """The 32-bit instructions of IMAGE's code (a cluster's ThreadImage), as compiled:
    before the loader's rewrites, the 16-bit ones skipped."""
    data = dict(image.segments)
    out = []
    for start, end in image.code:
        base = max(b for b in data if b <= start)
        code = data[base][start - base:end - base]
        at = 0
        while at + 4 <= len(code):
            if code[at] & 3 != 3:
                at += 2
                continue
            out.append(int.from_bytes(code[at:at + 4], "little"))
            at += 4
    return out
