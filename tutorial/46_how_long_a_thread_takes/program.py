"""How long a thread takes: the same copy through the cached and the uncached alias,
with vector and scalar loads, from one hart and from four, in the X280's modelled time."""
from pathlib import Path

import numpy as np

import komorebi as km

HERE = Path(__file__).resolve().parent
SLICE = 64 * 1024  # bytes each hart copies


def copy(uncached, vector, harts, profile=False):
    program = km.Program("how_long", kernels=HERE / "kernels")
    program.thread(
        cluster=1,
        sources=[HERE / "thread" / "copy.c"],
        cores=4,
        words=[uncached, vector, harts],
        regions={"from": np.arange(4 * SLICE // 8, dtype=np.uint64), "to": 4 * SLICE},
    )
    with km.Session(timing="x280", clock_mhz=1750, profile=profile) as session:
        run = session.load(program)
        result = run.thread_result(timeout=60.0)
        run.stop()
        copied = run.thread.read("to").view(np.uint64)[: harts * SLICE // 8]
    assert (copied == np.arange(harts * SLICE // 8)).all()
    return int(max(result.words[:harts])), run


print(f"copying {SLICE // 1024} KiB a hart, microseconds at 1750 MHz")
print("                    1 hart   4 harts")
timings = {}
for uncached in (0, 1):
    for vector in (1, 0):
        row = []
        for harts in (1, 4):
            cycles, timings[uncached, vector, harts] = copy(uncached, vector, harts)
            row.append(cycles / 1750)
        alias = "uncached" if uncached else "cached"
        kind = "vector" if vector else "scalar"
        print(f"{alias + ',':<10}{kind:<7}{row[0]:>9.1f}{row[1]:>10.1f}")

for harts in (1, 4):
    core0 = timings[1, 1, harts].timing()[0]
    went = ", ".join(f"{name} {100 * cycles / core0.cycles:.0f}%" for name, cycles in core0.went.items()
                     if cycles >= core0.cycles / 20)
    print(f"uncached, vector, {harts} hart{'s' if harts > 1 else ''}: core 0 took {core0.cycles:,} cycles ({went})")

_, run = copy(1, 1, 4, profile=True)
line = run.profile().core(0, cluster=1).lines[0]
print(f"core 0's costliest line: {Path(line.file).name}:{line.line}, {line.cycles:,} cycles "
      f"for {line.instructions:,} instructions")
