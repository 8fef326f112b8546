"""The scalar instructions, from their table (sim/native/scalar.def, read as text: the one
place that encodes them, from which the interpreter's decoder is built too): each
instruction's encoding, operands, memory access and extension, and the compressed ones
with the 32-bit instruction each stands for.

    >>> find(0x20B52533).name, find(0x20B52533).extension  # sh1add a0, a0, a1
    ('sh1add', 'Zba')
    >>> hex(expand(0x4108))  # c.lw a0, 0(a0)
    '0x52503'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "native" / "scalar.def"
ENGINE, LACKS = "ENGINE", "LACKS"  # a row's op when the interpreter does not run it (scalar.def)


@dataclass(frozen=True)
class Access:
    """A scalar instruction's access of memory: a load (STORE False), a store (True) or an
    AMO, which does both (None), of SIZE bytes; SIGNED: sign-extended into its register."""

    store: bool | None
    size: int
    signed: bool = False


@dataclass(frozen=True)
class Row:
    """A row of scalar.def: an instruction is the row's when insn & MASK == MATCH."""

    name: str  # the mnemonic: "sh1add", "amoadd.w", "kmx.lr.w" (the loader's stand-in for lr.w)
    mask: int
    match: int
    format: str  # R, R4, I, S, B, U, J; A (an atomic: the address in rs1); V (the vector unit's)
    op: str  # the interpreter's operation ("ADD", "AMO_W"), ENGINE or LACKS
    access: Access | None
    extension: str  # "I", "Zba", ..., "kmx" for the loader's stand-ins

    def matches(self, insn: int) -> bool:
        return insn & self.mask == self.match


@dataclass(frozen=True)
class Compressed:
    """A compressed row of scalar.def: the 16-bit instruction and the 32-bit one it stands
    for (TO None: one the X280 lacks)."""

    name: str  # "c.addi4spn"
    mask: int
    match: int
    to: str | None  # the 32-bit row's name
    rd: str  # where each register is: R11_7, R6_2, R9_7, R4_2 (bits), X0, X1, X2
    rs1: str
    rs2: str
    immediate: tuple[int, ...]  # for the bits 12 down to 2, the immediate's bit each holds (-1: none)
    signed: bool
    when: frozenset[str]  # NONZERO_IMM, NONZERO_R11_7, NONZERO_R6_2, NOT_X2_R11_7
    extension: str

    def value(self, c: int) -> int:
        """The immediate of C (this row's)."""
        value, top = 0, -1
        for i, to in enumerate(self.immediate):
            if to >= 0:
                value |= (c >> (12 - i) & 1) << to
                top = max(top, to)
        return value - (1 << (top + 1)) if self.signed and top >= 0 and value >> top & 1 else value

    def holds(self, c: int) -> bool:
        """Whether C is this row's: its mask and match, and WHEN."""
        if c & self.mask != self.match:
            return False
        checks = {"NONZERO_IMM": lambda: self.value(c) != 0, "NONZERO_R11_7": lambda: c >> 7 & 31 != 0,
                  "NONZERO_R6_2": lambda: c >> 2 & 31 != 0, "NOT_X2_R11_7": lambda: c >> 7 & 31 != 2}
        return all(checks[w]() for w in self.when)


def _columns(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")]


def _access(text: str) -> Access | None:
    if text == "NONE":
        return None
    kind, size = re.fullmatch(r"(LOAD_S|LOAD_U|LOAD|STORE|AMO)\((\d+)\)", text).groups()
    store = {"STORE": True, "AMO": None}.get(kind, False)
    return Access(store, int(size), kind == "LOAD_S")


@cache
def _parsed() -> tuple[tuple[Row, ...], tuple[Compressed, ...], tuple[int, ...]]:
    """scalar.def's rows, its compressed rows, and each row's MAJOR."""
    text = re.sub(r"/\*.*?\*/", " ", TABLE.read_text(), flags=re.S)
    layouts, rows, compressed, majors = {}, [], [], []
    major = None
    for kind, rest in re.findall(r"^(MAJOR|ROW|IMMEDIATE|COMPRESSED)\((.*)\)\s*$", text, flags=re.M):
        columns = _columns(rest)
        if kind == "MAJOR":
            major = int(columns[0], 16)
        elif kind == "ROW":
            name, mask, match, format_, op, access, extension = columns
            rows.append(Row(name.replace("_", "."), int(mask, 16), int(match, 16), format_, op, _access(access),
                            extension.strip('"')))
            majors.append(major)
        elif kind == "IMMEDIATE":
            layouts[columns[0]] = (columns[1] == "SIGNED", tuple(int(b) for b in columns[2:]))
        else:
            name, mask, match, to, rd, rs1, rs2, immediate, when, extension = columns
            signed, bits = layouts[immediate]
            compressed.append(Compressed(name.replace("_", "."), int(mask, 16), int(match, 16),
                                         None if to == "NONE" else to.replace("_", "."), rd, rs1, rs2, bits, signed,
                                         frozenset(w.strip() for w in when.split("|")) - {"ALWAYS"},
                                         extension.strip('"')))
    return tuple(rows), tuple(compressed), tuple(majors)


def rows() -> tuple[Row, ...]:
    """scalar.def's rows of 32-bit instructions, in its order."""
    return _parsed()[0]


def compressed_rows() -> tuple[Compressed, ...]:
    """scalar.def's compressed rows, in its order."""
    return _parsed()[1]


def majors() -> tuple[int, ...]:
    """The MAJOR each row of rows() is under."""
    return _parsed()[2]


@cache
def _by_name() -> dict[str, Row]:
    return {row.name: row for row in rows()}


def row(name: str) -> Row:
    """The row of the instruction NAME ("sh1add")."""
    return _by_name()[name]


@cache
def _buckets() -> dict[tuple[int, int], tuple[Row, ...]]:
    """The rows by (major opcode, funct3), in scalar.def's order: a row whose mask leaves
    funct3 free is in all eight of its opcode's."""
    out: dict[tuple[int, int], list[Row]] = {}
    for r in rows():
        funct3s = [r.match >> 12 & 7] if r.mask & 0x7000 == 0x7000 else range(8)
        for funct3 in funct3s:
            out.setdefault((r.match & 0x7F, funct3), []).append(r)
    return {key: tuple(value) for key, value in out.items()}


@lru_cache(maxsize=4096)
def find(insn: int) -> Row | None:
    """The row of the 32-bit instruction INSN (the first that matches: scalar.def's rows are
    disjoint, or the inner one first), or None."""
    for r in _buckets().get((insn & 0x7F, insn >> 12 & 7), ()):
        if insn & r.mask == r.match:
            return r
    return None


def find_compressed(c: int) -> Compressed | None:
    """The compressed row of the 16-bit instruction C, or None."""
    return next((r for r in compressed_rows() if r.holds(c)), None)


def _register(c: int, where: str) -> int:
    return {"R11_7": c >> 7 & 31, "R6_2": c >> 2 & 31, "R9_7": 8 + (c >> 7 & 7), "R4_2": 8 + (c >> 2 & 7),
            "X0": 0, "X1": 1, "X2": 2}[where]


@lru_cache(maxsize=4096)
def expand(c: int) -> int | None:
    """The 32-bit instruction the compressed instruction C (16 bits) stands for, or None
    when it is none the X280 has."""
    r = find_compressed(c)
    if r is None or r.to is None:
        return None
    return encode(r.to, rd=_register(c, r.rd), rs1=_register(c, r.rs1), rs2=_register(c, r.rs2), imm=r.value(c))


def encode(name: str, rd: int = 0, rs1: int = 0, rs2: int = 0, imm: int = 0) -> int:
    """The instruction NAME ("addi") with these operands, its immediate where its format puts
    it (a shift amount is an I format's immediate)."""
    r = row(name)
    i = imm & 0xFFFF_FFFF
    out = r.match | rd << 7 | rs1 << 15 | rs2 << 20
    if r.format == "I":
        out |= (i & 0xFFF) << 20
    elif r.format == "S":
        out |= (i >> 5 & 0x7F) << 25 | (i & 0x1F) << 7
    elif r.format == "B":
        out |= (i >> 12 & 1) << 31 | (i >> 5 & 0x3F) << 25 | (i >> 1 & 0xF) << 8 | (i >> 11 & 1) << 7
    elif r.format == "U":
        out |= i & 0xFFFF_F000
    elif r.format == "J":
        out |= (i >> 20 & 1) << 31 | (i >> 1 & 0x3FF) << 21 | (i >> 11 & 1) << 20 | (i >> 12 & 0xFF) << 12
    if not r.matches(out):
        raise ValueError(f"{name}'s operands reach its fixed bits: rd {rd}, rs1 {rs1}, rs2 {rs2}, imm {imm}")
    return out


def _sext(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def immediate(insn: int, format_: str) -> int:
    """The immediate of the 32-bit instruction INSN of FORMAT_ (I, S, B, U, J), signed."""
    if format_ == "U":
        return _sext(insn & 0xFFFF_F000, 32)
    if format_ == "J":
        return _sext((insn >> 31 & 1) << 20 | (insn >> 12 & 0xFF) << 12 | (insn >> 20 & 1) << 11 | (insn >> 21 & 0x3FF) << 1, 21)
    if format_ == "B":
        return _sext((insn >> 31 & 1) << 12 | (insn >> 7 & 1) << 11 | (insn >> 25 & 0x3F) << 5 | (insn >> 8 & 0xF) << 1, 13)
    if format_ == "S":
        return _sext((insn >> 25) << 5 | (insn >> 7 & 31), 12)
    return _sext(insn >> 20, 12)
