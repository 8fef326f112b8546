"""Flushing the way the firmware does: lesson 35's tripling kept in step with DRAM a line
at a time through the cache's flush register, a status word written through the uncached
alias, and a thread that forgets its flush, on the card-size cache."""
import warnings
from pathlib import Path

import numpy as np

import komorebi as km

HERE = Path(__file__).resolve().parent

numbers = np.arange(1024, dtype=np.uint32)
program = km.Program("flushing_the_way_the_firmware_does", kernels=HERE / "kernels")
program.thread(
    cluster=0,
    sources=[HERE / "thread" / "firmware.c"],
    regions={"numbers": numbers, "tripled": 4096, "status": 64},
)
with km.Session(coherence="strict") as session:
    run = session.load(program)
    result = run.thread_result(timeout=10.0)
    run.stop()
tripled = run.thread.read("tripled").view(np.uint32)
status = run.thread.read("status").view(np.uint32)
print(f"first five tripled: {tripled[:5].tolist()}")
print(f"all 1024 right: {bool((tripled == 3 * numbers).all())}")
print(f"status: {status[0]}, findings: {len(run.findings)}")

lines = 65536  # 4 MiB of output, twice the L3
forgot = km.Program("forgot_the_flush", kernels=HERE / "kernels")
forgot.thread(cluster=0, sources=[HERE / "thread" / "forgot_the_flush.c"], regions={"out": lines * 64})
with warnings.catch_warnings():
    warnings.simplefilter("ignore", km.CoherenceWarning)  # printed below instead
    with km.Session(coherence="strict", cache="card-size") as session:
        run = session.load(forgot)
        run.thread_result(timeout=60.0)
        run.stop()
out = run.thread.read("out").view(np.uint32)
expected = 3 * np.arange(out.size, dtype=np.uint32)
reached = int((out == expected).reshape(-1, 16).all(axis=1).sum())
[counts] = run.cache_counts()
print(f"lines that reached DRAM without a flush: {reached} of {lines}")
print(f"L1D misses {counts.l1d_misses}, L3 evictions written back {counts.written_back}")
[finding] = run.findings
print(f"finding: {finding.kind} at {Path(finding.file).name}:{finding.line}")
