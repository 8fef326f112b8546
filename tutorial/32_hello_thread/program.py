"""Hello, thread: a first X280 thread prints, takes one word and gives one back."""
from pathlib import Path

import komorebi as km

HERE = Path(__file__).resolve().parent

program = km.Program("hello_thread", kernels=HERE / "kernels")
program.thread(
    cluster=1,
    sources=[HERE / "thread" / "hello.c"],
    words=[21],
)

with km.Session() as session:
    run = session.load(program)
    result = run.thread_result(timeout=10.0)
    run.stop()

print(f"the thread gave back {result.words[0]}")
print(f"its code is {result.code}")
assert result.final
assert result.code == 0
