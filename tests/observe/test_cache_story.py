"""run.cache_story(path): one self-contained page, loaded in a real headless browser
(Debian's chromium): no errors, the steps change the picture, a screenshot."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html import escape
from pathlib import Path

import numpy as np
import pytest

import komorebi as km
from komorebi._cache_story import story_data
from tests import processes
from tests.threads import THREADS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and os.environ.get("KMX_REQUIRE_CHROMIUM"):  # (CI has it: .ci/run installs it)
    raise RuntimeError("KMX_REQUIRE_CHROMIUM is set, but chromium is not installed (apt-get install chromium)")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


def story_of(tmp_path, word=1, regions=None, **session):
    program = km.Program("traced", kernels=tmp_path)
    program.thread(cluster=2, sources=[THREADS / "traced.c"],
                   regions=regions or {"data": np.arange(256, dtype=np.uint32)}, words=[word], cores=4)
    with km.Session(quantum=200, **session) as s:
        run = s.load(program)
        run.thread_result(timeout=60)
        run.thread_result(timeout=60)
        with pytest.warns(km.CoherenceWarning) if word == 1 else _nothing():
            run.stop()
    return run


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False


def browse(page: Path, fragment: str, *extra: str) -> subprocess.CompletedProcess:
    """Chromium's headless run of PAGE#FRAGMENT, its helper processes ended with it."""
    return processes.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", *extra,
         f"{page.as_uri()}#{fragment}"],
        capture_output=True, text=True, timeout=120,
    )


def test_the_steps_are_the_calls_and_findings_and_the_lines_they_changed(tmp_path):
    run = story_of(tmp_path)
    data = story_data(run._loaded.machine.story())
    whats = [(s["core"], s["what"]) for s in data["steps"]]
    assert (0, "kmx_invalidate(0)") in whats and (0, "kmx_submit()") in whats
    # the C library's start: every core's barrier, named as the start, with no line of its own
    assert sorted(whats[:4]) == [(n, "the start: kmx_barrier()") for n in range(4)]
    assert all(s["where"] == "" and "before kmx_main" in s["detail"] for s in data["steps"][:4])
    ends = [s for s in data["steps"] if s["what"] == "the end: kmx_exit()"]
    assert ends and all(s["where"] == "" and "after kmx_main returned" in s["detail"] for s in ends)
    assert all(s["where"].split(":")[0].endswith("traced.c") for s in data["steps"][4:]
               if s["core"] >= 0 and s not in ends)
    assert [w for w in whats if w[1].startswith("finding")] == [(-1, "finding: unflushed-write")]
    assert whats[-1] == (-1, "the thread ended: the library's hand-back")
    flushes = [s for s in data["steps"] if s["what"] == "kmx_flush(0)"]
    assert len(flushes) == 4 and all(s["source"] == "kmx_flush(0);" for s in flushes)
    assert any(s["changed"] for s in flushes)
    found = next(s for s in data["steps"] if s["what"].startswith("finding"))
    assert found["where"].endswith("traced.c:18") and "kmx_flush(0)" in found["detail"]
    assert data["regions"] == [{"cluster": 2, "name": "data", "id": 0, "size": 1024, "lines": 16, "per": 1, "cells": 16}]


def test_a_timed_runs_steps_say_when_each_was_made_in_its_cores_modelled_time(tmp_path):
    plain = story_of(tmp_path)._loaded.machine.story()
    assert all(step.cycles is None and step.microseconds is None for step in plain.steps)
    run = story_of(tmp_path, timing="x280", clock_mhz=1000)
    story = run._loaded.machine.story()
    assert {s.core for s in story.steps} == {-1, 0, 1, 2, 3}
    ends = {t.core: t.cycles for t in run.timing()}
    for core in range(4):
        mine = [s.cycles for s in story.steps if s.core == core]
        assert mine == sorted(mine) and 0 < mine[-1] <= ends[core]  # (a core's steps in its own clock's order)
    assert story.steps[-1].cycles == max(ends.values())  # the thread's end: the latest core's clock
    assert all(s.microseconds == s.cycles / 1000 for s in story.steps)
    data = story_data(story)
    assert [s["us"] for s in data["steps"]] == [s.microseconds for s in story.steps]


@needs_chromium
def test_a_timed_runs_page_shows_each_steps_time(tmp_path):
    run = story_of(tmp_path, timing="x280")
    page = run.cache_story(tmp_path / "story.html")
    step = run._loaded.machine.story().steps[0]
    done = browse(page, "step=1", "--dump-dom")
    assert done.returncode == 0 and "Uncaught" not in done.stderr, done.stderr[-2000:]
    assert f"step 1 at {step.microseconds:.3f} \u00b5s: core {step.core} of cluster 2" in done.stdout
    assert f"<li class=\"now\">{step.microseconds:.3f} \u00b5s: core {step.core}: " in done.stdout


@needs_chromium
def test_the_page_loads_with_no_errors_and_stepping_changes_the_picture(tmp_path):
    run = story_of(tmp_path)
    page = run.cache_story(tmp_path / "story.html")
    steps = story_data(run._loaded.machine.story())["steps"]
    changes = next(n for n, step in enumerate(steps, 1) if step["changed"])  # (the first step that changes lines)
    text = page.read_text()
    assert not re.search(r"https?://|<script[^>]+src=|<link[^>]+href=", text)  # (self-contained)
    before = browse(page, "play=0", "--dump-dom")
    after = browse(page, f"play={changes}", "--dump-dom")
    last = browse(page, "step=1000", "--dump-dom")
    for done in (before, after, last):
        assert done.returncode == 0, done.stderr[-2000:]
        assert "Uncaught" not in done.stderr, done.stderr[-2000:]
        assert '<pre id="errors"></pre>' in done.stdout
    cells = lambda dom: re.findall(r'class="cell (s\d)( changed)?" data-cell', dom)  # noqa: E731
    assert 'data-step="0"' in before.stdout and f'data-step="{changes}"' in after.stdout
    assert cells(before.stdout) != cells(after.stdout)
    assert all(state == "s0" for state, _ in cells(before.stdout))
    assert any(changed for _, changed in cells(after.stdout))  # (the lines the step changed, marked)
    assert f'data-step="{len(steps)}"' in last.stdout and "the thread ended" in last.stdout
    assert "written, never flushed" in last.stdout and "s6" in "".join(s for s, _ in cells(last.stdout))
    shot = tmp_path / "story.png"
    done = browse(page, f"play={changes}", f"--screenshot={shot}", "--window-size=1000,600")
    assert done.returncode == 0 and shot.stat().st_size > 1000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keep = os.environ.get("KMX_ARTEFACTS")  # (CI keeps the screenshot)
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "cache_story.png")


# Region names that the page's data must not let end or hide its script: "<!--<script" makes
# the HTML parser take the page's own "</script>" as text (the page was blank), "</script>"
# ends it; U+2028 and U+2029 end a line in older JavaScript.
ODD_NAMES = ["<!--<script>", "</script><b>&amp;", "a\u2028b\u2029c"]


@needs_chromium
def test_the_page_shows_regions_whose_names_look_like_html(tmp_path):
    data = np.arange(256, dtype=np.uint32)
    run = story_of(tmp_path, regions={ODD_NAMES[0]: data, ODD_NAMES[1]: 64, ODD_NAMES[2]: 64})
    page = run.cache_story(tmp_path / "story.html")
    assert not re.search(r"<!--|<script>(?!\n)|</script>(?!\n</body>)|[\u2028\u2029]", page.read_text())
    done = browse(page, "step=1000", "--dump-dom")
    assert done.returncode == 0 and "Uncaught" not in done.stderr, done.stderr[-2000:]
    assert '<pre id="errors"></pre>' in done.stdout
    for n, name in enumerate(ODD_NAMES):
        shown = escape(name, quote=False)  # (as --dump-dom writes a text node)
        assert f"cluster 2, region '{shown}' (ID {n}," in done.stdout, name


def test_a_story_needs_a_stopped_run_and_an_html_path(tmp_path):
    program = km.Program("traced", kernels=tmp_path)
    program.thread(cluster=2, sources=[THREADS / "traced.c"], regions={"data": np.arange(256, dtype=np.uint32)},
                   words=[0], cores=4)
    with km.Session() as s:
        run = s.load(program)
        with pytest.raises(RuntimeError, match="after run.stop"):
            run.cache_story(tmp_path / "story.html")
        run.thread_result(timeout=60)
        run.stop()
        with pytest.raises(ValueError, match="must end in .html"):
            run.cache_story(tmp_path / "story.svg")
        with pytest.raises(TypeError, match="file path"):
            run.cache_story(3)
