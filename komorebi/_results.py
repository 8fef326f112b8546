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

    def __repr__(self) -> str:
        """What it is, its code, and the words up to the last that is not 0: a result is 48
        words, most of them usually 0."""
        words = [int(w) for w in self.words]
        used = max((i + 1 for i, w in enumerate(words) if w), default=0)
        shown = words[:min(used, 8)]
        rest = f" and {used - len(shown)} more up to word {used - 1}" if used > len(shown) else ""
        head = f"final, code {self.code}" if self.final else "submitted"
        return f"ThreadResult({head}, words {shown}{rest}; the other {len(words) - used} are 0)"


@dataclass(frozen=True)
class CacheCounts:
    """How one region fared in the card-size cache (km.Session(cache="card-size")): its
    accesses' hits and misses at each level of the tile, and the lines of it the L3
    evicted, of which `written_back` were dirty (each a missing flush the eviction may
    have rescued). Every access to the region counts once at the L1D, its misses once at
    the L2, and the L2's misses once at the L3."""

    cluster: int
    region: str
    l1d_hits: int
    l1d_misses: int
    l2_hits: int
    l2_misses: int
    l3_hits: int
    l3_misses: int
    evicted: int
    written_back: int


@dataclass(frozen=True)
class Finding:
    """One coherence mistake of a thread: what, where in the region, where in the source.

    `kind` is "read-before-invalidate", "unflushed-write", "invalidate-dropped-writes",
    "flush-wrote-stale-bytes", "stale-read" or "mixed-alias"; `start` and `end` are byte offsets in the region (end
    exclusive), the span of every byte the mistake touched; `file` and `line` are the
    source line of its first occurrence; `message` says what went wrong and what the fix
    is.

    >>> run.stop()
    >>> for finding in run.findings:
    ...     print(finding.where, finding.kind)
    """

    kind: str
    cluster: int
    core: int
    region: str
    region_id: int
    start: int
    end: int
    file: str | None
    line: int | None
    message: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "(no source line)"

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"

    def __repr__(self) -> str:
        place = f"{self.file.rsplit('/', 1)[-1]}:{self.line}" if self.file else "no source line"
        return (f"Finding({self.kind} in region {self.region!r}, bytes {self.start} to {self.end - 1}, at {place}, "
                f"core {self.core} of cluster {self.cluster})")
