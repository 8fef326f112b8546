"""compile_commands.json for the user's editor (km.Program.write_compile_commands): the
real command of each thread source, which runs as it is, and names the folders of kmx.h and
the C library's headers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import komorebi as km
from komorebi.sim.isa import target

SOURCE = '#include <math.h>\n#include <stdio.h>\n#include "kmx.h"\n#include "helper.h"\nint kmx_main(int core) { printf("%f\\n", sqrt(HELPER)); return 0; }\n'


def _program(tmp_path: Path) -> km.Program:
    threads = tmp_path / "threads"
    threads.mkdir()
    (threads / "main.c").write_text(SOURCE)
    (threads / "helper.h").write_text("#define HELPER 2.0\n")
    (threads / "more.c").write_text('#include <string.h>\nint more(const char* s) { return (int)strlen(s); }\n')
    (tmp_path / "kernels").mkdir()
    program = km.Program("p", kernels=tmp_path / "kernels")
    program.thread(cluster=0, sources=[threads / "main.c", threads / "more.c"])
    program.thread(cluster=1, sources=[threads / "main.c"])
    return program


def test_the_file_names_each_source_once_with_a_command_that_compiles_it(tmp_path):
    path = _program(tmp_path).write_compile_commands()
    assert path == tmp_path / "threads" / "compile_commands.json"
    entries = json.loads(path.read_text())
    assert sorted(Path(e["file"]).name for e in entries) == ["main.c", "more.c"]
    for entry in entries:
        arguments = entry["arguments"]
        assert Path(arguments[0]).name.startswith("kmx-clang")  # a name clangd takes for clang
        assert "-target" in arguments and "riscv64-linux-musl" in arguments
        assert f"-mcpu={target.DEFAULT_CPU}" in arguments
        system = [Path(arguments[i + 1]) for i, a in enumerate(arguments) if a == "-isystem"]
        assert any((folder / "math.h").exists() for folder in system)
        assert any((folder / "riscv_vector.h").exists() for folder in system)
        runtime = Path(arguments[arguments.index("-I") + 1])
        assert (runtime / "kmx.h").exists()
        # the command itself, run again as clangd's users' build tools would run it
        out = tmp_path / (Path(entry["file"]).stem + ".o")
        command = [*arguments[:-1], str(out)]
        done = subprocess.run(command, cwd=entry["directory"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert out.stat().st_size > 0


def test_a_folder_can_be_given_and_bad_ones_are_refused(tmp_path):
    program = _program(tmp_path)
    assert program.write_compile_commands(tmp_path) == tmp_path / "compile_commands.json"
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        program.write_compile_commands(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="has no thread"):
        km.Program("empty", kernels=tmp_path / "kernels").write_compile_commands(tmp_path)
