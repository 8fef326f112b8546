"""The C library: a thread that sorts a copy of its samples on the heap and prints their
mean, deviation and median with printf."""
from pathlib import Path

import numpy as np

import komorebi as km

HERE = Path(__file__).resolve().parent

samples = np.random.default_rng(42).normal(10.0, 2.0, 4096).astype(np.float32)

program = km.Program("the_c_library", kernels=HERE / "kernels")
program.thread(cluster=0, sources=[HERE / "thread" / "stats.c"], regions={"samples": samples})

with km.Session() as session:
    run = session.load(program)
    result = run.thread_result(timeout=30.0)
    run.stop()

mean, deviation, median = result.words[:3].view(np.float32).tolist()
print(f"the thread's code: {result.code}")
print(f"numpy agrees: {np.allclose([mean, deviation, median], [samples.mean(), samples.std(), np.median(samples)], rtol=1e-5)}")
