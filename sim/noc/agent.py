"""A Tensix stand-in: a Python function that plays a Tensix core's data-movement kernel
against the card's DRAM, as one more participant in its cluster's schedule.

Simulator-only. On a card, real Tensix kernels write the X280 thread's regions over the
NoC, past the X280's cache, while the thread runs; here a function does, through a `Noc`:

    def producer(noc):
        noc.write("frames", 0, np.arange(1024, dtype=np.uint32))  # into DRAM, past the cache
        noc.write("flags", 0, np.uint32([1]))                      # "a frame is ready"
        noc.wait("flags", 4, 1)        # until DRAM holds the uint32 1 at byte 4
        return noc.read("out", 0, 4096)  # DRAM's bytes: only what the thread flushed

How it runs. The function runs on the cluster's host thread, as a greenlet (a coroutine
of its own stack), never at the same time as the cluster's cores: each noc call is a
*step*, and a step runs only when the schedule gives the stand-in its turn
(sim.machine.schedule: its turn is one step, recorded as one instruction of "core"
CORES_PER_CLUSTER + its index). The step does the call's work, then switches to the
function, which goes on up to its next noc call (the next step's) and switches back. The
first step starts the function (it does no call of its own), so the same program, inputs
and schedule give the same interleaving, bytes and findings. A switch costs a
microsecond or two, where a hand-over between two OS threads cost tens. (The function's
own Python between two calls holds the host thread: one that never returns nor calls
noc again keeps the cluster from going on, as a kernel that hangs would.)

A stand-in in noc.wait is not ready until DRAM holds the value: the turn loop in C asks
between turns (sched.c, noc.c), and no Python polls. While a stand-in has not returned, a
lone core's turns have a length, so that the loop comes back to ask.

What a call sees and does:
- noc.read: DRAM's bytes (a copy), never the cache's: a line a core wrote and did not
  flush reads as it was.
- noc.write: DRAM's bytes change. A line the X280's cache holds keeps its old bytes,
  stale, until an invalidate drops it (the checker names a read of them: sim.cache.checker);
  a line it does not hold is filled with the new bytes when next touched. The region's
  lines are known one by one from the load on (watch.c: a line no core touched is filled
  with the new bytes, as on a card).
- noc.wait: the value, once DRAM holds it.

A stand-in ends when its function returns (its `result`) or raises (its `error`, with
its traceback). A function whose call returns a generator or coroutine at once, no noc
call made, had its body never run: a TypeError is its error (program.noc_agent refuses
those it can tell by looking). After the thread has ended, the stand-ins go on alone; a wait that
nothing is left to answer (every core returned, every other stand-in waits or has
ended) raises in the stand-in at once. `timeout` is wall-clock seconds, as every
timeout of the API: a run where it fires is not one to replay.
"""

from __future__ import annotations

import ctypes
import inspect
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol

import greenlet
import numpy as np

from ..._records import AgentStopped
from ..layout import CORES_PER_CLUSTER
from ..native import hooks
from .wait_value import wait_bytes

if TYPE_CHECKING:
    from ..cache.model import CachedRegion


class Region(Protocol):
    """A thread's region as a stand-in reaches it (sim.machine.cluster.Region is one)."""

    name: str
    offset: int  # where its bytes start in its span
    size: int
    cache: "CachedRegion"


class Cluster(Protocol):
    """The cluster a stand-in belongs to (sim.machine.cluster.Cluster is one)."""

    number: int
    regions: list[Region]


MAX_AGENTS = 4  # a cluster's stand-ins at most (docs/api.md)
# A stand-in still making calls this many steps after the thread ended is stopped: its
# call raises (so that stop() cannot wait for ever on one that polls).
STEPS_AFTER_END = 1_000_000
WAIT_SIZES = (1, 2, 4, 8)  # the bytes noc.wait compares: a dtype of these sizes
_HERE = __file__


@dataclass(frozen=True)
class Context:
    """What the schedule keys a participant by (sim.machine.schedule.key): its cluster."""

    cluster: int


@dataclass(slots=True)
class Call:
    """One noc call, as the function made it: WHAT ("start", "read", "write", "wait"),
    on REGION at OFFSET (region bytes), with DATA (write), or VALUE as DTYPE (wait),
    and the function's source line of the call."""

    what: str
    region: Region | None = None
    offset: int = 0
    size: int = 0
    data: bytes = b""
    dtype: Any = None
    value: int = 0  # wait: the bytes waited for, as a little-endian integer
    deadline: float | None = None
    file: str | None = None
    line: int | None = None
    error: BaseException | None = None  # "raise": what the step raises in the function

    def describe(self, agent: str) -> str:
        """What the story and the trace call the step."""
        if self.what == "start":
            return f"agent {agent!r} starts"
        name = self.region.name if self.region is not None else "?"
        if self.what == "write":
            return f"agent {agent!r}: noc.write({name!r}, {self.offset}, {self.size} bytes)"
        if self.what == "read":
            return f"agent {agent!r}: noc.read({name!r}, {self.offset}, {self.size})"
        return f"agent {agent!r}: noc.wait({name!r}, {self.offset}, {self._shown()})"

    def _shown(self) -> Any:
        return np.frombuffer(self.value.to_bytes(8, "little")[: self.size], self.dtype)[0].item()


class Agent:
    """A stand-in of CLUSTER: FUNCTION(noc), its INDEX-th (its NAME is the program's)."""

    def __init__(self, name: str, function: Callable, cluster: Cluster, index: int) -> None:
        self.name = name
        self.function = function
        self.cluster = cluster
        self.index = index
        self.number = CORES_PER_CLUSTER + index  # its place in the schedule's turns
        self.context = Context(cluster.number)
        self.yielded = False  # (pct: a stand-in never yields; sim.machine.schedule)
        self.steps = 0
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = False
        self.pending: Call | None = Call("start")  # the call its next step does
        self.stopped = False  # the run stopped before it returned
        self.wait = hooks.AgentWait()  # its noc.wait, for the turn loop (region 0: none)
        self.on_deadline: Callable[[], None] | None = None  # a wait's timeout passed: wake the schedule
        self._timer: threading.Timer | None = None
        self._greenlet: greenlet.greenlet | None = None  # the function's, made at its first step
        self.steps_after_end = 0
        self.timed = None  # timed (sim.timing.model.AgentClock): its clock, set by the schedule

    def __repr__(self) -> str:
        return f"<Tensix stand-in {self.name!r} of cluster {self.cluster.number}>"

    # -- the schedule's side (the cluster's host thread) -------------------------------------

    @property
    def waiting(self) -> bool:
        return not self.done and self.pending is not None and self.pending.what == "wait"

    def ready(self) -> bool:
        """Whether a step can run now: a call other than a wait, or a wait DRAM answers
        (or whose timeout passed)."""
        if self.done:
            return False
        if not self.waiting:
            return True
        call = self.pending
        if call.deadline is not None and time.monotonic() >= call.deadline:
            return True
        return call.region.cache.noc_holds(call.region.offset + call.offset, call.size, call.value)

    def step(self, perform: Callable[["Agent", Call], Any]) -> None:
        """Run one step, on the cluster's host thread: PERFORM the pending call (the
        cluster's work: it returns the call's value or raises what the function should
        see), then let the function run to its next call, or its end."""
        call, self.pending = self.pending, None
        self.steps += 1
        self._cancel_timer()
        self.wait.region = None
        if call.what == "start":
            self._greenlet = greenlet.greenlet(self._main)
            outcome: tuple[bool, Any] = (True, None)
        else:
            try:
                outcome = (True, perform(self, call))
            except (Exception, AgentStopped) as error:  # noqa: BLE001 - raised in the function, at its call
                outcome = (False, error)
        self._greenlet.switch(outcome)  # (back here at its next call, or its end)
        if self.timed is not None:
            self.timed.calls(self.pending)
        if self.waiting:
            self._arm(self.pending)

    def fail_wait(self, error: BaseException) -> None:
        """The pending wait can never be answered: its step raises ERROR in the function."""
        call = self.pending
        self.pending = Call("raise", call.region, call.offset, call.size, file=call.file, line=call.line, error=error)
        if self.timed is not None:
            self.timed.calls(self.pending)
        self._cancel_timer()
        self.wait.region = None

    def stop(self) -> None:
        """The run stopped (on the host thread, its last act): a function waiting at a
        call raises AgentStopped there and ends."""
        self._cancel_timer()
        if self.done:
            return
        self.stopped = True
        self.wait.region = None
        self.pending = None
        if self._greenlet is not None and not self._greenlet.dead:
            self._greenlet.switch((False, AgentStopped(f"the run stopped before agent {self.name!r} returned")))
        elif self._greenlet is None:
            self.error = AgentStopped(f"the run stopped before agent {self.name!r} started")
        self._greenlet = None
        self.done = True

    def _arm(self, call: Call) -> None:
        """The turn loop's copy of the wait, and a timer for its timeout."""
        region = call.region
        self.wait.region = ctypes.addressof(region.cache.state)
        self.wait.offset, self.wait.size, self.wait.value = region.offset + call.offset, call.size, call.value
        if call.deadline is not None and self.on_deadline is not None:
            self._timer = threading.Timer(max(call.deadline - time.monotonic(), 0), self.on_deadline)
            self._timer.daemon = True
            self._timer.start()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- the function's side (its greenlet, switched to on the host thread) ------------------

    def _main(self, _start: Any = None) -> None:
        try:
            result = self.function(Noc(self))
            made = _body_never_ran(result) if self.steps == 1 else None  # (1: no noc call was made)
            if made is None:
                self.result = result
            else:
                self.error = TypeError(
                    f"agent {self.name!r}: its function returned {made} without making a noc call, so its body never "
                    "ran: a stand-in's function must be a plain function that calls noc.read, noc.write and noc.wait, "
                    "not a generator or async function"
                )
        except AgentStopped as stopped:  # (the run stopped: the function did not return)
            self.error = stopped
        except BaseException as error:  # noqa: BLE001 - the stand-in's error, for run.agent(name)
            self.error = error
        finally:
            self.pending = None
            self.done = True

    def call(self, call: Call) -> Any:
        """The function's noc call: park it as the next step's, and switch back to the
        schedule; the step's answer comes back with the next switch."""
        if self.stopped or self._greenlet is None or greenlet.getcurrent() is not self._greenlet:
            if self.stopped:
                raise AgentStopped(f"the run stopped before agent {self.name!r} returned")
            raise RuntimeError(
                f"agent {self.name!r}: noc calls come from the agent's function itself, while it runs: not from "
                "another Python thread, and not after the function returned"
            )
        self.pending = call
        ok, value = self._greenlet.parent.switch()
        if not ok:  # (raised here, at the function's own call: not with the simulator's frames)
            raise value.with_traceback(None)
        return value

    def place(self) -> tuple[str, str | None, int | None]:
        """Where the stand-in is, for a message: (what it does, file, line)."""
        if self.stopped:
            return "stopped before it returned", None, None
        if self.error is not None:
            frames = traceback.extract_tb(self.error.__traceback__)
            frame = next((f for f in reversed(frames) if f.filename != _HERE), frames[-1] if frames else None)
            return (f"failed: {self.error!r}", frame.filename if frame else None, frame.lineno if frame else None)
        if self.done:
            return "returned", None, None
        call = self.pending
        if call is None:
            return "running its own Python", None, None
        if call.what == "start":
            return "not started", None, None
        if call.what == "wait":
            return f"waiting in noc.wait({call.region.name!r}, {call.offset}, {call._shown()})", call.file, call.line
        return f"ready to {call.what}", call.file, call.line


def _body_never_ran(result: Any) -> str | None:
    """What RESULT is, when it is the unstarted body of a generator or async function (a
    callable whose call makes one passes program.noc_agent's look: an object whose __call__
    is one, an async def under functools.wraps); it is closed, so that Python does not warn
    of a coroutine never awaited. None: RESULT is a result."""
    if inspect.iscoroutine(result):
        result.close()
        return "a coroutine"
    if inspect.isasyncgen(result):
        return "an async generator"  # (unstarted: nothing to close, and nothing warns)
    if inspect.isgenerator(result):
        result.close()
        return "a generator"
    return None


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    return int(value)


class Noc:
    """What a stand-in's function is given: the NoC's view of its cluster's DRAM. The
    regions are the cluster's thread's, by name; offsets and sizes are bytes of the region."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent
        self.name = agent.name
        self.cluster = agent.cluster.number
        self._by_name = {region.name: region for region in agent.cluster.regions}

    def __repr__(self) -> str:
        return f"<noc of agent {self.name!r}, cluster {self.cluster}>"

    @property
    def regions(self) -> dict[str, int]:
        """The thread's regions: name -> size in bytes."""
        return {region.name: region.size for region in self._agent.cluster.regions}

    def _region(self, name: Any, call: str) -> Region:
        region = self._by_name.get(name) if isinstance(name, str) else None
        if region is not None:
            return region
        if not isinstance(name, str):
            raise TypeError(f"noc.{call}: region must be a region name (str), not {type(name).__name__}")
        names = ", ".join(f"{r.name!r} ({r.size} bytes)" for r in self._agent.cluster.regions) or "none"
        raise KeyError(f"noc.{call}: no region {name!r} on cluster {self.cluster}; its regions are {names}")

    @staticmethod
    def _span(region: Region, offset: Any, size: int, call: str) -> int:
        offset = _int(offset, f"noc.{call}: offset")
        if offset < 0 or size < 0 or offset + size > region.size:
            raise ValueError(
                f"noc.{call}: bytes {offset} to {offset + size - 1} are outside region {region.name!r}, "
                f"which is {region.size} bytes (offsets 0 to {region.size - 1})"
            )
        return offset

    def read(self, region: str, offset: int, size: int) -> np.ndarray:
        """SIZE bytes of REGION from OFFSET as DRAM holds them: a new uint8 array. Never
        the X280's cache: a line a core wrote and did not flush reads as it was."""
        where = self._region(region, "read")
        size = _int(size, "noc.read: size")
        if size <= 0:
            raise ValueError(f"noc.read: size must be at least 1 byte, not {size}")
        offset = self._span(where, offset, size, "read")
        return self._agent.call(Call("read", where, offset, size, *_no_data(), *_source_pair()))

    def write(self, region: str, offset: int, data: Any) -> None:
        """Write DATA (bytes, or a numpy array's bytes) into REGION's DRAM at OFFSET, past
        the X280's cache."""
        where = self._region(region, "write")
        if isinstance(data, np.ndarray):
            if data.dtype.hasobject:
                raise TypeError("noc.write: an array of Python objects has no bytes to write")
            payload = np.ascontiguousarray(data).tobytes()
        elif isinstance(data, (bytes, bytearray, memoryview)):
            payload = bytes(data)
        else:
            raise TypeError(f"noc.write: data must be bytes or a numpy array, not {type(data).__name__}")
        if not payload:
            raise ValueError("noc.write: data is empty; write at least 1 byte")
        offset = self._span(where, offset, len(payload), "write")
        return self._agent.call(Call("write", where, offset, len(payload), payload, None, 0, None, *_source_pair()))

    def wait(self, region: str, offset: int, value: Any, dtype: Any = np.uint32, timeout: float | None = None) -> Any:
        """Wait until REGION's DRAM holds VALUE as DTYPE (1, 2, 4 or 8 bytes) at OFFSET,
        then return it. OFFSET is a multiple of the dtype's size, as the thread's aligned
        loads and stores are. VALUE is one DTYPE holds (sim/noc/wait_value.py). TIMEOUT: wall-clock seconds (None: for ever); past it the
        wait raises TimeoutError."""
        where = self._region(region, "wait")
        try:
            kind = np.dtype(dtype)
        except TypeError as error:
            raise TypeError(f"noc.wait: dtype must be a numpy dtype, not {dtype!r}") from error
        if kind.itemsize not in WAIT_SIZES or kind.hasobject or kind.kind not in "biuf":
            raise TypeError(f"noc.wait: dtype must be a number of 1, 2, 4 or 8 bytes, not {kind}")
        if where.size % kind.itemsize:
            raise ValueError(
                f"noc.wait: a {kind} ({kind.itemsize} bytes) does not divide region {where.name!r}, "
                f"which is {where.size} bytes"
            )
        offset = self._span(where, offset, kind.itemsize, "wait")
        if offset % kind.itemsize:
            raise ValueError(f"noc.wait: offset {offset} is not a multiple of {kind.itemsize} (a {kind}'s size)")
        held = wait_bytes(value, kind)
        deadline = None
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float, np.integer, np.floating)) or not (
                    timeout >= 0):
                raise ValueError(f"noc.wait: timeout must be a number of seconds >= 0 or None, not {timeout!r}")
            if float(timeout) <= threading.TIMEOUT_MAX:  # (longer than the host can wait in one go: for ever)
                deadline = time.monotonic() + float(timeout)
        value_bits = int.from_bytes(held, "little")
        call = Call("wait", where, offset, kind.itemsize, b"", kind, value_bits, deadline, *_source_pair())
        return self._agent.call(call)


def _no_data() -> tuple[bytes, None, int, None]:
    return b"", None, 0, None


def _source_pair() -> tuple[str | None, int | None]:
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == _HERE:
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else (None, None)
