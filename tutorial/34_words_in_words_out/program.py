"""Words in, words out: 64-bit numbers go to the thread as pairs of argument words, and
their largest prime factors come back as pairs of result words."""
from pathlib import Path

import komorebi as km

HERE = Path(__file__).resolve().parent

numbers = [13_195, 600_851_475_143, 30_000_000_174, 2**40]
words = []
for n in numbers:
    words += [n & 0xFFFF_FFFF, n >> 32]  # the low half first, then the high half

program = km.Program("words_in_words_out", kernels=HERE / "kernels")
program.thread(
    cluster=1,
    sources=[HERE / "thread" / "factor.c"],
    words=words,
)

with km.Session() as session:
    run = session.load(program)
    result = run.thread_result(timeout=10.0)
    run.stop()

print(f"words in: {words}")
print(f"words out: {result.words[:8].tolist()}")
for k, n in enumerate(numbers):
    low, high = result.words[2 * k : 2 * k + 2].tolist()
    print(f"the largest prime factor of {n} is {high << 32 | low}")
assert result.code == 0
assert (result.words[8:] == 0).all()
