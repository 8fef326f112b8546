"""Lesson 34, "Words in, words out": its program prints what the lesson shows, and its
common mistakes behave as the lesson says."""

import re

import numpy as np
import pytest

import komorebi as km
from tests.conftest import ROOT
from tests.lessons import assert_page_shows, one_thread_program, run_program
from tests.threads import run_to_end

LESSON = ROOT / "tutorial" / "34_words_in_words_out"
FACTOR = LESSON / "thread" / "factor.c"
PAGE = ROOT / "docs" / "34_words_in_words_out.md"
EXPECTED = (
    "words in: [13195, 0, 3851020999, 139, 4230196398, 6, 0, 256]\n"
    "words out: [29, 0, 6857, 0, 705032733, 1, 2, 0]\n"
    "the largest prime factor of 13195 is 29\n"
    "the largest prime factor of 600851475143 is 6857\n"
    "the largest prime factor of 30000000174 is 5000000029\n"
    "the largest prime factor of 1099511627776 is 2\n"
)


def page() -> str:
    return PAGE.read_text()


def test_program_prints_the_lessons_output():
    assert run_program(LESSON).stdout == EXPECTED


def test_lesson_page_shows_the_program_and_the_output():
    text = page()
    assert_page_shows(text, LESSON / "program.py", FACTOR, output=EXPECTED)
    assert text.startswith("Part 5. X280 threads · lesson 34 (lessons 32 to 46)\n\n# 34. Words in, words out\n")


def split(numbers):
    words = []
    for n in numbers:
        words += [n & 0xFFFF_FFFF, n >> 32]
    return words


def lesson_program(words, source=FACTOR):
    return one_thread_program(LESSON, source, words=words)


def test_the_halves_the_page_names():
    assert 139 * 2**32 + 3851020999 == 600_851_475_143
    assert 1 * 2**32 + 705032733 == 5_000_000_029
    result, _ = run_to_end(lesson_program(split([600_851_475_143, 30_000_000_174])))
    assert result.words[:4].tolist() == [6857, 0, 705032733, 1]
    assert (result.words[4:] == 0).all()
    assert result.code == 0


@pytest.mark.parametrize(
    "words, message",
    [
        ([600_851_475_143], "words[0] must be 0 <= w < 2**32, not 600851475143"),
        (list(range(65)), "words: 65 words; a thread takes at most 64"),
    ],
)
def test_words_python_refuses(words, message):
    program = km.Program("words_in_words_out", kernels=LESSON / "kernels")
    with pytest.raises(ValueError) as caught:
        program.thread(cluster=1, sources=[FACTOR], words=words)
    assert str(caught.value) == message
    assert f"`ValueError: {message}`" in page()


def test_sixty_four_words_are_accepted():
    program = km.Program("words_in_words_out", kernels=LESSON / "kernels")
    program.thread(cluster=1, sources=[FACTOR], words=list(range(64)))  # no error


def fault_of(program) -> km.ThreadFault:
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program, timeout=10.0)
    return caught.value


def test_forgetting_a_half_is_a_fault_at_line_21():
    fault = fault_of(lesson_program([13_195]))
    assert (fault.cluster, fault.core) == (1, 0)
    assert fault.file == str(FACTOR) and fault.line == 21
    assert fault.cause == "kmx_word: argument word 1 does not exist; the thread has words 0 to 0"
    assert FACTOR.read_text().splitlines()[20].strip() == "const uint64_t high = kmx_word(i + 1);"
    assert f"crashed at .../thread/factor.c:21 (pc ...): {fault.cause}" in page()
    assert "`const uint64_t high = kmx_word(i + 1);`" in page()


def test_twenty_five_numbers_is_a_fault_at_line_24():
    words = split([13_195] * 25)
    assert len(words) == 50
    fault = fault_of(lesson_program(words))
    assert fault.file == str(FACTOR) and fault.line == 24
    assert fault.cause == "kmx_result: words 48 to 49 do not fit: there are 48 result words, 0 to 47"
    assert FACTOR.read_text().splitlines()[23].strip() == "kmx_result(i, out, 2);"
    assert f"crashed at .../thread/factor.c:24 (pc ...): {fault.cause}" in page()


def test_twenty_four_numbers_fill_the_48_result_words():
    result, _ = run_to_end(lesson_program(split([13_195] * 24)))
    assert result.words.tolist() == [29, 0] * 24


def test_shifting_a_32_bit_word_by_32_in_c_loses_the_number(tmp_path):
    text = FACTOR.read_text()
    old = (
        "        const uint64_t low = kmx_word(i);\n"
        "        const uint64_t high = kmx_word(i + 1);\n"
        "        const uint64_t factor = largest_prime_factor(high << 32 | low);\n"
    )
    new = (
        "        const uint64_t n = kmx_word(i + 1) << 32 | kmx_word(i);\n"
        "        const uint64_t factor = largest_prime_factor(n);\n"
    )
    assert old in text
    source = tmp_path / "factor.c"
    source.write_text(text.replace(old, new))
    # The shift is undefined in C, so what comes instead is the compiler's choice: with the
    # ziglang of this writing, for the X280 (-mcpu=sifive_x280), the number is a register's
    # leftover 0, and the loop dividing out 2 from 0 never ends; the core is in it.
    with km.Session() as session:
        with pytest.warns(km.CompileWarning, match="shift count >= width of type"):
            run = session.load(lesson_program(split([600_851_475_143]), source))
        with pytest.raises(TimeoutError) as waited:
            run.thread_result(timeout=3.0)
        run.stop()
    assert str(waited.value).startswith("the thread on cluster 1 handed no result in 3.0 s\n  core 0: running, at ")
    line = re.search(rf"{re.escape(str(source))}:(\d+) \(pc ", str(waited.value))
    assert line is not None and line.group(1) in ("8", "10")  # (where the timeout finds the loop)
    assert [source.read_text().splitlines()[i].strip() for i in (7, 9)] == ["while (n % d == 0) {", "n /= d;"]
    assert "`kmx_word(i + 1) << 32 | kmx_word(i)`" in page()
    assert "`TimeoutError: the thread on cluster 1 handed no result in 10.0 s`" in page()
    assert "`running, at .../thread/factor.c:10` (or `:8`" in page() and "`while (n % d == 0)`" in page()
    assert "km.CompileWarning" in page()


def test_shifting_a_numpy_word_by_32_gives_0():
    result, _ = run_to_end(lesson_program(split([30_000_000_174])))
    words = result.words
    assert words[:2].tolist() == [705032733, 1]
    assert words[1] << 32 == 0
    assert (words[1] << 32 | words[0]) == 705032733  # the high half is gone
    assert (int(words[1]) << 32 | int(words[0])) == 5_000_000_029
    low, high = words[:2].tolist()
    assert high << 32 | low == 5_000_000_029
    assert isinstance(words, np.ndarray) and words.dtype == np.uint32
