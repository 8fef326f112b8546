"""Finding a race: km.explore runs a racy thread under many schedules, finds one that
loses entries of a shared log, shrinks it and replays it; the fixed thread passes all."""
from pathlib import Path

import numpy as np

import komorebi as km

HERE = Path(__file__).resolve().parent


def racy():
    program = km.Program("finding_a_race", kernels=HERE / "kernels")
    program.thread(cluster=1, sources=[HERE / "thread" / "append.c"], regions={"log": 4 * 64}, cores=2)
    return program


def fixed():
    program = km.Program("finding_a_race", kernels=HERE / "kernels")
    program.thread(cluster=1, sources=[HERE / "thread" / "append_fixed.c"], regions={"log": 4 * 64}, cores=2)
    return program


def check(run):
    length = int(run.thread.results[-1].words[0])
    log = run.thread.read("log").view(np.uint32)[:length]
    kept = len(set(log.tolist()))
    assert kept == 40, f"the log keeps {kept} of 40 entries"


if __name__ == "__main__":
    report = km.explore(racy, check, schedules=100, workers=2)
    print(f"racy: {report.schedules} schedules, {report.failed} failed, the first after {report.first_failure}")
    failure = report.failures[0]
    print(f"schedule {failure.number}: {failure.message}")
    print(f"found with {len(failure.found.turns)} turns, shrunk to {len(failure.schedule.turns)}:")
    for cluster, core, instructions in failure.schedule.turns:
        print(f"  core {core} runs {instructions} instructions")

    with km.Session(schedule=failure.schedule) as session:
        run = session.load(racy())
        run.thread_result(timeout=10.0)
        run.stop()
    try:
        check(run)
    except AssertionError as error:
        print(f"replayed: {error}")

    report = km.explore(fixed, check, schedules=100, workers=2)
    print(f"fixed: {report.schedules} schedules, {report.failed} failed")
