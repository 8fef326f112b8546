"""What watching a run costs: lesson 35's stream, alu, chase and matmul (bench/kernels, the
card's build, the kernels of bench/vs_qemu.py at bench/cache_modes.py's sizes) through the
public API, in sessions measured in the same process, interleaved, best of --repeat:

- off: km.Session(), the baseline;
- profile: km.Session(profile=True): every block counted, the call tree followed
  (sim/native/profile.c);
- trace: km.Session(trace=PATH): the turns, calls and waits on a timeline (sim/observe/timeline.py),
  the file written when the run stops.

Times are the kernel's alone, between the thread's two submits (bench/kernels/sim_driver.inc);
the profile's counting up after the run (sim/observe/profile.py) is timed on its own, as `count ms`.
The last line printed is one JSON object.

    python bench/observing.py [--repeat 3] [--quick]
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
from bench.cache_modes import interleaved, kernels  # noqa: E402
from bench.vs_qemu import SIM_TIMED, TENSIX, TIMEOUT, sim_program  # noqa: E402

TRACE = Path(tempfile.gettempdir()) / "komorebi-bench-trace.json"
SESSIONS = {"off": {}, "profile": {"profile": True}, "trace": {"trace": TRACE}}


def timed(program: km.Program, session: dict) -> tuple[float, float, int]:
    """(seconds between the two submits, seconds of run.stop() and run.profile(), the checksum)."""
    with km.Session(**session) as s:
        run = s.load(program)
        run.thread_result(timeout=TIMEOUT)
        start = time.perf_counter()
        run.thread_result(timeout=TIMEOUT)
        seconds = time.perf_counter() - start
        final = run.thread_result(timeout=TIMEOUT)
        start = time.perf_counter()
        run.stop()
        if session.get("profile"):
            run.profile()
        after = time.perf_counter() - start
    if not final.final or final.code != 0:
        raise SystemExit(f"the run failed: {final}")
    return seconds, after, int(final.words[0]) | int(final.words[1]) << 32


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    TENSIX.mkdir(exist_ok=True)  # (the program's empty folder of Tensix kernels)
    figures = {}
    print(f"{'kernel':8} {'off ms':>9} {'profile ms':>11} {'profile/off':>12} {'count ms':>9} {'trace ms':>9} {'trace/off':>10}")
    for kernel in kernels(args.quick):
        best = interleaved(kernel.name, sim_program(kernel, SIM_TIMED), SESSIONS, args.repeat, timed)
        ms = {name: 1000 * t for name, (t, _) in best.items()}
        figures[kernel.name] = {**{f"{n}_ms": round(v, 1) for n, v in ms.items()},
                                "profile_ratio": round(ms["profile"] / ms["off"], 2),
                                "count_ms": round(1000 * (best["profile"][1] - best["off"][1]), 1),
                                "trace_ratio": round(ms["trace"] / ms["off"], 2)}
        f = figures[kernel.name]
        print(f"{kernel.name:8} {ms['off']:9.1f} {ms['profile']:11.1f} {f['profile_ratio']:12.2f} {f['count_ms']:9.1f} "
              f"{ms['trace']:9.1f} {f['trace_ratio']:10.2f}")
    print(json.dumps({"benchmark": "observing", "repeat": args.repeat, "quick": args.quick, "kernels": figures}))


if __name__ == "__main__":
    main()
