"""The card: its DRAM banks, its clusters, and the loop that runs their cores.

The cores run in a thread of their own, round-robin: a core runs until it exits, blocks in
a kmx call (submit, barrier) or, when more than one core is runnable, has run a quantum of
instructions. The order depends only on the program, so runs are repeatable.
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from sim.cluster import Cluster
from sim.core import BLOCKED
from sim.dram import Bank
from sim.faults import CoreFault
from sim.layout import SHARES
from sim.loader import ThreadImage
from sim.outbox import Outbox

QUANTUM = 100_000  # instructions a core runs before the next runnable core's turn
BLOCKED_POLL = 0.05  # seconds between looks at blocked cores (also woken by Python)


class Card:
    def __init__(self) -> None:
        self.banks = {name: Bank(name) for name in sorted({s.bank for s in SHARES.values()})}
        self.clusters: dict[int, Cluster] = {}
        self._wake = threading.Condition()
        self._stopping = threading.Event()
        self._running = None  # the core whose engine is running now
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None  # a bug in the machine itself, if any

    def place_thread(
        self,
        cluster: int,
        image: ThreadImage,
        regions: Sequence[tuple[str, np.ndarray | int]],
        words: Sequence[int],
        cores: int,
    ) -> Cluster:
        share = SHARES[cluster]
        placed = Cluster(cluster, share, self.banks[share.bank], image, regions, words, cores, Outbox(self._wake))
        self.clusters[cluster] = placed
        return placed

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="komorebi-card", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._schedule()
        except BaseException as error:  # a bug here must not vanish in a daemon thread
            self.error = error
            for cluster in self.clusters.values():
                if not cluster.ended:
                    cluster.fail(CoreFault(cluster.number, 0, 0, f"the simulator failed: {error!r}"))

    def _schedule(self) -> None:
        live = list(self.clusters.values())
        while live and not self._stopping.is_set():
            runnable = [(cluster, core) for cluster in live for core in cluster.runnable()]
            if not runnable:
                with self._wake:
                    self._wake.wait(BLOCKED_POLL)
                continue
            # A quantum whenever another core could want a turn: one runnable, or one
            # blocked that Python or a barrier may release.
            blocked = any(c.state == BLOCKED for cluster in live for c in cluster.cores)
            count = QUANTUM if len(runnable) > 1 or blocked else 0
            for cluster, core in runnable:
                if self._stopping.is_set() or cluster.ended:
                    break
                self._running = core
                try:
                    core.run(count)
                except CoreFault as fault:
                    cluster.fail(fault)
                except Exception as error:  # a bug of ours in a hook: fail this thread only
                    cluster.fail(core.fault(core.current_pc(), f"the simulator failed: {error!r}"))
                finally:
                    self._running = None
                if not cluster.ended and cluster.all_exited:
                    cluster.finish()
            live = [c for c in live if not c.ended]

    def stop(self) -> None:
        """Halt every core and hand back what is still cached. Idempotent."""
        self._stopping.set()
        if self._thread is not None:
            while self._thread.is_alive():
                running = self._running
                if running is not None:
                    running.interrupt()
                with self._wake:
                    self._wake.notify_all()
                self._thread.join(0.01)
        for cluster in self.clusters.values():
            cluster.end()  # prints what is pending, hands back; nothing if already ended
            cluster.release()
