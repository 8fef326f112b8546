"""The simulator's build of the engine (sim/build/engine.py): Unicorn's published source
with the patches, loaded in place of the library the binding ships."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path
import textwrap

import pytest

from komorebi.sim.build import engine as engine_build
from komorebi.sim.build.cache import BuildError
from komorebi.sim.hart import engine


def test_the_binding_runs_the_simulators_build():
    from unicorn.unicorn_py3.unicorn import uclib

    folder = engine.LIBRARY_FOLDER
    assert folder == engine_build.BUILT_FOLDER or folder.parent.name == "engine"  # (the install's, or the cache's)
    assert engine_build._intact(folder, engine_build._key())
    assert (folder / engine_build.LIBRARY).samefile(uclib._name)


def test_unicorn_imported_before_komorebi_is_refused_with_what_to_do(tmp_path):
    script = textwrap.dedent("""
        import unicorn
        try:
            import komorebi.sim.hart.engine
        except ImportError as error:
            print("REFUSED", error)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    said = done.stdout
    assert said.startswith("REFUSED komorebi-sim runs its own build of Unicorn 2.1.4"), said
    assert "imported `unicorn` before the simulator loaded its engine" in said
    assert "Import unicorn after the first session has loaded a program, or not at all." in said


def test_unicorn_imported_after_komorebi_is_the_simulators_build(tmp_path):
    script = "import komorebi.sim.hart.engine as e\nfrom unicorn.unicorn_py3.unicorn import uclib\nprint(e.LIBRARY_FOLDER, uclib._name)\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    folder, loaded = done.stdout.split()
    assert loaded.startswith(folder)


def _tree(tmp_path):
    root = tmp_path / "src"
    (root / "a").mkdir(parents=True)
    (root / "a" / "f.c").write_text("one\ntwo\nthree\nfour\nfive\nsix\n")
    return root


PATCH = """diff --git a/a/f.c b/a/f.c
--- a/a/f.c
+++ b/a/f.c
@@ -2,3 +2,4 @@
 two
-three
+THREE
+three and a half
 four
@@ -6,1 +7,1 @@
-six
+SIX
"""


def test_a_patch_applies_hunk_by_hunk(tmp_path):
    root = _tree(tmp_path)
    engine_build.apply_patch(root, PATCH, "test.patch")
    assert (root / "a" / "f.c").read_text() == "one\ntwo\nTHREE\nthree and a half\nfour\nfive\nSIX\n"


def test_a_hunk_that_does_not_match_the_source_is_an_error_naming_it(tmp_path):
    root = _tree(tmp_path)
    (root / "a" / "f.c").write_text("one\ntwo\n3\nfour\nfive\nsix\n")
    with pytest.raises(BuildError, match=r"engine patch test.patch: a hunk at line 2 of a/f.c does not match"):
        engine_build.apply_patch(root, PATCH, "test.patch")


def test_the_patches_apply_to_the_published_source(tmp_path):
    """Each patch applies, hunk for hunk, to Unicorn's sdist (the one the install fetched)."""
    source = engine_build.SOURCE_FOLDER / engine_build.SOURCE
    if not source.is_file():
        pytest.skip("the install has no copy of the engine's source (a build from the cache's)")
    assert engine_build._hash(source) == engine_build.SOURCE_SHA256
    changed = {line[len("+++ b/"):] for patch in engine_build.patches()
               for line in patch.read_text().splitlines() if line.startswith("+++ b/")}
    assert {"qemu/target/riscv/fpu_helper.c", "uc.c"} <= changed
    with tarfile.open(source) as archive:
        wanted = {f"unicorn-{engine_build.VERSION}/src/{name}" for name in changed}
        members = [m for m in archive.getmembers() if m.name in wanted]
        try:
            archive.extractall(tmp_path, members=members, filter="data")
        except TypeError:  # (a Python without extraction filters)
            archive.extractall(tmp_path, members=members)
    root = tmp_path / f"unicorn-{engine_build.VERSION}" / "src"
    for patch in engine_build.patches():
        engine_build.apply_patch(root, patch.read_text(), patch.name)
    helper = (root / "qemu/target/riscv/fpu_helper.c").read_text()
    assert "check_nanbox_s" in helper and "nanbox_s(float32_add(" in helper
    assert "case UC_CTL_TLB_FLUSH_PAGE:" in (root / "uc.c").read_text()


def test_a_blank_context_line_without_its_space_is_still_context(tmp_path):
    root = tmp_path / "src"
    (root / "a").mkdir(parents=True)
    (root / "a" / "f.c").write_text("one\n\nthree\n")
    patch = "diff --git a/a/f.c b/a/f.c\n--- a/a/f.c\n+++ b/a/f.c\n@@ -1,3 +1,3 @@\n one\n\n-three\n+THREE\n"
    engine_build.apply_patch(root, patch, "blank.patch")
    assert (root / "a" / "f.c").read_text() == "one\n\nTHREE\n"


def test_a_hunk_shorter_than_its_header_counts_is_an_error(tmp_path):
    root = _tree(tmp_path)
    cut = PATCH.split("@@ -6,1")[0].replace("@@ -2,3 +2,4 @@", "@@ -2,5 +2,6 @@")
    with pytest.raises(BuildError, match="hold the lines its header counts|ends before"):
        engine_build.apply_patch(root, cut, "short.patch")
    assert (root / "a" / "f.c").read_text() == "one\ntwo\nthree\nfour\nfive\nsix\n"  # (untouched)


def test_a_patch_with_no_file_is_an_error():
    with pytest.raises(BuildError, match="no `diff --git` line"):
        engine_build.apply_patch(Path("."), "just words\n", "empty.patch")
