"""A machine for the API's own tests (komorebi._backend): no compiler, no cores. Each
thread hands what its script says, in order, as soon as the run starts; a region reads
back as it was loaded, unless the script says what the thread left there."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

import numpy as np

from komorebi._backend import Options
from komorebi._records import CacheStory, CorePlace, FaultReport, Handed, LineState, Output, RegionPicture


def result(*words: int, final: bool = False, code: int | None = None) -> Handed:
    out = np.zeros(48, np.uint32)
    out[: len(words)] = words
    return Handed(out, final, code if final else None, (code or 0,) if final else ())


def fault(cluster: int, cause: str = "a store to 0x0, which is a null pointer", line: int = 5) -> Handed:
    return Handed(fault=FaultReport(cluster, 0, 0x4000_3000_0100, cause, "thread.c", line, ("thread.c:5 (pc 0x1)",)))


@dataclass
class Script:
    """What a fake thread does: hands ITEMS (the last a final result or a fault, or the
    thread never ends), leaves REGIONS as given, prints OUTPUT."""

    items: list[Handed] = field(default_factory=lambda: [result(final=True, code=0)])
    regions: dict[str, np.ndarray] = field(default_factory=dict)
    output: Output = field(default_factory=Output)


class FakeBackend:
    def __init__(self, scripts: dict[int, Script] | None = None, findings=(), warnings: str = "") -> None:
        self.scripts = scripts or {}
        self.findings = list(findings)
        self.warnings = warnings
        self.loads: list[FakeMachine] = []

    def load(self, threads, options: Options) -> "FakeMachine":
        machine = FakeMachine(threads, options, self)
        self.loads.append(machine)
        return machine


class FakeMachine:
    def __init__(self, threads, options: Options, backend: FakeBackend) -> None:
        self.options = options
        self.threads = {spec.cluster: spec for spec in threads}
        self.clusters = sorted(self.threads)
        self.warnings = backend.warnings
        self.foreign, self.pid = False, os.getpid()
        self._scripts = {c: backend.scripts.get(c, Script()) for c in self.clusters}
        self._findings = backend.findings
        self._queues: dict[int, list[Handed]] = {c: [] for c in self.clusters}
        self._last: dict[int, Handed | None] = dict.fromkeys(self.clusters)
        self._closed = dict.fromkeys(self.clusters, False)
        self._ready = threading.Condition()
        self.started = self.stopped = self.abandoned = False

    def start(self) -> None:
        with self._ready:
            self.started = True
            for cluster, script in self._scripts.items():
                self._queues[cluster].extend(script.items)
                if script.items and (script.items[-1].final or script.items[-1].fault):
                    self._closed[cluster] = True
            self._ready.notify_all()

    def wait_for_debugger(self) -> None:
        pass  # (the fake machine serves no gdb)

    def cores(self, cluster: int) -> int:
        return self.threads[cluster].cores

    def region_names(self, cluster: int) -> list[str]:
        return [name for name, _ in self.threads[cluster].regions]

    def take(self, cluster: int, timeout: float | None) -> Handed | None:
        with self._ready:
            queue = self._queues[cluster]
            if not self._ready.wait_for(lambda: queue or self._closed[cluster], timeout) or not queue:
                return None
            item = queue.pop(0)
            if item.final or item.fault:
                self._last[cluster] = item
            return item

    def ended(self, cluster: int):
        return self._closed[cluster], self._last[cluster]

    def places(self, cluster: int) -> list[CorePlace]:
        return [CorePlace(n, "running", 0x4000_3000_0040, "thread.c", 9) for n in range(self.cores(cluster))]

    def stop(self) -> None:
        with self._ready:
            self.stopped = True
            for cluster in self.clusters:
                self._closed[cluster] = True
            self._ready.notify_all()

    def abandon(self) -> None:
        self.abandoned = True
        self.stop()

    def read(self, cluster: int, name: str) -> np.ndarray:
        left = self._scripts[cluster].regions.get(name)
        if left is not None:
            return np.array(left, dtype=np.uint8)
        content = dict(self.threads[cluster].regions)[name]
        return np.zeros(content, np.uint8) if isinstance(content, int) else np.array(content.array())

    def findings(self):
        return list(self._findings)

    def cache_counts(self):
        return []

    def profile(self):
        return None  # (the fake machine counts nothing)

    def schedule(self):
        return [], {}  # (the fake machine's threads take no turns)

    def story(self):
        return CacheStory(tuple(self.pictures()), ())

    def pictures(self) -> list[RegionPicture]:
        out = []
        for cluster in self.clusters:
            for i, (name, content) in enumerate(self.threads[cluster].regions):
                size = content if isinstance(content, int) else content.size
                states = np.full(-(-size // 64), LineState.FRESH, np.uint8)
                out.append(RegionPicture(cluster, self.options.coherence, name, i, size, 64, 0, states))
        return out

    def output(self, cluster: int) -> Output:
        return self._scripts[cluster].output
