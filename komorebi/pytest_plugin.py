"""komorebi's pytest plugin: fixtures and options for a project's own tests of its threads.

Installed with the package (the `pytest11` entry point `komorebi`), so any test suite that
has komorebi-sim installed has it (docs/your-project.md):

- `km_session`: a km.Session for the test, closed after it (every run it loaded stopped).
  `@pytest.mark.komorebi(coherence="strict", schedule_seed=3, quantum=1000)` sets its
  arguments.
- `--km-strict`: every `km_session` is a strict-mode session (a marker's coherence too).
- `--km-findings=error`: a test whose runs had any coherence finding fails, with each
  finding's text (file, line, what to do); a test that failed first (its own assert) keeps
  its failure, and the findings' text is in the report beside it. (`warn`, the default,
  leaves them as km.CoherenceWarning warnings.)
- `--km-seeds=N`: each test that uses `km_session` runs N times, under schedule_seed 0 to
  N-1, each its own test with `km-seed-K` in its id (a marker's schedule_seed pins one).
- `--km-artifacts=DIR`: where a failing test's story is saved, in a folder named after
  the test (its id as a file name, cut, and a short hash of the whole id): each thread's
  output and, for a thread that faulted, its fault with its backtrace; the findings,
  `cache_report()`, the cache map (SVG), and with the timing model each core's time. The default is `km-artifacts` under pytest's temporary folder (`--basetemp`).
- `--km-progress`: print the simulator's progress lines (a long build's start and end,
  sim.build.toolchain), which the plugin otherwise keeps quiet (KMX_PROGRESS=0, unless
  KMX_PROGRESS is set).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import warnings
from pathlib import Path

import pytest

import komorebi as km

MARKER = "komorebi"
_MARKER_ARGUMENTS = ("coherence", "schedule_seed", "quantum", "output_limit", "timing", "clock_mhz")
_FINDINGS = ("warn", "error")
_SESSION = pytest.StashKey["_Recorder"]()
NAME_CUT = 191  # the readable part of an artifacts folder's name: with its hash, 200 characters


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("komorebi", "komorebi (simulated Blackhole card)")
    group.addoption("--km-strict", action="store_true", default=False,
                    help="run every km_session in strict coherence mode")
    group.addoption("--km-findings", choices=_FINDINGS, default="warn",
                    help="error: fail a test whose runs had a coherence finding (default: warn)")
    group.addoption("--km-seeds", type=int, default=0, metavar="N",
                    help="run each km_session test under schedule_seed 0 to N-1")
    group.addoption("--km-artifacts", default=None, metavar="DIR",
                    help="where a failing test's faults, findings and cache map are saved "
                         "(default: km-artifacts in pytest's temporary folder)")
    group.addoption("--km-progress", action="store_true", default=False,
                    help="print the simulator's progress lines (a long build's start and end)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(coherence=None, schedule_seed=None, quantum=None, output_limit=None, timing=None, clock_mhz=None): "
        "the km.Session arguments of the test's km_session fixture",
    )
    import pluggy

    if not hasattr(pluggy, "Result"):  # (Result.force_exception came with pluggy 1.1)
        raise pytest.UsageError("komorebi's pytest plugin needs pluggy 1.1 or later: pip install -U pluggy")
    if config.getoption("--km-progress"):
        os.environ["KMX_PROGRESS"] = "1"
    else:
        os.environ.setdefault("KMX_PROGRESS", "0")  # (a test's output is for its results)
    seeds = config.getoption("--km-seeds")
    if seeds < 0:
        raise pytest.UsageError(f"--km-seeds must be a number of seeds >= 0, not {seeds}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    seeds = metafunc.config.getoption("--km-seeds")
    if not seeds or "km_session" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is not None and marker.kwargs.get("schedule_seed") is not None:
        return  # the test pins its seed
    metafunc.parametrize("km_seed", range(seeds), indirect=True, ids=[f"km-seed-{n}" for n in range(seeds)])


@pytest.fixture
def km_seed(request: pytest.FixtureRequest) -> int | None:
    """The schedule seed of this test's km_session (--km-seeds), or None."""
    return getattr(request, "param", None)


@pytest.fixture
def km_session(request: pytest.FixtureRequest, km_seed: int | None):
    """A km.Session for the test; every run it loaded is stopped, and it is closed, after."""
    arguments = _session_arguments(request.node, request.config)
    if km_seed is not None:
        arguments["schedule_seed"] = km_seed
    session = km.Session(**arguments)
    recorder = _Recorder(session)
    request.node.stash[_SESSION] = recorder
    try:
        yield session
    finally:
        with warnings.catch_warnings():
            # (findings were reported, or made errors, at the end of the test's call)
            warnings.simplefilter("ignore", km.CoherenceWarning)
            session.close()


def _session_arguments(node: pytest.Item, config: pytest.Config) -> dict:
    marker = node.get_closest_marker(MARKER)
    arguments = {}
    if marker is not None:
        if marker.args:
            raise pytest.UsageError(f"{node.nodeid}: @pytest.mark.{MARKER} takes keyword arguments only "
                                    f"({', '.join(_MARKER_ARGUMENTS)}), not {marker.args!r}")
        unknown = sorted(set(marker.kwargs) - set(_MARKER_ARGUMENTS))
        if unknown:
            raise pytest.UsageError(f"{node.nodeid}: @pytest.mark.{MARKER} has no argument "
                                    f"{', '.join(unknown)}; it takes {', '.join(_MARKER_ARGUMENTS)}")
        arguments.update((k, v) for k, v in marker.kwargs.items() if v is not None)
    if config.getoption("--km-strict"):
        arguments["coherence"] = "strict"
    return arguments


class _Recorder:
    """The runs a test's session loaded, for the end of the test."""

    def __init__(self, session: km.Session) -> None:
        self.runs: list[km.Run] = []
        load = session.load

        def recording_load(program: km.Program) -> km.Run:
            run = load(program)
            self.runs.append(run)
            return run

        session.load = recording_load  # (the session's own attribute: this test's only)

    def stop_all(self) -> tuple[list[km.Finding], Exception | None]:
        """Stop every run (findings are complete then): their findings, and the first error
        a stop raised. A stop that raises (a CoherenceWarning the project makes an error)
        has stopped its run all the same: its findings are kept, and the other runs stopped."""
        findings: list[km.Finding] = []
        first: Exception | None = None
        for run in self.runs:
            try:
                run.stop()  # (a run the test did not stop issues its CoherenceWarnings now)
            except Exception as error:  # noqa: BLE001 - the test fails with it (pytest_runtest_call)
                first = first or error
            try:
                findings.extend(run.findings)
            except Exception as error:  # noqa: BLE001
                first = first or error
        return findings, first


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    outcome = yield
    recorder = item.stash.get(_SESSION, None)
    if recorder is None:
        return
    failed = outcome.excinfo is not None
    findings, error = recorder.stop_all()
    told = []  # the komorebi section of the failure's report
    if findings and item.config.getoption("--km-findings") == "error":
        count = len(findings)
        text = f"{count} coherence finding{'s' if count != 1 else ''} (--km-findings=error):\n" + "\n".join(
            f"  {finding}" for finding in findings)
        if failed:  # (the test's own failure stays the report's first word; the findings are told beside it)
            told.append(text)
        else:  # (also when a stop raised a CoherenceWarning made an error: this names every finding)
            outcome.force_exception(pytest.fail.Exception(text, pytrace=False))
            failed = True
    if error is not None and not failed:  # a run that cannot stop fails the test
        outcome.force_exception(error)
        failed = True
    if failed:
        try:
            folder = _save_artifacts(item, recorder, findings)
        except Exception as error:  # noqa: BLE001 - the test's own failure stays the report's
            told.append(f"the runs' story could not be saved: {error!r}")
        else:
            if folder is not None:
                told.append(f"the runs' faults, findings and cache maps: {folder}")
    if told:
        item.add_report_section("call", "komorebi", "\n".join(told))


def _artifacts_root(config: pytest.Config) -> Path:
    given = config.getoption("--km-artifacts")
    if given:
        return Path(given)
    return config._tmp_path_factory.getbasetemp() / "km-artifacts"  # type: ignore[attr-defined]


def _save_artifacts(item: pytest.Item, recorder: _Recorder, findings: list[km.Finding]) -> Path | None:
    if not recorder.runs:
        return None
    folder = _artifacts_root(item.config) / _file_name(item.nodeid)
    if folder.exists():  # (an earlier session's files would mix with this one's)
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "findings.txt").write_text("".join(f"{finding}\n" for finding in findings) or "no findings\n")
    for index, run in enumerate(recorder.runs):
        name = f"run{index}" if len(recorder.runs) > 1 else "run"
        (folder / f"{name}-cache-report.txt").write_text(run.cache_report())
        run.cache_map(folder / f"{name}-cache-map.svg")
        for cluster, thread in sorted(run.threads.items()):
            if thread.fault is not None:  # (a thread that did not fault has no fault file)
                (folder / f"{name}-cluster{cluster}-fault.txt").write_text(f"{thread.fault}\n")
            (folder / f"{name}-cluster{cluster}-output.txt").write_text(thread.output)
        if run.timed:  # (km.Session(timing=...): each core's modelled time)
            (folder / f"{name}-timing.txt").write_text("".join(f"{core}\n" for core in run.timing()))
    return folder


def _file_name(nodeid: str) -> str:
    """A test's id as a folder name, readable and its own: test_x.py::test_y[km-seed-3] ->
    test_x.py-test_y-km-seed-3-1a2b3c4d. The hash is of the whole id: ids that differ only
    in characters a name cannot hold (a+b, a-b) or past the cut would share a folder."""
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "-", nodeid).strip("-")[:NAME_CUT].rstrip("-")
    return f"{readable}-{hashlib.sha256(nodeid.encode()).hexdigest()[:8]}"
