"""What an instruction the engine lacks costs, and what the simulator's two ways of running
them gain over one trap an instruction (docs/simulator.md, "What the simulated X280 runs").

Two threads, each timed between two kmx_submit calls (Python timestamps their arrival):

- trap cost: a loop of N passes of one instruction and the loop's two: `sh1add x, x, y`
  (which the engine lacks) against `add x, x, y` (which it runs), each pass one trap
  when the loader's rewrites and the interpreter are off; the difference over N is what a
  trapped instruction costs beyond the engine's own instruction;
- lesson 35's loop over 64 MiB (`3 * x` is `sh1add x, x, x` for the card without its vector
  unit, `-mcpu=sifive_x280-v`; with it the loop is vector code: bench/vector.py), four ways: one
  trap an instruction (KMX_REWRITE=0 KMX_INTERPRET=0), the interpreter going on after
  each trap (KMX_REWRITE=0), the loader's stubs (the default), and the RV64GC build
  (-march=rv64gc), which needs none of them.

Best of --repeat runs, interleaved. The last line printed is one JSON object.

    python bench/isa.py [--repeat 3] [--mib 64] [--passes 20000000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import komorebi as km  # noqa: E402

LOOP = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint64_t x = kmx_word(0), y = 3, n = kmx_word(1);
    kmx_submit();
    for (uint64_t i = 0; i < n; i++) __asm__ volatile(INSN " %0, %0, %1" : "+r"(x) : "r"(y));
    kmx_submit();
    return (int)(x & 1) & core;
}
"""
STREAM = r"""
#include "kmx.h"
int kmx_main(int core) {
    (void)core;
    uint64_t bytes;
    const uint32_t *numbers = (const uint32_t *)kmx_region(0, &bytes);
    uint32_t *tripled = (uint32_t *)kmx_region(1, 0);
    kmx_submit();
    kmx_invalidate(0);
    for (uint64_t i = 0; i < bytes / 4; i++) tripled[i] = 3 * numbers[i];
    kmx_flush(1);
    kmx_submit();
    return 0;
}
"""
SCALAR_CARD = "-mcpu=sifive_x280-v"  # (the X280 without its vector unit: the loop stays scalar, sh1add and all)
WAYS = {  # name: the environment
    "one trap an instruction": {"KMX_REWRITE": "0", "KMX_INTERPRET": "0", "KMX_CFLAGS": SCALAR_CARD},
    "trap, then interpret": {"KMX_REWRITE": "0", "KMX_INTERPRET": "1", "KMX_CFLAGS": SCALAR_CARD},
    "stubs (the default)": {"KMX_REWRITE": "1", "KMX_INTERPRET": "1", "KMX_CFLAGS": SCALAR_CARD},
    "RV64GC build": {"KMX_REWRITE": "1", "KMX_INTERPRET": "1", "KMX_CFLAGS": "-march=rv64gc"},
}


def timed(program: km.Program, environment: dict[str, str]) -> float:
    """Seconds between the thread's two submissions, in ENVIRONMENT."""
    saved = {name: os.environ.get(name) for name in environment}
    os.environ.update(environment)
    try:
        with km.Session() as session:
            run = session.load(program)
            run.thread_result(timeout=600)
            start = time.perf_counter()
            run.thread_result(timeout=600)
            seconds = time.perf_counter() - start
            final = run.thread_result(timeout=600)
            run.stop()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    if not final.final or final.code != 0:
        raise SystemExit(f"the thread failed: {final}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mib", type=int, default=64, help="the stream's input (and output) size")
    parser.add_argument("--passes", type=int, default=20_000_000, help="passes of the trap-cost loop")
    parser.add_argument("--quick", action="store_true", help="a smoke run: --repeat 1, --mib 1, --passes 20000 (the tests' form)")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1
        args.mib = 1
        args.passes = 20000
    folder = Path(tempfile.mkdtemp(prefix="bench-isa-"))
    (folder / "kernels").mkdir()

    def program(name: str, text: str, **thread) -> km.Program:
        (folder / name).mkdir()
        (folder / name / "thread.c").write_text(text)
        p = km.Program(name, kernels=folder / "kernels")
        p.thread(cluster=1, sources=[folder / name / "thread.c"], **thread)
        return p

    loops = {insn: program(insn.replace(".", "_"), f'#define INSN "{insn}"\n' + LOOP, words=[1, args.passes])
             for insn in ("add", "sh1add")}
    count = args.mib * 2**20 // 4
    stream = program("stream", STREAM, regions={"numbers": np.arange(count, dtype=np.uint32), "tripled": 4 * count})
    trapping = WAYS["one trap an instruction"]
    loop_times = {insn: [] for insn in loops}
    stream_times = {way: [] for way in WAYS}
    for _ in range(args.repeat):
        for insn, p in loops.items():
            loop_times[insn].append(timed(p, trapping))
        for way, environment in WAYS.items():
            stream_times[way].append(timed(stream, environment))
    best_loop = {insn: min(t) for insn, t in loop_times.items()}
    trap_ns = (best_loop["sh1add"] - best_loop["add"]) / args.passes * 1e9
    best = {way: min(t) for way, t in stream_times.items()}
    print(f"a trapped instruction: {trap_ns:.1f} ns beyond the engine's own (loop of {args.passes:,}: "
          f"sh1add {best_loop['sh1add'] * 1e3:.1f} ms, add {best_loop['add'] * 1e3:.1f} ms)")
    print(f"lesson 35's loop over {args.mib} MiB ({count:,} elements), best of {args.repeat}:")
    base = best["one trap an instruction"]
    for way, seconds in best.items():
        print(f"  {way:<26}{seconds * 1e3:>10.1f} ms{base / seconds:>8.2f} x one trap an instruction")
    print(json.dumps({"benchmark": "isa", "trap_ns": round(trap_ns, 1), "passes": args.passes, "mib": args.mib,
                      "stream_ms": {way: round(s * 1e3, 1) for way, s in best.items()},
                      "gain_over_one_trap": {way: round(base / s, 2) for way, s in best.items()}}))


if __name__ == "__main__":
    main()
