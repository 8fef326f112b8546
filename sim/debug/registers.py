"""The registers gdb sees of a core, and the target description that names them.

gdb numbers the registers as the description does: x0-x31 (by their ABI names) and pc,
f0-f31, then fflags, frm and fcsr (org.gnu.gdb.riscv.cpu and .fpu), the counters and the
vector unit's CSRs (org.gnu.gdb.riscv.csr: cycle, time, instret, vstart, vxsat, vxrm,
vcsr, vl, vtype, vlenb), and v0-v31, VLEN bits each (org.gnu.gdb.riscv.vector). The
counters are the core's own (sim.isa.stand_in: an instruction a cycle). What can be
written: x, pc, f, fflags, frm and fcsr; the counters and the vector unit are read only
(a write is refused with an error gdb shows).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..hart.engine import ABI_NAMES
from ..isa.target import VLEN

if TYPE_CHECKING:
    from ..hart.core import Core

FPR_NAMES = ("ft0 ft1 ft2 ft3 ft4 ft5 ft6 ft7 fs0 fs1 fa0 fa1 fa2 fa3 fa4 fa5 fa6 fa7 "
             "fs2 fs3 fs4 fs5 fs6 fs7 fs8 fs9 fs10 fs11 ft8 ft9 ft10 ft11").split()
CSRS = ("cycle", "time", "instret", "vstart", "vxsat", "vxrm", "vcsr", "vl", "vtype", "vlenb")
VLENB = VLEN // 8


@dataclass(frozen=True)
class Register:
    name: str
    bits: int
    feature: str
    type: str
    group: str = ""


def _table() -> list[Register]:
    out = [Register(name, 64, "cpu", "code_ptr" if name == "ra" else "data_ptr" if name in ("sp", "gp", "tp", "fp")
                    else "int") for name in ABI_NAMES]
    out.append(Register("pc", 64, "cpu", "code_ptr"))
    out += [Register(name, 64, "fpu", "ieee_double", "float") for name in FPR_NAMES]
    out += [Register(name, 64, "fpu", "int", "float") for name in ("fflags", "frm", "fcsr")]
    out += [Register(name, 64, "csr", "int", "csr") for name in CSRS]
    out += [Register(f"v{n}", VLEN, "vector", "riscv_vector", "vector") for n in range(32)]
    return out


REGISTERS = _table()
NUMBER = {register.name: n for n, register in enumerate(REGISTERS)}
PC, FIRST_F, FFLAGS, FIRST_V = NUMBER["pc"], NUMBER["ft0"], NUMBER["fflags"], NUMBER["v0"]
FEATURES = {"cpu": "org.gnu.gdb.riscv.cpu", "fpu": "org.gnu.gdb.riscv.fpu", "csr": "org.gnu.gdb.riscv.csr",
            "vector": "org.gnu.gdb.riscv.vector"}


def target_xml() -> str:
    """The target description gdb reads (qXfer:features:read:target.xml)."""
    parts = ['<?xml version="1.0"?>', '<!DOCTYPE target SYSTEM "gdb-target.dtd">', "<target>",
             "<architecture>riscv:rv64</architecture>"]
    for key, feature in FEATURES.items():
        parts.append(f'<feature name="{feature}">')
        if key == "vector":
            for kind, bits in (("uint8", 8), ("uint16", 16), ("uint32", 32), ("uint64", 64), ("uint128", 128)):
                parts.append(f'<vector id="{kind}s" type="{kind}" count="{VLEN // bits}"/>')
            parts.append('<union id="riscv_vector">')
            for field, kind in (("b", "uint8"), ("s", "uint16"), ("w", "uint32"), ("l", "uint64"), ("q", "uint128")):
                parts.append(f'<field name="{field}" type="{kind}s"/>')
            parts.append("</union>")
        for n, register in enumerate(REGISTERS):
            if register.feature == key:
                group = f' group="{register.group}"' if register.group else ""
                parts.append(f'<reg name="{register.name}" bitsize="{register.bits}" regnum="{n}" '
                             f'type="{register.type}"{group}/>')
        parts.append("</feature>")
    parts.append("</target>")
    return "\n".join(parts)


def read(core: "Core", n: int) -> bytes:
    """Register N of CORE, little-endian, as gdb's packets carry it."""
    engine = core.engine
    if n < 32:
        return struct.pack("<Q", engine.x(n))
    if n == PC:
        return struct.pack("<Q", engine.read("pc"))
    if FIRST_F <= n < FIRST_F + 32:
        return struct.pack("<Q", engine.read(f"f{n - FIRST_F}"))
    name = REGISTERS[n].name
    if name in ("fflags", "frm"):
        return struct.pack("<Q", engine.read(name))
    if name == "fcsr":
        return struct.pack("<Q", engine.read("frm") << 5 | engine.read("fflags"))
    if name in ("cycle", "instret", "time"):
        return struct.pack("<Q", core.counter(name))
    state = core.vector_state()
    if n >= FIRST_V:
        v = n - FIRST_V
        return state.registers[v * VLENB : (v + 1) * VLENB]
    value = {"vstart": state.vstart, "vxsat": state.vxsat, "vxrm": state.vxrm,
             "vcsr": state.vxrm << 1 | state.vxsat, "vl": state.vl, "vtype": state.vtype, "vlenb": VLENB}[name]
    return struct.pack("<Q", value)


def write(core: "Core", n: int, data: bytes) -> bool:
    """Write register N of CORE from DATA (little-endian); False for one gdb may not write."""
    if n >= len(REGISTERS) or len(data) != REGISTERS[n].bits // 8:
        return False
    engine = core.engine
    value = int.from_bytes(data[:8], "little")
    if n == 0:
        return True  # x0 stays 0
    if n < 32:
        engine.write(f"x{n}", value)
    elif n == PC:
        engine.write("pc", value)
        core.pc = value
    elif FIRST_F <= n < FIRST_F + 32:
        engine.write(f"f{n - FIRST_F}", value)
    elif REGISTERS[n].name in ("fflags", "frm"):
        engine.write(REGISTERS[n].name, value & (0x1F if REGISTERS[n].name == "fflags" else 7))
    elif REGISTERS[n].name == "fcsr":
        engine.write("fflags", value & 0x1F)
        engine.write("frm", value >> 5 & 7)
    else:
        return False
    return True
