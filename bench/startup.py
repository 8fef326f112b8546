"""Startup: how long `python program.py` of lesson 35 takes with the build cache warm,
and where the time goes.

The lesson's program (tutorial/35_sharing_memory/program.py) runs once to warm the build
cache (and to check its output), then --repeat times more, each in a fresh interpreter,
timed from outside: the whole `python program.py`, best and median. Issue 6 asks for
under 0.5 s.

The breakdown runs the same steps as program.py in a fresh interpreter (this script with
--child), timing each: import numpy, import komorebi, the program (km.Program and
program.thread), session.load split into the build (komorebi.sim.build.thread.build_thread: a cache
hit), reading the ELF (sim.image.elf.load_image) and the rest of it (placing the regions,
the engines, starting the thread), run (until the final result), run.stop() and read.
Around them: the interpreter's start (from the parent's spawn to the child's first line)
and its exit (from the child's last line to the parent seeing it end), both on
time.monotonic, which on Linux is CLOCK_MONOTONIC, the same clock in every process; and
this script's own imports, which program.py does not have. Best and median of --repeat
children, interleaved with the whole runs. Then the packages that take longest to import
(python -X importtime, cumulative; indented by how deep each import is nested).

All of it twice: with Python's bytecode cache, as a user has it (the .pyc files go to a
temporary PYTHONPYCACHEPREFIX, warmed by the first run, so the tree stays clean), and
without (PYTHONDONTWRITEBYTECODE=1, as some sandboxes and CI set it: every module of
komorebi and sim is compiled again at each start). The target is judged on the first.
The last line printed is one JSON object.

    python bench/startup.py [--repeat 7]
"""

from __future__ import annotations

import time

STARTED = time.monotonic()  # before this script's own imports

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LESSON = ROOT / "tutorial" / "35_sharing_memory"
EXPECTED = """the thread went through 1024 numbers
first five tripled: [0, 3, 6, 9, 12]
last five tripled: [3057, 3060, 3063, 3066, 3069]
"""
TARGET = 0.5  # seconds
PHASES = ["interpreter start", "import numpy", "import komorebi", "program", "build (cache hit)",
          "read ELF", "place and start", "run", "stop", "read", "interpreter exit"]
OWN_IMPORTS = "(bench's own imports)"  # measured, not one of program.py's phases


def child() -> None:
    """program.py's steps, each timed; prints them as JSON, with the clock's readings at
    this script's start and at the end."""
    clock = time.monotonic
    times: dict[str, float] = {OWN_IMPORTS: clock() - STARTED}
    start = clock()
    import numpy as np

    times["import numpy"] = clock() - start
    start = clock()
    import komorebi as km

    times["import komorebi"] = clock() - start
    from komorebi import _simulator

    def timed(name, function):
        def wrapper(*args, **kwargs):
            begun = clock()
            try:
                return function(*args, **kwargs)
            finally:
                times[name] = times.get(name, 0.0) + clock() - begun
        return wrapper

    _simulator.build_thread = timed("build (cache hit)", _simulator.build_thread)
    _simulator.load_image = timed("read ELF", _simulator.load_image)

    start = clock()
    numbers = np.arange(1024, dtype=np.uint32)
    program = km.Program("sharing_memory", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[LESSON / "thread" / "triple.c"],
                   regions={"numbers": numbers, "tripled": 4096})
    times["program"] = clock() - start
    with km.Session() as session:
        start = clock()
        run = session.load(program)
        times["place and start"] = clock() - start - times["build (cache hit)"] - times["read ELF"]
        start = clock()
        result = run.thread_result(timeout=10.0)
        times["run"] = clock() - start
        start = clock()
        run.stop()
        times["stop"] = clock() - start
        start = clock()
        tripled = run.thread.read("tripled").view(np.uint32)
        times["read"] = clock() - start
    assert result.code == 0 and (tripled == 3 * numbers).all()
    print(json.dumps({"phases": times, "started": STARTED, "ended": clock()}))


def environment(pycache: str | None) -> dict[str, str]:
    """The children's environment: bytecode cached in PYCACHE, or not cached (None)."""
    env = dict(os.environ)
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    return env


def spawn(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Run ARGV in a fresh interpreter: the clock when it was spawned, when it had ended,
    and what it printed."""
    spawned = time.monotonic()
    done = subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True)
    ended = time.monotonic()
    if done.returncode != 0:
        raise SystemExit(f"python {' '.join(argv)} failed:\n{done.stderr}")
    return spawned, ended, done.stdout


def breakdown(env: dict[str, str]) -> dict[str, float]:
    """One child's phases, in seconds."""
    spawned, ended, printed = spawn([__file__, "--child"], ROOT, env)
    report = json.loads(printed)
    return {
        "interpreter start": report["started"] - spawned,
        **report["phases"],
        "interpreter exit": ended - report["ended"],
    }


def summary(values: list[float]) -> dict[str, float]:
    return {"best": min(values), "median": statistics.median(values)}


def measure(env: dict[str, str], repeat: int) -> tuple[dict, dict]:
    """(the wall time of program.py, the phases), each best and median."""
    *_, printed = spawn(["program.py"], LESSON, env)  # warms the build cache (and the .pyc)
    if printed != EXPECTED:
        raise SystemExit(f"program.py printed something else:\n{printed}")
    walls, phases = [], {}
    for _ in range(repeat):  # interleaved
        spawned, ended, _ = spawn(["program.py"], LESSON, env)
        walls.append(ended - spawned)
        for name, seconds in breakdown(env).items():
            phases.setdefault(name, []).append(seconds)
    return summary(walls), {name: summary(values) for name, values in phases.items()}


def slowest_imports(env: dict[str, str], count: int = 10) -> list[tuple[str, float]]:
    """The COUNT packages and plain modules (names without a dot) that took longest to
    import, with what they imported first, under `import numpy, komorebi`: (name,
    seconds), the name indented as python -X importtime nests it."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import numpy, komorebi"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    found = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split(":", 1)[1].split("|")
        if "." not in name and name.strip() != "site":
            found.append((name.rstrip()[1:], int(cumulative) / 1e6))
    return sorted(found, key=lambda item: -item[1])[:count]


def milliseconds(s: dict[str, float]) -> dict[str, float]:
    return {k: round(v * 1e3, 1) for k, v in s.items()}


def print_phases(results: dict[str, tuple[dict, dict]]) -> None:
    names = list(results)
    print(f"{'phase (ms)':<22}" + "".join(f"{name + ', best':>26}{'median':>8}" for name in names))
    for phase in [*PHASES, OWN_IMPORTS]:
        print(f"{phase:<22}" + "".join(
            f"{results[n][1][phase]['best'] * 1e3:>26.1f}{results[n][1][phase]['median'] * 1e3:>8.1f}" for n in names))
    print(f"{'sum (without own)':<22}" + "".join(
        f"{sum(results[n][1][p]['best'] for p in PHASES) * 1e3:>26.1f}"
        f"{sum(results[n][1][p]['median'] for p in PHASES) * 1e3:>8.1f}" for n in names))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="fresh interpreters of each kind (default 7)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="a smoke run: --repeat 1 (the tests' form)")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1
    if args.child:
        child()
        return

    with tempfile.TemporaryDirectory(prefix="startup-pycache-") as pycache:
        setups = {"bytecode cached": environment(pycache), "no bytecode cache": environment(None)}
        results = {name: measure(env, args.repeat) for name, env in setups.items()}
        imports = slowest_imports(setups["bytecode cached"])

    print(f"python program.py (lesson 35, build cache warm), {args.repeat} fresh interpreters each:")
    for name, (total, _) in results.items():
        print(f"  {name + ':':<19} best {total['best'] * 1e3:4.0f} ms, median {total['median'] * 1e3:4.0f} ms")
    met = results["bytecode cached"][0]["median"] < TARGET
    print(f"  target: under {TARGET * 1e3:.0f} ms with bytecode cached (median): {'met' if met else 'missed'}")
    print()
    print_phases(results)
    print()
    print("slowest imports under `import numpy, komorebi` (cumulative, bytecode cached):")
    for module, seconds in imports:
        print(f"  {seconds * 1e3:7.1f} ms  {module}")
    print(json.dumps({
        "benchmark": "startup", "repeat": args.repeat, "target_ms": TARGET * 1e3, "met": met,
        **{name.replace(" ", "_"): {"wall_ms": milliseconds(total),
                                    "phases_ms": {p: milliseconds(s) for p, s in phases.items()}}
           for name, (total, phases) in results.items()},
    }))


if __name__ == "__main__":
    main()
