"""A gdb remote stub for one cluster's thread: each core a gdb thread, all-stop.

The cluster's cores take turns on its host thread (sim.machine.schedule), so when one stops for
gdb the others are already still: nothing runs while gdb looks, and the schedule goes on
afterwards exactly where it was (a turn stopped at a breakpoint runs its remaining
instructions when gdb continues). What stops a core:

- a breakpoint (Z0, Z1: the same here): the block hook (sim/native/turns.c) stops the run
  before the block with it, and the core runs up to it (sim.hart.core);
- a watchpoint (Z2 write, Z3 read, Z4 access) on any bytes of the thread's memory: the
  fill hook refuses the watched accesses of the page (sim/native/fill.c), so the core
  stops before the instruction; the stub runs that one instruction with the watch off and,
  if it touched the watched bytes, reports the stop after it, as gdb expects;
- a step (vCont;s): the stepped core runs one instruction when its turn comes (the others
  go on with theirs meanwhile, as gdb's `c` for the other threads asks), a turn of one
  instruction, counted exactly (sim/native/turns.c);
- Ctrl-C in gdb: the running core stops at the end of its block;
- a fault, a failed assert or an ebreak of the thread: gdb sees it at the instruction (a
  signal: SIGSEGV, SIGILL, SIGBUS, SIGABRT, SIGTRAP). Continuing from an ebreak goes on
  after it; from a fault, the thread ends with the fault, as without gdb.

Every step counts as on the card: cycles, turns and the cache see the same instructions
with gdb attached as without (breakpoints do not change the code). gdb reads memory as the
core would load it (a region's page not in the cache reads as its fill would: DRAM's
bytes, or a strict-mode prior line's), but its reads change nothing: no line is filled,
no finding is gdb's. Its writes go through the cache model as a store of the core's: the
line is dirty, and an unflushed one is found as the thread's.
The code reads as the compiler wrote it, as the thread's own loads do (not the loader's
stand-ins and rewrites: sim.image.original).
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Protocol

import numpy as np

from ..hart import engine as engines
from ..hart.core import EXITED, READY
from ..hart.faults import CoreFault
from ..isa import decode, vector
from ..layout import PAGE
from ..memory.address_space import MemoryAccessError
from . import registers
from .remote import CLOSED, Connection

if TYPE_CHECKING:
    from ..hart.explain import Explainer
    from ..hart.core import Core
    from ..image.elf import ThreadImage
    from ..memory.address_space import AddressSpace


class Turns(Protocol):
    """Who hears of a turn (sim.observe.observers.Observers is one): a core gdb runs out of the
    schedule's turn starts and ends one of its own."""

    def turn_starts(self, core: "Core") -> None: ...
    def turn_ends(self, core: "Core") -> None: ...


class Thread(Protocol):
    """The thread gdb debugs, as the stub and its control see it (sim.machine.cluster.Cluster is
    one). A Protocol: the cluster makes the stub, and debug imports nothing above it."""

    number: int
    cores: list["Core"]
    image: "ThreadImage"
    image_base: int
    memory: "AddressSpace"
    explainer: "Explainer"
    observers: Turns
    running: "Core | None"  # the core whose turn it is (gdb's turn sets it)
    faulted: bool

    @property
    def all_exited(self) -> bool: ...
    def runnable(self) -> list["Core"]: ...
    def fail(self, fault: CoreFault) -> None: ...

SIGINT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGKILL, SIGSEGV = 2, 4, 5, 6, 7, 9, 11
WATCH_KINDS = {2: ("watch", 2), 3: ("rwatch", 1), 4: ("awatch", 3)}  # Z type -> (stop word, kinds bits)
POLL = 0.1  # seconds between looks at whether the card is stopping, while waiting for gdb
PACKET_SIZE = 0x8000
ADDRESS_END = 1 << 64  # the address space's end: an address or a span past it is refused
WATCH_LIMIT = 1 << 20  # the most bytes one watchpoint watches (its pages are watched one by one)
MAIN = "kmx_main"


class DebuggerGone(Exception):
    """gdb killed the thread, or the card is stopping: the run ends."""


@dataclass
class Watchpoint:
    address: int
    length: int
    kinds: int  # 1 reads, 2 writes
    word: str  # the stop reply's: watch, rwatch, awatch


@dataclass
class Resume:
    """What gdb asked for last: continue, or step one core; ONLY: the cores it resumed,
    when not all (gdb steps one core over a breakpoint it took out so: the others wait)."""

    step: "Core | None" = None
    only: frozenset[int] | None = None


@dataclass
class DebugOptions:
    """A session's gdb: the PORT to serve on (0: any free one), the ELF to name in the
    message, MONITOR(command words) for `monitor` commands (the text to show), and where
    to print how to attach."""

    port: int
    elf: str = ""
    monitor: Callable[[list[str]], str] | None = None
    say: Callable[[str], None] = field(default=lambda text: print(text, file=sys.stderr, flush=True))


class GdbStub:
    def __init__(self, cluster: Thread, options: DebugOptions, stopping: threading.Event) -> None:
        self.cluster = cluster
        self.options = options
        self._stopping = stopping
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._listener.bind(("127.0.0.1", options.port))
        except OSError as error:
            self._listener.close()
            raise ValueError(
                f"gdb: cannot serve on 127.0.0.1:{options.port} ({error.strerror or error}); "
                "choose another port, or 0 for any free one"
            ) from None
        self._listener.listen(1)
        self._listener.settimeout(POLL)
        self.port = self._listener.getsockname()[1]
        self.attached = threading.Event()  # gdb connected (or the run ended without it)
        self._connection: Connection | None = None
        self.breakpoints: set[int] = set()
        self._internal: set[int] = set()  # the stub's own: kmx_main, while every core runs to it
        self.watchpoints: list[Watchpoint] = []
        self._resume = Resume()
        self._selected = 0  # the core gdb's g, p, m and M packets are about (Hg)
        self._stopped_at: dict[int, int] = {}  # core -> the pc it was reported stopped at
        self._waiting = False  # the run goes on for gdb (it resumed it): a Ctrl-C may stop it
        self._told_running = False  # gdb waits for a stop reply
        self._pause = False  # Ctrl-C came
        self._pause_lock = threading.Lock()
        self._parking = True  # every core runs to kmx_main first
        self._killed = False
        self._detached = False
        self._last_stop = f"S{SIGTRAP:02x}"
        self._arrays: list = []  # the native copies of the breakpoints and watched pages (kept alive)
        main = next((start for start, _, name in cluster.image.symbols if name == MAIN), None)
        if main is not None:
            self._internal.add(cluster.image_base + main)
        self._rest: dict[int, int] = {}  # core -> what was left of the turn it parked in
        self._push()

    @property
    def killed(self) -> bool:
        return self._killed

    @property
    def active(self) -> bool:
        """The stub still stops the thread (gdb has not detached, nor killed it)."""
        return not (self._detached or self._killed)

    def attach_message(self) -> str:
        return (f"komorebi: the thread on cluster {self.cluster.number} waits for gdb at {MAIN} on every core; "
                f"attach with: gdb-multiarch -ex 'target remote :{self.port}' {self.options.elf}")

    # -- what the native hooks check ---------------------------------------------------------

    def _push(self) -> None:
        """Hand every core the breakpoints and the watched pages (sim/native/)."""
        points = sorted(self.breakpoints | self._internal) if self.active else []
        bp = np.array(points or [0], dtype=np.uint64)
        kinds: dict[int, int] = {}
        for w in self.watchpoints if self.active else []:
            for page in range(w.address // PAGE, (w.address + max(w.length, 1) - 1) // PAGE + 1):
                kinds[page * PAGE] = kinds.get(page * PAGE, 0) | w.kinds
        pages = np.array(sorted(kinds) or [0], dtype=np.uint64)
        marks = np.array([kinds[p] for p in sorted(kinds)] or [0], dtype=np.uint8)
        self._arrays = [bp, pages, marks]
        for core in self.cluster.cores:
            turn, debug = core.native.turn, core.native.debug
            turn.breakpoints = bp.ctypes.data_as(type(turn.breakpoints))
            turn.breakpoint_count = len(points)
            debug.pages = pages.ctypes.data_as(type(debug.pages))
            debug.kinds = marks.ctypes.data_as(type(debug.kinds))
            was, debug.count = debug.count, len(kinds)
            if kinds or was:
                if core.engine is not None:
                    core.flush_tlb()  # (pages the TLB holds would not come to the fill hook)

    def _off(self, core: "Core", breakpoints: bool, watches: bool) -> None:
        if not breakpoints:
            core.native.turn.breakpoint_count = 0
        if not watches:
            core.native.debug.count = 0

    # -- running the cores (on the cluster's host thread) ---------------------------------------

    def run_turn(self, core: "Core", count: int) -> None:
        """Run CORE's turn of COUNT instructions (0: until it blocks or exits), stopping
        for gdb on the way. Raises CoreFault, and DebuggerGone when the run is to end."""
        if count and core.number in self._rest:  # the turn it parked in at kmx_main goes on
            count = self._rest.pop(core.number)
        left = count
        while True:
            if self._stopping.is_set():
                raise DebuggerGone("the run was stopped")
            if not self.active:  # (detached: the rest of the turn runs as without gdb)
                core.run(left)
                return
            if self._pause:
                self._report(core, f"T{SIGINT:02x}")
                continue
            only = self._resume.only
            if only is not None and core.number not in only:  # (this turn waits: gdb resumed another core)
                self._out_of_turn(only, core)
                continue
            ran = self._advance(core, left)
            if count:
                left = max(left - ran, 0)
            if core.debug_stop is not None and core.debug_stop[0] == "parked":
                return
            if (count and left == 0) or core.state != READY or core.stopped_by_call:
                return

    def _advance(self, core: "Core", left: int) -> int:
        """Run CORE for at most LEFT instructions (0: no limit), or one when it is being
        stepped, and report to gdb what stopped it. Returns the instructions it ran."""
        stepping = self._resume.step is core
        resuming = self._stopped_at.pop(core.number, None) == core.pc
        before = core.cycles
        if stepping or (resuming and core.pc in self.breakpoints | self._internal):
            self._run_one(core)  # (past the breakpoint it stopped at)
        else:
            core.run(left)
        why = core.debug_stop
        hit = self._watched(core, why) if why is not None and why[0] == "watch" else None
        ran = core.cycles - before
        if hit is not None:
            self._report(core, hit)
        elif why is not None and why[0] == "breakpoint":
            if core.pc in self._internal and self._parking:
                self._park(core, left and max(left - ran, 0))
                core.debug_stop = ("parked",)
                return ran
            self._report(core, f"T{SIGTRAP:02x}swbreak:;")
        elif why is not None and why[0] == "pause":
            self._leave_stub(core)
            self._report(core, f"T{SIGINT:02x}")
        elif stepping and (ran or core.state != READY):
            self._leave_stub(core)
            self._report(core, f"T{SIGTRAP:02x}")
        return ran

    def _out_of_turn(self, only: frozenset[int], waiting: "Core") -> None:
        """gdb resumed only the cores ONLY (to step one over a breakpoint it took out):
        run them, out of the schedule's turn, until one stops for gdb. One that cannot run
        (it waits in a kmx call for the others) keeps gdb waiting, until a Ctrl-C."""
        while self._resume.only == only and not self._pause:
            if self._stopping.is_set():
                raise DebuggerGone("the run was stopped")
            ready = [c for c in self.cluster.cores if c.number in only and c.state == READY]
            if not ready:
                time.sleep(POLL / 2)
                self.cluster.runnable()  # (a core whose call completed is ready again)
                continue
            observers = self.cluster.observers  # (the core runs a turn of its own: on the timeline too)
            observers.turn_ends(waiting)
            observers.turn_starts(ready[0])
            self.cluster.running = ready[0]
            try:
                self._advance(ready[0], 0)
            finally:
                self.cluster.running = waiting
                observers.turn_ends(ready[0])
                observers.turn_starts(waiting)

    def _run_one(self, core: "Core", watches: bool = True) -> None:
        """Run one instruction of CORE with the breakpoints off (a step, or the step past
        the breakpoint it stopped at); WATCHES: the watchpoints stay on."""
        self._off(core, breakpoints=False, watches=watches)
        try:
            core.run(1)
        finally:
            self._push_core(core)

    def _push_core(self, core: "Core") -> None:
        turn, debug = core.native.turn, core.native.debug
        turn.breakpoint_count = len(self.breakpoints | self._internal) if self.active else 0
        count = len(self._arrays[1]) if self.watchpoints and self.active else 0
        if debug.count != count or count:
            debug.count = count
            if count and core.engine is not None:
                core.flush_tlb()  # (the page the step let through is in the TLB now)

    def _leave_stub(self, core: "Core") -> None:
        """A core stopped inside one of the loader's stubs (sim.isa.rewrite) runs on to the
        instruction after the one the stub stands for, which gdb knows."""
        stubs = self.cluster.image.stubs
        start, end = self.cluster.image_base + stubs.start, self.cluster.image_base + stubs.end
        for _ in range(64):
            if not (start <= core.pc < end) or core.state != READY:
                return
            self._run_one(core, watches=False)

    def _watched(self, core: "Core", why: tuple) -> str | None:
        """CORE stopped before an access of a watched page: run the access (the watch off)
        and say the stop reply if it touched a watchpoint's bytes (or, a store, changed
        them), else None."""
        _, pc, page_address, access = why
        start, size = page_address & ~(PAGE - 1), PAGE  # (what the access reaches, when the instruction does not say)
        try:
            bits = self.cluster.explainer.instruction(pc)
            if vector.is_memory(bits):
                span = vector.memory_span(bits, core.engine.x, core.vector_state().vl, registers.VLENB)
                if span is not None:
                    start, size = span
            else:
                exact = decode.effective_address(bits, core.engine.x)
                known = decode.memory_access(bits)
                if exact is not None and known is not None:
                    start, size = exact, max(known[1], 1)
        except MemoryAccessError:
            pass
        write = access == engines.WRITE
        before = [self._read_memory(w.address, w.length) for w in self.watchpoints]
        self._run_one(core, watches=False)
        for w, was in zip(self.watchpoints, before):
            touched = start < w.address + w.length and w.address < start + size
            changed = write and self._read_memory(w.address, w.length) != was
            if (touched or changed) and w.kinds & (2 if write else 1):
                return f"T{SIGTRAP:02x}{w.word}:{w.address:x};"
        return None

    def _park(self, core: "Core", left: int) -> None:
        """CORE reached kmx_main while every core runs to it: it waits there for the others,
        and its next turn is the LEFT instructions left of this one (so that the cores
        interleave as without gdb: what each runs before kmx_main touches only its own
        stack and registers)."""
        core.parked = True
        if left:
            self._rest[core.number] = left
        if all(c.parked or c.state == EXITED for c in self.cluster.cores):
            self._parking = False
            self._internal.clear()
            for c in self.cluster.cores:
                c.parked = False
            self._push()
            self._report(self.cluster.cores[0], f"T{SIGTRAP:02x}", first=True)

    def idle(self) -> None:
        """No core can run (they wait for Python to take a submission): a Ctrl-C stops
        them there."""
        if self._pause and self.active:
            running = next((c for c in self.cluster.cores if c.state != EXITED), self.cluster.cores[0])
            self._report(running, f"T{SIGINT:02x}")

    def faulted(self, core: "Core", fault: CoreFault) -> bool:
        """CORE faulted: gdb sees it at the instruction. Says whether the thread goes on
        (an ebreak, continued past); else it ends with the fault once gdb resumes."""
        if not self.active or core.engine is None:
            return False
        core.engine.write("pc", fault.pc)
        core.pc = fault.pc
        cause = fault.cause
        ebreak = cause.startswith("an ebreak")
        signal = (SIGTRAP if ebreak else SIGABRT if "assert" in cause else SIGILL if "instruction" in cause
                  and "fetch" not in cause else SIGBUS if "misaligned" in cause else SIGSEGV)
        self._output(f"{fault}\n")
        if self._parking:  # (before kmx_main: gdb has not seen the thread yet)
            self._parking = False
            self._internal.clear()
            for c in self.cluster.cores:
                c.parked = False
        self._report(core, f"T{signal:02x}", first=not self.attached.is_set())
        if ebreak and self.active:
            core.state = READY
            core.pc += 2 if self.cluster.memory.peek(fault.pc, 2)[0] & 3 != 3 else 4
            core.engine.write("pc", core.pc)
            return True
        if self._told_running:
            self._connection.send(f"X{signal:02x}")
            self._told_running = self._waiting = False
        return False

    def finished(self) -> None:
        """The thread ended (every core returned, or it faulted, or Python stopped the
        run): tell a waiting gdb, and let go of it."""
        connection = self._connection
        if connection is not None and self._told_running and not connection.closed:
            if self.cluster.all_exited:
                codes = [c.code or 0 for c in self.cluster.cores]
                connection.send(f"W{next((c for c in codes if c != 0), 0) & 0xFF:02x}")
            else:
                if not self.cluster.faulted:
                    self._output("the run was stopped from Python (run.stop, or the session's close)\n")
                connection.send(f"X{SIGKILL:02x}")
        self.close()

    def close(self) -> None:
        self.attached.set()
        self._listener.close()
        if self._connection is not None:
            self._connection.close()

    # -- stopping for gdb ------------------------------------------------------------------------

    def _report(self, core: "Core", reply: str, first: bool = False) -> None:
        """CORE stopped for gdb (the others are still): say REPLY (a stop reply, without
        its thread) and serve gdb until it resumes the run."""
        with self._pause_lock:  # (no Ctrl-C's pause may come after this: _interrupted)
            self._waiting = False
            self._pause = False
            for c in self.cluster.cores:
                c.pause_wanted = False
        self._resume = Resume()
        self._selected = core.number
        self._stopped_at = {core.number: core.pc}  # (only it goes past a breakpoint it is at without stopping)
        self._last_stop = f"{reply}thread:{core.number + 1:x};"
        if first:
            self._accept()
        else:
            self._send_stop()
        self._serve()

    def _send_stop(self) -> None:
        if self._told_running:
            self._connection.send(self._last_stop)
        self._told_running = False

    def _accept(self) -> None:
        self.options.say(self.attach_message())
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._connection = Connection(sock, self._interrupted, PACKET_SIZE, self.options.say)
            self.attached.set()
            return
        raise DebuggerGone("the run was stopped before gdb attached")

    def _interrupted(self) -> None:
        """Ctrl-C in gdb (on the connection's reader thread): stop the running core, asked
        again until the run stops (a stop that comes just before a run starts is lost). A
        Ctrl-C that comes before the resume it follows is handled stops at once after it."""
        with self._pause_lock:
            self._pause = True
        for _ in range(500):
            with self._pause_lock:
                if not self._pause or not self._waiting:
                    return
                running = self.cluster.running
                if running is not None:
                    running.pause()
            time.sleep(0.01)

    def _serve(self) -> None:
        """Answer gdb's packets until it resumes the run (or detaches, or kills it)."""
        while True:
            if self._stopping.is_set():
                raise DebuggerGone("the run was stopped")
            packet = self._connection.receive(POLL)
            if packet is False:
                continue
            if packet is CLOSED:  # gdb went away: the run goes on without it
                self._detach()
                return
            reply, resumed = self._answer(packet)
            if reply is not None:
                self._connection.send(reply)
            if self._killed:
                raise DebuggerGone("gdb killed the thread")
            if resumed:
                with self._pause_lock:
                    self._waiting = self._told_running = not self._detached
                    for c in self.cluster.cores:
                        c.pause_wanted = False
                return

    def _detach(self) -> None:
        self._detached = True
        self._listener.close()  # (a later gdb is refused, not left waiting)
        self.breakpoints.clear()
        self.watchpoints.clear()
        self._push()
        for c in self.cluster.cores:
            c.parked = False

    def _output(self, text: str) -> None:
        """TEXT on gdb's console (an O packet), when gdb is attached."""
        if self._connection is not None and not self._connection.closed:
            self._connection.send("O" + text.encode().hex())

    # -- the packets -------------------------------------------------------------------------------

    def _answer(self, packet: bytes) -> tuple[str | None, bool]:
        """The reply to PACKET and whether the run resumes."""
        text = packet.decode("latin-1")
        kind = text[:1]
        try:
            if kind == "?":
                return self._last_stop, False
            if kind == "q" or kind == "Q":
                return self._query(text), False
            if kind == "H":
                return self._select(text[1], text[2:]), False
            if kind == "T":
                return ("OK" if self._core(text[1:]) is not None else "E01"), False
            if kind == "g":
                core = self._current()
                return "".join(registers.read(core, n).hex() for n in range(len(registers.REGISTERS))), False
            if kind == "G":
                data = bytes.fromhex(text[1:])
                core, at = self._current(), 0
                for n, register in enumerate(registers.REGISTERS):
                    size = register.bits // 8
                    if at + size <= len(data) and n < registers.FIRST_V:
                        registers.write(core, n, data[at : at + size])
                    at += size
                return "OK", False
            if kind == "p":
                n = _size(text[1:])
                return (registers.read(self._current(), n).hex() if n < len(registers.REGISTERS) else "E45"), False
            if kind == "P":
                number, value = text[1:].split("=", 1)
                ok = registers.write(self._current(), _size(number), bytes.fromhex(value))
                return ("OK" if ok else "E01"), False
            if kind == "m":
                where, length = text[1:].split(",")
                data = self._read_memory(_address(where), min(_size(length), PACKET_SIZE // 2))
                return (data.hex() if data else "E14"), False
            if kind == "M":
                where, data = text[1:].split(":", 1)
                address, length = where.split(",")
                data = bytes.fromhex(data)
                if _size(length) != len(data) or _address(address) + len(data) > ADDRESS_END:
                    return "E22", False
                return self._write_memory(_address(address), data), False
            if kind in "Zz":
                return self._point(kind == "Z", text[1:]), False
            if kind == "c":
                return self._go(None, text[1:]), True
            if kind == "s":
                return self._go(self._current(), text[1:]), True
            if text.startswith("vCont?"):
                return "vCont;c;C;s;S", False
            if text.startswith("vCont;"):
                return self._vcont(text[6:])
            if text.startswith("vKill") or kind == "k":
                self._killed = True
                return ("OK" if kind == "v" else None), False
            if kind == "D":
                self._detach()
                return "OK", True
            if text.startswith("vMustReplyEmpty"):
                return "", False
        except (ValueError, IndexError, OverflowError):  # (whatever a packet holds, gdb gets an answer)
            return "E01", False
        return "", False  # not supported: gdb does without

    def _query(self, text: str) -> str:
        if text.startswith("qSupported"):
            return f"PacketSize={PACKET_SIZE:x};qXfer:features:read+;vContSupported+;swbreak+;hwbreak+;QStartNoAckMode+"
        if text == "QStartNoAckMode":
            self._connection.acks = False
            return "OK"
        if text.startswith("qXfer:features:read:"):
            name, _, span = text[len("qXfer:features:read:"):].partition(":")
            if name != "target.xml":
                return "E00"
            offset, length = (_size(x) for x in span.split(","))
            document = registers.target_xml()
            chunk = document[offset : offset + length]
            return ("l" if offset + length >= len(document) else "m") + chunk
        if text == "qC":
            return f"QC{self._selected + 1:x}"
        if text == "qfThreadInfo":
            return "m" + ",".join(f"{c.number + 1:x}" for c in self.cluster.cores)  # (an exited core too: gdb shows it)
        if text == "qsThreadInfo":
            return "l"
        if text.startswith("qThreadExtraInfo,"):
            core = self._core(text.split(",", 1)[1])
            if core is None:
                return "E01"
            state = core.state.value + (f" in {core.blocked_in}" if core.blocked_in else "")
            return f"cluster {self.cluster.number} core {core.number}, {state}".encode().hex()
        if text == "qAttached":
            return "1"
        if text == "qOffsets":
            base = self.cluster.image_base
            return f"Text={base:x};Data={base:x};Bss={base:x}"
        if text.startswith("qRcmd,"):
            return self._monitor(bytes.fromhex(text[6:]).decode(errors="replace"))
        if text == "qSymbol::":
            return "OK"
        return ""

    def _monitor(self, command: str) -> str:
        words = command.split()
        if not words or words[0] == "help":
            self._output("monitor cache REGION: what happened to each line of REGION so far\n"
                         "monitor findings: the coherence checker's findings so far\n")
            return "OK"
        if self.options.monitor is None or words[0] not in ("cache", "findings"):
            self._output(f"unknown monitor command {words[0]!r}: say 'monitor help'\n")
            return "OK"
        text = self.options.monitor(words)
        self._output(text if text.endswith("\n") else text + "\n")
        return "OK"

    def _core(self, thread: str) -> "Core | None":
        n = int(thread, 16)
        if n in (0, -1):
            return self.cluster.cores[self._selected]
        return self.cluster.cores[n - 1] if 1 <= n <= len(self.cluster.cores) else None

    def _current(self) -> "Core":
        return self.cluster.cores[self._selected]

    def _select(self, op: str, thread: str) -> str:
        if thread in ("0", "-1"):
            return "OK"
        core = self._core(thread)
        if core is None:
            return "E01"
        if op == "g":
            self._selected = core.number
        return "OK"

    def _go(self, step: "Core | None", address: str) -> str | None:
        if address:
            core = step or self._current()
            pc = _address(address)
            core.engine.write("pc", pc)
            core.pc = pc
        self._resume = Resume(step=step)
        return None

    def _vcont(self, actions: str) -> tuple[str | None, bool]:
        """vCont;ACTION[:thread];...: the first action that names a core applies to it, one
        without a thread to the rest (gdb's rule); a core no action names stays stopped."""
        step, resumed, everyone = None, set(), False
        for action in actions.split(";"):
            verb, _, thread = action.partition(":")
            if verb[:1] not in "cCsS":
                return "E01", False
            if not thread:
                everyone = True
                if verb[:1] in "sS":
                    step = step or self._current()
                continue
            core = self._core(thread)
            if core is None:
                return "E01", False
            if core.number in resumed:
                continue
            resumed.add(core.number)
            if verb[:1] in "sS":
                step = core
        only = None if everyone else frozenset(resumed)
        self._resume = Resume(step=step, only=only)
        return None, True

    def _point(self, insert: bool, text: str) -> str:
        """Z and z: a breakpoint (0, 1: the same here) or a watchpoint (2, 3, 4) at an
        address of the address space; a watchpoint of 1 byte to WATCH_LIMIT within it."""
        kind, address, length = text.split(",")[:3]
        kind, address, length = int(kind), _address(address), int(length.split(";")[0], 16)
        if kind in WATCH_KINDS and not (1 <= length <= WATCH_LIMIT and address + length <= ADDRESS_END):
            return "E22"
        if kind in (0, 1):
            if insert:
                self.breakpoints.add(address)
            else:
                self.breakpoints.discard(address)
        elif kind in WATCH_KINDS:
            word, kinds = WATCH_KINDS[kind]
            if insert:
                self.watchpoints.append(Watchpoint(address, length, kinds, word))
            else:
                self.watchpoints = [w for w in self.watchpoints if (w.address, w.length, w.word) != (address, length, word)]
        else:
            return ""
        self._push()
        return "OK"

    # -- memory as the core sees it ----------------------------------------------------------------

    def _read_memory(self, address: int, length: int) -> bytes:
        """Up to LENGTH bytes at ADDRESS as the selected core would load them (a shorter
        answer where the memory ends)."""
        memory, out = self.cluster.memory, bytearray()
        while len(out) < length:
            span = memory.find(address + len(out))
            if span is None:
                break
            at = address + len(out)
            size = min(length - len(out), span.end - at)
            try:  # (a region's bytes as the core would load them, filling nothing: no finding is gdb's)
                out += span.region.peek(at - span.base, size) if span.region is not None else memory.read(at, size)
            except MemoryAccessError:
                break
        return bytes(out)

    def _write_memory(self, address: int, data: bytes) -> str:
        core = self._current()
        try:
            self.cluster.memory.write(address, data, core)
        except MemoryAccessError:
            return "E14"
        span = self.cluster.memory.find(address)
        if span is not None and span.kind == "image":  # code may have changed: translate it again
            for c in self.cluster.cores:
                if c.engine is not None:
                    c.drop_translations()
        return "OK"


def _size(text: str) -> int:
    """A length or an offset of gdb's (hex): not negative; ValueError if not."""
    size = int(text, 16)
    if size < 0:
        raise ValueError(f"{text} is not a size")
    return size


def _address(text: str) -> int:
    """An address of gdb's (hex), within the address space; ValueError if not."""
    address = int(text, 16)
    if not 0 <= address < ADDRESS_END:
        raise ValueError(f"{text} is not an address")
    return address
