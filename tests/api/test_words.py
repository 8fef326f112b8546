"""Argument words in, result words out, and their limits."""

import numpy as np
import pytest

import komorebi as km
from tests.threads import program_for, run_to_end

ECHO = """
#include "kmx.h"
int kmx_main(int core) {
    uint64_t n = kmx_word_count();
    uint32_t out[48] = {0};
    out[0] = (uint32_t)n;
    for (uint64_t i = 0; i < n && i < 47; i++) out[1 + i] = kmx_word(i) + 1;
    kmx_result(0, out, 48);
    return (int)n;
}
"""


def test_words_in_and_out(tmp_path):
    words = [0, 1, 2**32 - 2, 12345]
    result, _ = run_to_end(program_for(ECHO, tmp_path, words=words))
    assert result.final and result.code == 4 and result.codes == (4,)
    assert result.words.dtype == np.uint32 and result.words.shape == (48,)
    assert result.words[:5].tolist() == [4, 1, 2, 2**32 - 1, 12346]
    assert (result.words[5:] == 0).all()


def test_sixty_four_words(tmp_path):
    result, _ = run_to_end(program_for(ECHO, tmp_path, words=list(range(64))))
    assert result.words[0] == 64 and result.words[47] == 47


@pytest.mark.parametrize(
    "words, error",
    [
        (list(range(65)), ValueError),
        ([2**32], ValueError),
        ([-1], ValueError),
        ([1.5], TypeError),
        ("abc", TypeError),
    ],
)
def test_bad_words_are_refused(kernels, words, error):
    program = km.Program("p", kernels=kernels)
    with pytest.raises(error, match="words"):
        program.thread(cluster=0, sources=[__file__], words=words)


def test_a_word_past_the_count_is_a_fault(tmp_path):
    source = '#include "kmx.h"\nint kmx_main(int core) {\n    return (int)kmx_word(3);\n}\n'
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(source, tmp_path, words=[1, 2]))
    fault = caught.value
    assert "kmx_word" in fault.cause and "words 0 to 1" in fault.cause
    assert fault.file.endswith("thread.c") and fault.line == 3


def test_a_result_index_past_48_is_a_fault(tmp_path):
    source = """
#include "kmx.h"
int kmx_main(int core) {
    uint32_t w[2] = {1, 2};
    kmx_result(47, w, 2);
    return 0;
}
"""
    with pytest.raises(km.ThreadFault, match="kmx_result: words 47 to 48 do not fit") as caught:
        run_to_end(program_for(source, tmp_path))
    assert caught.value.line == 5


def test_the_return_value_is_the_code(tmp_path):
    source = '#include "kmx.h"\nint kmx_main(int core) { return -3; }\n'
    result, _ = run_to_end(program_for(source, tmp_path))
    assert result.code == -3 and result.codes == (-3,)
