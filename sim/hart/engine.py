"""The engine under a hart: Unicorn 2.1 (QEMU 5.0's RV64GC), in the simulator's own build
with the X280's floating-point rules (sim.build.engine: NaN-boxing, fmin and fmax as F 2.2
says). The only module of the simulator that imports `unicorn`; the rest sees a hart
through sim.hart.core.

What the simulator asks of the engine: memory mapped at addresses (host memory it owns),
registers by their RISC-V names, runs from a pc to an address, a stop from any thread,
the two TLB and translation flushes, and hooks in C (sim.native): the TLB fill, the
block, and the interrupt hook, which runs the instructions the engine lacks and hands
every other exception to Python. No hook of the binding's (Python) is used.
docs/simulator.md ("How a thread runs", "What the simulated X280 runs") says why each is
used the way it is.

The binding loads the library that `LIBUNICORN_PATH` names before the one it ships, so
this module imports it with that set to the patched build's folder (built on first use),
and checks that the binding took it: a process that imported `unicorn` before komorebi
has the shipped library, whose floating point differs from the X280's, and is refused
with an error that says so.

The binding's private parts still needed, and why:

- `unicorn.unicorn_py3.unicorn.uclib`, the binding's handle on the C library: to register
  hooks written in C (the binding registers only Python callables) and to hand the native hooks the
  addresses of `uc_reg_read`, `uc_reg_write`, `uc_vmem_translate` and `uc_emu_stop`, which
  the C hooks call; its `_name`, the library's path.
- `Uc._uch`, the engine's C handle: for those C calls.
- `Uc._Uc__finalizer`, the binding's exit-time finalizer: disarmed, because at exit
  sim.machine.card stops the cores first (an engine closed under a running core crashes the
  process); `close` calls it once.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path
from typing import Sequence

from ..build import engine as engine_build


def _load_binding() -> Path:
    """The patched engine's folder, with the binding imported from it."""
    folder = engine_build.library_folder()
    if "unicorn" not in sys.modules:
        before = os.environ.get("LIBUNICORN_PATH")
        os.environ["LIBUNICORN_PATH"] = str(folder)
        try:
            import unicorn  # noqa: F401  (loads the library LIBUNICORN_PATH names)
        finally:
            if before is None:
                del os.environ["LIBUNICORN_PATH"]
            else:
                os.environ["LIBUNICORN_PATH"] = before
    from unicorn.unicorn_py3.unicorn import uclib

    loaded = Path(uclib._name)
    if loaded.parent.resolve() != folder.resolve():
        raise ImportError(
            f"komorebi-sim runs its own build of Unicorn {engine_build.VERSION} (in {folder}), whose "
            f"floating point is the X280's; but this process imported `unicorn` before the simulator "
            f"loaded its engine (at the first session's load), and the binding loaded {loaded}. "
            f"Import unicorn after the first session has loaded a program, or not at all."
        )
    return folder


LIBRARY_FOLDER = _load_binding()

from unicorn import (
    UC_ARCH_RISCV,
    UC_HOOK_BLOCK,
    UC_HOOK_INTR,
    UC_HOOK_TLB_FILL,
    UC_MODE_RISCV64,
    UC_PROT_ALL,
    UC_TLB_VIRTUAL,
    Uc,
    UcError,
)
from unicorn import unicorn_const as ucc
from unicorn.riscv_const import (
    UC_RISCV_REG_F0,
    UC_RISCV_REG_FFLAGS,
    UC_RISCV_REG_FRM,
    UC_RISCV_REG_MSTATUS,
    UC_RISCV_REG_PC,
    UC_RISCV_REG_X0,
)
from unicorn.unicorn_py3.unicorn import uclib  # unicorn 2.1's binding: the C library

# What an access was, as the TLB-fill hook and a refused access report it.
READ, WRITE, FETCH = ucc.UC_MEM_READ, ucc.UC_MEM_WRITE, ucc.UC_MEM_FETCH
PROT_READ, PROT_WRITE, PROT_EXEC = ucc.UC_PROT_READ, ucc.UC_PROT_WRITE, ucc.UC_PROT_EXEC
HOOKS = {"tlb_fill": UC_HOOK_TLB_FILL, "block": UC_HOOK_BLOCK, "interrupt": UC_HOOK_INTR}

MSTATUS_FS = 0x6000  # floating point on (the engine starts with mstatus.FS off: F instructions would trap)
ECALL = 8  # the exception number of an ecall

ABI_NAMES = ("zero ra sp gp tp t0 t1 t2 s0 s1 a0 a1 a2 a3 a4 a5 a6 a7 "
             "s2 s3 s4 s5 s6 s7 s8 s9 s10 s11 t3 t4 t5 t6").split()
_REGISTERS = {name: UC_RISCV_REG_X0 + n for n, name in enumerate(ABI_NAMES)}
_REGISTERS.update({f"x{n}": UC_RISCV_REG_X0 + n for n in range(32)}, fp=UC_RISCV_REG_X0 + 8, pc=UC_RISCV_REG_PC)
_REGISTERS.update({f"f{n}": UC_RISCV_REG_F0 + n for n in range(32)}, fflags=UC_RISCV_REG_FFLAGS, frm=UC_RISCV_REG_FRM)
REG_PC, REG_RA = UC_RISCV_REG_PC, _REGISTERS["ra"]  # the numbers the native hooks read them by
# hooks.h's copies of the register numbers, which the native code uses (tests/native/test_constants.py checks)
NATIVE_REGISTERS = {"x0": UC_RISCV_REG_X0, "fflags": UC_RISCV_REG_FFLAGS, "frm": UC_RISCV_REG_FRM,
                    "f0": UC_RISCV_REG_F0, "pc": UC_RISCV_REG_PC}

# For the native hooks: the C functions they call on the engine.
C_REG_READ = ctypes.cast(uclib.uc_reg_read, ctypes.c_void_p).value
C_EMU_STOP = ctypes.cast(uclib.uc_emu_stop, ctypes.c_void_p).value
C_EMU_START = ctypes.cast(uclib.uc_emu_start, ctypes.c_void_p).value  # (the turn loop's: sim/native/sched.c)
C_REG_WRITE = ctypes.cast(uclib.uc_reg_write, ctypes.c_void_p).value
C_TRANSLATE = ctypes.cast(uclib.uc_vmem_translate, ctypes.c_void_p).value  # (unicorn 2.1)
C_CTL = ctypes.cast(uclib.uc_ctl, ctypes.c_void_p).value


class EngineError(Exception):
    """The engine stopped with an error of its own (not an exception of the thread's)."""

    def __init__(self, error: UcError) -> None:
        super().__init__(str(error))
        self.invalid_instruction = error.errno == ucc.UC_ERR_INSN_INVALID

    @classmethod
    def of_code(cls, code: int) -> "EngineError":
        """The error a run from C (the turn loop) ended with: its uc_err CODE."""
        return cls(UcError(code))


class Engine:
    """One RV64 engine in virtual-TLB mode (its TLB-fill hook sees every page a core
    uses), floating point on."""

    def __init__(self) -> None:
        uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
        uc.ctl_set_tlb_mode(UC_TLB_VIRTUAL)
        finalize = getattr(uc, "_Uc__finalizer", None)
        if finalize is not None:  # at exit, sim.machine.card stops the cores; then the OS frees all
            finalize.atexit = False
        uc.reg_write(UC_RISCV_REG_MSTATUS, uc.reg_read(UC_RISCV_REG_MSTATUS) | MSTATUS_FS)
        self._uc = uc
        self.handle = uc._uch.value if hasattr(uc._uch, "value") else uc._uch  # for C calls

    def map(self, base: int, size: int, host_address: int) -> None:
        """Map SIZE bytes of host memory at HOST_ADDRESS to BASE (all permissions: the
        TLB-fill hook decides what each page allows)."""
        self._uc.mem_map_ptr(base, size, UC_PROT_ALL, host_address)

    def map_device(self, base: int, size: int, read: int, write: int, data: int) -> None:
        """Map SIZE bytes at BASE as a device: each load calls the C function READ (an
        address) and each store WRITE, with DATA (Unicorn's uc_mmio_map)."""
        status = uclib.uc_mmio_map(self._uc._uch, base, size, read, data, write, data)
        if status != 0:
            raise EngineError(UcError(status))

    def hook_native(self, kind: str, function: int, data: int) -> None:
        """Call the C FUNCTION (an address) with DATA at each KIND event ("tlb_fill",
        "block" or "interrupt": every exception, an ecall among them; the engine goes on at
        the pc the hook leaves, unless it stops the engine). Added before the first run:
        hooks added later may not fire."""
        handle = ctypes.c_size_t()
        status = uclib.uc_hook_add(self._uc._uch, ctypes.byref(handle), HOOKS[kind], function, data, 1, 0)
        if status != 0:
            raise EngineError(UcError(status))

    # -- registers ----------------------------------------------------------------------

    def read(self, name: str) -> int:
        """Register NAME: "pc", an ABI name ("a0", "sp", "s0"...), or "x5"."""
        return self._uc.reg_read(_REGISTERS[name])

    def read_many(self, names: Sequence[str]) -> list[int]:
        return self._uc.reg_read_batch([_REGISTERS[name] for name in names])

    def write(self, name: str, value: int) -> None:
        self._uc.reg_write(_REGISTERS[name], value & 0xFFFF_FFFF_FFFF_FFFF)

    def x(self, n: int) -> int:
        return self._uc.reg_read(UC_RISCV_REG_X0 + n)

    # -- running ------------------------------------------------------------------------

    def run(self, start: int, until: int, count: int = 0) -> None:
        """Run from START until the pc reaches UNTIL (an address of mapped memory), a
        stop, or COUNT instructions (0: no limit; Unicorn counts with a hook at every
        instruction, which costs). Raises EngineError."""
        try:
            self._uc.emu_start(start, until, count=count)
        except UcError as error:
            raise EngineError(error) from None

    def stop(self) -> None:
        """End the run after the current instruction (from any thread)."""
        self._uc.emu_stop()

    def flush_tlb(self) -> None:
        """Forget every page translation: each page comes through the fill hook again."""
        self._uc.ctl(ucc.UC_CTL_TLB_FLUSH, ucc.UC_CTL_IO_WRITE)

    def drop_translations(self, start: int | None = None, end: int | None = None) -> None:
        """Forget the translated code ([START, END), or all of it)."""
        if start is None:
            self._uc.ctl_flush_tb()
        else:
            self._uc.ctl_remove_cache(start, end)

    def close(self) -> None:
        """Free the engine and its code cache now, once it will not run again."""
        uc, self._uc = self._uc, None
        if uc is None:
            return
        finalize = getattr(uc, "_Uc__finalizer", None)
        if finalize is not None:
            finalize()  # uc_close, once
