"""Finding known races with km.explore: schedules until the first failure, and speed.

Seven known bugs (bench/races/*.c): a lost update, a missing barrier before reading other
cores' results, message passing through a flag without an atomic or a fence, a broken
ticket lock, double-checked initialisation, a race through DRAM bank D7 between the
threads of clusters 2 and 3, and a frame from the Tensix side (a stand-in,
program.noc_agent) read without an invalidate after its flag. For each, under "random" (turns of 1 to 2 x 2,000 - 1
instructions drawn log-uniformly, Session's default quantum; --quantum) and "pct" (depth
3): how many schedules ran up to and with the first that failed, the median over --seeds
exploration seeds (a search that found nothing in --schedules counts as --schedules + 1,
shown as ">N"). Then how many of the seeds of the pytest plugin's `--km-seeds=N`
(--km-seeds, 10) fail: the bug as a test of a project's own, run by pytest in another
process with the plugin's km_session, whose runs then take schedule_seed 0 to N-1 at
Session's default quantum, whatever --quantum says (and whether the test fails with no
seed: the default turns). Then schedules a second on 1
and on 2 local worker processes (--workers), PCT, every schedule run (no stop at the
first failure), shrinking off.

    python bench/races.py [--seeds 10] [--schedules 200] [--km-seeds 10] [--rate-schedules 200] [--bug TEXT]

The last line printed is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import komorebi as km  # noqa: E402
from komorebi._limits import DEFAULT_QUANTUM  # noqa: E402

HERE = Path(__file__).resolve().parent / "races"
KERNELS = HERE / "kernels"
INCREMENTS = 100  # each core's, for the lost update and the ticket lock
D7_INCREMENTS = 50


def _program(name: str, cluster: int = 1, cores: int = 2, words=(), regions=None) -> km.Program:
    KERNELS.mkdir(exist_ok=True)
    program = km.Program(name, kernels=KERNELS)
    program.thread(cluster=cluster, sources=[HERE / f"{name}.c"], words=list(words), cores=cores,
                   regions=regions or {})
    return program


def _final(run, cluster: int | None = None):
    thread = run.thread if cluster is None else run.threads[cluster]
    return thread.results[-1].words


def lost_update() -> km.Program:
    return _program("lost_update", words=[INCREMENTS])


def lost_update_check(run) -> None:
    total = int(_final(run)[0])
    assert total == 2 * INCREMENTS, f"the counter is {total}, not {2 * INCREMENTS}: updates were lost"


def missing_barrier() -> km.Program:
    return _program("missing_barrier", cores=4, words=[0, 4])


def missing_barrier_check(run) -> None:
    total = int(_final(run)[0])
    assert total == 256 * 257 // 2, f"the last core summed {total}, not {256 * 257 // 2}: it read before the others wrote"


def flag_message() -> km.Program:
    return _program("flag_message")


def flag_message_check(run) -> None:
    total = int(_final(run)[0])
    assert total == 32 * 33 // 2, f"the reader saw a message summing to {total}, not {32 * 33 // 2}: it read it half-written"


def ticket_lock() -> km.Program:
    return _program("ticket_lock", words=[INCREMENTS // 5])


def ticket_lock_check(run) -> None:
    total, twice, gave_up = (int(w) for w in _final(run)[:3])
    assert twice == 0, f"{twice} tickets were drawn by both cores: both held the lock"
    assert total == 2 * (INCREMENTS // 5), f"the counter is {total}, not {2 * (INCREMENTS // 5)}: two cores held the lock"
    assert gave_up == 0, f"a core gave up waiting for its ticket {gave_up} times"


def double_checked() -> km.Program:
    return _program("double_checked", cores=4)


def double_checked_check(run) -> None:
    words = _final(run)
    builds, sums = int(words[0]), [int(w) for w in words[1:5]]
    assert builds == 1, f"the table was built {builds} times"
    assert sums == [64 * 64] * 4, f"the cores summed {sums}: one read a half-built table"


_d7_address: int | None = None


def d7_counter_address() -> int:
    """Where cluster 2's region 0 lands (the layout is fixed): a first run asks."""
    global _d7_address
    if _d7_address is None:
        program = _program("d7_race", cluster=2, cores=1, words=[0], regions={"counter": np.zeros(16, np.uint32)})
        with km.Session() as session:
            run = session.load(program)
            words = run.thread_result(timeout=60).words
            run.stop()
        _d7_address = int(words[0]) | int(words[1]) << 32
    return _d7_address


def d7_race() -> km.Program:
    at = d7_counter_address()
    program = _program("d7_race", cluster=2, cores=1, words=[D7_INCREMENTS],
                       regions={"counter": np.zeros(16, np.uint32)})
    program.thread(cluster=3, sources=[HERE / "d7_race.c"], cores=1, words=[D7_INCREMENTS, at & 0xFFFF_FFFF, at >> 32],
                   regions={"unused": 64})
    return program


def d7_race_check(run) -> None:
    total = int(run.threads[2].read("counter").view(np.uint32)[0])
    assert total == 2 * D7_INCREMENTS, f"the counter in bank D7 is {total}, not {2 * D7_INCREMENTS}"


FRAME_WORDS = 64


def _tensix_frame(noc) -> None:
    """The Tensix side of stale_frame.c: a frame of 1 to 64 into DRAM, then its flag."""
    noc.write("frame", 0, np.arange(1, FRAME_WORDS + 1, dtype=np.uint32))
    noc.write("flags", 0, np.uint32([1]))


def stale_frame() -> km.Program:
    program = _program("stale_frame", cores=1, regions={"frame": 4 * FRAME_WORDS, "flags": 64})
    program.noc_agent("tensix", _tensix_frame, cluster=1)
    return program


def stale_frame_check(run) -> None:
    total = int(_final(run)[0])
    expected = FRAME_WORDS * (FRAME_WORDS + 1) // 2
    assert total == expected, f"the thread summed {total}, not {expected}: it read the frame's old lines from the cache"


@dataclass(frozen=True)
class Bug:
    name: str
    make: Callable[[], km.Program]
    check: Callable


BUGS = [
    Bug("lost update", lost_update, lost_update_check),
    Bug("missing barrier", missing_barrier, missing_barrier_check),
    Bug("flag without a fence", flag_message, flag_message_check),
    Bug("broken ticket lock", ticket_lock, ticket_lock_check),
    Bug("double-checked init", double_checked, double_checked_check),
    Bug("D7 race, clusters 2 and 3", d7_race, d7_race_check),
    Bug("frame read without an invalidate", stale_frame, stale_frame_check),
]


def until_first(bug: Bug, strategy: str, seed: int, schedules: int, quantum: int) -> int:
    """Schedules run up to and with the first failure; SCHEDULES + 1 when none failed."""
    report = km.explore(bug.make, bug.check, schedules=schedules, strategy=strategy, seed=seed, workers=1,
                        stop_at_first=True, shrink=False, quantum=quantum)
    return report.first_failure or schedules + 1


# A project's test of each bug, as docs/your-project.md writes one: km_session loads it.
_TEST = """
import pytest
import bench.races as races

BUGS = [b for b in races.BUGS if b.name in {names!r}]


@pytest.mark.parametrize("bug", BUGS, ids=[b.make.__name__ for b in BUGS])
def test_bug(km_session, bug):
    run = km_session.load(bug.make())
    for thread in run.threads.values():
        while not thread.result(timeout=120).final:
            pass
    run.stop()
    bug.check(run)
"""


def km_seeds_failing(bugs: list[Bug], seeds: int) -> dict[str, list[int]]:
    """For each bug, the seeds of `pytest --km-seeds=SEEDS` whose test failed (SEEDS 0:
    [0] when the test fails under the default turns, else [])."""
    with tempfile.TemporaryDirectory() as folder:
        test = Path(folder) / "test_races.py"
        test.write_text(_TEST.format(names=[b.name for b in bugs]))
        report = Path(folder) / "report.xml"
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore::komorebi.CoherenceWarning",
             f"--km-seeds={seeds}", f"--junitxml={report}", "--rootdir", folder, str(test)],
            cwd=folder, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if not report.exists():
            raise RuntimeError(f"pytest did not run the tests:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        failing: dict[str, list[int]] = {b.make.__name__: [] for b in bugs}
        for case in ElementTree.parse(report).iter("testcase"):
            name = case.get("name", "")
            if case.find("error") is not None or case.find("skipped") is not None:
                raise RuntimeError(f"{name} did not run: {ElementTree.tostring(case, encoding='unicode')[:2000]}")
            if case.find("failure") is None:
                continue
            ids = name[name.index("[") + 1:-1].split("-")  # test_bug[km-seed-3-lost_update]
            seed = int(ids[ids.index("seed") + 1]) if "seed" in ids else 0
            failing[next(b for b in failing if b in ids)].append(seed)
        return {b.name: sorted(failing[b.make.__name__]) for b in bugs}


def rate(bug: Bug, workers: int, schedules: int) -> float:
    report = km.explore(bug.make, bug.check, schedules=schedules, workers=workers, shrink=False)
    return report.schedules / report.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--schedules", type=int, default=200)
    parser.add_argument("--rate-schedules", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--bugs", type=int, default=len(BUGS), help="the first N bugs only")
    parser.add_argument("--bug", default=None, help="only the bugs whose name holds this text")
    parser.add_argument("--quantum", type=int, default=DEFAULT_QUANTUM, help="the random strategy's turn scale")
    parser.add_argument("--km-seeds", type=int, default=10,
                        help="the pytest plugin's --km-seeds=N (at Session's default quantum: a user's tests)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: --seeds 1, --schedules 20, --km-seeds 2, --rate-schedules 10, --bugs 2 (the tests' form)")
    args = parser.parse_args()
    if args.quick:
        args.seeds = 1
        args.schedules = 20
        args.km_seeds = 2
        args.rate_schedules = 10
        args.bugs = 2
    figures: dict[str, dict] = {}
    bugs = [bug for bug in BUGS[: args.bugs] if args.bug is None or args.bug in bug.name]
    by_seed = km_seeds_failing(bugs, args.km_seeds)
    unseeded = km_seeds_failing(bugs, 0)
    print(f"{'bug':28} {'random':>8} {'pct':>8} {f'km-seeds={args.km_seeds}':>11} {'default':>8} {'sched/s 1':>10} "
          f"{f'sched/s {args.workers}':>10}")
    for bug in bugs:
        row: dict = {"km_seeds_failing": by_seed[bug.name], "default_turns_fail": bool(unseeded[bug.name])}
        for strategy in ("random", "pct"):
            counts = [until_first(bug, strategy, seed, args.schedules, args.quantum) for seed in range(args.seeds)]
            row[strategy] = statistics.median(counts)
            row[f"{strategy}_all"] = counts
        row["per_second_1"] = round(rate(bug, 1, args.rate_schedules), 1)
        row[f"per_second_{args.workers}"] = round(rate(bug, args.workers, args.rate_schedules), 1)
        figures[bug.name] = row

        def shown(value: float) -> str:
            return f">{args.schedules}" if value > args.schedules else f"{value:g}"
        seeded = f"{len(row['km_seeds_failing'])} of {args.km_seeds}"
        print(f"{bug.name:28} {shown(row['random']):>8} {shown(row['pct']):>8} {seeded:>11} "
              f"{'fails' if row['default_turns_fail'] else 'passes':>8} {row['per_second_1']:10.1f} "
              f"{row[f'per_second_{args.workers}']:10.1f}")
    print(json.dumps(figures))


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
