"""Twelve cores: the same thread on clusters 1, 2 and 3, four cores each. Each cluster
squares a third of the numbers 0 to 12287, and each of its cores a quarter of that third."""
from pathlib import Path

import numpy as np

import komorebi as km

HERE = Path(__file__).resolve().parent
CLUSTERS = [1, 2, 3]


def wide(words, at):
    """The 64-bit number in words AT (low half) and AT + 1 (high half)."""
    low, high = words[at : at + 2].tolist()
    return high << 32 | low


program = km.Program("twelve_cores", kernels=HERE / "kernels")
for k, cluster in enumerate(CLUSTERS):
    part = np.arange(4096 * k, 4096 * (k + 1), dtype=np.uint32)
    program.thread(
        cluster=cluster,
        sources=[HERE / "thread" / "squares.c"],
        regions={"numbers": part, "squares": part.nbytes},
        cores=4,
    )

with km.Session() as session:
    run = session.load(program)
    results = {c: run.thread_result(timeout=10.0, cluster=c) for c in CLUSTERS}
    run.stop()
    numbers = {c: run.threads[c].read("numbers").view(np.uint32) for c in CLUSTERS}
    squares = {c: run.threads[c].read("squares").view(np.uint32) for c in CLUSTERS}

for c in CLUSTERS:
    words = results[c].words
    print(f"cluster {c}: numbers {numbers[c][0]} to {numbers[c][-1]}, at {wide(words, 10):#x}")
    print(f"  squares {squares[c][0]} to {squares[c][-1]}")
    print(f"  each core's sum: {[wide(words, 2 * core) for core in range(4)]}")
    print(f"  core 0's total: {wide(words, 8)}, codes {results[c].codes}")
everything = sum(wide(results[c].words, 8) for c in CLUSTERS)
print(f"the twelve cores together: {everything}")

for c in CLUSTERS:
    assert results[c].code == 0
    assert (squares[c] == numbers[c] * numbers[c]).all()
    assert wide(results[c].words, 8) == sum(wide(results[c].words, 2 * core) for core in range(4))
assert everything == sum(n * n for n in range(3 * 4096))
