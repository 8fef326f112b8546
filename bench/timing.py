"""The timing model against the chip (docs/timing.md, "Calibration"): each figure the X280
was measured at, beside the model's, and their ratio.

- tt-metal tools/l2cpu/README.md (P300, tile 0, 1750 MHz): one hart reads a 303,872-byte
  buffer with a copy loop, vle64/vse64 at LMUL 1 or 8-byte scalar loads; through the
  cached alias from the L3 or from DRAM, or through the uncached alias from 1 to 4 harts at
  once. Here the same loops (bench/timing/copy.c), timed by kmx_cycles over the pass.
- The U74's scalar figures (the X280's scalar pipeline is the U74's): an L1D load-to-load
  of 3 cycles (a pointer chase), and CoreMark/MHz (3.36 for -march=rv64gc, 3.66 with Zba
  and Zbb; sbc-bench on a JH7110), when CoreMark's sources are given (bench/coremark/).

The NoC-window rows of the table (another bank's DRAM) are left out: a komorebi thread
reaches its own bank only. The timing mode's own speed, against the default mode's: --speed
(a scalar loop) and --vector (bench/vector.py's kernels).

    python bench/timing.py [--coremark DIR] [--speed] [--vector] [--set NAME=VALUE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import komorebi as km  # noqa: E402

HERE = Path(__file__).resolve().parent / "timing"
TENSIX = Path(__file__).resolve().parent / "kernels" / "tensix"  # (the program's empty folder of Tensix kernels)
BYTES = 303_872
CLOCK_MHZ = 1750
PATHS = {"L3 vector": 0, "L3 scalar": 1, "DRAM vector": 2, "uncached vector": 3, "chase": 4}

# (what, path, harts, the chip's figure, its unit): tt-metal tools/l2cpu/README.md and the U74's
CHIP = [
    ("cached alias, L3 hit, vector (ms)", "L3 vector", 1, 0.011),
    ("cached alias, L3 hit, scalar 8 B loads (ms)", "L3 scalar", 1, 0.101),
    ("cached alias, not in L3, vector (ms)", "DRAM vector", 1, 0.284),
    ("uncached alias, vector, 1 hart (ms)", "uncached vector", 1, 0.059),
    ("uncached alias, vector, 2 harts at once (ms each)", "uncached vector", 2, 0.069),
    ("uncached alias, vector, 3 harts at once (ms each; chip 1.1 to 1.7)", "uncached vector", 3, 1.4),
    ("uncached alias, vector, 4 harts at once (ms each; chip 1.1 to 1.7)", "uncached vector", 4, 1.4),
]


def tensix() -> Path:
    """The programs' (empty) folder of Tensix kernels, made if a fresh clone lacks it."""
    TENSIX.mkdir(exist_ok=True)
    return TENSIX


def copy_run(path: str, harts: int, parameters: dict | None = None, timing: str | None = "x280",
             quantum: int = 2000) -> tuple[list[int], float]:
    """The copy kernel's cycles for each copying hart, and the run's wall time (s)."""
    p = km.Program("timing", kernels=tensix())
    n = BYTES * 4
    p.thread(cluster=1, sources=[HERE / "copy.c"], cores=4, words=[PATHS[path], harts, BYTES if path != "chase" else 400_000],
             regions={"from": np.arange(n // 8, dtype=np.uint64), "to": n})
    with km.Session(timing=timing, clock_mhz=CLOCK_MHZ if timing else None, quantum=quantum) as session:
        session.timing_parameters.update(parameters or {})
        start = time.perf_counter()
        run = session.load(p)
        result = run.thread_result(timeout=600)
        wall = time.perf_counter() - start
        run.stop()
    words = [int(w) for w in result.words]
    count = 1 if path == "chase" else harts
    return [words[2 * i] | words[2 * i + 1] << 32 for i in range(count)], wall


def calibration(parameters: dict | None = None) -> list[dict]:
    rows = []
    for what, path, harts, chip in CHIP:
        cycles, _ = copy_run(path, harts, parameters)
        model = max(cycles) / (CLOCK_MHZ * 1e3)  # ms
        rows.append({"what": what, "chip": chip, "model": model, "ratio": model / chip})
    cycles, _ = copy_run("chase", 1, parameters)
    rows.append({"what": "L1D pointer chase (cycles a load; U74: 3)", "chip": 3.0, "model": cycles[0] / 400_000,
                 "ratio": cycles[0] / 400_000 / 3.0})
    return rows


def speed(iterations: int = 10_000_000, repeat: int = 3) -> dict:
    """Simulated instructions a second, the default mode against the timing mode, on a
    scalar loop (bench/timing/alu.c), best of REPEAT, the same process, interleaved."""
    best: dict[str, float] = {}
    instructions = 0
    for _ in range(repeat):
        for timing in (None, "x280"):
            p = km.Program("speed", kernels=tensix())
            p.thread(cluster=1, sources=[HERE / "alu.c"], words=[iterations, 0])
            with km.Session(timing=timing) as session:
                start = time.perf_counter()
                run = session.load(p)
                result = run.thread_result(timeout=600)
                wall = time.perf_counter() - start
                run.stop()
            if timing is None:  # (there kmx_cycles counts instructions: the timed loop's)
                instructions = int(result.words[1])
            best[str(timing)] = min(best.get(str(timing), wall), wall)
    return {"instructions": instructions, "default s": best["None"], "timing s": best["x280"],
            "default MIPS": instructions / best["None"] / 1e6, "timing MIPS": instructions / best["x280"] / 1e6,
            "timing / default time": best["x280"] / best["None"]}


def coremark_rows(source: str, iterations: int = 300) -> list[dict]:
    """CoreMark/MHz in the timing mode, the card's build (Zba, Zbb) and an RV64GC one,
    against the U74's (sbc-bench, gcc 12.2 -O2 on a JH7110: 3.66 and 3.36)."""
    from bench.coremark.run import coremark

    rows = []
    for what, flags, chip in (("CoreMark/MHz, the card's build (U74 with Zba, Zbb: 3.66)", None, 3.66),
                              ("CoreMark/MHz, -march=rv64gc (U74: 3.36)", "-march=rv64gc", 3.36)):
        before = os.environ.get("KMX_CFLAGS")
        try:
            if flags:
                os.environ["KMX_CFLAGS"] = flags
            figures = coremark(source, iterations, {"timing": "x280", "clock_mhz": CLOCK_MHZ})
        finally:
            if before is None:
                os.environ.pop("KMX_CFLAGS", None)
            else:
                os.environ["KMX_CFLAGS"] = before
        if not figures["valid"]:
            raise RuntimeError(f"CoreMark's CRCs were wrong ({what}): {figures}")
        model = figures["coremark_per_mhz"]
        rows.append({"what": what, "chip": chip, "model": model, "ratio": model / chip})
    return rows


def vector_speed(names=("stream", "saxpy", "dot", "matmul", "bytecopy"), repeat: int = 2) -> dict:
    """bench/vector.py's kernels (the card's build, full size), timed between the thread's
    two submits as vector.py times them: the default mode against the timing mode, best of
    REPEAT, interleaved in one process. The target: the timing mode at least 1/4 of the
    default's speed (a time ratio of at most 4; moonshot 2)."""
    from bench import vector, vs_qemu

    kernels = {k.name: k for k in vector.kernels(False)}

    def timed(program, timing):
        with km.Session(timing=timing) as session:
            run = session.load(program)
            run.thread_result(timeout=600)  # the kernel begins
            start = time.perf_counter()
            run.thread_result(timeout=600)  # it is done
            seconds = time.perf_counter() - start
            run.thread_result(timeout=600)
            run.stop()
        return seconds

    out = {}
    for name in names:
        program = vs_qemu.sim_program(kernels[name], vs_qemu.SIM_TIMED)
        best = {"default": float("inf"), "timing": float("inf")}
        for _ in range(repeat):
            for mode, timing in (("default", None), ("timing", "x280")):
                best[mode] = min(best[mode], timed(program, timing))
        out[name] = {"default ms": round(best["default"] * 1000, 1), "timing ms": round(best["timing"] * 1000, 1),
                     "timing / default": round(best["timing"] / best["default"], 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--coremark", default=os.environ.get("KMX_COREMARK"),
                        help="CoreMark's sources (github.com/eembc/coremark), for CoreMark/MHz")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="change a parameter of the model's table (sim/timing/x280.py)")
    parser.add_argument("--speed", action="store_true", help="the timing mode's speed against the default mode's")
    parser.add_argument("--vector", action="store_true",
                        help="the same on bench/vector.py's kernels (the card's build)")
    args = parser.parse_args()
    if args.speed:
        print(json.dumps(speed()))
        return
    if args.vector:
        print(json.dumps(vector_speed()))
        return
    parameters = {k: int(v) for k, v in (item.split("=", 1) for item in args.set)}
    rows = calibration(parameters)
    if args.coremark:
        rows += coremark_rows(args.coremark)
    print(f"{'figure':<72} {'chip':>9} {'model':>9} {'model/chip':>10}")
    for row in rows:
        print(f"{row['what']:<72} {row['chip']:>9.3f} {row['model']:>9.3f} {row['ratio']:>10.2f}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
