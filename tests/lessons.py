"""Helpers for the tests of the tutorial's lessons and of the pages about them: run a
lesson's program.py, check that a page shows files as they are, write variants of a
lesson's C files, build a lesson's program and run it to its end. The helpers do the
running and the writing; what a test checks stays in the test."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

import komorebi as km
from tests.conftest import ROOT

TWELVE_CORES = ROOT / "tutorial" / "36_twelve_cores"


# -- programs and pages -------------------------------------------------------------------


def run_program(folder: Path, script: str = "program.py") -> subprocess.CompletedProcess:
    """Run SCRIPT in FOLDER with this Python; assert that it exits with 0 (showing its
    stderr if not). Returns the finished process, for its stdout and stderr."""
    done = subprocess.run(
        [sys.executable, script], cwd=folder, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done


def assert_page_shows(page: str, *files: Path, output: str | None = None) -> None:
    """PAGE holds the text of each of FILES, and OUTPUT, as they are (less the blank
    space at either end)."""
    for path in files:
        assert path.read_text().strip() in page, f"{path} is not on the page as it is"
    if output is not None:
        assert output.strip() in page, "the output is not on the page as it is"


# -- C files --------------------------------------------------------------------------------


def write_thread(tmp_path: Path, name: str, text: str) -> Path:
    """TEXT written as tmp_path/thread/NAME: a thread/ folder, as in a lesson."""
    folder = tmp_path / "thread"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def variant(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    """SOURCE with OLD, which it must hold exactly once, replaced by NEW, under SOURCE's
    own name in tmp_path/thread/ (so that a fault names it as it names the lesson's)."""
    text = source.read_text()
    assert text.count(old) == 1, f"{source.name} does not hold {old!r} exactly once"
    return write_thread(tmp_path, source.name, text.replace(old, new))


# -- running --------------------------------------------------------------------------------


def one_thread_program(lesson: Path, source: Path, **thread) -> km.Program:
    """The program of LESSON (a tutorial folder), as its program.py names it: the folder's
    name less its number, with the lesson's kernels, and one thread on cluster 1 running
    SOURCE. THREAD: program.thread's words=, regions=, cores=."""
    program = km.Program(lesson.name.split("_", 1)[1], kernels=lesson / "kernels")
    program.thread(cluster=1, sources=[source], **thread)
    return program


def twelve_cores_program(source: Path) -> km.Program:
    """Lesson 36's program with SOURCE as its squares.c: a thread of 4 cores on each of
    clusters 1, 2 and 3, each cluster squaring 4096 numbers of its own (0 to 4095, 4096
    to 8191, 8192 to 12287)."""
    program = km.Program("twelve_cores", kernels=TWELVE_CORES / "kernels")
    for k, cluster in enumerate([1, 2, 3]):
        part = np.arange(4096 * k, 4096 * (k + 1), dtype=np.uint32)
        program.thread(
            cluster=cluster,
            sources=[source],
            regions={"numbers": part, "squares": part.nbytes},
            cores=4,
        )
    return program


def take_all(run: km.Run, timeout: float = 10.0) -> list:
    """Every result of RUN's thread until the final one: the submitted ones, then it."""
    results = [run.thread_result(timeout=timeout)]
    while not results[-1].final:
        results.append(run.thread_result(timeout=timeout))
    return results


def run_and_stop(
    program: km.Program, coherence: str = "card", *, catch_faults: bool = False, **session
) -> tuple[list, km.Run, list[warnings.WarningMessage]]:
    """Load PROGRAM (one thread) in a km.Session(coherence=COHERENCE, **SESSION), take
    every result of its thread until the final one, and stop. Returns (the results; the
    stopped run; the km.CoherenceWarnings issued, which are recorded, not shown). A
    ThreadFault is raised, or with CATCH_FAULTS taken as the last of the results."""
    results = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with km.Session(coherence=coherence, **session) as s:
            run = s.load(program)
            try:
                while not results or not results[-1].final:
                    results.append(run.thread_result(timeout=10.0))
            except km.ThreadFault as fault:
                if not catch_faults:
                    raise
                results.append(fault)
            run.stop()
    return results, run, [w for w in caught if issubclass(w.category, km.CoherenceWarning)]


def run_twelve_cores(source: Path, **session) -> km.Run:
    """twelve_cores_program(SOURCE) run to its end, with km.CoherenceWarnings ignored;
    asserts that each cluster's thread ends with code 0. Returns the stopped run."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)
        with km.Session(**session) as s:
            run = s.load(twelve_cores_program(source))
            for c in [1, 2, 3]:
                code = run.thread_result(timeout=30.0, cluster=c).code
                assert code == 0, f"cluster {c}'s thread ended with code {code}"
            run.stop()
    return run


# -- what a run gives --------------------------------------------------------------------------


def only_finding(run: km.Run) -> km.Finding:
    """The run's one finding; asserts that there is exactly one."""
    assert len(run.findings) == 1, run.findings
    return run.findings[0]


def wide(words: np.ndarray, at: int) -> int:
    """The 64-bit number in result words AT (low half) and AT + 1 (high half)."""
    low, high = words[at : at + 2].tolist()
    return high << 32 | low
