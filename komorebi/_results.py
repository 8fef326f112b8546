"""What a thread hands back."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ThreadResult:
    """One result of a thread.

    `words` is the 48 result words (uint32); `final` is True for the result the thread
    ended with, False for one it submitted with kmx_submit; `code` is kmx_main's return
    value (that of the first core that returned non-zero), None for a submitted result;
    `codes` is each core's return value, for a final result.

    >>> result = run.thread_result(timeout=10.0)
    >>> result.words[0], result.code
    """

    words: np.ndarray
    final: bool
    code: int | None = None
    codes: tuple[int, ...] = ()
