"""Helpers: small C threads written by the tests, run through the public API."""

from __future__ import annotations

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


def run_to_end(program: km.Program, timeout: float = 30.0):
    """Load, take the final result, stop. Returns (result, run)."""
    with km.Session() as session:
        run = session.load(program)
        try:
            result = run.thread_result(timeout=timeout)
            while not result.final:
                result = run.thread_result(timeout=timeout)
        finally:
            run.stop()
    return result, run
