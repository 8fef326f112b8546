"""kmx_submit: results travel while the thread runs; the 17th waiting submission stalls
its core until Python takes one, even while another cluster's core runs on."""

import pytest

import komorebi as km
from tests.threads import THREADS, stalled_in, wait_for

SUBMITTER = """
#include "kmx.h"
int kmx_main(int core) {
    for (uint32_t i = 0; i < 20; i++) {
        kmx_result(0, &i, 1);
        kmx_submit();
    }
    uint32_t done = 99;
    kmx_result(0, &done, 1);
    return 0;
}
"""


def test_submissions_arrive_in_order_past_the_stall(tmp_path, kernels):
    (tmp_path / "submit.c").write_text(SUBMITTER)
    program = km.Program("submit", kernels=kernels)
    program.thread(cluster=1, sources=[tmp_path / "submit.c"])
    program.thread(cluster=2, sources=[THREADS / "forever.c"])
    with km.Session() as session:
        run = session.load(program)
        with pytest.raises(TimeoutError):  # cluster 2 never ends
            run.thread_result(timeout=0.5, cluster=2)
        seen = []
        for _ in range(20):
            result = run.thread_result(timeout=10, cluster=1)
            assert not result.final and result.code is None
            seen.append(int(result.words[0]))
        final = run.thread_result(timeout=10, cluster=1)
        run.stop()
    assert seen == list(range(20))
    assert final.final and final.code == 0 and final.words[0] == 99


COUNTING_SUBMITTER = """
#include "kmx.h"
int kmx_main(int core) {
    for (uint32_t i = 0; i < 40; i++) {
        kmx_result(0, &i, 1);
        kmx_submit();
        kmx_print("%u\\n", i);
    }
    return 0;
}
"""


def test_the_seventeenth_submit_stalls_until_python_takes_one(tmp_path, kernels):
    (tmp_path / "count.c").write_text(COUNTING_SUBMITTER)
    program = km.Program("submit", kernels=kernels)
    program.thread(cluster=0, sources=[tmp_path / "count.c"])
    with km.Session() as session:
        run = session.load(program)
        thread = run.thread
        wait_for(lambda: stalled_in(run, "kmx_submit"), "the stall in the 17th kmx_submit")
        # Sixteen submissions wait; the seventeenth submit has not returned.
        assert thread.output.splitlines() == [str(i) for i in range(16)]
        assert run.thread_result(timeout=10).words[0] == 0
        wait_for(lambda: thread.output.count("\n") == 17 and stalled_in(run, "kmx_submit"),
                 "the 18th kmx_submit's stall")
        assert thread.output.splitlines() == [str(i) for i in range(17)]  # one more went in
        seen = [int(run.thread_result(timeout=10).words[0]) for _ in range(39)]
        assert seen == list(range(1, 40))
        assert run.thread_result(timeout=10).final
        run.stop()
