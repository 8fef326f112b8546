"""The value a stand-in's noc.wait waits for, as the bytes DRAM must hold (sim/noc/agent.py).

An integer or bool dtype takes a value it holds exactly: a whole number in its range.
A float dtype takes any real number, rounded to the nearest it holds (0.1 as the thread's
0.1f), but not one it cannot come near: a finite value that would become inf, or one not
0 that would become 0. inf and nan are taken as they are. The wait compares bytes, so a
nan waits for that nan's bits (Python's is the X280's canonical nan, what its arithmetic
makes), and 0.0 is not -0.0.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from typing import Any

import numpy as np

_SHORT = reprlib.Repr()  # (a value's repr, cut in the middle: an int of 600 digits is one)
_SHORT.maxlong = _SHORT.maxstring = _SHORT.maxother = 40


def wait_bytes(value: Any, kind: np.dtype) -> bytes:
    """VALUE as KIND's bytes, or the ValueError that says what KIND holds."""
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, (numbers.Real, np.bool_)):
        held = _as_float(value, kind) if kind.kind == "f" else _as_whole(value, kind)
        if held is not None:
            return held.tobytes()
    raise ValueError(f"noc.wait: value {_SHORT.repr(value)} is not one {kind} ({holds(kind)})")


def holds(kind: np.dtype) -> str:
    """What a value of KIND is, for the message."""
    if kind.kind == "b":
        return "True or False, 1 or 0"
    if kind.kind == "f":
        info = np.finfo(kind)
        return f"a number of magnitude {info.smallest_subnormal.item():.3g} to {info.max.item():.5g}, 0, inf or nan"
    info = np.iinfo(kind)
    return f"a whole number {info.min} to {info.max}"


def _as_whole(value: Any, kind: np.dtype) -> np.ndarray | None:
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        return None
    whole = int(value)  # (a bool is 1 or 0; a Fraction or float must be whole: compared below)
    low, high = (0, 1) if kind.kind == "b" else (int(np.iinfo(kind).min), int(np.iinfo(kind).max))
    if whole != value or not low <= whole <= high:
        return None
    return np.array(whole, dtype=kind)


def _as_float(value: Any, kind: np.dtype) -> np.ndarray | None:
    try:
        number = float(value)
    except OverflowError:  # (an int past float64's range)
        return None
    with np.errstate(over="ignore", under="ignore"):  # (said below, as the ValueError)
        held = np.array(number, dtype=kind)
    if math.isfinite(number) and (not np.isfinite(held) or (number != 0 and held == 0)):
        return None
    return held
