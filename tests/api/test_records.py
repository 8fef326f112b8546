"""komorebi._records, the seam's data, defined once for the API and the machine: the public
names are the same classes wherever they are reached, and one pickled when they were
defined in komorebi._results and komorebi._profile still loads."""

from __future__ import annotations

import pickle

import komorebi as km
from komorebi import _profile, _records, _results

FINDING = km.Finding("unflushed-write", 1, 2, "out", 1, 0, 64, "thread.c", 9, "core 2 wrote ...")
ROWS = [
    FINDING,
    km.CacheCounts(1, "out", 1, 2, 3, 4, 5, 6, 7, 8),
    km.LineCount("thread.c", 9, "kmx_main", 100),
    km.FunctionCount("kmx_main", "thread.c", 3, 10, 100, 1),
    km.CacheEvents(1, "thread.c", 9, 1, 2, 128, 1),
    km.CoreProfile(1, 0, 100, (km.LineCount("thread.c", 9, "kmx_main", 100),), (), ((("kmx_main",), 100),)),
]


def test_the_public_names_are_the_seams_classes():
    assert km.Finding is _records.Finding is _results.Finding
    assert km.CacheCounts is _records.CacheCounts is _results.CacheCounts
    for name in ("LineCount", "FunctionCount", "CacheEvents", "CoreProfile"):
        assert getattr(km, name) is getattr(_records, name) is getattr(_profile, name)


def _as_before(row):
    """ROW as it was when pickled then: a Finding had no category (it loads as its default's)."""
    if not isinstance(row, km.Finding):
        return row
    old = object.__new__(km.Finding)
    for name, value in vars(row).items():
        if name != "category":
            object.__setattr__(old, name, value)
    return old


def test_a_row_pickled_under_its_old_module_loads_as_the_same_value():
    old = {"Finding": b"komorebi._results", "CacheCounts": b"komorebi._results"}
    for row in ROWS:
        data = pickle.dumps(_as_before(row))
        assert b"komorebi._records" in data
        # (the old module's name is as long as the new one's: the pickle's lengths hold)
        before = data.replace(b"komorebi._records", old.get(type(row).__name__, b"komorebi._profile"))
        assert pickle.loads(before) == row
        assert pickle.loads(data) == row
        assert pickle.loads(pickle.dumps(row)) == row


def test_a_faults_and_a_findings_category_survive_pickling():
    report = _records.FaultReport(1, 0, 0x10, "the simulator failed: ...", category=km.Category.SIMULATOR)
    assert pickle.loads(pickle.dumps(report)) == report
    assert pickle.loads(pickle.dumps(report)).category is km.Category.SIMULATOR
    fault = km.ThreadFault(cluster=1, core=0, pc=0x10, cause="not served", file="t.c", line=3,
                           backtrace=["t.c:3 (pc 0x10)", "t.c:9 (pc 0x20)"], category="not-simulated")
    again = pickle.loads(pickle.dumps(fault))
    assert (str(again), again.category, again.backtrace) == (str(fault), km.Category.NOT_SIMULATED, fault.backtrace)
    warning = km.CoherenceWarning(FINDING)
    assert str(pickle.loads(pickle.dumps(warning))) == str(warning) == "unpredictable on a card: core 2 wrote ..."
