"""Several cores and clusters: aggregate simulated instructions a second.

Setups: one cluster with 1, 2 and 4 cores, and clusters 1, 2 and 3 with 4 cores each.
Kernels (bench/cores/work.inc): compute-bound, a xorshift loop in registers, ITERATIONS a
core; memory-bound, each core triples its slice of a region of MIB MiB a core (uint32),
between an invalidate, barriers and a flush. Each core does the same work whatever the
setup, so a perfect machine would show the same time for every setup and an aggregate
rate proportional to the number of cores.

Instructions are counted once per setup, in a run of the same kernel built to report
each core's kmx_cycles (one cycle an instruction, exact). The timed runs use the kernel
built without kmx_cycles, which runs without the counting hook. A timed run is measured
from session.load (build cache warm: a cache hit) to the last thread's final result, so
it includes placing the regions; best of --repeat. The default schedule: the session's
default turns (--quantum: 2,000, and 100,000 before issue 29) while several cores are
ready, deterministic. Setups of several cores are timed again with turns of each --fine
length (100, 1,000 and 1 instructions), interleaved with the default's runs: the speed
ratio is the default's time over the short turns' (1: a turn switch costs nothing), and
the MIPS the short turns' aggregate rate.

The last line printed is one JSON object: for each setup and kernel, the aggregate MIPS
and its ratio to one core.

    python bench/cores.py [--iterations 2000000] [--mib 2] [--repeat 3] [--fine 100,1000,1] [--quantum 2000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import komorebi as km  # noqa: E402
from komorebi._limits import DEFAULT_QUANTUM  # noqa: E402

HERE = Path(__file__).resolve().parent / "cores"
SETUPS = {"1 cluster x 1 core": ([1], 1), "1 cluster x 2 cores": ([1], 2),
          "1 cluster x 4 cores": ([1], 4), "3 clusters x 4 cores": ([1, 2, 3], 4)}
KERNELS = {"compute": 0, "memory": 1}


def program(source: str, clusters: list[int], cores: int, kernel: int, iterations: int, mib: int, kernels: Path):
    p = km.Program("cores", kernels=kernels)
    for cluster in clusters:
        regions = {}
        if kernel == 1:
            n = mib * (1 << 20) // 4 * cores
            regions = {"in": np.arange(n, dtype=np.uint32), "out": 4 * n}
        p.thread(cluster=cluster, sources=[HERE / source], regions=regions, words=[kernel, iterations, cores], cores=cores)
    return p


def run(p: km.Program, clusters: list[int], quantum: int = DEFAULT_QUANTUM) -> tuple[float, list]:
    with km.Session(quantum=quantum) as session:
        start = time.perf_counter()
        r = session.load(p)
        results = [r.thread_result(timeout=600, cluster=c) for c in clusters]
        elapsed = time.perf_counter() - start
        r.stop()
    for c, result in zip(clusters, results):
        if not result.final or result.code != 0:
            raise SystemExit(f"cluster {c}: the run failed: {result}")
    return elapsed, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=2_000_000)
    parser.add_argument("--mib", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fine", default="100,1000,1",
                        help="the short turns timed beside the default, instructions a turn (comma-separated)")
    parser.add_argument("--quantum", type=int, default=DEFAULT_QUANTUM,
                        help="the default column's turns (Session's default quantum; 100000 was the default before issue 29)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: --iterations 20000, --mib 1, --repeat 1, --fine 100 (the tests' form)")
    args = parser.parse_args()
    if args.quick:
        args.iterations = 20000
        args.mib = 1
        args.repeat = 1
        args.fine = "100"
    fines = [int(q) for q in str(args.fine).split(",")]
    kernels = Path(__file__).resolve().parent / "cores" / "kernels"
    kernels.mkdir(exist_ok=True)

    figures: dict[str, dict[str, dict[str, float]]] = {}
    header = "".join(f" {f'q={q} ms':>11} {'ratio':>6} {'MIPS':>7}" for q in fines)
    print(f"{'setup':24} {'kernel':8} {'instructions':>14} {'ms':>9} {'MIPS':>8} {'x 1 core':>9}{header}")
    for kernel_name, kernel in KERNELS.items():
        for setup, (clusters, cores) in SETUPS.items():
            _, counted = run(program("counted.c", clusters, cores, kernel, args.iterations, args.mib, kernels), clusters)
            instructions = sum(int(w) for result in counted for w in result.words[2 : 2 + cores])
            timed = program("timed.c", clusters, cores, kernel, args.iterations, args.mib, kernels)
            run(timed, clusters)  # warm the build cache
            # The default turns and each short length, interleaved, best of --repeat each
            # (a noisy machine slows them alike).
            lengths = [args.quantum] + (fines if cores > 1 else [])
            times = {q: min(each) for q, each in zip(lengths, zip(*(
                [run(timed, clusters, q)[0] for q in lengths] for _ in range(args.repeat))))}
            best = times[args.quantum]
            mips = instructions / best / 1e6
            one = figures.get("1 cluster x 1 core", {}).get(kernel_name, {}).get("mips", mips)
            figures.setdefault(setup, {})[kernel_name] = {
                "instructions": instructions, "ms": round(best * 1e3, 1),
                "mips": round(mips, 1), "ratio_to_one_core": round(mips / one, 2),
            }
            shown = ""
            for q in fines:  # turns of Q: the same work, more turn switches
                if cores == 1:
                    shown += f" {'-':>11} {'-':>6} {'-':>7}"
                    continue
                fine_best = times[q]
                figures[setup][kernel_name][f"q{q}"] = {"ms": round(fine_best * 1e3, 1),
                                                         "speed_ratio": round(best / fine_best, 3),
                                                         "mips": round(instructions / fine_best / 1e6, 1)}
                shown += f" {fine_best * 1e3:11.1f} {best / fine_best:6.3f} {instructions / fine_best / 1e6:7.1f}"
            print(f"{setup:24} {kernel_name:8} {instructions:14,} {best * 1e3:9.1f} {mips:8.1f} {mips / one:9.2f}{shown}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
