"""The system calls that ask what the process runs on and may use, which libraries make
as they start: its CPUs, its memory and memory policy, its limits, random bytes.

Each is answered as Linux answers it on a machine that is the thread: one CPU for each
core of the thread (CPUs 0 to cores - 1, the cores' own numbers), no NUMA, the heap as
its memory (what malloc can have), and the limits of the simulator's layout. No value
is made up for what the card's own Linux would say. docs/c-library.md lists every call
and its answer.
"""

from __future__ import annotations

import hashlib
import struct

from ..._records import Category
from ..layout import STACK_BYTES

EPERM, ESRCH, EINVAL, ENOSYS = 1, 3, 22, 38

# Resources (asm-generic resource.h) and what the simulator's layout makes of them; the
# rest have no limit (Linux's RLIM_INFINITY), as on a Linux that set none.
RLIMIT_DATA, RLIMIT_STACK, RLIMIT_CORE, RLIMIT_NPROC, RLIMIT_NOFILE = 2, 3, 4, 6, 7
RLIMIT_NICE, RLIMIT_RTPRIO, RLIM_NLIMITS = 13, 14, 16
RLIM_INFINITY = (1 << 64) - 1
FILES = 3  # stdin, stdout, stderr: a thread opens no other (sim.kmx.linux)

GRND_NONBLOCK, GRND_RANDOM, GRND_INSECURE = 1, 2, 4
GETRANDOM_MOST = (1 << 25) - 1  # Linux's most bytes for one call
SYSINFO = struct.Struct("<q3Q6QHH4x2QI4x")  # struct sysinfo of a 64-bit kernel: 112 bytes

# The NUMA memory policy calls: a kernel built without NUMA (CONFIG_NUMA=n) has none of
# them, and answers ENOSYS; libraries that place buffers by node (a BLAS's mbind) take
# that as "one node" and go on.
MEMORY_POLICY = ("mbind", "get_mempolicy", "set_mempolicy", "migrate_pages", "move_pages",
                 "set_mempolicy_home_node")


class SystemCallFault(Exception):
    """A system call the thread may not make, with what to say (sim.kmx.linux's too), and
    its CATEGORY: the thread's mistake (abort), or what the simulator does not model."""

    def __init__(self, message: str, category: Category = Category.MISTAKE) -> None:
        super().__init__(message)
        self.category = category


class Resources:
    """The calls, for sim.kmx.linux.Linux (whose THREAD is the cluster's thread)."""

    thread: object

    def _start_resources(self) -> None:
        # (the thread's cores are made after its system: these fill as calls come)
        self._affinity: dict[int, int] = {}  # core -> the CPUs it may run on, when it set them
        self._drawn: dict[int, int] = {}  # core -> the bytes getrandom gave it

    def _task(self, core, pid: int) -> int | None:
        """The core that PID names for CORE's call (0: itself; a core's tid, core + 1,
        which for core 0 is the process's id, 1), or None."""
        pid &= 0xFFFF_FFFF
        if pid == 0:
            return core.number
        return pid - 1 if 1 <= pid <= len(self.thread.cores) else None

    # -- the CPUs ---------------------------------------------------------------------------

    def _sched_getaffinity(self, core, pid, size, mask, *_):
        task = self._task(core, pid)
        if task is None:
            return -ESRCH
        if size < 8 or size % 8:  # (a whole number of longs, as Linux asks)
            return -EINVAL
        every = (1 << len(self.thread.cores)) - 1
        self.thread.memory.write(mask, struct.pack("<Q", self._affinity.get(task, every)), core)
        return 8

    def _sched_setaffinity(self, core, pid, size, mask, *_):
        task = self._task(core, pid)
        if task is None:
            return -ESRCH
        given = self.thread.memory.read(mask, min(size, 8)) if size else b""
        cores = len(self.thread.cores)
        wanted = int.from_bytes(given, "little") & ((1 << cores) - 1)
        if not wanted:
            return -EINVAL  # (no CPU of the thread: Linux's answer)
        if not wanted >> task & 1:
            cpus = [n for n in range(cores) if wanted >> n & 1]
            named = f"CPU {cpus[0]}" if len(cpus) == 1 else "CPUs " + ", ".join(map(str, cpus))
            raise SystemCallFault(
                f"sched_setaffinity: core {task} is asked to run only on {named}; each core of the "
                f"thread is a CPU of its own ({'CPU 0' if cores == 1 else f'CPUs 0 to {cores - 1}'}) "
                "and cannot move to another (docs/c-library.md)", Category.NOT_SIMULATED,
            )
        self._affinity[task] = wanted
        return 0

    def _getcpu(self, core, cpu, node, *_):
        for where in (cpu, node):
            if where:
                self.thread.memory.write(where, struct.pack("<I", core.number if where == cpu else 0), core)
        return 0

    # -- memory -------------------------------------------------------------------------------

    def _sysinfo(self, core, where, *_):
        heap = self.thread.heap
        seconds = -(-core.cycles // 10**9)  # (one instruction a nanosecond; Linux rounds up)
        self.thread.memory.write(where, SYSINFO.pack(
            seconds, 0, 0, 0,  # uptime; no load average is kept
            heap.size, heap.size - heap.mapped, 0, 0, 0, 0,  # RAM: the heap; nothing shared, no buffers, no swap
            len(self.thread.cores), 0, 0, 0,  # tasks: the cores; (padding;) no high memory
            1,  # mem_unit
        ), core)
        return 0

    def _memory_policy(self, core, *_):
        return -ENOSYS

    _mbind = _get_mempolicy = _set_mempolicy = _migrate_pages = _move_pages = _memory_policy
    _set_mempolicy_home_node = _memory_policy

    # -- limits -------------------------------------------------------------------------------

    def limit(self, resource: int) -> int:
        """The soft and hard limit of RESOURCE (one value: they are the same)."""
        return {
            RLIMIT_STACK: STACK_BYTES,  # each core's stack, a guard below it (docs/simulator.md)
            RLIMIT_DATA: self.thread.heap.size,  # what malloc can map
            RLIMIT_NOFILE: FILES,
            RLIMIT_NPROC: len(self.thread.cores),  # no task can be made (clone is not served)
            RLIMIT_CORE: 0,  # no core dumps
            RLIMIT_NICE: 0,  # no priority can be raised (Linux's default)
            RLIMIT_RTPRIO: 0,
        }.get(resource, RLIM_INFINITY)

    def _prlimit64(self, core, pid, resource, new, old, *_):
        if self._task(core, pid) is None:
            return -ESRCH
        return self._limits(core, resource, new, old)

    def _getrlimit(self, core, resource, old, *_):
        return self._limits(core, resource, 0, old)

    def _setrlimit(self, core, resource, new, *_):
        return self._limits(core, resource, new, 0)

    def _limits(self, core, resource, new, old):
        resource &= 0xFFFF_FFFF
        if resource >= RLIM_NLIMITS:
            return -EINVAL
        limit = self.limit(resource)
        if new:
            soft, hard = struct.unpack("<QQ", self.thread.memory.read(new, 16))
            if soft > hard:
                return -EINVAL
            if (soft, hard) != (limit, limit):
                return -EPERM  # (the layout is fixed: a limit can be set only to what it is)
        if old:
            self.thread.memory.write(old, struct.pack("<QQ", limit, limit), core)
        return 0

    # -- random bytes -------------------------------------------------------------------------

    def _getrandom(self, core, buffer, count, flags, *_):
        """Each core's own stream, the same at every run: SHAKE-256 of the cluster, the core
        and how many bytes the core drew before, so that a run repeats whatever the
        schedule (AT_RANDOM's bytes are fixed the same way: sim.kmx.linux.start_block)."""
        if flags & ~(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) or flags & GRND_RANDOM and flags & GRND_INSECURE:
            return -EINVAL
        count = min(count, GETRANDOM_MOST)
        if count:
            drawn = self._drawn.get(core.number, 0)
            seed = b"komorebi-sim getrandom\0" + struct.pack("<BBQ", self.thread.number, core.number, drawn)
            self.thread.memory.write(buffer, hashlib.shake_256(seed).digest(count), core)
            self._drawn[core.number] = drawn + count
        return count
