"""What a thread hands back."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# km.Finding and km.CacheCounts are the seam's (komorebi._records); named here too, where
# they were defined before, so that one pickled then still loads.
from komorebi._records import CacheCounts, Finding  # noqa: F401


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

    def __repr__(self) -> str:
        """What it is, its code, and the words up to the last that is not 0: a result is 48
        words, most of them usually 0."""
        words = [int(w) for w in self.words]
        used = max((i + 1 for i, w in enumerate(words) if w), default=0)
        shown = words[:min(used, 8)]
        rest = f" and {used - len(shown)} more up to word {used - 1}" if used > len(shown) else ""
        head = f"final, code {self.code}" if self.final else "submitted"
        return f"ThreadResult({head}, words {shown}{rest}; the other {len(words) - used} are 0)"
