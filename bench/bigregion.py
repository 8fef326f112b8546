"""A big region: loaded, tripled by the lesson's thread, read back; how long each step
takes and how much memory the process needed above the interpreter's own.

The lesson's thread (tutorial/35_sharing_memory/thread/triple.c) runs over a region of
--mib MiB of uint32 (256 MiB by default; issue "Speed" asks for 1024), into a second
region of the same size. The result is checked against numpy, a slice at a time (so that
the check's own temporaries stay small).

Memory is measured from just after the input array is made (before the Program copies
it) to the end, two ways:

- peak resident set (ru_maxrss) minus the resident set at that start. The resident set
  counts a page once for each place it is mapped, and the simulator maps some pages of
  DRAM twice (DRAM itself, and the cache's copy-on-write view of it, sim.memory.dram): this
  figure can only be too high.
- peak memory, sampled every 5 ms: the process's private and file-backed resident pages
  (RssAnon + RssFile) plus the pages its memfds hold (their allocated blocks), which is
  where the simulator's DRAM lives, mapped or not, each page once. (The machine's shared
  memory, /proc/meminfo Shmem, counted other processes' memfds too: a test beside
  another suite saw 267 MiB.)

The target of issue "Speed" is checked against the larger of the two.

    python bench/bigregion.py [--mib 256]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import komorebi as km  # noqa: E402
import komorebi._simulator  # noqa: E402,F401 - the machine in the baseline, as before komorebi's import was lazy
import komorebi.sim.machine.card  # noqa: E402,F401

LESSON = ROOT / "tutorial" / "35_sharing_memory"
CHECK_SLICE = 1 << 22  # elements compared at a time


def _fields(path: str, names: tuple[str, ...]) -> dict[str, float]:
    """Fields of a /proc file of "Name:  N kB" lines, in MiB."""
    out = {}
    with open(path) as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name in names:
                out[name] = int(rest.split()[0]) / 1024
    return out


def resident_mib() -> float:
    return sum(_fields("/proc/self/status", ("VmRSS",)).values())


def memory_mib() -> float:
    """The process's own pages: its anonymous and file pages, and what its memory files
    (the simulator's memfds) hold, mapped or not. Not the machine's shared memory: other
    processes' memfds are not this one's (the tests run beside each other)."""
    own = _fields("/proc/self/status", ("RssAnon", "RssFile"))
    return own["RssAnon"] + own["RssFile"] + _memfd_mib()


def _memfd_mib() -> float:
    """The pages of this process's open memfds (their allocated blocks)."""
    total = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:"):
                total += os.fstat(int(fd)).st_blocks * 512
        except OSError:  # (closed meanwhile, or the listing's own)
            pass
    return total / 2**20


class Sampler(threading.Thread):
    """The peak of memory_mib(), every 5 ms, until stopped."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = memory_mib()
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(0.005):
            self.peak = max(self.peak, memory_mib())

    def stop(self) -> float:
        self._done.set()
        self.join()
        return max(self.peak, memory_mib())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--quick", action="store_true", help="a smoke run: --mib 8 (the tests' form)")
    args = parser.parse_args()
    if args.quick:
        args.mib = 8
    numbers = np.arange(args.mib * 2**20 // 4, dtype=np.uint32)
    baseline_rss, baseline = resident_mib(), memory_mib()
    sampler = Sampler()
    sampler.start()
    times = {}
    start = time.perf_counter()
    program = km.Program("bigregion", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[LESSON / "thread" / "triple.c"],
                   regions={"numbers": numbers, "tripled": numbers.nbytes})
    times["program"] = time.perf_counter() - start
    with km.Session() as session:
        start = time.perf_counter()
        run = session.load(program)
        times["load"] = time.perf_counter() - start
        start = time.perf_counter()
        result = run.thread_result(timeout=3600)
        times["run"] = time.perf_counter() - start
        start = time.perf_counter()
        run.stop()
        times["stop"] = time.perf_counter() - start
        start = time.perf_counter()
        tripled = run.thread.read("tripled").view(np.uint32)
        times["read"] = time.perf_counter() - start
    correct = result.code == 0 and tripled.size == numbers.size and all(
        np.array_equal(tripled[i : i + CHECK_SLICE], numbers[i : i + CHECK_SLICE] * np.uint32(3))
        for i in range(0, numbers.size, CHECK_SLICE)
    )
    peak = sampler.stop() - baseline
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - baseline_rss
    print(f"region: {args.mib} MiB of uint32, into another {args.mib} MiB")
    for step, seconds in times.items():
        print(f"  {step:7} {seconds:8.3f} s")
    print(f"  peak memory above the interpreter's (sampled): {peak:,.0f} MiB ({peak / args.mib:.2f}x the region)")
    print(f"  peak resident set above the interpreter's:     {peak_rss:,.0f} MiB ({peak_rss / args.mib:.2f}x the region)")
    print(f"  correct: {correct}")
    print(json.dumps({"benchmark": "bigregion", "mib": args.mib, **{f"{k}_seconds": round(v, 3) for k, v in times.items()},
                      "peak_mib_above_baseline": round(max(peak, peak_rss)), "peak_sampled_mib": round(peak),
                      "peak_rss_mib": round(peak_rss), "correct": bool(correct)}))
    if not correct:
        raise SystemExit("the tripled region is wrong")


if __name__ == "__main__":
    main()
