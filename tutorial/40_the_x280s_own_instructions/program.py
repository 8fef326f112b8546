"""The X280's own instructions: a thread that counts bits (Zbb) and multiplies halves (Zfh)."""
import struct
from pathlib import Path

import numpy as np

import komorebi as km

HERE = Path(__file__).resolve().parent

words = np.arange(1, 1025, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
a = np.linspace(-1.0, 1.0, 256).astype(np.float16)
b = np.linspace(0.5, 2.0, 256).astype(np.float16)

program = km.Program("own_instructions", kernels=HERE / "kernels")
program.thread(
    cluster=1,
    sources=[HERE / "thread" / "bits_and_halves.c"],
    regions={"words": words, "a": a, "b": b},
)

with km.Session() as session:
    run = session.load(program)
    result = run.thread_result(timeout=10.0)
    run.stop()

bits = int(result.words[0]) | int(result.words[1]) << 32
dot = np.array([result.words[2]], dtype=np.uint16).view(np.float16)[0]

# The same in Python: each step's a*b + dot rounded once to a half, as fmadd.h does.
expected = 0.0
for x, y in zip(a.astype(float), b.astype(float)):
    expected = struct.unpack("<e", struct.pack("<e", expected + x * y))[0]

print(f"set bits in {len(words)} words: {bits}")
print(f"the half-precision dot product: {float(dot)}")
print(f"as Python rounds it, step by step: {expected}")
assert result.code == 0
assert bits == sum(bin(int(w)).count("1") for w in words)
assert float(dot) == expected
