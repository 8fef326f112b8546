"""What a region costs in host memory (sim.memory.dram, sim.cache.model): about its size once, not
once for DRAM, once for the cache and once more for Python's copies; and what
run.thread.read returns is the caller's own array."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import komorebi as km
from komorebi.sim.memory import host
from tests.conftest import ROOT

LESSON = ROOT / "tutorial" / "35_sharing_memory"


@pytest.mark.skipif(host.way() != "linux", reason="the figure is the linux way's: the portable one copies what it shares")
def test_a_region_tripled_into_another_costs_about_two_regions():
    """bench/bigregion.py over 64 MiB into 64 MiB, in a process of its own: the peak above
    the interpreter's own memory stays within 2.5 times one region plus a fixed 56 MiB (the
    engines, the build and the C library's image, numpy's temporaries: 202 to 208 MiB in
    all, measured). Before sim.memory.dram it was 5 to 7 times."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bigregion.py"), "--mib", "64"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["correct"]
    assert figures["peak_mib_above_baseline"] <= 2.5 * 64 + 56, figures


def test_what_read_returns_is_the_callers_own(kernels):
    numbers = np.arange(3000, dtype=np.uint32)
    program = km.Program("own", kernels=kernels)
    program.thread(cluster=1, sources=[LESSON / "thread" / "triple.c"],
                   regions={"numbers": numbers, "tripled": numbers.nbytes})
    with km.Session() as session:
        run = session.load(program)
        run.thread_result(timeout=30)
        run.stop()
        first = run.thread.read("tripled")
        first[:] = 0  # the caller writes into its array...
        given = run.thread.read("numbers")
        given[:8] = 255
    # ...and neither DRAM nor the caller's input changed
    assert (run.thread.read("tripled").view(np.uint32) == numbers * 3).all()
    assert (run.thread.read("numbers").view(np.uint32) == numbers).all()
    assert (numbers == np.arange(3000, dtype=np.uint32)).all()


def test_the_region_is_the_array_as_it_was_at_thread(kernels):
    """Program.thread takes the bytes at once: changing the array afterwards, or loading
    the program twice, gives the same region."""
    numbers = np.arange(2000, dtype=np.uint32).reshape(40, 50).T  # not C-contiguous
    expected = np.ascontiguousarray(numbers).reshape(-1) * 3
    program = km.Program("twice", kernels=kernels)
    program.thread(cluster=1, sources=[LESSON / "thread" / "triple.c"],
                   regions={"numbers": numbers, "tripled": numbers.nbytes})
    numbers[:] = 7
    with km.Session() as session:
        for _ in range(2):
            run = session.load(program)
            run.thread_result(timeout=30)
            run.stop()
            assert (run.thread.read("tripled").view(np.uint32) == expected).all()


def test_anonymous_dram_moves_into_its_file_when_the_run_is_over():
    """A direct region's DRAM (sim.memory.dram.Storage, anonymous) settles into a memfd at the
    run's end; what read returns then shares it, and is the caller's own."""
    from komorebi.sim.memory.dram import Storage
    from komorebi.sim.layout import PAGE

    storage = Storage(64 * PAGE, anonymous=True)
    storage.dram[5 * PAGE + 3] = 7
    storage.dram[-1] = 9
    storage.release()
    assert not storage.anonymous
    copy = storage.copy(0, 64 * PAGE)
    assert copy[5 * PAGE + 3] == 7 and copy[-1] == 9 and int(copy.sum()) == 16
    copy[:] = 1
    assert storage.copy(0, 64 * PAGE)[-1] == 9


def test_reads_and_loads_keep_no_file_descriptors(kernels):
    """Regions live in memfds, but the arrays read returns, the cache's views and the
    loads keep no file descriptor of their own (a process has only so many)."""
    import os

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    numbers = np.arange(1000, dtype=np.uint32)
    program = km.Program("fds", kernels=kernels)
    program.thread(cluster=1, sources=[LESSON / "thread" / "triple.c"],
                   regions={"numbers": numbers, "tripled": numbers.nbytes})
    kept = []
    with km.Session() as session:
        before = open_fds()
        for _ in range(5):
            run = session.load(program)
            run.thread_result(timeout=30)
            run.stop()
            kept += [run.thread.read("tripled") for _ in range(100)]
            kept += [run.thread.read("numbers") for _ in range(100)]
        grown = open_fds() - before
    assert grown <= 5 + 2, f"{grown} more file descriptors for 5 runs and 1,000 reads kept"
    assert all((k.view(np.uint32) == numbers * 3).all() for k in kept[:100])
