"""The table of the scalar instructions (sim/native/scalar.def): the interpreter's decoder
(sim/native/decode.c) and Python's (sim.isa.scalar) read it alike, its rows are disjoint, and
each row is the instruction zig's clang assembles for its name; a compressed one stands for
the 32-bit instruction the assembler makes of the same operands."""

from __future__ import annotations

import ctypes
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from komorebi.sim.isa import decode, rewrite, scalar, stand_in, target
from komorebi.sim.native import hooks
from tests.isa.test_vs_qemu_isa import INTEGER, UNARY

ROWS = scalar.rows()
INDEX = {row: n for n, row in enumerate(ROWS)}
OWN = {"Zba", "Zbb", "Zfh", "kmx", "V", "Xsfvfnrclipxfqf"}  # the extensions of what the engine lacks
VECTOR_CSR, ENGINE_CSR = 0xC20, 0x001  # vl, fflags


@pytest.fixture(scope="module")
def c_decode():
    """WORD -> (row, op, own, imm, the 32-bit instruction) as the interpreter decodes it."""
    function = hooks.library().isa_decode_word
    function.argtypes = [ctypes.c_uint32, ctypes.POINTER(ctypes.c_int64 * 5)]
    function.restype = ctypes.c_int64
    out = (ctypes.c_int64 * 5)()

    def run(word: int) -> tuple[int, int, int, int, int]:
        assert function(word, ctypes.byref(out)) == len(ROWS)
        return tuple(out)

    return run


def _instances(row: scalar.Row, count: int = 8) -> list[int]:
    """The row's match, and COUNT more of its encodings with random bits where its mask is free
    (a CSR one's with the vector unit's CSR and one of the engine's)."""
    rnd = random.Random(row.name)
    out = [row.match] + [row.match | rnd.getrandbits(32) & ~row.mask for _ in range(count)]
    if row.op == "VCSR":
        out = [w & 0x000F_FFFF | csr << 20 for w in out for csr in (VECTOR_CSR, ENGINE_CSR)]
    return [w for w in out if scalar.find(w) is row]  # (the encodings of an inner row left out)


def test_every_row_decodes_alike_in_c_and_python(c_decode):
    ops = defaultdict(set)  # an op's name -> the numbers C gives it
    for row in ROWS:
        for word in _instances(row):
            found, op, own, imm, insn = c_decode(word)
            assert (ROWS[found].name, insn) == (row.name, word)
            if row.format in "ISBUJ":
                assert imm == scalar.immediate(word, row.format), row.name
            engine_csr = row.op == "VCSR" and word >> 20 != VECTOR_CSR
            runs = row.op not in (scalar.ENGINE, scalar.LACKS) and not engine_csr
            ops[row.op if runs else scalar.ENGINE].add(op)
            assert own == (runs and (row.extension in OWN or row.op == "VCSR")), row.name
    assert ops.pop(scalar.ENGINE) == {0}  # (OP_UNKNOWN: the interpreter stops before it)
    numbers = [n for numbers in ops.values() for n in numbers]
    assert all(len(n) == 1 for n in ops.values()) and len(set(numbers)) == len(numbers) and 0 not in numbers


def test_random_words_decode_alike_in_c_and_python(c_decode):
    rnd = random.Random(40)
    for _ in range(50_000):
        word = rnd.getrandbits(32) | 3
        row = scalar.find(word)
        assert c_decode(word)[0] == (-1 if row is None else INDEX[row]), hex(word)


def test_every_compressed_instruction_expands_alike_in_c_and_python(c_decode):
    for c in range(1 << 16):
        if c & 3 != 3:
            assert c_decode(c)[4] == (scalar.expand(c) or 0), hex(c)


def test_the_rows_are_disjoint_or_the_inner_one_first():
    by_major = defaultdict(list)
    for row, major in zip(ROWS, scalar.majors()):
        assert row.mask & 0x7F == 0x7F and row.match & 0x7F == major and row.match & ~row.mask == 0, row.name
        by_major[major].append(row)
    for rows in by_major.values():
        for i, a in enumerate(rows):
            for b in rows[i + 1:]:
                if (a.match ^ b.match) & a.mask & b.mask == 0:  # an encoding matches both
                    assert a.mask & b.mask == b.mask and a.mask != b.mask, (a.name, b.name)  # a inside b, first
    assert len({row.name for row in ROWS}) == len(ROWS)


def test_the_compressed_rows_are_disjoint_and_name_rows():
    compressed = scalar.compressed_rows()
    for c in range(1 << 16):
        if c & 3 != 3:
            assert sum(row.holds(c) for row in compressed) <= 1, hex(c)
    assert all(row.to is None or scalar.row(row.to) for row in compressed)
    assert len({row.name for row in compressed}) == len(compressed)


def test_what_the_x280_lacks_is_described():
    lacked = {row.extension for row in ROWS if row.op == scalar.LACKS}
    lacked |= {row.extension for row in scalar.compressed_rows() if row.to is None}
    assert lacked <= set(decode.EXTENSIONS)


def test_the_encoders_elsewhere_agree_with_the_table():
    """The loader's stubs encode from the table (sim.isa.rewrite) and fail on operands that
    reach a row's fixed bits; the QEMU comparison's own encoders, and the loader's stand-ins
    for lr and sc (sim.isa.stand_in), encode the rows of the same names."""
    assert scalar.find(rewrite.add(10, 11, 12)).name == "add" and rewrite.NOP == 0x13
    with pytest.raises(ValueError, match="fixed bits"):
        rewrite.slli(10, 11, 64)
    for name, encode in {**INTEGER, **UNARY}.items():
        assert scalar.find(encode(5, 6, 7 if name in INTEGER else 0)).name == name
    for width in ("w", "d"):
        for name in ("lr", "sc"):
            original = scalar.encode(f"{name}.{width}", rd=10, rs1=11, rs2=12 if name == "sc" else 0)
            assert scalar.find(stand_in.trapped(original).replacement).name == f"kmx.{name}.{width}"


# -- the rows as the assembler spells them ------------------------------------------------------

UNARY_INTEGER = {"clz", "ctz", "cpop", "sext.b", "sext.h", "orc.b", "rev8", "brev8", "clzw", "ctzw", "cpopw", "zext.h"}
INTEGER_FORMS = {"w", "wu", "l", "lu"}


def _float_operands(name: str) -> str:
    stem, *formats = name.split(".")
    if stem in ("feq", "flt", "fle", "fleq", "fltq"):
        return "a0, fa1, fa2"
    if stem == "fclass" or (stem == "fmv" and formats[0] == "x"):
        return "a0, fa1"
    if stem == "fmv":
        return "fa0, a1"
    if stem == "fli":
        return "fa0, 1.0"
    if stem == "fcvtmod":
        return "a0, fa1, rtz"
    if stem == "fcvt" and formats[0] in INTEGER_FORMS:
        return "a0, fa1"
    if stem == "fcvt" and formats[1] in INTEGER_FORMS:
        return "fa0, a1"
    if stem in ("fcvt", "fsqrt", "fround", "froundnx"):
        return "fa0, fa1"
    return "fa0, fa1, fa2"


def _assembly(row: scalar.Row) -> str | None:
    """The row's instruction as the assembler writes it (None: one it does not know, zig's
    LLVM 20 lacking SiFive's cache ones and the conversions between half and quad, or not
    one mnemonic: the loader's stand-ins, the vector unit's doors)."""
    n, f = row.name, row.format
    fp = n.startswith("f") and n not in ("fence", "fence.i")
    if row.extension in ("kmx", "SiFive cache") or f == "V" or n in ("fcvt.h.q", "fcvt.q.h"):
        return None
    if row.access is not None and f == "I":
        return f"{n} {'fa0' if fp else 'a0'}, 8(a1)"
    if f == "S":
        return f"{n} {'fa2' if fp else 'a2'}, 8(a1)"
    if f == "A":
        return f"{n} a0, (a1)" if n.startswith("lr") else f"{n} a0, a2, (a1)"
    simple = {"B": f"{n} a0, a1, .+16", "U": f"{n} a0, 5", "J": f"{n} a0, .+16", "R4": f"{n} fa0, fa1, fa2, fa3"}
    if f in simple:
        return simple[f]
    if n in ("fence", "fence.i", "ecall", "ebreak"):
        return n
    if n.startswith("cbo."):
        return f"{n} (a1)"
    if n.startswith("csrr"):
        return f"{n} a0, 0x001, {'3' if n.endswith('i') else 'a1'}"
    if n == "jalr":
        return "jalr a0, 8(a1)"
    if n in UNARY_INTEGER:
        return f"{n} a0, a1"
    if fp:
        return f"{n} {_float_operands(n)}"
    return f"{n} a0, a1, {3 if f == 'I' else 'a2'}"  # (3: an immediate, or a shift amount)


# (compressed, the 32-bit instruction it stands for): the immediates reach their layouts' bits
COMPRESSED = {
    "c.addi4spn": ("c.addi4spn a0, sp, 1020", "addi a0, sp, 1020"), "c.fld": ("c.fld fa0, 248(a1)", "fld fa0, 248(a1)"),
    "c.lw": ("c.lw a0, 124(a1)", "lw a0, 124(a1)"), "c.ld": ("c.ld a0, 248(a1)", "ld a0, 248(a1)"),
    "c.fsd": ("c.fsd fa2, 168(a1)", "fsd fa2, 168(a1)"), "c.sw": ("c.sw a2, 84(a1)", "sw a2, 84(a1)"),
    "c.sd": ("c.sd a2, 136(a1)", "sd a2, 136(a1)"), "c.addi": ("c.addi a0, -17", "addi a0, a0, -17"),
    "c.addiw": ("c.addiw a0, 21", "addiw a0, a0, 21"), "c.li": ("c.li a0, -32", "addi a0, zero, -32"),
    "c.addi16sp": ("c.addi16sp sp, -496", "addi sp, sp, -496"), "c.lui": ("c.lui a0, 0xfffe1", "lui a0, 0xfffe1"),
    "c.srli": ("c.srli a0, 37", "srli a0, a0, 37"), "c.srai": ("c.srai a0, 26", "srai a0, a0, 26"),
    "c.andi": ("c.andi a0, 13", "andi a0, a0, 13"), "c.sub": ("c.sub a0, a1", "sub a0, a0, a1"),
    "c.xor": ("c.xor a0, a1", "xor a0, a0, a1"), "c.or": ("c.or a0, a1", "or a0, a0, a1"),
    "c.and": ("c.and a0, a1", "and a0, a0, a1"), "c.subw": ("c.subw a0, a1", "subw a0, a0, a1"),
    "c.addw": ("c.addw a0, a1", "addw a0, a0, a1"), "c.j": ("c.j .-1366", "jal zero, .-1366"),
    "c.beqz": ("c.beqz a0, .-170", "beq a0, zero, .-170"), "c.bnez": ("c.bnez a0, .+86", "bne a0, zero, .+86"),
    "c.slli": ("c.slli a0, 63", "slli a0, a0, 63"), "c.fldsp": ("c.fldsp fa0, 504(sp)", "fld fa0, 504(sp)"),
    "c.lwsp": ("c.lwsp a0, 252(sp)", "lw a0, 252(sp)"), "c.ldsp": ("c.ldsp a0, 344(sp)", "ld a0, 344(sp)"),
    "c.jr": ("c.jr a0", "jalr zero, 0(a0)"), "c.mv": ("c.mv a0, a1", "add a0, zero, a1"),
    "c.ebreak": ("c.ebreak", "ebreak"), "c.jalr": ("c.jalr a0", "jalr ra, 0(a0)"),
    "c.add": ("c.add a0, a1", "add a0, a0, a1"), "c.fsdsp": ("c.fsdsp fa0, 328(sp)", "fsd fa0, 328(sp)"),
    "c.swsp": ("c.swsp a0, 164(sp)", "sw a0, 164(sp)"), "c.sdsp": ("c.sdsp a0, 456(sp)", "sd a0, 456(sp)"),
    "c.lbu": ("c.lbu a0, 1(a1)", None), "c.lhu": ("c.lhu a0, 2(a1)", None), "c.lh": ("c.lh a0, 2(a1)", None),
    "c.sb": ("c.sb a0, 1(a1)", None), "c.sh": ("c.sh a0, 2(a1)", None), "c.mul": ("c.mul a0, a1", None),
    "c.zext.b": ("c.zext.b a0", None), "c.sext.b": ("c.sext.b a0", None), "c.zext.h": ("c.zext.h a0", None),
    "c.sext.h": ("c.sext.h a0", None), "c.zext.w": ("c.zext.w a0", None), "c.not": ("c.not a0", None),
}
EXTENSIONS = "+zbs, +zbc, +zbkb, +zicond, +zicbom, +zicboz, +zfh, +zfa, +zfbfmin, +q, +zcb"


def _assembled(tmp_path: Path, name: str, lines: list[str], compressed: bool) -> bytes:
    source = tmp_path / f"{name}.s"
    source.write_text(f".option arch, {EXTENSIONS}\n.option {'rvc' if compressed else 'norvc'}\n.text\n"
                      + "\n".join(lines) + "\n")
    zig = [sys.executable, "-m", "ziglang"]
    done = subprocess.run([*zig, "cc", "-target", "riscv64-freestanding-none", f"-mcpu={target.DEFAULT_CPU}", "-c",
                           str(source), "-o", str(tmp_path / f"{name}.o")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([*zig, "objcopy", "-O", "binary", "-j", ".text", str(tmp_path / f"{name}.o"),
                           str(tmp_path / f"{name}.bin")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return (tmp_path / f"{name}.bin").read_bytes()


def test_each_row_is_the_instruction_the_assembler_makes_of_its_name(tmp_path):
    written = [(row, text) for row in ROWS if (text := _assembly(row)) is not None]
    code = _assembled(tmp_path, "rows", [text for _, text in written], compressed=False)
    assert len(code) == 4 * len(written)
    words = [int.from_bytes(code[4 * i:4 * i + 4], "little") for i in range(len(written))]
    wrong = [(text, hex(word), getattr(scalar.find(word), "name", None)) for (row, text), word in zip(written, words)
             if scalar.find(word) is not row]
    assert wrong == []


def test_each_compressed_row_stands_for_what_the_assembler_makes_of_its_operands(tmp_path, c_decode):
    assert set(COMPRESSED) == {row.name for row in scalar.compressed_rows()}
    names = sorted(COMPRESSED)
    short = _assembled(tmp_path, "short", [COMPRESSED[n][0] for n in names], compressed=True)
    assert len(short) == 2 * len(names)
    halves = [int.from_bytes(short[2 * i:2 * i + 2], "little") for i in range(len(names))]
    assert [getattr(scalar.find_compressed(c), "name", None) for c in halves] == names
    expanded = [n for n in names if COMPRESSED[n][1] is not None]
    long = _assembled(tmp_path, "long", [COMPRESSED[n][1] for n in expanded], compressed=False)
    wants = dict(zip(expanded, (int.from_bytes(long[4 * i:4 * i + 4], "little") for i in range(len(expanded)))))
    for name, c in zip(names, halves):
        want = wants.get(name)
        assert (scalar.expand(c), c_decode(c)[4]) == (want, want or 0), name
        assert decode.lacking(c) == (None if want else ("Zcb", name))
