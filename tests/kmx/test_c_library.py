"""The C library a thread links (docs/c-library.md): musl as the ziglang package builds it,
started on every core by kmx_runtime/process.c, its system calls answered by sim/kmx/linux.py."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

import komorebi as km

from tests.threads import program_for, run_to_end

MATH = r"""
#include <math.h>
#include <string.h>
#include "kmx.h"
int kmx_main(int core) {
    double x = kmx_word(0) / 1000.0;  /* 1.25 */
    float f = (float)x;
    double d[] = {sin(x), cos(x), tan(x), asin(x / 2), acos(x / 2), atan(x), atan2(x, 3.0),
                  sinh(x), cosh(x), tanh(x), asinh(x), acosh(x + 1), atanh(x / 2),
                  exp(x), exp2(x), expm1(x), log(x), log2(x), log10(x), log1p(x),
                  pow(x, 3.7), sqrt(x), cbrt(x), hypot(x, 2.0), fmod(7.5, x), remainder(7.5, x),
                  erf(x), erfc(x), tgamma(x), lgamma(x), floor(-x), ceil(x), round(x + 0.25),
                  trunc(-x), rint(x), nearbyint(x), fma(x, x, 1.0), fmin(x, 2.0), fmax(x, 2.0),
                  fdim(x, 1.0), copysign(x, -1.0), ldexp(x, 5), scalbn(x, -3), logb(x * 100),
                  nextafter(x, 2.0)};
    float s[] = {sinf(f), cosf(f), expf(f), logf(f), powf(f, 0.5f), sqrtf(f), atan2f(f, 3.0f),
                 tanhf(f), cbrtf(f), hypotf(f, 2.0f), erff(f), tgammaf(f), fmodf(7.5f, f),
                 exp2f(f), log2f(f), log10f(f), floorf(-f), roundf(f)};
    kmx_result(0, (const uint32_t*)d, 2 * (sizeof d / sizeof d[0]));
    uint32_t more[24];
    memcpy(more, s, sizeof s);
    more[18] = (uint32_t)lround(x * 10);
    more[19] = (uint32_t)ilogb(x * 100);
    more[20] = isnan(sqrt(-x)) + 2 * isinf(1.0 / 0.0) + 4 * (signbit(-0.0) != 0);
    more[21] = (uint32_t)(fpclassify(x) == FP_NORMAL);
    kmx_result(0, more, 0); /* (words 0..) */
    return 0;
}
"""


def _doubles(x: float) -> list[float]:
    return [math.sin(x), math.cos(x), math.tan(x), math.asin(x / 2), math.acos(x / 2), math.atan(x),
            math.atan2(x, 3.0), math.sinh(x), math.cosh(x), math.tanh(x), math.asinh(x), math.acosh(x + 1),
            math.atanh(x / 2), math.exp(x), 2 ** x, math.expm1(x), math.log(x), math.log2(x), math.log10(x),
            math.log1p(x), x ** 3.7, math.sqrt(x), math.cbrt(x), math.hypot(x, 2.0), math.fmod(7.5, x),
            math.remainder(7.5, x), math.erf(x), math.erfc(x), math.gamma(x), math.lgamma(x), math.floor(-x),
            math.ceil(x), 2.0, math.trunc(-x), 1.0, 1.0, x * x + 1.0, x, 2.0, x - 1.0, -x, x * 32, x / 8,
            math.floor(math.log2(x * 100)), math.nextafter(x, 2.0)]


def test_c99_math_for_double_gives_what_the_host_gives(tmp_path):
    """45 functions of <math.h> for double, within a few units in the last place of the
    host's (glibc's) results."""
    source = MATH.replace("kmx_result(0, more, 0); /* (words 0..) */", "").replace(
        "2 * (sizeof d / sizeof d[0])", "48")
    result, _ = run_to_end(program_for(source, tmp_path, words=[1250]))
    got = struct.unpack("<24d", result.words[:48].tobytes())  # (the first 24 fit in 48 words)
    want = _doubles(1.25)[:24]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == pytest.approx(w, rel=1e-15, abs=1e-300), f"function {i}: {g!r} != {w!r}"


def test_the_rest_of_math_for_double_and_for_float(tmp_path):
    source = MATH.replace(
        "    kmx_result(0, (const uint32_t*)d, 2 * (sizeof d / sizeof d[0]));\n",
        "    kmx_result(0, (const uint32_t*)&d[24], 2 * 21);\n    (void)s;\n",
    ).replace("kmx_result(0, more, 0); /* (words 0..) */", "kmx_result(42, &more[18], 4);")
    result, _ = run_to_end(program_for(source, tmp_path, words=[1250]))
    got = struct.unpack("<21d", result.words[:42].tobytes())
    for i, (g, w) in enumerate(zip(got, _doubles(1.25)[24:])):
        assert g == pytest.approx(w, rel=1e-15), f"function {24 + i}: {g!r} != {w!r}"
    assert result.words[42:46].tolist() == [13, 6, 7, 1]  # lround, ilogb, isnan|isinf|signbit, fpclassify

    floats = MATH.replace("    kmx_result(0, (const uint32_t*)d, 2 * (sizeof d / sizeof d[0]));\n",
                          "    (void)d;\n").replace("kmx_result(0, more, 0); /* (words 0..) */", "kmx_result(0, more, 18);")
    result, _ = run_to_end(program_for(floats, tmp_path, words=[1250]))
    got = result.words[:18].view(np.float32).tolist()
    f = float(np.float32(1.25))
    want = [math.sin(f), math.cos(f), math.exp(f), math.log(f), math.sqrt(f), math.sqrt(f), math.atan2(f, 3.0),
            math.tanh(f), math.cbrt(f), math.hypot(f, 2.0), math.erf(f), math.gamma(f), math.fmod(7.5, f), 2 ** f,
            math.log2(f), math.log10(f), -2.0, 1.0]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == pytest.approx(w, rel=2.5e-7), f"float function {i}: {g!r} != {w!r}"


STRINGS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <inttypes.h>
#include "kmx.h"
static int by_value(const void* a, const void* b) { return *(const int*)a - *(const int*)b; }
static int format(char* out, size_t n, const char* fmt, ...) {
    va_list ap; va_start(ap, fmt); int k = vsnprintf(out, n, fmt, ap); va_end(ap); return k;
}
int kmx_main(int core) {
    char text[128], copy[128];
    int k = snprintf(text, sizeof text, "%s|%5.2f|%e|%g|%x|%-4d|%c|%%|%" PRIu64, "kmx", 3.14159, 12345.678,
                     0.0001, 255, 42, 'z', (uint64_t)1 << 40);
    strcpy(copy, text);
    int values[] = {5, 3, 9, 1, 7, 2};
    qsort(values, 6, sizeof values[0], by_value);
    int key = 7;
    int* found = bsearch(&key, values, 6, sizeof values[0], by_value);
    char words[] = "alpha beta  gamma";
    int count = 0;
    for (char* t = strtok(words, " "); t; t = strtok(NULL, " ")) count++;
    char small[8];
    int cut = format(small, sizeof small, "%d-%d", 12345, 678);
    bool ok = strcmp(copy, text) == 0 && strlen(text) == (size_t)k && strncmp(small, "12345-6", 8) == 0
              && strchr(text, '|') == text + 3 && strstr(text, "3.14") != NULL && toupper('q') == 'Q'
              && strtol("-0x1f", NULL, 16) == -31 && atoi("  77") == 77 && abs(-5) == 5 && labs(-6L) == 6
              && strtod("2.5e3", NULL) == 2500.0 && memcmp("abc", "abd", 3) < 0;
    uint32_t out[12] = {(uint32_t)k, ok, (uint32_t)(found - values), (uint32_t)count, (uint32_t)cut};
    for (int i = 0; i < 6; i++) out[5 + i] = (uint32_t)values[i];
    kmx_result(0, out, 11);
    printf("%s\n", text);
    puts("puts says hi");
    putchar('!');
    putchar('\n');
    fprintf(stderr, "to stderr %d\n", -3);
    return 0;
}
"""


def test_string_stdlib_and_stdio(tmp_path):
    result, run = run_to_end(program_for(STRINGS, tmp_path))
    text = "kmx| 3.14|1.234568e+04|0.0001|ff|42  |z|%|1099511627776"
    assert result.words[:11].tolist() == [len(text), 1, 4, 3, 9, 1, 2, 3, 5, 7, 9]
    assert run.thread.output == f"{text}\nputs says hi\n!\nto stderr -3\n"


def test_printf_prints_each_cores_lines_under_its_name(tmp_path, capfd):
    source = r"""
#include <stdio.h>
#include "kmx.h"
int kmx_main(int core) {
    for (int i = 0; i < 3; i++) printf("core %d line %d of %s\n", core, i, "three");
    printf("no newline from %d", core);
    return 0;
}
"""
    _, run = run_to_end(program_for(source, tmp_path, cores=4))
    printed = capfd.readouterr().out.splitlines()
    for core in range(4):
        mine = [line for line in printed if line.startswith(f"[cluster 1, core {core}] ")]
        assert mine == [f"[cluster 1, core {core}] core {core} line {i} of three" for i in range(3)] + [
            f"[cluster 1, core {core}] no newline from {core}"]
    assert sorted(run.thread.output.splitlines()) == sorted(line.split("] ", 1)[1] for line in printed
                                                            if line.startswith("[cluster 1"))


HEAP = r"""
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "kmx.h"
static uint32_t shared_sum;
int kmx_main(int core) {
    /* Every core allocates and frees at once, blocks of many sizes, and checks its bytes. */
    unsigned char* blocks[64];
    uint32_t bad = 0;
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < 64; i++) {
            size_t n = 1 + (size_t)((i * 977 + core * 131 + round * 7) % (i & 1 ? 70000 : 300));
            blocks[i] = (i % 3 == 0) ? calloc(n, 1) : malloc(n);
            if (!blocks[i]) { bad++; continue; }
            if (i % 3 == 0) for (size_t b = 0; b < n; b++) bad += blocks[i][b] != 0;
            memset(blocks[i], core * 16 + (i & 15), n);
            if (i % 5 == 0) {
                blocks[i] = realloc(blocks[i], 2 * n);
                bad += blocks[i][n - 1] != (unsigned char)(core * 16 + (i & 15));
                memset(blocks[i], core * 16 + (i & 15), 2 * n);
            }
        }
        for (int i = 0; i < 64; i++) {
            if (blocks[i]) bad += blocks[i][0] != (unsigned char)(core * 16 + (i & 15));
            free(blocks[i]);
        }
    }
    __atomic_fetch_add(&shared_sum, bad, __ATOMIC_RELAXED);
    kmx_barrier();
    /* The heap is one for all the cores: core 0 frees what core 3 made. */
    static unsigned char* handed;
    if (core == 3) handed = malloc(1000);
    kmx_barrier();
    if (core == 0) free(handed);
    uint32_t out[1] = {shared_sum};
    if (core == 0) kmx_result(0, out, 1);
    return 0;
}
"""


def test_malloc_calloc_realloc_free_on_four_cores_at_once(tmp_path):
    for seed in (None, 3):
        program = program_for(HEAP, tmp_path, cores=4)
        with km.Session(schedule_seed=seed, quantum=2000) as session:
            run = session.load(program)
            result = run.thread_result(timeout=60)
            run.stop()
        assert result.code == 0 and result.words[0] == 0


OUT_OF_HEAP = r"""
#include <stdlib.h>
#include <errno.h>
#include "kmx.h"
int kmx_main(int core) {
    uint32_t blocks = 0;
    void** last = NULL;  /* (a list of the blocks: each one used, so none is optimised away) */
    void** p;
    while ((p = malloc(100000)) != NULL) { *p = last; last = p; blocks++; }
    volatile size_t huge_size = (size_t)1 << 40;
    void* volatile huge = malloc(huge_size);
    uint32_t freed = 0;
    while (last) { void** next = *last; free(last); last = next; freed++; }
    uint32_t out[3] = {blocks, huge == NULL, freed == blocks && malloc(100000) != NULL};
    kmx_result(0, out, 3);
    return 0;
}
"""


@pytest.mark.parametrize("heap, most", [(1 << 20, 10), (8 << 20, 83)])
def test_running_out_of_heap_is_null_from_malloc(tmp_path, heap, most):
    (tmp_path / "kernels").mkdir()
    program = km.Program("p", kernels=tmp_path / "kernels")
    source = tmp_path / "heap.c"
    source.write_text(OUT_OF_HEAP)
    program.thread(cluster=0, sources=[source], heap=heap)
    result, _ = run_to_end(program)
    blocks, null, again = result.words[:3].tolist()
    assert null == 1 and again == 1  # (and what was freed can be had again)
    assert most - 3 <= blocks <= most  # (the allocator's own bookkeeping takes some pages)


def test_the_heap_size_is_checked(tmp_path):
    program = km.Program("p", kernels=tmp_path)
    with pytest.raises(TypeError, match="heap must be an int, not str"):
        program.thread(cluster=0, sources=[__file__], heap="1 MiB")
    for bad in (-1, 0, 4095):
        with pytest.raises(ValueError, match=f"heap must be a byte count of at least 4096 .*, not {bad}"):
            program.thread(cluster=0, sources=[__file__], heap=bad)


def test_a_failed_assert_names_the_expression_and_the_line(tmp_path):
    source = '#include <assert.h>\n#include "kmx.h"\nint kmx_main(int core) {\n    int n = kmx_word(0);\n    assert(n * 2 == 7);\n    return 0;\n}\n'
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(program_for(source, tmp_path, words=[3]))
    assert "assertion failed: n * 2 == 7 (thread.c:5)" in str(caught.value)
    assert caught.value.line == 5


def test_abort_and_exit(tmp_path):
    source = '#include <stdlib.h>\n#include "kmx.h"\nint kmx_main(int core) {\n    if (kmx_word(0)) abort();\n    return 0;\n}\n'
    with pytest.raises(km.ThreadFault, match=r"abort\(\) was called") as caught:
        run_to_end(program_for(source, tmp_path, words=[1]))
    assert caught.value.line == 4
    # exit ends every core of the thread with its code; atexit functions run first
    source = r"""
#include <stdio.h>
#include <stdlib.h>
#include "kmx.h"
static void bye(void) { printf("atexit ran\n"); }
int kmx_main(int core) {
    if (core == 2) { atexit(bye); exit(5); }
    for (;;) kmx_cycles();  /* the others would run for ever */
}
"""
    result, run = run_to_end(program_for(source, tmp_path, cores=4))
    assert result.code == 5 and result.codes == (5, 5, 5, 5)
    assert run.thread.output == "atexit ran\n"


def test_each_core_has_its_own_errno_and_thread_local_variables(tmp_path):
    source = r"""
#include <errno.h>
#include <stdlib.h>
#include "kmx.h"
static _Thread_local int mine = 100;
int kmx_main(int core) {
    mine += core;
    errno = 0;
    if (core == 1) strtol("99999999999999999999999", NULL, 10);  /* ERANGE, on core 1 only */
    kmx_barrier();
    uint32_t out[2] = {(uint32_t)mine, (uint32_t)errno};
    kmx_result(2 * core, out, 2);
    return 0;
}
"""
    result, _ = run_to_end(program_for(source, tmp_path, cores=4))
    assert result.words[:8].tolist() == [100, 0, 101, 34, 102, 0, 103, 0]


def test_what_a_thread_cannot_do_fails_as_linux_would_or_is_a_fault_that_names_it(tmp_path):
    source = r"""
#include <stdio.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include "kmx.h"
int kmx_main(int core) {
    FILE* f = fopen("/etc/passwd", "r");
    int opened = f != NULL, why = errno;
    int c = getchar();
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint32_t out[4] = {(uint32_t)opened, (uint32_t)why, (uint32_t)c, (uint32_t)(t.tv_nsec > 0)};
    kmx_result(0, out, 4);
    if (kmx_word(0)) fork();
    return 0;
}
"""
    result, _ = run_to_end(program_for(source, tmp_path, words=[0]))
    assert result.words[:4].tolist() == [0, 2, 0xFFFF_FFFF, 1]  # NULL and ENOENT, EOF, a time
    with pytest.raises(km.ThreadFault, match="the Linux system call clone, which the simulator does not serve"):
        run_to_end(program_for(source, tmp_path, words=[1]))


def test_the_clock_counts_cycles_so_two_runs_read_the_same_time(tmp_path):
    source = r"""
#include <time.h>
#include "kmx.h"
int kmx_main(int core) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    volatile int x = 0;
    for (int i = 0; i < 10000; i++) x += i;
    clock_gettime(CLOCK_MONOTONIC, &b);
    uint32_t out[2] = {(uint32_t)a.tv_nsec, (uint32_t)(b.tv_nsec - a.tv_nsec)};
    kmx_result(0, out, 2);
    return 0;
}
"""
    first, _ = run_to_end(program_for(source, tmp_path))
    again, _ = run_to_end(program_for(source, tmp_path))
    assert first.words[:2].tolist() == again.words[:2].tolist()
    assert 40000 <= first.words[1] <= 200000  # a few instructions an iteration, a nanosecond each


CXX = r"""
#include "kmx.h"
#include <stdio.h>
template <typename T> struct Stack {
    T* items; int n = 0;
    explicit Stack(int capacity) : items(new T[capacity]) {}
    ~Stack() { delete[] items; }
    void push(T v) { items[n++] = v; }
    T sum() const { T s = 0; for (int i = 0; i < n; i++) s += items[i]; return s; }
};
struct Shape { virtual ~Shape() {} virtual int area() const = 0; };
struct Square : Shape { int side; explicit Square(int s) : side(s) {} int area() const override { return side * side; } };
static int made = 0;
struct Global { Global() { made = 41; } };
static Global global;  // constructed before any core's kmx_main
static int& once() { static int value = made + 1; return value; }
int kmx_main(int core) {
    Stack<double> stack(10);
    for (int i = 0; i < 10; i++) stack.push(i * 0.5);
    Shape* shape = new Square(core + 2);
    uint32_t out[3] = {(uint32_t)(stack.sum() * 2), (uint32_t)shape->area(), (uint32_t)once()};
    delete shape;
    kmx_result(3 * core, out, 3);
    printf("core %d done\n", core);
    return 0;
}
"""


def test_a_cpp_thread_with_templates_virtuals_new_delete_and_constructors(tmp_path):
    source = tmp_path / "thread.cpp"
    source.write_text(CXX)
    (tmp_path / "kernels").mkdir()
    program = km.Program("p", kernels=tmp_path / "kernels")
    program.thread(cluster=1, sources=[source], cores=2)
    result, run = run_to_end(program)
    assert result.words[:6].tolist() == [45, 4, 42, 45, 9, 42]
    assert sorted(run.thread.output.splitlines()) == ["core 0 done", "core 1 done"]


def test_a_cpp_throw_does_not_compile_and_says_why(tmp_path):
    source = tmp_path / "thread.cpp"
    source.write_text('#include "kmx.h"\nint kmx_main(int core) { if (core) throw 3; return 0; }\n')
    (tmp_path / "kernels").mkdir()
    program = km.Program("p", kernels=tmp_path / "kernels")
    program.thread(cluster=1, sources=[source])
    with pytest.raises(km.CompileError, match="exceptions disabled"):
        run_to_end(program)


def test_what_constructors_print_and_utf8_a_byte_at_a_time_arrive_whole(tmp_path):
    source = r"""
#include <stdio.h>
#include "kmx.h"
__attribute__((constructor)) static void early(void) {
    printf("constructor one\n");
    printf("constructor two\n");
    puts("constructor three");
}
int kmx_main(int core) {
    const char* text = "caf\xc3\xa9 \xe2\x9c\x93\n";
    for (const char* p = text; *p; p++) putchar(*p);
    return 0;
}
"""
    _, run = run_to_end(program_for(source, tmp_path))
    assert run.thread.output == "constructor one\nconstructor two\nconstructor three\ncafé ✓\n"


def test_the_heap_maps_whole_pages_and_refuses_what_it_does_not_hold():
    from komorebi.sim.kmx.heap import Heap
    from komorebi.sim.memory.address_space import Span

    span = Span.allocate("heap", "heap", 0x10_0000, 16 * 4096)
    heap = Heap(span)
    a = heap.map(5000)  # two pages
    b = heap.map(4096)
    assert (a, b) == (0x10_0000, 0x10_2000) and heap.mapped == 3 * 4096
    assert heap.holds(a, 8192) and not heap.holds(a, 3 * 4096 + 4096) and not heap.holds(0x10_f000, 4096)
    span.array[0:8] = 7
    assert heap.remap(b, 4096, 3 * 4096, may_move=False) == b  # grows in place
    assert heap.remap(a, 8192, 6 * 4096, may_move=False) is None  # b is in the way
    moved = heap.remap(a, 8192, 6 * 4096, may_move=True)
    assert moved == 0x10_5000 and span.array[moved - 0x10_0000] == 7 and span.array[0] == 0  # moved, then zeros
    assert heap.unmap(b, 3 * 4096) and heap.unmap(moved, 6 * 4096)
    assert heap.mapped == 0 and heap.map(16 * 4096) == 0x10_0000 and heap.map(1) is None
