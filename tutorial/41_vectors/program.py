"""Vectors: a thread that doubles a region's numbers 128 at a time, and adds them up."""
from pathlib import Path

import numpy as np

import komorebi as km

HERE = Path(__file__).resolve().parent

numbers = np.arange(1000, dtype=np.float32)

program = km.Program("vectors", kernels=HERE / "kernels")
program.thread(
    cluster=1,
    sources=[HERE / "thread" / "double.c"],
    regions={"numbers": numbers, "doubled": numbers.nbytes},
)

with km.Session() as session:
    run = session.load(program)
    result = run.thread_result(timeout=10.0)
    run.stop()
    doubled = run.thread.read("doubled").view(np.float32)

passes, last, total = result.words[:3]
print(f"{passes} passes, the last of {last} numbers")
print(f"first five doubled: {doubled[:5].tolist()}")
print(f"the sum of the doubled numbers: {total}")
print(run.cache_report())
assert result.code == 0
assert (doubled == 2 * numbers).all() and total == 2 * numbers.sum()
