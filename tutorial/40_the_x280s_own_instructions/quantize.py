"""The X280's own instructions, part two: rows of bfloat16, as the Tensix side hands them
over, turned into int8 with Zvfbfmin and SiFive's clip, and checked against numpy."""
from pathlib import Path

import numpy as np

import komorebi as km

HERE = Path(__file__).resolve().parent
ROWS, COLUMNS = 8, 1000


def bfloat16(x):
    """The bfloat16 bits of X: float32's upper half, rounded to nearest even."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


rows = bfloat16(np.random.default_rng(40).normal(0.0, 1.0, (ROWS, COLUMNS)))
scale = np.float32(127 / 3)  # a calibration's choice: |x| up to 3 fits into int8

program = km.Program("own_instructions", kernels=HERE / "kernels")
program.thread(
    cluster=1,
    sources=[HERE / "thread" / "quantize.c"],
    regions={"rows": rows, "quantized": ROWS * COLUMNS},
    words=[int(np.array([scale]).view(np.uint32)[0])],
)

with km.Session() as session:
    run = session.load(program)
    result = run.thread_result(timeout=10.0)
    run.stop()
    quantized = run.thread.read("quantized").view(np.int8).reshape(ROWS, COLUMNS)

# The same in numpy: a bfloat16 is a float32's upper 16 bits; the product is a float32,
# rounded to the nearest integer (ties to even) and clipped.
x = (rows.astype(np.uint32) << 16).view(np.float32)
rounded = np.rint(x * scale)
expected = np.clip(rounded, -128, 127).astype(np.int8)

print(f"{ROWS} rows of {COLUMNS} bfloat16s to int8, scale {scale:.6g}")
print("row 0 starts", ", ".join(f"{v:g}" for v in x[0, :4]), "->", ", ".join(str(q) for q in quantized[0, :4]))
print(f"clipped to -128 or 127: {int(np.sum((rounded < -128) | (rounded > 127)))} of {x.size}")
print(f"the same as numpy's: {np.array_equal(quantized, expected)}")
assert result.code == 0
assert np.array_equal(quantized, expected)
