"""Regions round-trip: what Python puts in comes back, through a thread and the cache."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.threads import program_for, run_to_end

DTYPES = [np.uint8, np.int16, np.uint32, np.int64, np.float32, np.float64]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    dtype=st.sampled_from(DTYPES),
    count=st.one_of(
        st.integers(1, 70),
        st.sampled_from([16, 1023, 1024, 1025, 4095, 4097, 8191]),
        st.integers(1, 30_000),
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_thread_copies_any_array(tmp_path_factory, dtype, count, seed):
    tmp_path = tmp_path_factory.mktemp("copy")
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, size=count * np.dtype(dtype).itemsize, dtype=np.uint8).view(dtype)
    before = data.copy()
    result, run = run_to_end(program_for("copy.c", tmp_path, regions={"in": data, "out": data.nbytes}))
    assert result.code == 0
    assert result.words[0] == data.nbytes
    assert run.thread.read("in").tobytes() == before.tobytes()
    out = run.thread.read("out")
    assert out.size == data.nbytes
    assert out.view(dtype).tobytes() == before.tobytes()
    assert data.tobytes() == before.tobytes()  # the caller's array is untouched


@settings(max_examples=20, deadline=None)
@given(size=st.integers(1, 3 * 4096 + 100))
def test_a_sized_region_starts_zeroed_and_keeps_its_size(tmp_path_factory, size):
    tmp_path = tmp_path_factory.mktemp("zero")
    source = """
#include "kmx.h"
int kmx_main(int core) {
    uint64_t bytes;
    const uint8_t* p = (const uint8_t*)kmx_region(0, &bytes);
    uint32_t nonzero = 0;
    kmx_invalidate(0);
    for (uint64_t i = 0; i < bytes; i++) nonzero += p[i] != 0;
    uint32_t out[2] = {(uint32_t)bytes, nonzero};
    kmx_result(0, out, 2);
    return 0;
}
"""
    result, run = run_to_end(program_for(source, tmp_path, regions={"r": size}))
    assert result.words[:2].tolist() == [size, 0]
    assert run.thread.read("r").size == size
