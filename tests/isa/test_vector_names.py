"""The names faults give vector instructions (sim.isa.decode.vector_name): every vector
instruction of RVV 1.0, Zvfbfmin's and SiFive's Xsfvfnrclipxfqf's, assembled by zig's clang
for the X280, is named as it was written, and the encodings RVV 1.0 reserves are named as
reserved."""

from __future__ import annotations

import subprocess
import sys

import pytest

from komorebi.sim.isa import decode, target

VV = "vadd vsub vminu vmin vmaxu vmax vand vor vxor vrgather vmseq vmsne vmsltu vmslt vmsleu vmsle vsaddu vsadd vssubu vssub vsll vsmul vsrl vsra vssrl vssra vaaddu vaadd vasubu vasub vdivu vdiv vremu vrem vmulhu vmul vmulhsu vmulh vmadd vnmsub vmacc vnmsac vwaddu vwadd vwsubu vwsub vwmulu vwmulsu vwmul vwmaccu vwmacc vwmaccsu vrgatherei16 vmadc vmsbc vfadd vfsub vfmin vfmax vfsgnj vfsgnjn vfsgnjx vmfeq vmfle vmflt vmfne vfdiv vfmul vfmadd vfnmadd vfmsub vfnmsub vfmacc vfnmacc vfmsac vfnmsac vfwadd vfwsub vfwmul vfwmacc vfwnmacc vfwmsac vfwnmsac".split()
VX = "vadd vsub vrsub vminu vmin vmaxu vmax vand vor vxor vrgather vslideup vslidedown vmseq vmsne vmsltu vmslt vmsleu vmsle vmsgtu vmsgt vsaddu vsadd vssubu vssub vsll vsmul vsrl vsra vssrl vssra vaaddu vaadd vasubu vasub vslide1up vslide1down vdivu vdiv vremu vrem vmulhu vmul vmulhsu vmulh vmadd vnmsub vmacc vnmsac vwaddu vwadd vwsubu vwsub vwmulu vwmulsu vwmul vwmaccu vwmacc vwmaccus vwmaccsu vmadc vmsbc".split()
VI = "vadd vrsub vand vor vxor vrgather vslideup vslidedown vmseq vmsne vmsleu vmsle vmsgtu vmsgt vsaddu vsadd vsll vsrl vsra vssrl vssra vmadc".split()
VF = "vfadd vfsub vfmin vfmax vfsgnj vfsgnjn vfsgnjx vfslide1up vfslide1down vmfeq vmfle vmflt vmfne vmfgt vmfge vfdiv vfrdiv vfmul vfrsub vfmadd vfnmadd vfmsub vfnmsub vfmacc vfnmacc vfmsac vfnmsac vfwadd vfwsub vfwmul vfwmacc vfwnmacc vfwmsac vfwnmsac".split()
VS = "vredsum vredand vredor vredxor vredminu vredmin vredmaxu vredmax vwredsumu vwredsum vfredusum vfredosum vfredmin vfredmax vfwredusum vfwredosum".split()
MM = "vmandn vmand vmor vmxor vmorn vmnand vmnor vmxnor".split()
W = {"v": "vnsrl vnsra vnclipu vnclip vwaddu.w vwadd.w vwsubu.w vwsub.w vfwadd.w vfwsub.w", "x": "vnsrl vnsra vnclipu vnclip vwaddu.w vwadd.w vwsubu.w vwsub.w", "i": "vnsrl vnsra vnclipu vnclip", "f": "vfwadd.w vfwsub.w"}
UNARY = ("vzext.vf2 vsext.vf2 vzext.vf4 vsext.vf4 vzext.vf8 vsext.vf8 vmsbf.m vmsof.m vmsif.m viota.m "
         "vfsqrt.v vfrsqrt7.v vfrec7.v vfclass.v vfcvt.xu.f.v vfcvt.x.f.v vfcvt.f.xu.v vfcvt.f.x.v vfcvt.rtz.xu.f.v "
         "vfcvt.rtz.x.f.v vfwcvt.xu.f.v vfwcvt.x.f.v vfwcvt.f.xu.v vfwcvt.f.x.v vfwcvt.f.f.v vfwcvt.rtz.xu.f.v "
         "vfwcvt.rtz.x.f.v vfncvt.xu.f.w vfncvt.x.f.w vfncvt.f.xu.w vfncvt.f.x.w vfncvt.f.f.w vfncvt.rod.f.f.w "
         "vfncvt.rtz.xu.f.w vfncvt.rtz.x.f.w vfwcvtbf16.f.f.v vfncvtbf16.f.f.w").split()  # (the last two: Zvfbfmin)




def lines():
    """(mnemonic, assembly) for every vector instruction RVV 1.0 has."""
    out = []
    for n in VV:
        out.append((f"{n}.vv", f"{n}.vv v8, v16, v24"))
    fused = lambda n: any(k in n for k in ("macc", "madd", "msub", "msac"))  # noqa: E731  (vd, rs1, vs2)
    for n in VX:
        out.append((f"{n}.vx", f"{n}.vx v8, a0, v16" if fused(n) else f"{n}.vx v8, v16, a0"))
    for n in VI:
        out.append((f"{n}.vi", f"{n}.vi v8, v16, 3"))
    for n in VF:
        out.append((f"{n}.vf", f"{n}.vf v8, fa0, v16" if fused(n) else f"{n}.vf v8, v16, fa0"))
    for n in VS:
        out.append((f"{n}.vs", f"{n}.vs v8, v16, v24"))
    for n in MM:
        out.append((f"{n}.mm", f"{n}.mm v8, v16, v24"))
    for kind, names in W.items():
        operand = {"v": "v24", "x": "a0", "i": "3", "f": "fa0"}[kind]
        for n in names.split():
            m = (n[:-2] + ".w" + kind) if n.endswith(".w") else (n + ".w" + kind)
            out.append((m, f"{m} v8, v16, {operand}"))
    for n in UNARY:
        out.append((n, f"{n} v8, v16"))
    for n, operand in (("vadc", "v24"), ("vsbc", "v24"), ("vmadc", "v24"), ("vmsbc", "v24"), ("vmerge", "v24")):
        out.append((f"{n}.vvm", f"{n}.vvm v8, v16, {operand}, v0"))
    for n in ("vadc", "vsbc", "vmadc", "vmsbc", "vmerge"):
        out.append((f"{n}.vxm", f"{n}.vxm v8, v16, a0, v0"))
    for n in ("vadc", "vmadc", "vmerge"):
        out.append((f"{n}.vim", f"{n}.vim v8, v16, 3, v0"))
    out += [("vfmerge.vfm", "vfmerge.vfm v8, v16, fa0, v0"), ("vcompress.vm", "vcompress.vm v8, v16, v24"),
            ("vmv.v.v", "vmv.v.v v8, v16"), ("vmv.v.x", "vmv.v.x v8, a0"), ("vmv.v.i", "vmv.v.i v8, 3"),
            ("vfmv.v.f", "vfmv.v.f v8, fa0"), ("vmv.x.s", "vmv.x.s a0, v8"), ("vmv.s.x", "vmv.s.x v8, a0"),
            ("vfmv.f.s", "vfmv.f.s fa0, v8"), ("vfmv.s.f", "vfmv.s.f v8, fa0"), ("vcpop.m", "vcpop.m a0, v8"),
            ("vfirst.m", "vfirst.m a0, v8"), ("vid.v", "vid.v v8"),
            ("vsetvli", "vsetvli a0, a1, e32, m2, ta, ma"), ("vsetivli", "vsetivli a0, 5, e32, m2, ta, ma"),
            ("vsetvl", "vsetvl a0, a1, a2"), ("vlm.v", "vlm.v v8, (a0)"), ("vsm.v", "vsm.v v8, (a0)"),
            ("sf.vfnrclip.x.f.qf", "sf.vfnrclip.x.f.qf v8, v16, fa0"),  # (SiFive's, in custom-2)
            ("sf.vfnrclip.xu.f.qf", "sf.vfnrclip.xu.f.qf v8, v16, fa0, v0.t")]
    for r in (1, 2, 4, 8):
        out.append((f"vmv{r}r.v", f"vmv{r}r.v v8, v16"))
        out.append((f"vs{r}r.v", f"vs{r}r.v v8, (a0)"))
        for eew in (8, 16, 32, 64):
            out.append((f"vl{r}re{eew}.v", f"vl{r}re{eew}.v v8, (a0)"))
    for eew in (8, 16, 32, 64):
        for seg in ("", "seg2", "seg8"):
            for op in ("l", "s"):
                out.append((f"v{op}{seg}e{eew}.v", f"v{op}{seg}e{eew}.v v8, (a0)"))
                out.append((f"v{op}s{seg}e{eew}.v", f"v{op}s{seg}e{eew}.v v8, (a0), a1"))
                out.append((f"v{op}ux{seg}ei{eew}.v", f"v{op}ux{seg}ei{eew}.v v8, (a0), v16"))
                out.append((f"v{op}ox{seg}ei{eew}.v", f"v{op}ox{seg}ei{eew}.v v8, (a0), v16"))
            out.append((f"vl{seg}e{eew}ff.v", f"vl{seg}e{eew}ff.v v8, (a0)"))
    return out


def test_every_vector_instruction_is_named_as_the_assembler_spells_it(tmp_path):
    names = lines()
    (tmp_path / "v.s").write_text(".text\n" + "\n".join(text for _, text in names) + "\n")
    zig = [sys.executable, "-m", "ziglang"]
    done = subprocess.run([*zig, "cc", "-target", "riscv64-freestanding-none", f"-mcpu={target.DEFAULT_CPU}", "-c",
                           str(tmp_path / "v.s"), "-o", str(tmp_path / "v.o")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([*zig, "objcopy", "-O", "binary", "-j", ".text", str(tmp_path / "v.o"), str(tmp_path / "v.bin")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    code = (tmp_path / "v.bin").read_bytes()
    assert len(code) == 4 * len(names)  # (no compressed instruction among them)
    got = [decode.vector_name(int.from_bytes(code[4 * i:4 * i + 4], "little")) for i in range(len(names))]
    assert [(want, text) for (want, text), name in zip(names, got) if name != want] == []
    assert {decode.lacking(int.from_bytes(code[i:i + 4], "little"))[0] for i in range(0, len(code), 4)} == {"V"}


@pytest.mark.parametrize("insn, name", [
    (0x06000057, "an OP-V encoding RVV 1.0 reserves"),  # OPIVV, funct6 1
    (0x12003057, "an OP-V encoding RVV 1.0 reserves"),  # vminu.vi: there is none
    (0x9E013057, "an OP-V encoding RVV 1.0 reserves"),  # vmv3r.v: only 1, 2, 4 and 8
    (0x02256407, "a vector load or store encoding RVV 1.0 reserves"),  # a unit-stride load with lumop 2
    (0x12056407, "a vector load or store encoding RVV 1.0 reserves"),  # mew 1: EEW 128
    (0x00056407, "vle32.v"),  # (masked: vm 0)
    (0x00052407, None),  # flw
    (0x0000_0033, None),  # add
    (0x4A2E90D7, "vfncvtbf16.f.f.w"),  # (v1, v2)
    (0x8E4550DB, "sf.vfnrclip.x.f.qf"),
    (0x8A4550DB, "sf.vfnrclip.xu.f.qf"),
    (0x924550DB, None),  # custom-2, OPFVF, funct6 0x24: none of the X280's
    (0xF2C4125B, None),  # sf.vfwmacc.4x4x4 (Xsfvfwmaccqqq, which the X280 lacks): custom-2's OPFVV
])
def test_reserved_and_other_encodings(insn, name):
    assert decode.vector_name(insn) == name


def test_every_row_of_the_units_table_is_read_once_and_claims_its_own_encodings():
    """Python reads ops.def a row a line (sim.isa.vector.operations): a row written over two
    lines would vanish from the names while the C still compiled it. And no two rows may
    claim the same funct3 and funct6 (and vs1, for the unary ones): in C the later row
    would silently take the encoding from the earlier."""
    import re

    from komorebi.sim.isa import vector

    text = re.sub(r"/\*.*?\*/", " ", vector.OPS.read_text(), flags=re.S)
    written = re.findall(r"^\s*[A-Z_]+\(", text, flags=re.M)
    rows = vector.operations()
    assert len(rows) == len(written) > 150
    claimed = [(op.opcode, funct3, op.funct6, op.vs1) for op in rows for funct3 in op.funct3s]
    assert len(claimed) == len(set(claimed))
