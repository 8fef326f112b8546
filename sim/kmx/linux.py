"""The Linux system calls the C library makes, answered as the card's thread would need.

A thread links a real C library: musl, as the ziglang package builds it for
riscv64-linux-musl (sim.build.thread; kmx_runtime/process.c starts it on each core). It
talks to the system the way it does on Linux, with an `ecall` whose a7 is a Linux system
call number (these are all above the kmx calls' numbers, 1 to 13: sim.kmx.traps). This
module is that system, for the calls a thread's C library makes:

- the thread's output: write and writev to fd 1 or 2 print as kmx_print does, under the
  core's name; read from fd 0 is the end of the file; there are no other files;
- memory: mmap, munmap and mremap of anonymous pages, from the thread's heap (sim.kmx.heap);
  brk does not grow (musl and zig fall back to mmap);
- the cores as the process's threads: gettid is the core's number + 1, futex waits by
  ending the core's turn (a wake is then spurious, which futex allows), sched_yield ends
  the turn;
- what the process runs on and may use (sim.kmx.resources): each core a CPU of its own
  (sched_getaffinity, sched_setaffinity, getcpu), the heap as its memory (sysinfo), no
  NUMA (mbind and the other memory policy calls are ENOSYS), the layout's limits
  (prlimit64, getrlimit, setrlimit), and random bytes the same at every run (getrandom);
- the end: exit ends the core, as a return from kmx_main does; exit_group (C's exit,
  _Exit) ends every core of the thread with that code; a signal (abort, raise) is a fault;
- time: clock_gettime counts the core's cycles, one instruction a nanosecond (the cycle
  model, docs/simulator.md), so two runs read the same times.

Any other call is a fault that names it. Every value a call returns is Linux's: a result,
or minus an errno.
"""

from __future__ import annotations

import codecs
import struct
from typing import TYPE_CHECKING, Callable

from ..._records import Category
from ..layout import PAGE
from .resources import MEMORY_POLICY, Resources, SystemCallFault

if TYPE_CHECKING:
    from ..hart.core import Core

MASK = (1 << 64) - 1

# errno values (asm-generic)
ENOENT, EBADF, EAGAIN, ENOMEM, EFAULT, ENODEV, EINVAL, ENOTTY, ESPIPE, ENOSYS = 2, 9, 11, 12, 14, 19, 22, 25, 29, 38

# The system call numbers of riscv64 (asm-generic unistd.h), by name: those answered, and
# the names of others a C library may make, for the message when one comes.
NUMBERS = {
    "ioctl": 29, "openat": 56, "close": 57, "lseek": 62, "read": 63, "write": 64, "readv": 65,
    "writev": 66, "pread64": 67, "pwrite64": 68, "ppoll": 73, "readlinkat": 78, "newfstatat": 79,
    "fstat": 80, "exit": 93, "exit_group": 94, "set_tid_address": 96, "futex": 98,
    "set_robust_list": 99, "nanosleep": 101, "clock_gettime": 113, "clock_getres": 114,
    "clock_nanosleep": 115, "sched_getaffinity": 123, "sched_yield": 124, "kill": 129,
    "tkill": 130, "tgkill": 131, "rt_sigaction": 134, "rt_sigprocmask": 135, "uname": 160,
    "getrlimit": 163, "gettimeofday": 169, "getpid": 172, "getppid": 173, "getuid": 174,
    "geteuid": 175, "getgid": 176, "getegid": 177, "gettid": 178, "sysinfo": 179, "brk": 214,
    "munmap": 215, "mremap": 216, "clone": 220, "execve": 221, "mmap": 222, "mprotect": 226,
    "madvise": 233, "wait4": 260, "prlimit64": 261, "getrandom": 278, "membarrier": 283,
    "statx": 291, "clone3": 435,
    # (what the process runs on and may use: sim.kmx.resources)
    "sched_setaffinity": 122, "setrlimit": 164, "getcpu": 168, "mbind": 235, "get_mempolicy": 236,
    "set_mempolicy": 237, "migrate_pages": 238, "move_pages": 239, "set_mempolicy_home_node": 450,
    # (not served, named so that a fault says which)
    "getcwd": 17, "dup": 23, "dup3": 24, "fcntl": 25, "faccessat": 48, "pipe2": 59, "getdents64": 61,
    "sched_setparam": 118, "sched_setscheduler": 119, "sched_getscheduler": 120, "sched_getparam": 121,
    "sched_get_priority_max": 125, "sched_get_priority_min": 126, "sigaltstack": 132, "times": 153,
    "getrusage": 165, "prctl": 167, "socket": 198, "mlock": 228, "munlock": 229, "rseq": 293,
}
NAMES = {number: name for name, number in NUMBERS.items()}

SIGNALS = {6: "SIGABRT (abort)", 11: "SIGSEGV", 8: "SIGFPE", 4: "SIGILL", 15: "SIGTERM", 9: "SIGKILL"}
MAP_SHARED, MAP_PRIVATE, MAP_FIXED, MAP_ANONYMOUS = 0x1, 0x2, 0x10, 0x20
MREMAP_MAYMOVE = 1
FUTEX_WAIT, FUTEX_WAKE, FUTEX_WAIT_BITSET, FUTEX_WAKE_BITSET = 0, 1, 9, 10
FUTEX_COMMAND = 0x7F  # (the private and clock flags off)
NANOSECONDS_PER_CYCLE = 1

# The aux vector (Linux's elf.h AT_*) the start block carries.
AT_NULL, AT_PHDR, AT_PHENT, AT_PHNUM, AT_PAGESZ = 0, 3, 4, 5, 6
AT_UID, AT_EUID, AT_GID, AT_EGID, AT_HWCAP, AT_SECURE, AT_RANDOM = 11, 12, 13, 14, 16, 23, 25
PHDR_BYTES = 56  # Elf64_Phdr
HWCAP = sum(1 << (ord(letter) - ord("a")) for letter in "imafdcv")  # the X280's base ISA letters


def start_block(stack_top: int, program_headers: bytes, core: int) -> tuple[int, bytes]:
    """What the simulator writes at the top of a core's stack before the core starts, as
    Linux does for a process: argc (0), argv and envp (empty), then the aux vector (where
    the program headers are, the page size, the ISA letters, the ids), then the program
    headers and 16 bytes for AT_RANDOM. Returns (its address, its bytes); the core's sp
    starts just below it."""
    headers = program_headers + bytes(-len(program_headers) % 16)
    random = bytes(((core + 1) * 0x9E3779B97F4A7C15 >> (8 * i)) & 0xFF for i in range(16))  # fixed: runs repeat
    words = 3 + 2 * 12
    size = 8 * words + len(headers) + len(random)
    address = (stack_top - size) & ~15
    headers_at = address + 8 * words
    aux = [
        AT_PHDR, headers_at, AT_PHENT, PHDR_BYTES, AT_PHNUM, len(program_headers) // PHDR_BYTES,
        AT_PAGESZ, PAGE, AT_HWCAP, HWCAP, AT_UID, 0, AT_EUID, 0, AT_GID, 0, AT_EGID, 0,
        AT_SECURE, 0, AT_RANDOM, headers_at + len(headers), AT_NULL, 0,
    ]
    block = struct.pack(f"<{words}Q", 0, 0, 0, *aux) + headers + random
    return address, block


class Linux(Resources):
    """The system calls of one cluster's THREAD (sim.machine.cluster.Cluster)."""

    def __init__(self, thread) -> None:
        self.thread = thread
        self._start_resources()
        self._text: dict[tuple[int, int], codecs.IncrementalDecoder] = {}  # (core, fd): UTF-8 split across writes
        self._calls: dict[int, Callable[..., int | None]] = {
            NUMBERS[name]: getattr(self, "_" + name)
            for name in (
                "ioctl", "openat", "close", "lseek", "read", "write", "writev", "fstat", "newfstatat",
                "exit", "exit_group", "set_tid_address", "futex", "set_robust_list", "nanosleep",
                "clock_gettime", "clock_getres", "clock_nanosleep", "sched_getaffinity", "sched_yield",
                "kill", "tkill", "tgkill", "rt_sigaction", "rt_sigprocmask", "uname", "getpid",
                "getppid", "getuid", "geteuid", "getgid", "getegid", "gettid", "brk", "munmap",
                "mremap", "mmap", "mprotect", "madvise", "membarrier", "getrandom", "prlimit64",
                "statx", "sched_setaffinity", "getcpu", "sysinfo", "getrlimit", "setrlimit",
                *MEMORY_POLICY,
            )
        }

    def serves(self, number: int) -> bool:
        return number in self._calls

    def call(self, core: "Core", number: int, arguments: tuple[int, ...]) -> int | None:
        """Answer system call NUMBER; the value for a0 (None: leave it)."""
        value = self._calls[number](core, *arguments)
        return None if value is None else value & MASK

    @staticmethod
    def name(number: int) -> str:
        return NAMES.get(number, f"number {number}")

    @staticmethod
    def unknown(number: int, last_kmx_call: int) -> str:
        name = NAMES.get(number)
        if name is None:
            return (
                f"an ecall with {number} in a7, which is no kmx call (kmx.h numbers them 1 to "
                f"{last_kmx_call}) and none of the Linux system calls the simulator serves"
            )
        return (
            f"an ecall with {number} in a7: the Linux system call {name}, which the simulator "
            "does not serve. A thread's C library may write to stdout and stderr, map memory "
            "for malloc, and use its cores as threads; it has no files, processes or signals "
            "(docs/c-library.md)"
        )

    # -- files: stdout and stderr only ------------------------------------------------------

    def _write(self, core, fd, buffer, count, *_):
        if fd not in (1, 2):
            return -EBADF
        if count:
            decoder = self._text.get((core.number, fd))
            if decoder is None:
                decoder = self._text[(core.number, fd)] = codecs.getincrementaldecoder("utf-8")("replace")
            text = decoder.decode(self.thread.memory.read(buffer, count))
            if text:
                self.thread.print(core, text)
        return count

    def _writev(self, core, fd, vector, count, *_):
        if fd not in (1, 2):
            return -EBADF
        if count > 1024:
            return -EINVAL
        pieces = struct.unpack(f"<{2 * count}Q", self.thread.memory.read(vector, 16 * count)) if count else ()
        total = 0
        for base, length in zip(pieces[::2], pieces[1::2]):
            if length:
                self._write(core, fd, base, length)
                total += length
        return total

    def _read(self, core, fd, *_):
        return 0 if fd == 0 else -EBADF  # stdin is empty

    def _ioctl(self, core, fd, *_):
        return -ENOTTY if fd in (0, 1, 2) else -EBADF

    def _openat(self, core, *_):
        return -ENOENT  # a thread has no files

    def _close(self, core, fd, *_):
        return 0 if fd in (0, 1, 2) else -EBADF

    def _lseek(self, core, fd, *_):
        return -ESPIPE if fd in (0, 1, 2) else -EBADF

    def _fstat(self, core, *_):
        return -ENOSYS

    _newfstatat = _statx = _fstat

    # -- the end ------------------------------------------------------------------------------

    def _exit(self, core, code, *_):
        self.thread.core_exited(core, _signed32(code))

    def _exit_group(self, core, code, *_):
        self.thread.every_core_exited(core, _signed32(code))

    def _kill(self, core, _pid, signal, *_):
        return self._signal(core, signal)

    def _tkill(self, core, _tid, signal, *_):
        return self._signal(core, signal)

    def _tgkill(self, core, _pid, _tid, signal, *_):
        return self._signal(core, signal)

    def _signal(self, core, signal):
        if signal == 0:
            return 0
        if signal == 6:
            raise SystemCallFault("abort() was called (the C library raised SIGABRT)")
        name = SIGNALS.get(signal, f"signal {signal}")
        raise SystemCallFault(f"the thread raised {name}; a thread has no signal handlers", Category.NOT_SIMULATED)

    def _rt_sigaction(self, core, _signal, _action, old, *_):
        if old:
            self.thread.memory.write(old, bytes(24), core)  # the default action
        return 0

    def _rt_sigprocmask(self, core, _how, _set, old, size, *_):
        if old:
            self.thread.memory.write(old, bytes(min(size, 128)), core)  # nothing blocked
        return 0

    # -- the cores as threads -----------------------------------------------------------------

    def _set_tid_address(self, core, *_):
        return core.number + 1

    def _gettid(self, core, *_):
        return core.number + 1

    def _getpid(self, core, *_):
        return 1

    def _getppid(self, core, *_):
        return 0

    def _getuid(self, core, *_):
        return 0

    _geteuid = _getgid = _getegid = _getuid

    def _set_robust_list(self, core, *_):
        return 0

    def _futex(self, core, address, operation, value, *_):
        command = operation & FUTEX_COMMAND
        if command in (FUTEX_WAIT, FUTEX_WAIT_BITSET):
            (now,) = struct.unpack("<I", self.thread.memory.read(address, 4))
            if now != value & 0xFFFF_FFFF:
                return -EAGAIN
            core.give_way()  # the others run; the waiter looks again at its next turn
            return 0
        if command in (FUTEX_WAKE, FUTEX_WAKE_BITSET):
            return 0  # (waiters wake at their next turn)
        return -ENOSYS

    def _sched_yield(self, core, *_):
        core.give_way()
        return 0

    def _nanosleep(self, core, *_):
        core.give_way()
        return 0

    _clock_nanosleep = _nanosleep

    def _membarrier(self, core, *_):
        return 0

    # -- time ---------------------------------------------------------------------------------

    def _clock_gettime(self, core, _clock, where, *_):
        nanoseconds = core.cycles * NANOSECONDS_PER_CYCLE
        self.thread.memory.write(where, struct.pack("<qq", nanoseconds // 10**9, nanoseconds % 10**9), core)
        return 0

    def _clock_getres(self, core, _clock, where, *_):
        if where:
            self.thread.memory.write(where, struct.pack("<qq", 0, NANOSECONDS_PER_CYCLE), core)
        return 0

    def _uname(self, core, where, *_):
        fields = ("Linux", "x280", "komorebi-sim", "", "riscv64", "")
        self.thread.memory.write(where, b"".join(f.encode().ljust(65, b"\0") for f in fields), core)
        return 0

    # -- memory -------------------------------------------------------------------------------

    def _brk(self, core, *_):
        return self.thread.heap.end  # the break never moves (past it is a guard page): malloc maps pages instead

    def _mmap(self, core, address, size, _protection, flags, fd, *_):
        if not flags & MAP_ANONYMOUS:
            return -EBADF if fd != -1 & MASK else -ENODEV
        if size == 0 or flags & MAP_FIXED or not flags & (MAP_PRIVATE | MAP_SHARED):
            return -EINVAL
        mapped = self.thread.heap.map(size)
        return -ENOMEM if mapped is None else mapped

    def _munmap(self, core, address, size, *_):
        return 0 if self.thread.heap.unmap(address, size) else -EINVAL

    def _mremap(self, core, address, old, new, flags, *_):
        heap = self.thread.heap
        if flags & ~MREMAP_MAYMOVE or address % PAGE or old == 0 or new == 0:
            return -EINVAL  # (MREMAP_FIXED and _DONTUNMAP: not served)
        if not heap.holds(address, old):
            return -EFAULT  # (not a mapping: Linux's answer)
        moved = heap.remap(address, old, new, bool(flags & MREMAP_MAYMOVE))
        return -ENOMEM if moved is None else moved

    def _mprotect(self, core, *_):
        return 0

    def _madvise(self, core, *_):
        return 0


def _signed32(value: int) -> int:
    value &= 0xFFFF_FFFF
    return value - (1 << 32) if value >> 31 else value
