"""What the cache's options cost: lesson 35's stream, alu, chase and matmul (bench/kernels,
the card's build) through the public API, in three sessions measured in the same process,
interleaved, best of --repeat:

- card: km.Session() (card mode, the unbounded cache): the baseline;
- strict: km.Session(coherence="strict"), where every line starts stale, so a page is
  watched an access at a time (sim/native/watch.c, the exact stale-read check) until no
  line of it is stale: the kernels write their outputs' pages whole before they flush;
- card-size: km.Session(cache="card-size"): every region page watched, every access
  through the tile's L1D, L2 and L3 (sim/native/tile.c).

Then what a read-before-invalidate costs: stream without its kmx_invalidate, in card mode,
beside stream itself (a page read before the invalidate is watched until it, so that the
finding names the lines each core read: sim/native/fill.c, read_before_invalidate).

Times are the kernel's alone, between the thread's two submits (bench/kernels/sim_driver.inc).
The last line printed is one JSON object.

    python bench/cache_modes.py [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import komorebi as km  # noqa: E402
from bench.vs_qemu import SIM_TIMED, TENSIX, TIMEOUT, Kernel, sim_program  # noqa: E402

KERNEL_STREAM_UNINVALIDATED = 9  # (bench/kernels/kernels.h)
SESSIONS = {"card": {}, "strict": {"coherence": "strict"}, "card-size": {"cache": "card-size"}}


def kernels(quick: bool) -> list[Kernel]:
    stream = (1 if quick else 16) * 2**20 // 4
    iterations = 1_000_000 if quick else 12_000_000
    chase, steps = (1 if quick else 8) * 2**20 // 4, (200_000 if quick else 2_000_000)
    n = 64 if quick else 128
    return [
        Kernel("stream", 0, stream, {"numbers": np.arange(stream, dtype=np.uint32), "tripled": 4 * stream}),
        Kernel("alu", 1, iterations, {}),
        Kernel("chase", 2, steps, {"next": 4 * chase}),
        Kernel("matmul", 3, n, {"a": 4 * n * n, "b": 4 * n * n, "c": 4 * n * n}),
    ]


def timed(program: km.Program, session: dict) -> tuple[float, int]:
    """(seconds between the two submits, the checksum)."""
    with km.Session(**session) as s:
        run = s.load(program)
        run.thread_result(timeout=TIMEOUT)
        start = time.perf_counter()
        run.thread_result(timeout=TIMEOUT)
        seconds = time.perf_counter() - start
        final = run.thread_result(timeout=TIMEOUT)
        run.stop()
    if not final.final or final.code != 0:
        raise SystemExit(f"the run failed: {final}")
    return seconds, int(final.words[0]) | int(final.words[1]) << 32


def interleaved(name: str, program: km.Program, sessions: dict[str, dict], repeat: int, timed) -> dict[str, list[float]]:
    """Each session's best (the least) of each figure TIMED(program, session) gives but the
    last, a checksum every run must agree on; REPEAT rounds, the sessions interleaved."""
    best: dict[str, list[float]] = {}
    sums = set()
    for _ in range(repeat):
        for session_name, session in sessions.items():
            *figures, checksum = timed(program, session)
            best[session_name] = [min(pair) for pair in zip(best.get(session_name, figures), figures)]
            sums.add(checksum)
    if len(sums) != 1:
        raise SystemExit(f"{name}: the sessions disagree on the checksum: {sums}")
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    TENSIX.mkdir(exist_ok=True)  # (the program's empty folder of Tensix kernels)
    figures = {}
    print(f"{'kernel':8} {'card ms':>9} {'strict ms':>10} {'strict/card':>12} {'card-size ms':>13} {'card-size/card':>15}")
    for kernel in kernels(args.quick):
        best = interleaved(kernel.name, sim_program(kernel, SIM_TIMED), SESSIONS, args.repeat, timed)
        ms = {name: 1000 * t for name, (t,) in best.items()}
        figures[kernel.name] = {**{f"{n}_ms": round(v, 1) for n, v in ms.items()},
                                "strict_ratio": round(ms["strict"] / ms["card"], 2),
                                "card_size_ratio": round(ms["card-size"] / ms["card"], 2)}
        f = figures[kernel.name]
        print(f"{kernel.name:8} {ms['card']:9.1f} {ms['strict']:10.1f} {f['strict_ratio']:12.2f} "
              f"{ms['card-size']:13.1f} {f['card_size_ratio']:15.2f}")
    stream = kernels(args.quick)[0]
    missing = Kernel("stream", KERNEL_STREAM_UNINVALIDATED, stream.size, stream.regions)
    best = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", km.CoherenceWarning)  # (the finding is the point)
        for _ in range(args.repeat):
            for name, kernel in (("stream", stream), ("without the invalidate", missing)):
                seconds, _ = timed(sim_program(kernel, SIM_TIMED), SESSIONS["card"])
                best[name] = min(best.get(name, seconds), seconds)
    ratio = best["without the invalidate"] / best["stream"]
    print(f"stream, card mode: {1000 * best['stream']:.1f} ms; without its kmx_invalidate (a read-before-invalidate, "
          f"its pages watched): {1000 * best['without the invalidate']:.1f} ms, {ratio:.2f}x")
    figures["stream_without_invalidate"] = {"card_ms": round(1000 * best["stream"], 1),
                                            "without_ms": round(1000 * best["without the invalidate"], 1),
                                            "ratio": round(ratio, 2)}
    print(json.dumps({"benchmark": "cache_modes", "repeat": args.repeat, "quick": args.quick, "kernels": figures}))


if __name__ == "__main__":
    main()
