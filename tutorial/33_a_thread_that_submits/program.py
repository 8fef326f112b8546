"""A thread that submits: the thread hands Python its progress while it runs."""
from pathlib import Path

import komorebi as km

HERE = Path(__file__).resolve().parent

program = km.Program("a_thread_that_submits", kernels=HERE / "kernels")
program.thread(
    cluster=1,
    sources=[HERE / "thread" / "primes.c"],
    words=[100000, 5],
)

with km.Session() as session:
    run = session.load(program)
    result = run.thread_result(timeout=10.0)
    while not result.final:
        step, below, primes = result.words[:3]
        print(f"step {step}: {primes} primes below {below}")
        result = run.thread_result(timeout=10.0)
    run.stop()

print(f"the thread ended with code {result.code}")
print(f"its words still say {result.words[2]} primes below {result.words[1]}")
assert result.code == 0
