"""A big region: loaded, tripled by the lesson's thread, read back; how long each step
takes and how much resident memory the process needed above the interpreter's own.

The lesson's thread (tutorial/35_sharing_memory/thread/triple.c) runs over a region of
--mib MiB of uint32 (256 MiB by default; issue "Speed" asks for 1024), into a second
region of the same size. The result is checked against numpy. Peak memory is the
process's peak resident set (ru_maxrss) minus the resident set after the imports, with
the input array already made: what the simulator itself costs.

    python bench/bigregion.py [--mib 256]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import komorebi as km  # noqa: E402

LESSON = ROOT / "tutorial" / "35_sharing_memory"


def resident_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=256)
    args = parser.parse_args()
    numbers = np.arange(args.mib * 2**20 // 4, dtype=np.uint32)
    program = km.Program("bigregion", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[LESSON / "thread" / "triple.c"],
                   regions={"numbers": numbers, "tripled": numbers.nbytes})
    baseline = resident_mib()
    times = {}
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
    correct = bool(result.code == 0 and np.array_equal(tripled, numbers * np.uint32(3)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - baseline
    print(f"region: {args.mib} MiB of uint32, into another {args.mib} MiB")
    for step, seconds in times.items():
        print(f"  {step:5} {seconds:8.3f} s")
    print(f"  peak resident memory above the interpreter's: {peak:,.0f} MiB "
          f"({peak / args.mib:.1f}x the region); correct: {correct}")
    print(json.dumps({"benchmark": "bigregion", "mib": args.mib, **{f"{k}_seconds": round(v, 3) for k, v in times.items()},
                      "peak_mib_above_baseline": round(peak), "correct": correct}))
    if not correct:
        raise SystemExit("the tripled region is wrong")


if __name__ == "__main__":
    main()
