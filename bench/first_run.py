"""A new user's first run: install from the checkout into a fresh venv, then lesson 35 with
an empty HOME, an empty build cache and an empty zig cache, then a new thread from each of
five working folders; and the wheel's size.

    python bench/first_run.py            # the whole thing (about 3 minutes on 2 cores)
    python bench/first_run.py --quick    # this interpreter's komorebi, no venv, no wheel

Targets (issue 27): lesson 35 in at most 20 s from its start to its last line, each new
thread in at most 2 s, the wheel under 60 MB. Also reported: whether zig built a C library
(it must not: the package brings it), and `import komorebi`'s own time (-X importtime).
The last line is a JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "tutorial" / "35_sharing_memory"
NEW_THREAD = """
import sys, time
from pathlib import Path
from komorebi.sim.build import thread
source = Path(sys.argv[1])
source.write_text('#include "kmx.h"\\nint kmx_main(int core) { return %d; }\\n' % int(sys.argv[2]))
started = time.perf_counter()
thread.build_thread([source])
print(time.perf_counter() - started)
"""


def timed(argv: list[str], **kwargs) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, argv))} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return seconds, done


def fresh_environment(work: Path) -> dict[str, str]:
    home = work / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("KMX_CACHE_DIR", "ZIG_GLOBAL_CACHE_DIR", "XDG_CACHE_HOME",
                                                             "KMX_PROGRESS", "PYTHONPATH")}
    return {**env, "HOME": str(home)}


def import_ms(python: str, env: dict[str, str]) -> float:
    """`import komorebi`'s cumulative time, the median of 7 (-X importtime, microseconds)."""
    times = []
    for _ in range(7):
        done = subprocess.run([python, "-X", "importtime", "-c", "import komorebi"], capture_output=True, text=True,
                              env=env, cwd="/")
        times.append(int(done.stderr.strip().splitlines()[-1].split("|")[1]) / 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="this interpreter's komorebi: no venv, no wheel")
    options = parser.parse_args()
    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="kmx-first-run-") as scratch:
        work = Path(scratch)
        env = fresh_environment(work)
        python = sys.executable
        if not options.quick:
            venv = work / "venv"
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            python = str(venv / "bin" / "python")
            seconds, _ = timed([python, "-m", "pip", "install", "--quiet", str(ROOT)], env=env)
            figures["install_s"] = round(seconds, 1)
            seconds, _ = timed([python, "-m", "pip", "wheel", "--quiet", "--no-deps", str(ROOT), "-w", str(work / "dist")],
                               env=env)
            wheel = next((work / "dist").glob("*.whl"))
            figures["wheel_mb"] = round(wheel.stat().st_size / 1e6, 1)
        folder = work / "lesson"
        shutil.copytree(LESSON, folder)
        seconds, done = timed([python, "program.py"], cwd=folder, env=env)
        figures["lesson35_cold_s"] = round(seconds, 1)
        figures["lesson35_said"] = [line for line in done.stderr.splitlines() if line.startswith("komorebi-sim:")]
        seconds, _ = timed([python, "program.py"], cwd=folder, env=env)
        figures["lesson35_warm_s"] = round(seconds, 1)
        sources = work / "sources"
        sources.mkdir()
        beside = work / "beside"
        beside.mkdir()
        script = work / "new_thread.py"  # (a script's folder is on sys.path, not the working folder's)
        script.write_text(NEW_THREAD)
        news = {}
        for n, where in enumerate(["/", "/tmp", str(ROOT), str(LESSON), str(beside)]):
            _, done = timed([python, str(script), str(sources / f"new{n}.c"), str(n)], cwd=where, env=env)
            news[where] = round(float(done.stdout.strip()), 2)
        figures["new_thread_s"] = news
        zig = Path(env["HOME"]) / ".cache" / "zig"
        figures["zig_built_a_c_library"] = any(p.name == "libc.a" for p in zig.rglob("*")) if zig.exists() else False
        figures["import_komorebi_ms"] = round(import_ms(python, env), 1)
    print(f"{'what':<28} figure")
    for name, value in figures.items():
        print(f"{name:<28} {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
