"""The engine's hooks in C (sim/native/*.c, hooks.h says which file does what): built for
the host once into one library, loaded with ctypes.

Unicorn calls a hook written in Python through its binding, at about a microsecond a
call. The TLB-fill hook runs at every page a core touches first, and again whenever the
engine's TLB forgets a page (it holds a few hundred pages at first, so a pointer chase
over 32 MiB misses on most loads); the block hook runs at every basic block. In C they
cost tens of nanoseconds, and the fast path runs no Python at all.

The C functions read and write state that Python owns: the cache model's per-page flags
(numpy arrays) and host memory. The Structures below mirror hooks.h's structs.

The library is compiled with the `ziglang` package's clang for the host (on Linux without
libc: memcpy and memset come from the process), into the build cache (sim.build.cache), keyed
by a hash of the source and the compiler, and checked whole before it is loaded.
"""

from __future__ import annotations

import ctypes
import platform
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from .. import layout
from ..build import cache as build_cache
from ..build import toolchain
from ..build.cache import BuildError

FOLDER = Path(__file__).resolve().parent
# (scalar.def: the table of the scalar instructions; vector/: the vector unit, its files and
# its table of operations, ops.def)
SOURCES = tuple(sorted([*FOLDER.glob("*.c"), *FOLDER.glob("vector/*.c")]))
HEADERS = tuple(sorted([*FOLDER.glob("*.h"), *FOLDER.glob("*.def"), *FOLDER.glob("vector/*.h"),
                        *FOLDER.glob("vector/*.def")]))
# What a shared library is called on the host (the build and the loader need the name).
LIBRARY_SUFFIX = {"darwin": ".dylib", "win32": ".dll", "cygwin": ".dll"}.get(sys.platform, ".so")
NO_LIBC = ["-nostdlib"] if sys.platform.startswith("linux") else []
# The first build's progress line: what it is and about how long it takes (docs/install.md
# has the figures measured, and tests/docs/test_install_doc.py checks it quotes this line).
HOOKS_ANNOUNCE = (f"the simulator's native hooks for this machine (once per version: {len(SOURCES)} C files, "
                  "15 to 30 s on 2 cores, more on a busy machine)")

# watch.c's call at the thread's first uncached access to a region: (token, kind, offset, size)
LINE_EVENT = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64)
# What the cache model saw that Python words (hooks.h, EVENT_*: events.c queues them but
# EVENT_UNCACHED, which the model answers at once)
EVENT_STALE_READ, EVENT_STALE_FLUSH, EVENT_UNCACHED = 1, 2, 4  # (3: a line flushed, no longer told)
EVENT_MIXED_CACHED, EVENT_MIXED_UNCACHED, EVENT_FIRST_CACHED, EVENT_FIRST_UNCACHED, EVENT_RESCUED = 5, 6, 7, 8, 9
EVENT_READ_BEFORE_INVALIDATE = 10
EVENT_RETURNS = 8  # hooks.h: return addresses kept of an event's frames
CLEAN_IN_DRAM, CLEAN_COPY, CLEAN_LOADED = 0, 1, 2  # hooks.h: where a page's clean bytes are (watch.c, clean_place)
TOLD_AGAIN = 0x80  # hooks.h: a line's stale bytes were read again at once (watch.c)


class CacheEvent(ctypes.Structure):
    """One event the cache model queued (hooks.h, CacheEvent; events.c)."""

    _fields_ = [
        ("kind", ctypes.c_int64),
        ("region", ctypes.c_int64),
        ("offset", ctypes.c_uint64),
        ("size", ctypes.c_uint64),
        ("under", ctypes.c_int64),
        ("core", ctypes.c_int64),
        ("pc", ctypes.c_uint64),
        ("returns", ctypes.c_uint64 * EVENT_RETURNS),
        ("before_pc", ctypes.c_uint64),
        ("before_ra", ctypes.c_uint64),
        ("before_core", ctypes.c_int64),
    ]


class CacheEvents(ctypes.Structure):
    """A cluster's queue of them (hooks.h, CacheEvents): C grows it, Python empties it."""

    _fields_ = [
        ("events", ctypes.POINTER(CacheEvent)),
        ("count", ctypes.c_int64),
        ("capacity", ctypes.c_int64),
        ("lost", ctypes.c_uint64),
        ("acting", ctypes.c_void_p),
    ]
WATCH_ALIAS = 1 << 48  # hooks.h: where a watched page is mapped, past its address
# The cache's registers (watch.c): the blocks the engines map as devices, and their callbacks
DEVICE_BLOCKS = (("CCACHE0", layout.CCACHE0, layout.CCACHE0_SIZE, "ccache_read", "ccache_write"),
                 ("PL2CACHE0", layout.PL2CACHE0, layout.PL2CACHE0_SIZE, "pl2cache_read", "pl2cache_write"))
TRAP = ctypes.CFUNCTYPE(None, ctypes.c_int64)  # an exception for Python (isa.c, on_trap)
NO_TRAP = TRAP(lambda number: None)  # a closed core's
REG_READ = ctypes.c_void_p  # uc_reg_read, as a C function pointer

# hooks.h's copies of unicorn.h's constants
MEM_READ, MEM_WRITE, MEM_FETCH = 16, 17, 18
PROT_READ, PROT_WRITE, PROT_EXEC = 1, 2, 4

SPAN_IMAGE, SPAN_STACK, SPAN_REGION = 0, 1, 2
BLOCK_CACHE = 1024  # hooks.h: instruction counts of recent blocks
# (the heap is private data as a stack is: read and written, never run)
SPAN_KINDS = {"image": SPAN_IMAGE, "stack": SPAN_STACK, "heap": SPAN_STACK, "region": SPAN_REGION}

_u8 = ctypes.POINTER(ctypes.c_uint8)
_u64 = ctypes.POINTER(ctypes.c_uint64)
_i64 = ctypes.POINTER(ctypes.c_int64)


class RegionState(ctypes.Structure):
    """One region's lines in the cache model (hooks.h, CachedRegion; sim.cache.model.CachedRegion
    owns it)."""

    _fields_ = [
        ("view", _u8),
        ("dram", _u8),
        ("clean", _u8),
        ("filled", _u8),
        ("writable", _u8),
        ("prior", _u8),
        ("unpainted", _u8),
        ("loaded", _u8),
        ("written", _u8),
        ("read_early", _u8),
        ("copy_fill", _u8),
        ("write_pc", _u64),
        ("write_ra", _u64),
        ("write_core", ctypes.POINTER(ctypes.c_int8)),
        ("events", ctypes.POINTER(CacheEvents)),
        ("token", ctypes.c_int64),
        ("invalidated", ctypes.c_int32),
        ("copy_all", ctypes.c_int32),
        ("as_loaded", _u8),
        ("direct", ctypes.c_int64),
        ("fresh", _u64),
        ("prior_lines", _u8),
        ("dropped", _u64),
        ("told", _u8),
        ("line_events", _u8),
        ("loaded_bytes", _u8),
        ("on_uncached", LINE_EVENT),
        ("lines_known", ctypes.c_int64),
        ("uncached_seen", ctypes.c_int64),
        ("cached_lines", _u64),
        ("dirty_mask", _u64),
        ("cc_touched", _u64),
        ("uc_touched", _u64),
        ("mixed_told", _u64),
        ("dram_changed", _u64),
        ("side_mask", _u64),
        ("side", _u8),
        ("own_clean", _u8),
        ("read_pc", _u64),
        ("read_ra", _u64),
        ("tile", ctypes.c_void_p),
        ("base", ctypes.c_uint64),
        ("level_counts", _u64),
        ("rescued", _u8),
        ("read_cores", _u8),
        ("last_stale_read", ctypes.c_uint64),
        ("pages", ctypes.c_uint64),
        ("generation", _u64),
        ("noc_writes", ctypes.c_int64),
        ("forget_view", ctypes.c_int64),
        ("rescue_told", ctypes.c_int64),
        ("found", ctypes.c_int64),
        ("stopped_for", ctypes.c_int64),
    ]


FORGET_NONE, FORGET_HERE, FORGET_IN_PYTHON = 0, 1, 2  # hooks.h: how a drop gives a view's copies back
CALL_EVENTS, CALL_SITES = 256, 64  # hooks.h (calls.c)


class CallEvent(ctypes.Structure):
    _fields_ = [("core", ctypes.c_int64), ("number", ctypes.c_uint64), ("argument", ctypes.c_uint64),
                ("pc", ctypes.c_uint64), ("ra", ctypes.c_uint64), ("times", ctypes.c_uint64)]


class CallSite(ctypes.Structure):
    _fields_ = [("pc", ctypes.c_uint64), ("ra", ctypes.c_uint64)]


class CallsState(ctypes.Structure):
    """The kmx calls answered in C for one cluster's thread (hooks.h, Calls; calls.c)."""

    _fields_ = [
        ("on", ctypes.c_int64),
        ("ecall_past", ctypes.c_int64),
        ("cluster", ctypes.c_int64),
        ("words", _u64),
        ("word_count", ctypes.c_int64),
        ("region_count", ctypes.c_int64),
        ("addresses", _u64),
        ("regions", ctypes.POINTER(ctypes.POINTER(RegionState))),
        ("cores", ctypes.POINTER(ctypes.c_void_p)),
        ("core_count", ctypes.c_int64),
        ("story", ctypes.c_int64),
        ("generation", ctypes.c_uint64),
        ("looked", ctypes.c_uint64),
        ("sites", CallSite * CALL_SITES),
        ("site_count", ctypes.c_int64),
        ("events", CallEvent * CALL_EVENTS),
        ("event_count", ctypes.c_int64),
        ("answered", ctypes.c_uint64),
        ("barrier_arrivals", ctypes.c_int64),
        ("barrier_generation", ctypes.c_uint64),
        ("barrier_waiting", ctypes.c_uint64),
        ("exited", ctypes.c_int64),
        ("loop", ctypes.c_void_p),
        ("loop_bits", ctypes.c_uint64 * layout.CORES_PER_CLUSTER),
    ]


# hooks.h: the turn loop's plans and what it returns (sched.c)
PLAN_ROUND_ROBIN, PLAN_RANDOM, PLAN_REPLAY = 0, 1, 2
LOOP_STOPPED, LOOP_FULL, LOOP_TURN, LOOP_IDLE, LOOP_AGENT = 0, 1, 2, 3, 4
MT_N = 624


class GroupState(ctypes.Structure):
    """A host thread's cores taking turns (sched.c, Group; sim.machine.schedule)."""

    _fields_ = [
        ("strategy", ctypes.c_int64),
        ("quantum", ctypes.c_uint64),
        ("mt", ctypes.c_uint32 * MT_N),
        ("mt_index", ctypes.c_int64),
        ("script", _i64),
        ("script_length", ctypes.c_int64),
        ("script_at", ctypes.c_int64),
        ("last", ctypes.c_int64),
        ("record", _i64),
        ("record_length", ctypes.c_int64),
        ("record_capacity", ctypes.c_int64),
        ("instructions", ctypes.c_uint64),
        ("count", ctypes.c_int64),
        ("cores", ctypes.POINTER(ctypes.c_void_p)),
        ("pcs", _u64),
        ("ready", ctypes.c_uint64),
        ("stop", ctypes.c_int64),
        ("running", ctypes.c_int64),
        ("turn_core", ctypes.c_int64),
        ("turn_count", ctypes.c_int64),
        ("turn_error", ctypes.c_int64),
        ("turn_cycles", ctypes.c_uint64),
        ("agents", ctypes.c_uint64),
        ("agents_live", ctypes.c_int64),
        ("waits", ctypes.c_void_p),
        ("turn_python", ctypes.c_uint64),
        ("ended", ctypes.c_int64),
        ("clocks", ctypes.c_void_p),
        ("agent_costs", ctypes.c_void_p),
        ("agent_wake", ctypes.c_void_p),
    ]


class AgentWait(ctypes.Structure):
    """A Tensix stand-in's noc.wait (hooks.h, AgentWait; sim.noc.agent)."""

    _fields_ = [
        ("region", ctypes.c_void_p),
        ("offset", ctypes.c_uint64),
        ("size", ctypes.c_uint64),
        ("value", ctypes.c_uint64),
    ]


# hooks.h's sizes of the tile's levels (tile.c): (sets, ways)
TILE_HARTS, TILE_L1, TILE_L2, TILE_L3 = 4, (128, 4), (256, 8), (2048, 16)


class Tile(ctypes.Structure):
    """The tile's caches at the card's size (tile.c): which line each way holds."""

    _fields_ = [
        ("random", ctypes.c_uint64),
        ("evicted", ctypes.c_uint64),
        ("accessed", ctypes.c_uint64),
        ("l1", ctypes.c_uint64 * (TILE_HARTS * TILE_L1[0] * TILE_L1[1])),
        ("l2", ctypes.c_uint64 * (TILE_HARTS * TILE_L2[0] * TILE_L2[1])),
        ("l3", ctypes.c_uint64 * (TILE_L3[0] * TILE_L3[1])),
        ("harts_seen", ctypes.c_uint64),
    ]


class Watch(ctypes.Structure):
    """What watch.c's device callbacks of a region's span get (watch.c, Watch)."""

    _fields_ = [("region", ctypes.POINTER(RegionState)), ("core", ctypes.c_void_p)]


class SpanWatch(ctypes.Structure):
    """What reserve.c's device callbacks of an image's, a stack's or the heap's span get."""

    _fields_ = [("host", _u8), ("base", ctypes.c_uint64), ("core", ctypes.c_void_p)]


class SpanEntry(ctypes.Structure):
    _fields_ = [
        ("base", ctypes.c_uint64),
        ("end", ctypes.c_uint64),
        ("kind", ctypes.c_int64),
        ("region", ctypes.POINTER(RegionState)),
        ("host", _u8),
    ]


class EngineCalls(ctypes.Structure):
    """What the hooks call on the core's engine (sim/hart/engine.py hands the addresses)."""

    _fields_ = [
        ("reg_read", REG_READ),
        ("reg_pc", ctypes.c_int64),
        ("reg_ra", ctypes.c_int64),
        ("emu_stop", ctypes.c_void_p),
        ("core", ctypes.c_int64),
        ("ctl", ctypes.c_void_p),
        ("emu_start", ctypes.c_void_p),
        ("uc", ctypes.c_void_p),
    ]


class SpanTable(ctypes.Structure):
    _fields_ = [("spans", ctypes.POINTER(SpanEntry)), ("count", ctypes.c_int64),
                ("scratch_virtual", ctypes.c_uint64), ("scratch_physical", ctypes.c_uint64),
                ("scratch_host", _u8)]


class Refusal(ctypes.Structure):
    """The access the fill hook refused, for the fault message."""

    _fields_ = [("address", ctypes.c_uint64), ("access", ctypes.c_int64), ("watch", ctypes.c_int64)]


class TlbGrowth(ctypes.Structure):
    _fields_ = [
        ("fills", ctypes.c_uint64),
        ("refills", ctypes.c_uint64),
        ("grow_at", ctypes.c_uint64),
        ("grow", ctypes.c_int64),
    ]


class Turn(ctypes.Structure):
    _fields_ = [
        ("counting", ctypes.c_int64),
        ("cycles", ctypes.c_uint64),
        ("budget_on", ctypes.c_int64),
        ("remaining", ctypes.c_uint64),
        ("partial", ctypes.c_int64),
        ("block_address", ctypes.c_uint64),
        ("block_size", ctypes.c_uint64),
        ("uncounted_start", ctypes.c_uint64),
        ("uncounted_end", ctypes.c_uint64),
        ("current_address", ctypes.c_uint64),
        ("current_size", ctypes.c_uint64),
        ("breakpoints", _u64),
        ("breakpoint_count", ctypes.c_int64),
        ("breakpoint_hit", ctypes.c_uint64),
        ("stop_asked", ctypes.c_int64),
        ("block_keys", ctypes.c_uint64 * BLOCK_CACHE),
        ("block_counts", ctypes.c_uint32 * BLOCK_CACHE),
    ]


class IsaState(ctypes.Structure):
    """The instructions run in C rather than by the engine (isa.c)."""

    _fields_ = [
        ("reg_write", ctypes.c_void_p),
        ("translate", ctypes.c_void_p),
        ("on_trap", TRAP),
        ("illegal_past", ctypes.c_int64),
        ("interpret", ctypes.c_int64),
        ("probing", ctypes.c_int64),
        ("probed_pc", ctypes.c_uint64),
        ("traps", ctypes.c_uint64),
        ("interpreted", ctypes.c_uint64),
        ("episodes", ctypes.c_uint64),
        ("finished_turns", ctypes.c_uint64),
        ("python_calls", ctypes.c_uint64),
        ("scratch", ctypes.c_void_p),
        ("page_generation", ctypes.c_uint32),
        ("code_generation", ctypes.c_uint32),
    ]


class Device(ctypes.Structure):
    """What a core did to the cache's registers (watch.c)."""

    _fields_ = [
        ("line_flushes", ctypes.c_uint64),
        ("l2_flushes", ctypes.c_uint64),
        ("fault_address", ctypes.c_uint64),
        ("fault_size", ctypes.c_int64),
        ("fault_write", ctypes.c_int64),
        ("fault_pc", ctypes.c_uint64),
        ("fault_value", ctypes.c_uint64),
        ("low_half", ctypes.c_uint64),
        ("low_at", ctypes.c_uint64),
        ("low_pc", ctypes.c_uint64),
        ("retranslate", ctypes.c_int64),
    ]


class Debug(ctypes.Structure):
    """A debugger's watchpoints (sim/debug/): pages whose watched accesses the fill hook refuses."""

    _fields_ = [("pages", _u64), ("kinds", _u8), ("count", ctypes.c_int64)]


class Profile(ctypes.Structure):
    """The profile of a core's run (profile.c, sim/observe/profile.py): its tables, Python's."""

    _fields_ = [
        ("on", ctypes.c_int64),
        ("block_keys", _u64), ("block_runs", _u64), ("block_kinds", _u8),
        ("block_capacity", ctypes.c_int64), ("blocks", ctypes.c_int64),
        ("pc_keys", _u64), ("pc_runs", _u64), ("pc_capacity", ctypes.c_int64), ("pcs", ctypes.c_int64),
        ("node_parent", _u64), ("node_function", _u64), ("node_self", _u64), ("node_entered", _u64),
        ("node_index", ctypes.POINTER(ctypes.c_int64)), ("node_capacity", ctypes.c_int64), ("nodes", ctypes.c_int64),
        ("stack_node", _u64), ("stack_return", _u64),
        ("stack_capacity", ctypes.c_int64), ("depth", ctypes.c_int64), ("lost", ctypes.c_int64),
        ("functions", _u64), ("function_count", ctypes.c_int64),
        ("last_kind", ctypes.c_int64), ("last_end", ctypes.c_uint64),
        ("cache_keys", _u64), ("cache_runs", _u64), ("cache_capacity", ctypes.c_int64), ("caches", ctypes.c_int64),
        ("dropped", ctypes.c_uint64),
        ("block_cycles", _u64), ("pc_cycles", _u64), ("last_now", ctypes.c_uint64),
        ("last_slot", ctypes.c_int64), ("last_block", ctypes.c_int64),
        ("node_cycles", _u64), ("last_node", ctypes.c_int64),
    ]


class Original(ctypes.Structure):
    """The pages of the thread's code the loader changed, as written (code.c, Original)."""

    _fields_ = [
        ("base", ctypes.c_uint64),
        ("end", ctypes.c_uint64),
        ("bytes", _u8),
        ("image", _u8),
        ("changed", _u8),
        ("slots", _u64),
        ("slot_count", ctypes.c_int64),
        ("stubs", ctypes.c_uint64),
        ("stubs_end", ctypes.c_uint64),
    ]


RESERVING_CORES = layout.CORES_PER_CLUSTER  # hooks.h: a cluster's cores, for lr and sc (reserve.c)


class Reservations(ctypes.Structure):
    """A cluster's cores, for lr/sc (reserve.c, Reservations)."""

    _fields_ = [("cores", ctypes.c_void_p * RESERVING_CORES)]


LEVELS = 7  # hooks.h's LEVEL_*: DRAM, L1, L2, L3, the uncached alias, a flush's line, an invalidate's
LEVEL_NAMES = ("DRAM", "L1", "L2", "L3", "uncached", "flush", "invalidate")
LEVEL_DRAM, LEVEL_L1, LEVEL_L2, LEVEL_L3, LEVEL_UNCACHED, LEVEL_FLUSH, LEVEL_INVALIDATE = range(LEVELS)


class MemoryTime(ctypes.Structure):
    """The door for time (hooks.h, latency.c): the cycles a core's accesses took, by a table."""

    _fields_ = [("latency", ctypes.POINTER(ctypes.c_uint32)), ("per_line", ctypes.POINTER(ctypes.c_uint32)),
                ("cycles", ctypes.c_uint64), ("accesses", ctypes.c_uint64 * LEVELS)]


WENT = ("issue", "load-use", "dependency", "L2", "L3", "DRAM", "uncached", "vector unit", "branches",
        "divides", "kmx calls", "flushes")  # hooks.h's WENT_*: where a core's cycles went (timing.c)


class TimingHead(ctypes.Structure):
    """The head of a core's timing model (hooks.h, Timing): what Python sets and reads; the
    rest (timing_size bytes in all) is the model's own."""

    _fields_ = [
        ("on", ctypes.c_int64), ("param", ctypes.POINTER(ctypes.c_uint32)), ("shared", ctypes.c_void_p),
        ("hart", ctypes.c_int64), ("now", ctypes.c_uint64), ("instructions", ctypes.c_uint64),
        ("went", ctypes.c_uint64 * len(WENT)), ("branches", ctypes.c_uint64), ("mispredicts", ctypes.c_uint64),
        ("loads", ctypes.c_uint64), ("misses", ctypes.c_uint64 * 4), ("vector_ops", ctypes.c_uint64),
        ("engine_blocks", ctypes.c_uint64), ("engine_instructions", ctypes.c_uint64),
    ]


class TimingTile(ctypes.Structure):
    """A cluster's part of the timing model (hooks.h, TimingTile): its tile's tags, and when
    each hart last read the uncached alias."""

    _fields_ = [("tile", Tile), ("uncached_at", ctypes.c_uint64 * TILE_HARTS),
                ("uncached_from", ctypes.c_uint64 * TILE_HARTS)]


class CoreState(ctypes.Structure):
    """A core's state, a part a job (hooks.h, Core)."""

    _fields_ = [
        ("engine", EngineCalls),
        ("table", SpanTable),
        ("refused", Refusal),
        ("tlb", TlbGrowth),
        ("turn", Turn),
        ("isa", IsaState),
        ("device", Device),
        ("debug", Debug),
        ("profile", Profile),
        ("reserved", ctypes.c_uint64),
        ("reserved_at", ctypes.c_uint64),
        ("announced", ctypes.c_uint64),
        ("reservations", ctypes.POINTER(Reservations)),
        ("original", ctypes.POINTER(Original)),
        ("calls", ctypes.POINTER(CallsState)),
        ("site_pc", ctypes.c_uint64),
        ("memory", MemoryTime),
        ("timing", ctypes.c_void_p),
    ]


def scratch_size() -> int:
    """The bytes of memory the interpreter of a core needs (isa.c, Scratch)."""
    return library().isa_scratch_size()


@dataclass(frozen=True)
class VectorState:
    """A core's vector unit as isa_vector_state (isa.c) reads it."""

    registers: bytes  # v0-v31, 64 bytes each
    vl: int
    vtype: int
    vstart: int
    vxrm: int
    vxsat: int
    refused: int  # the element of the last vector access the memory refused (-1: none)
    refused_address: int  # and its address


def vector_state(scratch: int) -> VectorState:
    """The vector unit of the core whose interpreter scratch is at SCRATCH."""
    regs = (ctypes.c_uint8 * 2048)()
    csrs = (ctypes.c_uint64 * 7)()
    library().isa_vector_state(ctypes.c_void_p(scratch), regs, csrs)
    refused = csrs[5] - (1 << 64) if csrs[5] >> 63 else csrs[5]
    return VectorState(bytes(regs), csrs[0], csrs[1], csrs[2], csrs[3], csrs[4], refused, csrs[6])


def pointer(array, ctype=ctypes.c_uint8):
    """A C pointer to the first element of a numpy array (or None for None)."""
    if array is None:
        return None
    return ctypes.cast(array.ctypes.data, ctypes.POINTER(ctype))


def host_pointer(address: int) -> ctypes.POINTER(ctypes.c_uint8):
    return ctypes.cast(address, _u8)


def _build() -> Path:
    """The hooks built for the host: from the build cache (checked whole: a library cut
    short would crash the process when loaded), or compiled now."""
    # On Linux memcpy and memset come from the process at load; a .dylib or .dll must
    # name where its symbols come from, so elsewhere the system's C library is linked.
    # (-ffp-contract=off: hostfloat.h's exact error terms need each product rounded on its own)
    compile = [*toolchain.zig(), "cc", "-c", "-fPIC", "-O2", "-ffp-contract=off"]
    link = [*toolchain.zig(), "cc", "-shared", "-fPIC", "-O2", *NO_LIBC]
    # (the vector unit's functions start at cache lines: their speed moved with the size of
    # the code linked before them, which a file added to sim/native/ moved 16 bytes along
    # each line, and a vectorised dot product ran 4% slower for it)
    vector = ["-falign-functions=64"]
    key = build_cache.key_of(
        ["hooks", *(part for f in (*SOURCES, *HEADERS) for part in (f.relative_to(FOLDER).as_posix(), f.read_bytes())),
         *compile[1:], "vector/:", *vector, *link[1:], toolchain.zig_identity(), sys.platform, platform.machine()]
    )
    found = build_cache.lookup("host", key)
    if found is not None:
        return found[0]["hooks"]
    with build_cache.scratch("host") as folder:
        output = folder / f"hooks{LIBRARY_SUFFIX}"
        # (each file compiled by a compiler of its own, side by side, then linked)
        objects = [folder / (source.relative_to(FOLDER).as_posix().replace("/", "-") + ".o") for source in SOURCES]
        commands = [[*compile, *(vector if source.parent.name == "vector" else []), str(source), "-o", str(object_)]
                    for source, object_ in zip(SOURCES, objects)]
        done = toolchain.run_together(commands,
                                      what="the simulator's hooks", announce=HOOKS_ANNOUNCE, kind="first")
        if done.returncode == 0:
            done = toolchain.run([*link, *map(str, objects), "-o", str(output)], what="the simulator's hooks (linking)",
                                 kind="link")
        if done.returncode != 0 or not output.exists():
            problem = toolchain.zig_cache_problem(done.output)
            raise BuildError(
                problem or f"building the simulator's native hooks ({FOLDER}) for the host "
                f"failed:\n{done.output.strip()}"
            )
        return build_cache.store("host", key, {"hooks": output}, {})["hooks"]


_library: ctypes.CDLL | None = None
_lock = threading.Lock()


def library() -> ctypes.CDLL:
    """The native hooks, built (once per source and compiler) and loaded (once per process)."""
    global _library
    if _library is not None:  # (loaded: no lock on the way to a native call)
        return _library
    with _lock:
        if _library is None:
            loaded = ctypes.CDLL(str(_build()))
            loaded.region_access.argtypes = [
                ctypes.POINTER(RegionState), ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int,
                ctypes.POINTER(CoreState), ctypes.c_void_p,
            ]
            loaded.region_access.restype = ctypes.c_int
            loaded.struct_size.restype = ctypes.c_uint64
            loaded.isa_finish_turn.argtypes = [ctypes.c_void_p, ctypes.POINTER(CoreState)]
            loaded.isa_finish_turn.restype = ctypes.c_uint64
            loaded.isa_scratch_size.restype = ctypes.c_uint64
            loaded.isa_vector_state.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
            loaded.isa_vector_state.restype = None
            loaded.tile_access.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_int]
            loaded.tile_access.restype = ctypes.c_int
            loaded.group_choose.argtypes = [ctypes.POINTER(GroupState), ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)]
            loaded.group_choose.restype = ctypes.c_int64
            loaded.group_run.argtypes = [ctypes.POINTER(GroupState)]
            loaded.group_run.restype = ctypes.c_int64
            loaded.group_waits_met.argtypes = [ctypes.POINTER(GroupState)]
            loaded.group_waits_met.restype = ctypes.c_uint64
            # (a region's RegionState by its address: ctypes.addressof, taken once)
            loaded.noc_read.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p]
            loaded.noc_read.restype = None
            loaded.noc_holds.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64]
            loaded.noc_holds.restype = ctypes.c_int
            loaded.dram_store.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p]
            loaded.dram_store.restype = None
            loaded.lines_dropped.argtypes = [ctypes.c_void_p]
            loaded.lines_dropped.restype = None
            loaded.original_write.argtypes = [ctypes.POINTER(Original), ctypes.c_uint64, ctypes.c_uint64,
                                              ctypes.c_void_p]
            loaded.original_write.restype = None
            loaded.reservation_turn_ended.argtypes = [ctypes.POINTER(CoreState)]
            loaded.reservation_turn_ended.restype = None
            loaded.reservations_stored.argtypes = [ctypes.POINTER(Reservations), ctypes.c_int64, ctypes.c_uint64,
                                                   ctypes.c_uint64]
            loaded.reservations_stored.restype = None
            loaded.access_took.argtypes = [ctypes.POINTER(CoreState), ctypes.c_int, ctypes.c_uint64]
            loaded.access_took.restype = ctypes.c_uint64
            loaded.region_drop.argtypes = [ctypes.c_void_p, ctypes.c_int]
            loaded.region_drop.restype = None
            loaded.region_invalidated.argtypes = [ctypes.c_void_p]
            loaded.region_invalidated.restype = None
            loaded.region_forget_translations.argtypes = [ctypes.POINTER(CallsState), ctypes.c_void_p]
            loaded.region_forget_translations.restype = None
            loaded.region_dirty_lines.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p]
            loaded.region_dirty_lines.restype = ctypes.c_int64
            loaded.region_write_back.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
            loaded.region_write_back.restype = None
            loaded.region_put_clean.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
            loaded.region_put_clean.restype = None
            loaded.cache_events_free.argtypes = [ctypes.POINTER(CacheEvents)]
            loaded.cache_events_free.restype = None
            loaded.timing_size.restype = ctypes.c_uint64
            loaded.timing_head_size.restype = ctypes.c_uint64
            loaded.timing_invalidated.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64]
            loaded.timing_invalidated.restype = None
            loaded.timing_waited.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
            loaded.timing_waited.restype = None
            loaded.timing_call.argtypes = [ctypes.POINTER(CoreState), ctypes.c_uint64]
            loaded.timing_call.restype = None
            for which, mirror in enumerate((RegionState, SpanEntry, CoreState, Tile, GroupState, AgentWait,
                                            CallsState, CacheEvent, TimingTile)):
                size = loaded.struct_size(which)
                if size != ctypes.sizeof(mirror):  # the native hooks and this file disagree
                    raise RuntimeError(f"{mirror.__name__} is {ctypes.sizeof(mirror)} bytes here and {size} in the native hooks")
            _library = loaded
        return _library


def function(name: str) -> int:
    """The address of the native hooks' function NAME, for uc_hook_add."""
    return ctypes.cast(getattr(library(), name), ctypes.c_void_p).value


def forget_blocks(core: CoreState) -> None:
    """Forget what CORE's hooks know of its code: the block lengths (turns.c,
    instructions) and the decoded instructions (isa.c): the code changed."""
    turn = core.turn
    ctypes.memset(ctypes.addressof(turn) + Turn.block_keys.offset, 0, Turn.block_keys.size)
    core.isa.code_generation += 1


def forget_pages(core: CoreState) -> None:
    """Forget the page translations CORE's interpreter keeps (isa.c): the engine's TLB
    was flushed, so each page must come through the fill hook again."""
    core.isa.page_generation += 1
