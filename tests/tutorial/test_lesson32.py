"""Lesson 32, "Hello, thread": its program prints what the lesson shows, and its common
mistakes behave as the lesson says."""

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, one_thread_program, run_program
from tests.threads import program_for, run_to_end

LESSON = ROOT / "tutorial" / "32_hello_thread"
HELLO = LESSON / "thread" / "hello.c"
EXPECTED = (
    "[cluster 1, core 0] hello from core 0\n"
    "[cluster 1, core 0] Python gave me 21\n"
    "the thread gave back 42\n"
    "its code is 0\n"
)


def test_program_prints_the_lessons_output():
    assert run_program(LESSON).stdout == EXPECTED


def test_lesson_page_shows_the_program_and_the_output():
    page = (ROOT / "docs" / "32_hello_thread.md").read_text()
    assert_page_shows(page, LESSON / "program.py", HELLO, output=EXPECTED)


def lesson_program(source=HELLO, words=(21,)):
    return one_thread_program(LESSON, source, words=list(words))


def test_the_result_as_the_lesson_describes_it(capsys):
    with km.Session() as session:
        run = session.load(lesson_program())
        result = run.thread_result(timeout=10.0)
        # The thread's lines are out before Python has its final result.
        assert capsys.readouterr().out == EXPECTED.split("the thread")[0]
        run.stop()
    assert result.final and result.code == 0
    assert result.words.dtype == np.uint32 and result.words.shape == (48,)
    assert result.words[0] == 42 and (result.words[1:] == 0).all()
    assert run.thread.output == "hello from core 0\nPython gave me 21\n"


def test_the_limits_the_lesson_states(kernels):
    program = km.Program("p", kernels=kernels)
    with pytest.raises(ValueError, match="cluster must be 0 to 3"):
        program.thread(cluster=4, sources=[HELLO])
    with pytest.raises(ValueError, match="at most 64"):
        program.thread(cluster=1, sources=[HELLO], words=list(range(65)))
    with pytest.raises(ValueError, match="at most 16"):
        program.thread(cluster=1, sources=[HELLO], regions={f"r{i}": 64 for i in range(17)})
    program.thread(cluster=1, sources=[HELLO], words=[1])
    with pytest.raises(ValueError, match="already has a thread"):
        program.thread(cluster=1, sources=[HELLO], words=[1])


def test_a_bare_word_is_a_type_error(kernels):
    program = km.Program("p", kernels=kernels)
    with pytest.raises(TypeError, match=r"^words must be a sequence of ints, not int$"):
        program.thread(cluster=1, sources=[HELLO], words=21)
    for word in (-1, 2**32):
        with pytest.raises(ValueError, match=r"words\[0\] must be 0 <= w < 2\*\*32"):
            program.thread(cluster=1, sources=[HELLO], words=[word])


def test_a_word_python_did_not_give_is_a_fault(tmp_path):
    source = tmp_path / "hello.c"
    source.write_text(HELLO.read_text().replace("kmx_word(0)", "kmx_word(1)"))
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(lesson_program(source))
    fault = caught.value
    assert fault.cause == "kmx_word: argument word 1 does not exist; the thread has words 0 to 0"
    assert fault.file.endswith("hello.c") and fault.line == 7
    assert "crashed at " in str(fault) and "hello.c:7 " in str(fault)


def test_percent_f_is_a_fault(tmp_path):
    source = """
#include "kmx.h"
int kmx_main(int core) {
    double half = 0.5;
    kmx_print("half is %f\\n", half);
    return 0;
}
"""
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(source, tmp_path))
    assert caught.value.cause.startswith("kmx_print: unsupported conversion in 'half is %f\\n'")
    assert caught.value.line == 5


@pytest.mark.parametrize(
    "prints, line",
    [
        ('kmx_print("hello"); kmx_print(" there\\n");', "hello there"),
        ('kmx_print("hello"); kmx_print(" there");', "hello there"),  # printed at the end
        ('kmx_print("hello");', "hello"),
    ],
)
def test_text_waits_for_its_newline(tmp_path, capsys, prints, line):
    source = '#include "kmx.h"\nint kmx_main(int core) {\n    ' + prints + "\n    return 0;\n}\n"
    _, run = run_to_end(program_for(source, tmp_path))
    assert capsys.readouterr().out == f"[cluster 1, core 0] {line}\n"
    assert run.thread.output == line + "\n"


def test_a_result_word_past_47_is_a_fault(tmp_path):
    source = """
#include "kmx.h"
int kmx_main(int core) {
    uint32_t word = 7;
    kmx_result(48, &word, 1);
    return 0;
}
"""
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(source, tmp_path))
    assert caught.value.cause == "kmx_result: words 48 to 48 do not fit: there are 48 result words, 0 to 47"
    assert caught.value.line == 5
