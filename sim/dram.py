"""The card's GDDR6 banks: storage apart from every cache.

A bank hands out zeroed storage for the spans the loader places in it. Only what is placed
takes host memory, so a 4 GiB bank costs what its regions cost.
"""

from __future__ import annotations

import numpy as np

from sim.layout import BANK_BYTES


class Bank:
    """One DRAM bank, by name (D5, D6, D7)."""

    def __init__(self, name: str, size: int = BANK_BYTES) -> None:
        self.name = name
        self.size = size
        self._spans: list[tuple[int, np.ndarray]] = []

    def storage(self, offset: int, size: int) -> np.ndarray:
        """Zeroed bytes [offset, offset + size) of the bank, for one placed span."""
        if offset < 0 or offset + size > self.size:
            raise ValueError(f"bank {self.name}: span {offset:#x}+{size:#x} is outside it")
        for other, data in self._spans:
            if offset < other + data.size and other < offset + size:
                raise ValueError(f"bank {self.name}: span {offset:#x} overlaps {other:#x}")
        data = np.zeros(size, dtype=np.uint8)
        self._spans.append((offset, data))
        return data
