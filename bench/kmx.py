"""What a kmx call costs, and a thread that waits for the Tensix side (issue 40's figures).

- spin: a thread spins --spins times on a flag, `kmx_invalidate` and a load (bench/noc/spin.c,
  the shape of every wait for the Tensix side), timed between two submits: per iteration.
  Target <= 1 us (moonshot 0.3 us).
- answered: --calls rounds of the calls that need no Python (bench/kmx/answered.c: kmx_cycles,
  kmx_cluster, kmx_word, kmx_word_count, kmx_region, kmx_region_uncached, and a kmx_flush
  and a kmx_invalidate of a region nothing was written to): per call.
- step beside a spin: a Tensix stand-in makes --steps noc.reads while the thread spins on
  the flag it raises after them (bench/kmx/spin_until.c), timed inside the stand-in's
  function: per step. Target <= 2 us.
- a stand-in's step alone: the same noc.reads once the thread has returned (bench/noc.py's
  figure), for what a step costs without a thread's turn between two.
- traced: the same rounds with a listener that hears every call (km.Session(trace=...)),
  so that each call goes to Python: a kmx call's round trip, for scale.
- barrier: --barriers rounds of kmx_barrier on a cluster's 4 cores (bench/kmx/barrier.c),
  timed between two submits: per barrier (the four cores' calls of one round).

Measured in the same process, interleaved, best of --repeat. The last line printed is one
JSON object.

    python bench/kmx.py [--spins 1000000] [--calls 100000] [--steps 100000] [--barriers 100000]
                        [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import komorebi as km  # noqa: E402

HERE = Path(__file__).resolve().parent
TIMEOUT = 3600.0


def _program(source: Path, words, agent=None, cores: int = 1) -> km.Program:
    kernels = HERE / "kmx" / "kernels"
    kernels.mkdir(exist_ok=True)
    program = km.Program("kmx_bench", kernels=kernels)
    program.thread(cluster=1, sources=[source], regions={"flags": 128}, words=words, cores=cores)
    if agent is not None:
        program.noc_agent("tensix", agent, cluster=1)
    return program


def between_submits(program: km.Program, **options) -> float:
    """Seconds between the thread's first two submits."""
    with km.Session(**options) as session:
        run = session.load(program)
        run.thread_result(timeout=TIMEOUT)
        start = time.perf_counter()
        run.thread_result(timeout=TIMEOUT)
        seconds = time.perf_counter() - start
        while not run.thread_result(timeout=TIMEOUT).final:
            pass
        run.stop()
    return seconds


def spin(spins: int) -> float:
    return between_submits(_program(HERE / "noc" / "spin.c", [spins])) / spins


def answered(rounds: int, **options) -> float:
    return between_submits(_program(HERE / "kmx" / "answered.c", [rounds]), **options) / (rounds * 8)


def traced(rounds: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        return answered(rounds, trace=Path(folder) / "trace.json")


def barrier(rounds: int) -> float:
    """Seconds a kmx_barrier of a cluster's 4 cores (each core's call of one round)."""
    return between_submits(_program(HERE / "kmx" / "barrier.c", [rounds], cores=4)) / rounds


def step_beside_a_spin(count: int) -> tuple[float, int]:
    """Seconds a stand-in's noc.read while the thread spins, and the thread's spins."""
    timed = {}

    def reader(noc):
        start = time.perf_counter()
        for _ in range(count):
            noc.read("flags", 0, 4)
        timed["seconds"] = time.perf_counter() - start
        noc.write("flags", 0, b"\x01\x00\x00\x00")

    program = _program(HERE / "kmx" / "spin_until.c", [0], reader)
    with km.Session() as session:
        run = session.load(program)
        result = None
        while result is None or not result.final:
            result = run.thread_result(timeout=TIMEOUT)
        run.stop()
    assert run.agent("tensix").error is None, run.agent("tensix")
    return timed["seconds"] / count, int(result.words[0])


def step_alone(count: int) -> float:
    """Seconds a stand-in's noc.read once the thread has returned (bench/noc.py's steps)."""
    sys.path.insert(0, str(HERE))
    import noc  # noqa: PLC0415 (bench/noc.py, beside this file)

    return noc.steps(count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spins", type=int, default=1_000_000)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--barriers", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2,000 of each, once")
    args = parser.parse_args()
    if args.quick:
        args.spins, args.calls, args.steps, args.barriers, args.repeat = 2_000, 2_000, 2_000, 2_000, 1
    best: dict[str, float] = {}
    spins_seen = 0
    for round_ in range(args.repeat):
        step, spins_seen = step_beside_a_spin(args.steps)
        figures = {
            "spin us an iteration": spin(args.spins) * 1e6,
            "answered call us": answered(args.calls) * 1e6,
            "call with a trace us": traced(max(args.calls // 10, 1)) * 1e6,
            "stand-in step beside a spin us": step * 1e6,
            "stand-in step alone us": step_alone(args.steps) * 1e6,
            "barrier of 4 cores us": barrier(args.barriers) * 1e6,
        }
        for name, value in figures.items():
            best[name] = min(best.get(name, value), value)
        print(f"round {round_ + 1}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()), flush=True)
    best["traced / answered"] = best["call with a trace us"] / best["answered call us"]
    print(f"spins: {args.spins:,}; calls: {args.calls:,} rounds of 8; steps: {args.steps:,}; "
          f"barriers: {args.barriers:,} "
          f"(the thread spun {spins_seen:,} times beside them); best of {args.repeat}")
    for name, value in best.items():
        print(f"  {name}: {value:.3f}")
    print("targets: spin <= 1 us (moonshot 0.3), a stand-in's step beside a spin <= 2 us")
    print(json.dumps({"spins": args.spins, "calls": args.calls, "steps": args.steps, "barriers": args.barriers,
                      **{k: round(v, 4) for k, v in best.items()}}))


if __name__ == "__main__":
    main()
