"""The trap table: from an ecall's number (a7) to the kmx call it stands for.

The numbers are kmx_runtime/kmx.h's KMX_CALL_* (tests/kmx/test_traps.py checks that the two
agree). Each handler gets the core and the call's arguments a0..a2 and returns the value
for a0, or None to leave a0 as it is. A handler that finds bad arguments raises CallError;
the table turns it into a fault at the ecall, naming the call.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from enum import IntEnum
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

import numpy as np

from ..._records import Category
from ..hart.faults import CallError
from ..native import hooks
from ..layout import RESULT_WORDS, UNCACHED_OFFSET, count_bytes
from ..memory.address_space import MemoryAccessError
from .linux import Linux, SystemCallFault
from .printf import FormatError, format_print

if TYPE_CHECKING:
    from ..hart.explain import Explainer
    from ..hart.core import Core
    from ..memory.address_space import AddressSpace


class Listeners(Protocol):
    """Who hears of each call (sim.observe.observers.Observers is one: the story, the trace and the
    profile). A Protocol, so that kmx knows nothing of who listens."""

    def call_begins(self, call: "KmxCall") -> None: ...
    def call_ends(self, call: "KmxCall") -> None: ...


class Thread(Protocol):
    """What the trap table answers calls about: a cluster's thread (sim.machine.cluster.Cluster
    is one). The calls that change the thread's state are its own."""

    number: int
    regions: Sequence  # of sim.machine.cluster.Region, in ID order
    memory: "AddressSpace"
    explainer: "Explainer"
    words: list[int]
    result_words: "np.ndarray"
    observers: Listeners  # (they hear of each call)
    cores: Sequence["Core"]
    ended: bool  # (its cores run no more)

    def core_exited(self, core: "Core", code: int) -> None: ...
    def acting(self, core: "Core | None") -> None: ...  # (Python's own accesses are CORE's call's)
    def invalidate(self, region_id: int, core: "Core") -> None: ...
    def flush(self, region_id: int, core: "Core") -> None: ...
    def submit(self, core: "Core") -> None: ...
    def print(self, core: "Core", text: str) -> None: ...
    def barrier(self, core: "Core") -> None: ...
    def every_core_exited(self, core: "Core", code: int) -> None: ...

MAX_PRINT_ARGUMENTS = 16


class Call(IntEnum):
    EXIT = 1
    REGION = 2
    INVALIDATE = 3
    FLUSH = 4
    RESULT = 5
    WORD = 6
    WORD_COUNT = 7
    SUBMIT = 8
    PRINT = 9
    CYCLES = 10
    CLUSTER = 11
    BARRIER = 12
    ASSERT = 13  # the C library's assert (kmx_runtime/process.c)
    REGION_UNCACHED = 14

    @property
    def c_name(self) -> str:
        return "kmx_" + self.name.lower()


ABOUT_A_REGION = (Call.REGION, Call.INVALIDATE, Call.FLUSH, Call.REGION_UNCACHED)
STEPS_IN_C = (Call.INVALIDATE, Call.FLUSH, Call.BARRIER)  # calls.c answers them with a step of the story's
_UNKNOWN = object()


def _signed32(value: int) -> int:
    value &= 0xFFFF_FFFF
    return value - (1 << 32) if value >> 31 else value


class KmxCall:
    """A call as the thread's observers hear of it (sim.observe.observers): CORE's ecall NUMBER
    with ARGUMENTS (a0, a1, a2); KNOWN: a kmx call, else a system call of the C
    library's. AT: the ecall's pc and return address, for a call answered in C (ANSWERED:
    sim/native/calls.c), which the observers hear of after it ran (TIMES times in a row);
    else the core's now."""

    __slots__ = ("core", "number", "arguments", "known", "_traps", "at", "answered", "times")

    def __init__(self, traps: "TrapTable", core: "Core", number: int, arguments: tuple[int, int, int],
                 known: bool, at: tuple[int, int] | None = None, times: int = 1) -> None:
        self._traps, self.core, self.number, self.arguments, self.known = traps, core, number, arguments, known
        self.at, self.answered = at, at is not None
        self.times = times  # (answered in C: the same call, nothing between, this many times)

    @property
    def name(self) -> str:
        """kmx_flush, say; a system call's Linux name."""
        return Call(self.number).c_name if self.known else Linux.name(self.number)

    @property
    def category(self) -> str:
        return "kmx" if self.known else "linux"

    @property
    def region_id(self) -> int | None:
        """The region the call is about (kmx_flush's argument, say), or None."""
        return self.arguments[0] if self.known and self.number in ABOUT_A_REGION else None

    def source(self):
        """The user's source line of the call (a SourceLine or None): a kmx call's is kept
        by its call site; a system call's ecall is the C library's, whoever called it."""
        return self._traps.call_source(self.core, keep=self.known, at=self.at,
                                       in_c=self.known and self.number in STEPS_IN_C)

    def details(self) -> dict:
        """What the call is about, for the trace: its region's name, a result's index
        and count, an argument word's index, an exit's code."""
        if not self.known:
            return {}
        call, a0, a2 = Call(self.number), self.arguments[0], self.arguments[2]
        if call in ABOUT_A_REGION:
            regions = self._traps.thread.regions
            return {"region": regions[a0].name if a0 < len(regions) else f"ID {a0} (none)"}
        if call == Call.RESULT:
            return {"index": a0, "count": a2}
        if call == Call.WORD:
            return {"index": a0}
        if call == Call.EXIT:
            return {"code": _signed32(a0)}
        return {}


class TrapTable:
    """The kmx calls of one cluster's THREAD."""

    def __init__(self, thread: Thread) -> None:
        self.thread = thread
        self._handlers: dict[int, Callable[..., int | None]] = {
            Call.EXIT: self.exit,
            Call.REGION: self.region,
            Call.INVALIDATE: self.invalidate,
            Call.FLUSH: self.flush,
            Call.RESULT: self.result,
            Call.WORD: self.word,
            Call.WORD_COUNT: self.word_count,
            Call.SUBMIT: self.submit,
            Call.PRINT: self.print,
            Call.CYCLES: self.cycles,
            Call.CLUSTER: self.cluster_number,
            Call.BARRIER: self.barrier,
            Call.ASSERT: self.assert_failed,
            Call.REGION_UNCACHED: self.region_uncached,
        }
        self.linux = Linux(thread)
        self._sources: dict[tuple[int, int], object] = {}  # (call pc, ra) -> its source line (call_source)
        self.native: hooks.CallsState | None = None  # what calls.c answers (answer_in_c)
        self._keep: dict = {}  # (the arrays calls.c reads: answer_in_c)
        self._owner: int | None = None  # the host thread that runs the cluster's cores (dispatch)
        self._telling = False

    # -- the calls answered in C (sim/native/calls.c) ------------------------------------------

    def answer_in_c(self, cores: Sequence["Core"], ecall_past: int, others_hear: bool, story) -> None:
        """Let sim/native/calls.c answer the calls that need no Python, for CORES (whose
        engines leave the pc ECALL_PAST bytes past an ecall): unless a listener other than
        the cache's STORY hears every call (OTHERS_HEAR: the trace, the profile). The story
        hears of those it steps at (an invalidate, a flush) after they ran (tell_answered)."""
        thread = self.thread
        state = self.native = hooks.CallsState()
        self._keep = keep = {  # (kept alive as long as calls.c may read them)
            "words": np.array(thread.words, np.uint64),
            "addresses": np.array([region.address for region in thread.regions], np.uint64),
            "regions": (ctypes.POINTER(hooks.RegionState) * max(len(thread.regions), 1))(
                *(ctypes.pointer(region.cache.state) for region in thread.regions)),
            "cores": (ctypes.c_void_p * len(cores))(*(ctypes.addressof(core.native) for core in cores)),
        }
        state.on = int(not others_hear)
        state.ecall_past = ecall_past
        state.cluster = thread.number
        state.words = hooks.pointer(keep["words"], ctypes.c_uint64)
        state.word_count = len(thread.words)
        state.region_count = len(thread.regions)
        state.addresses = hooks.pointer(keep["addresses"], ctypes.c_uint64)
        state.regions = keep["regions"]
        state.cores = keep["cores"]
        state.core_count = len(cores)
        state.story = int(story is not None and not story.stopped)
        generation = ctypes.cast(ctypes.addressof(state) + hooks.CallsState.generation.offset,
                                 ctypes.POINTER(ctypes.c_uint64))
        for region in thread.regions:
            region.cache.state.generation = generation
        for core in cores:
            core.native.calls = ctypes.pointer(state)
        if story is not None:
            story.calls = state

    def tell_answered(self) -> None:
        """Tell the observers of the calls calls.c answered since they last heard (in order,
        before whatever they hear next: sim.observe.observers)."""
        state = self.native
        if state is None or not state.event_count or self._telling:
            return
        if threading.get_ident() != self._owner and not self.thread.ended:
            return  # (C adds to the queue while the cores run: only their host thread reads it then)
        self._telling = True
        try:
            cores, observers = self.thread.cores, self.thread.observers
            while state.event_count:
                events = [(e.core, e.number, e.argument, e.pc, e.ra, e.times) for e in state.events[: state.event_count]]
                state.event_count = 0
                for core, number, argument, pc, ra, times in events:
                    call = KmxCall(self, cores[core], number, (argument, 0, 0), True, at=(pc, ra), times=times)
                    observers.call_begins(call)
                    observers.call_ends(call)
        finally:
            self._telling = False

    def dispatch(self, core: "Core") -> None:
        self._owner = threading.get_ident()
        if self.native is not None:  # (what Python does may change a line's state: calls.c)
            self.native.generation += 1
        number, a0, a1, a2 = core.call_arguments()
        handler = self._handlers.get(number)
        call = KmxCall(self, core, number, (a0, a1, a2), handler is not None)
        observers = self.thread.observers
        observers.call_begins(call)
        self.thread.acting(core)  # (what the cache model sees of Python's reads for the call is the call's)
        try:
            if handler is None:
                self._system_call(core, number)
                return
            value = handler(core, a0, a1, a2)
        except MemoryAccessError as error:
            raise self._bad_pointer(core, Call(number).c_name, error) from None
        except (CallError, FormatError) as error:
            raise core.fault(core.call_pc(), f"{Call(number).c_name}: {error}") from None
        finally:
            self.thread.acting(None)
            observers.call_ends(call)
        if value is not None:
            core.set_return(value)

    def call_source(self, core: "Core", keep: bool = True, at: tuple[int, int] | None = None,
                    in_c: bool = False):
        """The user's source line of CORE's call (the first frame outside the runtime), AT
        (pc, ra; None: where the core is now). A kmx call's is KEPT by the call's pc and
        return address (its wrapper in kmx.h is a leaf, called from the user's line): a
        frame walk a call site. calls.c is told the sites kept of the calls it may answer
        with a step of the story (IN_C: an invalidate, a flush, a barrier)."""
        key = at or (core.call_pc(), core.engine.read("ra"))
        source = self._sources.get(key, _UNKNOWN) if keep else _UNKNOWN
        if source is _UNKNOWN:
            frame = core.users_frame(key[0])
            source = frame.source if frame is not None else None
            if keep:
                self._sources[key] = source
                state = self.native
                if state is not None and state.site_count < hooks.CALL_SITES and in_c:
                    state.sites[state.site_count] = hooks.CallSite(*key)
                    state.site_count += 1
        return source

    def _system_call(self, core: "Core", number: int) -> None:
        """An ecall that is no kmx call: one of the Linux system calls the C library makes
        (sim.kmx.linux), or a fault that says what it was."""
        if not self.linux.serves(number):
            raise core.fault(core.call_pc(), Linux.unknown(number, max(Call)), category=Category.NOT_SIMULATED)
        try:
            value = self.linux.call(core, number, core.system_call_arguments())
        except MemoryAccessError as error:
            raise self._bad_pointer(core, f"the C library's {Linux.name(number)} system call", error) from None
        except SystemCallFault as error:
            raise core.fault(core.call_pc(), str(error), category=error.category) from None
        if value is not None:
            core.set_return(value)

    def _bad_pointer(self, core: "Core", who: str, error: MemoryAccessError):
        """The fault of a call (WHO) given a pointer the thread's memory does not hold."""
        detail = self.thread.explainer.describe_address(error.address) if error.outside else error.why
        return core.fault(core.call_pc(), f"{who}: a pointer to {count_bytes(error.size)} at {error.address:#x}, {detail}")

    # -- the calls --------------------------------------------------------------------------

    def exit(self, core: "Core", code: int, _a1: int, _a2: int) -> None:
        self.thread.core_exited(core, _signed32(code))

    def _region_id(self, region_id: int) -> int:
        count = len(self.thread.regions)
        if region_id >= count:
            have = f"IDs 0 to {count - 1}" if count else "no regions"
            raise CallError(f"region ID {region_id} does not exist; the thread has {have}")
        return region_id

    def region(self, core: "Core", region_id: int, bytes_pointer: int, _a2: int) -> int:
        known = region_id < len(self.thread.regions)
        region = self.thread.regions[region_id] if known else None
        if bytes_pointer:
            size = region.size if region else 0
            self.thread.memory.write(bytes_pointer, struct.pack("<Q", size), core)
        return region.address if region else 0

    def region_uncached(self, core: "Core", region_id: int, _a1: int, _a2: int) -> int:
        if region_id >= len(self.thread.regions):
            return 0
        return self.thread.regions[region_id].address - UNCACHED_OFFSET

    def invalidate(self, core: "Core", region_id: int, _a1: int, _a2: int) -> None:
        self.thread.invalidate(self._region_id(region_id), core)

    def flush(self, core: "Core", region_id: int, _a1: int, _a2: int) -> None:
        self.thread.flush(self._region_id(region_id), core)

    def result(self, core: "Core", index: int, words: int, count: int) -> None:
        if count == 0 and index > RESULT_WORDS:
            raise CallError(
                f"index {index} is past the {RESULT_WORDS} result words (0 to {RESULT_WORDS - 1})"
            )
        if count and (index >= RESULT_WORDS or count > RESULT_WORDS - index):
            raise CallError(
                f"words {index} to {index + count - 1} do not fit: there are {RESULT_WORDS} "
                f"result words, 0 to {RESULT_WORDS - 1}"
            )
        if count:
            data = self.thread.memory.read(words, 4 * count)
            self.thread.result_words[index : index + count] = struct.unpack(f"<{count}I", data)

    def word(self, core: "Core", index: int, _a1: int, _a2: int) -> int:
        words = self.thread.words
        if index >= len(words):
            have = f"words 0 to {len(words) - 1}" if words else "no argument words"
            raise CallError(f"argument word {index} does not exist; the thread has {have}")
        return words[index]

    def word_count(self, core: "Core", _a0: int, _a1: int, _a2: int) -> int:
        return len(self.thread.words)

    def submit(self, core: "Core", _a0: int, _a1: int, _a2: int) -> None:
        self.thread.submit(core)

    def print(self, core: "Core", fmt: int, slots: int, count: int) -> None:
        if count > MAX_PRINT_ARGUMENTS:
            raise CallError(f"{count} arguments; kmx_print takes at most {MAX_PRINT_ARGUMENTS}")
        memory = self.thread.memory
        values = struct.unpack(f"<{count}Q", memory.read(slots, 8 * count)) if count else ()
        text = format_print(memory.read_string(fmt), values, memory.read_string)
        self.thread.print(core, text)

    def cycles(self, core: "Core", _a0: int, _a1: int, _a2: int) -> int:
        return core.clock  # the cycle model: one an instruction, or the timing model's (sim.hart.core)

    def cluster_number(self, core: "Core", _a0: int, _a1: int, _a2: int) -> int:
        return self.thread.number

    def barrier(self, core: "Core", _a0: int, _a1: int, _a2: int) -> None:
        self.thread.barrier(core)

    def assert_failed(self, core: "Core", expression: int, file: int, line: int) -> None:
        memory = self.thread.memory
        raise core.fault(
            core.call_pc(),
            f"assertion failed: {memory.read_string(expression)} "
            f"({memory.read_string(file).rsplit('/', 1)[-1]}:{_signed32(line)})",
        )
