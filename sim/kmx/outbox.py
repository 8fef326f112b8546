"""What a thread hands to Python: submitted results, then its final result or its fault.

Filled by the machine's thread, emptied by Python's. At most 16 submissions wait; a core
whose submit finds 16 waiting stalls until Python takes one (docs/c-api.md, kmx_submit). Clusters 2
and 3 taking turns together (under a schedule: sim.machine.card) have no limit: a stall of one
would stop both, and Python may be waiting for the other.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np

from ..._records import Handed  # (the seam's: a result, or a fault as a FaultReport, CoreFault.report)
from ..layout import MAX_WAITING_SUBMISSIONS


class Outbox:
    """Items in order. Once the last item is in (a final result or a fault) or the run is
    stopped, the outbox is `closed`: whoever waits in `take` then wakes, and takes what is
    left or learns that nothing more will come."""

    def __init__(self, on_take: threading.Condition) -> None:
        self.limit: int | None = MAX_WAITING_SUBMISSIONS  # submissions that may wait (None: any number; sim.machine.card)
        self._items: deque[Handed] = deque()
        self.closed = False
        self.has_last = False  # the final result or the fault is in (taken or not)
        self.last: Handed | None = None  # the final result or the fault, once it was taken
        self._submissions = 0
        self._ready = threading.Condition()
        self._on_take = on_take  # the machine waits on it while a core is stalled

    def offer_submission(self, words: np.ndarray) -> bool:
        """Queue a submitted result; False (and nothing queued) when 16 already wait."""
        with self._ready:
            if self.limit is not None and self._submissions >= self.limit:
                return False
            self._submissions += 1
            self._items.append(Handed(words=words))
            self._ready.notify_all()
            return True

    def put_last(self, item: Handed) -> None:
        """Queue the thread's last item, its final result or its fault, and close."""
        with self._ready:
            self._items.append(item)
            self.closed = self.has_last = True
            self._ready.notify_all()

    def close(self) -> None:
        """Nothing more will come (the run stopped): wake whoever waits in `take`."""
        with self._ready:
            self.closed = True
            self._ready.notify_all()

    def take(self, timeout: float | None) -> Handed | None:
        """The next item; None when nothing came within TIMEOUT seconds, or when the
        outbox is closed and empty (look at `closed` and `last` to tell which)."""
        with self._ready:
            if not self._ready.wait_for(lambda: self._items or self.closed, timeout) or not self._items:
                return None
            item = self._items.popleft()
            if item.final or item.fault is not None:
                self.last = item
            elif item.words is not None:
                self._submissions -= 1
        with self._on_take:
            self._on_take.notify_all()
        return item
