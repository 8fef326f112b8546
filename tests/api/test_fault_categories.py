"""Every fault and finding has a category (km.Category), whose words begin its message: each
category reached by a real thread, a simulator failure never told as the thread's mistake,
and the category carried to another process."""

from __future__ import annotations

import base64
import pickle
import sys
import textwrap
import warnings

import numpy as np
import pytest

import komorebi as km
from tests import processes
from tests.conftest import HANG, ROOT
from tests.threads import program_for, run_to_end

NULL_STORE = '#include "kmx.h"\nint kmx_main(int core) {\n    *(volatile uint32_t*)4 = 3;\n    return 0;\n}\n'

# reads its region before any kmx_invalidate: a read-before-invalidate finding
READ_FIRST = '#include "kmx.h"\nint kmx_main(int core) {\n    return (int)*(volatile uint32_t*)kmx_region(0, 0);\n}\n'


def _fault(source: str, **thread) -> km.ThreadFault:
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(source, thread.pop("tmp_path"), **thread))
    return caught.value


def test_a_bad_access_is_the_threads_mistake(tmp_path):
    fault = _fault(NULL_STORE, tmp_path=tmp_path)
    assert fault.category is km.Category.MISTAKE and fault.category == "thread-mistake"
    assert str(fault).startswith("the thread's mistake: thread on cluster 1, core 0, crashed at ")
    assert fault.cause.startswith("a store to 0x4, which is a null pointer")  # (the cause as it was)


def test_a_coherence_finding_is_unpredictable_on_a_card(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, run = run_to_end(program_for(READ_FIRST, tmp_path, regions={"r": np.arange(16, dtype=np.uint32)}))
    [finding] = run.findings
    assert finding.kind == "read-before-invalidate" and finding.category is km.Category.UNPREDICTABLE
    [warning] = [w.message for w in caught if w.category is km.CoherenceWarning]
    assert warning.category is km.Category.UNPREDICTABLE and warning.finding == finding
    assert str(warning) == f"unpredictable on a card: {finding.message}"


@pytest.mark.parametrize("body, cause", [
    ('    __asm__ volatile("li a7, 999\\n ecall" ::: "a0", "a7", "memory");\n    return 0;\n',
     "an ecall with 999 in a7, which is no kmx call"),
    ("    return (int)*(volatile uint32_t*)0x02010000ull;\n",
     "a 4-byte load from 0x2010000, CCACHE0_CONFIG"),
    ("    if (kmx_word_count() == 0) raise(SIGTERM);\n    return 0;\n",
     "the thread raised SIGTERM; a thread has no signal handlers"),
], ids=["unknown-ecall", "cache-register", "signal"])
def test_what_the_simulator_does_not_model_is_not_simulated(tmp_path, body, cause):
    source = f'#include "kmx.h"\n#include <signal.h>\nint kmx_main(int core) {{\n{body}}}\n'
    fault = _fault(source, tmp_path=tmp_path)
    assert fault.category is km.Category.NOT_SIMULATED
    assert fault.cause.startswith(cause)
    assert str(fault).startswith("not simulated: thread on cluster 1, core 0, crashed at ")


WRITES_THEN_PRINTS = r"""
#include "kmx.h"
int kmx_main(int core) {
    uint32_t* r = (uint32_t*)kmx_region(0, 0);
    kmx_invalidate(0);
    r[0] = 7;
    kmx_print("the console is broken\n");
    return 0;
}
"""


def test_a_simulator_failure_is_not_the_threads_mistake_and_loses_nothing(tmp_path, monkeypatch):
    """A bug of the simulator's in a hook of a turn (here, the console's): the thread ends
    as a simulator failure, its writes are handed back, another cluster's thread runs on
    to its end, and the session loads the next program."""
    from komorebi.sim.machine.cluster import Cluster

    def broken(self, core, text):
        raise ValueError("broken on purpose")

    monkeypatch.setattr(Cluster, "print", broken)
    program = program_for(WRITES_THEN_PRINTS, tmp_path, regions={"r": 64})
    quiet = tmp_path / "quiet.c"
    quiet.write_text('#include "kmx.h"\nint kmx_main(int core) {\n    return 5;\n}\n')
    program.thread(cluster=2, sources=[quiet])
    with km.Session() as session:
        run = session.load(program)
        with pytest.raises(km.ThreadFault) as caught:
            run.thread_result(timeout=30, cluster=1)
        assert run.thread_result(timeout=30, cluster=2).code == 5
        run.stop()  # (raises nothing: the failure was told once, as the fault)
        assert run.threads[1].read("r").view(np.uint32)[0] == 7  # (the thread's write, handed back)
        monkeypatch.undo()
        assert run_to_end(program_for(quiet, tmp_path))[0].code == 5
    fault = caught.value
    assert fault.category is km.Category.SIMULATOR and fault.category is not km.Category.MISTAKE
    text = str(fault)
    assert text.startswith("a simulator failure, not the thread's: thread on cluster 1, core 0, stopped at ")
    assert "crashed" not in text and "mistake" not in text
    assert fault.cause.startswith("the simulator failed: ValueError('broken on purpose'), raised at ")
    assert fault.cause.endswith("test_fault_categories.py:" f"{broken.__code__.co_firstlineno + 1} (broken)")
    assert fault.file == str(tmp_path / "thread.c") and fault.line == 7  # (where the thread was: its kmx_print)


def test_the_category_crosses_to_another_process(tmp_path):
    """A fault and a finding made in a child process come back pickled with their
    categories (FaultReport and Finding are plain data, and a ThreadFault pickles)."""
    (tmp_path / "null.c").write_text(NULL_STORE)
    (tmp_path / "read.c").write_text(READ_FIRST)
    script = textwrap.dedent(f"""
        import base64, pickle, sys, warnings
        import numpy as np
        sys.path.insert(0, {str(ROOT)!r})
        import komorebi as km
        from tests.threads import program_for, run_to_end
        folder = __import__("pathlib").Path({str(tmp_path)!r})
        try:
            run_to_end(program_for(folder / "null.c", folder))
        except km.ThreadFault as caught:
            fault = caught
        warnings.simplefilter("ignore", km.CoherenceWarning)
        _, run = run_to_end(program_for(folder / "read.c", folder, regions={{"r": np.arange(16, dtype=np.uint32)}}))
        sys.stdout.write(base64.b64encode(pickle.dumps((fault, run.findings))).decode())
    """)
    done = processes.run([sys.executable, "-c", script], timeout=HANG, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    fault, findings = pickle.loads(base64.b64decode(done.stdout))
    assert isinstance(fault, km.ThreadFault) and fault.category is km.Category.MISTAKE
    assert str(fault).startswith("the thread's mistake: thread on cluster 1, core 0, crashed at ")
    assert [f.category for f in findings] == [km.Category.UNPREDICTABLE]
