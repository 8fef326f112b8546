"""The hooks library exports what Python calls and keeps its own functions to itself:
hart.h's, the vector unit's (vector/vector.h) and route.c's are hidden, so that calls
between the library's files are direct rather than through the dynamic linker, and no
other library loaded into the process can stand in for them."""

from __future__ import annotations

from komorebi.sim.native import hooks


def test_the_library_exports_what_python_calls_and_hides_its_own_functions():
    lib = hooks.library()
    for name in ("tlb_fill", "isa_trap", "isa_finish_turn", "vector_host_fast", "vector_host_sweep"):
        assert hasattr(lib, name), name
    own = ("route", "host_miss", "load_split", "watched_store", "vector_run", "is_vector_csr", "slide_one",
           "op_vadd", "op_vmseq", "vector_float_arith", "vector_widening")
    assert [name for name in own if hasattr(lib, name)] == []
