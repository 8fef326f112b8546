"""The trap table agrees with kmx.h; kmx_print formats as printf does."""

import re

import pytest

from komorebi.sim.kmx.printf import FormatError, format_print
from komorebi.sim.kmx.traps import Call
from tests.conftest import ROOT
from tests.threads import program_for, run_to_end


def test_call_numbers_match_kmx_h():
    header = (ROOT / "kmx_runtime" / "kmx.h").read_text()
    numbers = {name: int(n) for name, n in re.findall(r"#define KMX_CALL_(\w+) (\d+)", header)}
    assert numbers == {call.name: call.value for call in Call}


def test_every_call_in_the_table_has_a_c_function():
    header = (ROOT / "kmx_runtime" / "kmx.h").read_text()
    for call in Call:
        # (exit is start.S's; assert is the C library's, from kmx_runtime/process.c)
        if call not in (Call.EXIT, Call.ASSERT):
            assert re.search(rf"\b{call.c_name}\(", header), call.c_name


@pytest.mark.parametrize(
    "fmt, slots, expected",
    [
        ("%d|%i|%u", [2**64 - 5, 7, 2**64 - 1], "-5|7|4294967295"),
        ("%ld %lu", [2**64 - 5, 2**64 - 1], "-5 18446744073709551615"),
        ("%x %X %08x %lx", [255, 255, 0xBEEF, 2**40], "ff FF 0000beef 10000000000"),
        ("%5d|%-5d|%05d", [42, 42, -42], "   42|42   |-0042"),
        ("%c%c %% %p", [ord("o"), ord("k"), 0x1000], "ok % 0x1000"),
        ("%s and %s", [1, 0], "<1> and (null)"),
        ("%zu %llu", [10, 11], "10 11"),
    ],
)
def test_format_print(fmt, slots, expected):
    assert format_print(fmt, slots, lambda address: f"<{address}>") == expected


def test_format_print_needs_its_arguments():
    with pytest.raises(FormatError):
        format_print("%d %d", [1], str)


def test_kmx_print_reaches_python(tmp_path, capfd):
    source = """
#include "kmx.h"
int kmx_main(int core) {
    kmx_print("hello from cluster %d, core %d: %s %x\\n", kmx_cluster(), core, "ok", 48879);
    kmx_print("no newline at the end");
    return 0;
}
"""
    _, run = run_to_end(program_for(source, tmp_path, cluster=2))
    out = capfd.readouterr().out
    assert "[cluster 2, core 0] hello from cluster 2, core 0: ok beef\n" in out
    assert "[cluster 2, core 0] no newline at the end\n" in out
    assert run.thread.output == "hello from cluster 2, core 0: ok beef\nno newline at the end\n"


@pytest.mark.parametrize("fmt", ["%f %d", "%5.2d %d", "50%"])
def test_an_unsupported_conversion_is_refused_not_shifted(fmt):
    with pytest.raises(FormatError, match="unsupported conversion"):
        format_print(fmt, [1, 2], str)


def test_a_huge_width_is_refused():
    with pytest.raises(FormatError, match="width"):
        format_print("%99999999999d", [1], str)


def test_a_partial_line_is_printed_when_the_run_stops(tmp_path, capfd):
    import komorebi as km

    source = '#include "kmx.h"\nint kmx_main(int core) {\n    kmx_print("working...");\n    for (;;) {}\n}\n'
    with km.Session() as session:
        run = session.load(program_for(source, tmp_path))
        with pytest.raises(TimeoutError):
            run.thread_result(timeout=0.3)
        run.stop()
    assert run.thread.output == "working...\n"
    assert "[cluster 1, core 0] working...\n" in capfd.readouterr().out
