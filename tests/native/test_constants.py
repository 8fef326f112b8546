"""Every number sim/native/hooks.h defines that Python has a copy of is the same number in
both: the names hooks.py repeats, the address map's (sim/layout.py), Unicorn's register,
access and protection numbers (sim/hart/engine.py and the unicorn package), the
card-size cache's shape and strict mode's prior byte. hooks.h is read as text: a
`#define NAME number-expression` or an `enum { NAME = number, ... }`."""

from __future__ import annotations

import re

from komorebi.sim.hart import engine  # (first: it loads the simulator's build of the engine)

import unicorn
import unicorn.riscv_const as riscv

from komorebi.sim import layout
from komorebi.sim.cache import model, registers
from komorebi.sim.native import hooks

HEADER = hooks.FOLDER / "hooks.h"


def _c_numbers() -> dict[str, int]:
    text = re.sub(r"/\*.*?\*/", " ", HEADER.read_text(), flags=re.S)
    numbers: dict[str, int] = {}

    def value(expression: str) -> int | None:
        expression = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)(?:ull|ul|u|ll)\b", r"\1", expression.strip())
        for name, known in numbers.items():
            expression = re.sub(rf"\b{name}\b", str(known), expression)
        if not re.fullmatch(r"[0-9a-fA-Fx()<>|+\-*/ ]+", expression):
            return None  # (a macro with arguments, a cast: not a number)
        return int(eval(expression.replace("/", "//")))  # noqa: S307 (digits and operators only)

    for name, expression in re.findall(r"^#define\s+([A-Z_][A-Z0-9_]*)[ \t]+(.+)$", text, flags=re.M):
        known = value(expression)
        if known is not None:
            numbers[name] = known
    for body in re.findall(r"enum\s*\{([^}]*)\}", text):
        for name, expression in re.findall(r"([A-Z_][A-Z0-9_]*)\s*=\s*([^,]+)", body):
            numbers[name] = value(expression)
    return numbers


def _register_offsets() -> dict[str, int]:
    """The offsets in their block of the cache's registers the simulator models, by name, as
    sim/cache/registers.py lists them."""
    named = {name: offset for table in (registers._CCACHE0, registers._PL2CACHE0)
             for offset, (name, _, _) in table.items()}
    return {name: named[name] for name in ("CCACHE0_FLUSH64", "CCACHE0_FLUSH32", "PL2CACHE0_CFLUSH64",
                                            "PL2CACHE0_FLUSHCOUNT")}


def test_the_headers_numbers_are_pythons():
    c = _c_numbers()
    python = {name: getattr(hooks, name) for name in c if isinstance(getattr(hooks, name, None), int)}
    python.update(
        PAGE=layout.PAGE, LINE=layout.LINE, LINES_PER_PAGE=layout.PAGE // layout.LINE,
        UNCACHED_OFFSET=layout.UNCACHED_OFFSET, PRIOR_BYTE=model.PRIOR_BYTE,
        UC_MEM_READ=hooks.MEM_READ, UC_MEM_WRITE=hooks.MEM_WRITE, UC_MEM_FETCH=hooks.MEM_FETCH,
        UC_PROT_READ=hooks.PROT_READ, UC_PROT_WRITE=hooks.PROT_WRITE, UC_PROT_EXEC=hooks.PROT_EXEC,
        UC_REG_X0=engine.NATIVE_REGISTERS["x0"], UC_REG_FFLAGS=engine.NATIVE_REGISTERS["fflags"],
        UC_REG_FRM=engine.NATIVE_REGISTERS["frm"], UC_REG_F0=engine.NATIVE_REGISTERS["f0"],
        UC_REG_PC=engine.NATIVE_REGISTERS["pc"],
        TILE_HARTS=hooks.TILE_HARTS, TILE_L1_SETS=hooks.TILE_L1[0], TILE_L1_WAYS=hooks.TILE_L1[1],
        TILE_L2_SETS=hooks.TILE_L2[0], TILE_L2_WAYS=hooks.TILE_L2[1],
        TILE_L3_SETS=hooks.TILE_L3[0], TILE_L3_WAYS=hooks.TILE_L3[1],
        CCACHE0_BASE=layout.CCACHE0, CCACHE0_SIZE=layout.CCACHE0_SIZE, PL2CACHE0_BASE=layout.PL2CACHE0,
        PL2CACHE0_STRIDE=layout.PL2CACHE0_STRIDE, PL2CACHE0_SIZE=layout.PL2CACHE0_SIZE,
        **_register_offsets(),
    )
    compared = {name: (c[name], python[name]) for name in python}
    assert {name for name, (ours, theirs) in compared.items() if ours != theirs} == set(), compared
    # (what is compared: the header's names Python repeats, enough of them to mean something)
    assert {"PAGE", "LINE", "UNCACHED_OFFSET", "WATCH_ALIAS", "BLOCK_CACHE", "MT_N", "LOOP_TURN", "PLAN_RANDOM",
            "SPAN_REGION", "EVENT_RESCUED", "UC_REG_PC", "TILE_L3_WAYS", "PRIOR_BYTE"} <= set(compared)


def test_the_engines_numbers_are_unicorns():
    """engine.py's (and so hooks.h's) register numbers, and hooks.py's access and
    protection numbers, are the unicorn package's."""
    assert engine.NATIVE_REGISTERS == {"x0": riscv.UC_RISCV_REG_X0, "fflags": riscv.UC_RISCV_REG_FFLAGS,
                                       "frm": riscv.UC_RISCV_REG_FRM, "f0": riscv.UC_RISCV_REG_F0,
                                       "pc": riscv.UC_RISCV_REG_PC}
    assert (hooks.MEM_READ, hooks.MEM_WRITE, hooks.MEM_FETCH) == (unicorn.UC_MEM_READ, unicorn.UC_MEM_WRITE,
                                                                   unicorn.UC_MEM_FETCH)
    assert (hooks.PROT_READ, hooks.PROT_WRITE, hooks.PROT_EXEC) == (unicorn.UC_PROT_READ, unicorn.UC_PROT_WRITE,
                                                                     unicorn.UC_PROT_EXEC)
