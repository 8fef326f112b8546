"""What a Tensix stand-in (program.noc_agent) costs: the two figures of issue 32.

- spin: the thread spins on a flag, `kmx_invalidate` and a load, --spins times
  (bench/noc/spin.c), timed between two submits; once with no stand-in, once with a
  stand-in waiting all the while in noc.wait for the thread's flag (which it raises after
  the spins). The stand-in's cost is the difference.
- step: a stand-in makes --steps noc calls (4-byte noc.reads), timed inside the function;
  against a kmx call's round trip, --steps kmx_cycles() calls of a thread (bench/noc/calls.c),
  timed between two submits. Both per call.
- frame: the thread doubles a --frame-mib MiB region into another --rounds times (bench/noc/
  frame.c), timed between two submits; once with no stand-in, once with one waiting: with a
  stand-in on the cluster every region access is watched, a line at a time (the cache must
  know which lines are in it: docs/memory-model.md), and this is what that costs.

Measured in the same process, interleaved, best of --repeat. The last line printed is one
JSON object.

    python bench/noc.py [--spins 1000000] [--steps 100000] [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


import numpy as np  # noqa: E402

import komorebi as km  # noqa: E402

HERE = Path(__file__).resolve().parent / "noc"
TIMEOUT = 3600.0


def _program(source: str, words, agent=None, regions=None) -> km.Program:
    (HERE / "kernels").mkdir(exist_ok=True)
    program = km.Program("noc_bench", kernels=HERE / "kernels")
    program.thread(cluster=1, sources=[HERE / source], regions=regions or {"flags": 128}, words=words)
    if agent is not None:
        program.noc_agent("tensix", agent, cluster=1)
    return program


def between_submits(program: km.Program) -> tuple[float, km.Run]:
    """Seconds between the thread's two submits, and the stopped run."""
    with km.Session() as session:
        run = session.load(program)
        run.thread_result(timeout=TIMEOUT)
        start = time.perf_counter()
        run.thread_result(timeout=TIMEOUT)
        seconds = time.perf_counter() - start
        run.thread_result(timeout=TIMEOUT)
        run.stop()
    return seconds, run


def waiter(noc):
    return int(noc.wait("flags", 64, 1))


def spin(spins: int, with_agent: bool) -> float:
    seconds, run = between_submits(_program("spin.c", [spins], waiter if with_agent else None))
    if with_agent:
        assert run.agent("tensix").result == 1, run.agent("tensix")
    return seconds


def steps(count: int) -> float:
    """Seconds a noc call of a stand-in's, after the thread (which returns at once) ended."""
    timed = {}

    def reader(noc):
        start = time.perf_counter()
        for _ in range(count):
            noc.read("flags", 0, 4)
        timed["seconds"] = time.perf_counter() - start

    program = _program("calls.c", [0], reader)
    with km.Session() as session:
        run = session.load(program)
        while not run.thread_result(timeout=TIMEOUT).final:
            pass
        run.stop()
    assert run.agent("tensix").error is None, run.agent("tensix")
    return timed["seconds"] / count


def frame(mib: int, rounds: int, with_agent: bool) -> float:
    regions = {"frame": np.arange(mib << 18, dtype=np.uint32), "results": mib << 20, "flags": 128}
    seconds, run = between_submits(_program("frame.c", [rounds], waiter if with_agent else None, regions))
    if with_agent:
        assert run.agent("tensix").result == 1, run.agent("tensix")
    return seconds


def calls(count: int) -> float:
    seconds, _ = between_submits(_program("calls.c", [count]))
    return seconds / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spins", type=int, default=1_000_000)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--frame-mib", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2,000 spins and steps, a 1 MiB frame twice, once")
    args = parser.parse_args()
    if args.quick:
        args.spins, args.steps, args.repeat, args.frame_mib, args.rounds = 2_000, 2_000, 1, 1, 2
    best: dict[str, float] = {}
    for round_ in range(args.repeat):
        figures = {
            "spin alone s": spin(args.spins, False),
            "spin with a waiting stand-in s": spin(args.spins, True),
            "stand-in step us": steps(args.steps) * 1e6,
            "kmx call us": calls(args.steps) * 1e6,
            "frame alone s": frame(args.frame_mib, args.rounds, False),
            "frame with a waiting stand-in s": frame(args.frame_mib, args.rounds, True),
        }
        for name, value in figures.items():
            best[name] = min(best.get(name, value), value)
        print(f"round {round_ + 1}: " + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()), flush=True)
    best["stand-in's cost on the spin s"] = best["spin with a waiting stand-in s"] - best["spin alone s"]
    best["step / kmx call"] = best["stand-in step us"] / best["kmx call us"]
    best["frame with a stand-in / alone"] = best["frame with a waiting stand-in s"] / best["frame alone s"]
    words = (args.frame_mib << 18) * args.rounds  # (each a load and a store)
    best["frame ns a word, with a stand-in"] = best["frame with a waiting stand-in s"] / words * 1e9
    print(f"spins: {args.spins:,}; steps and calls: {args.steps:,}; frame: {args.frame_mib} MiB, "
          f"{args.rounds} rounds; best of {args.repeat}")
    for name, value in best.items():
        print(f"  {name}: {value:.3f}")
    print(json.dumps({"spins": args.spins, "steps": args.steps, "frame_mib": args.frame_mib, "rounds": args.rounds,
                      **{k: round(v, 4) for k, v in best.items()}}))


if __name__ == "__main__":
    main()
