"""The system calls real libraries make as they start (issue 38, item 17): the memory
policy (a BLAS library's mbind), the CPUs, the memory, the limits and random bytes, each
answered as docs/c-library.md says, through musl's own functions and raw syscall()."""

from __future__ import annotations

import pytest

import komorebi as km
from tests.threads import run_to_end

MiB = 1 << 20
ENOSYS, EINVAL, EPERM, ESRCH = 38, 22, 1, 3

PRELUDE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include "kmx.h"
/* errno of a call that failed, or 1000 + what it returned */
__attribute__((unused)) static uint32_t said(long r) { return r < 0 ? (uint32_t)errno : 1000u + (uint32_t)r; }
"""


def _program(tmp_path, body: str, *, cores: int = 1, heap: int = 64 * MiB) -> km.Program:
    (tmp_path / "kernels").mkdir(exist_ok=True)
    source = tmp_path / "calls.c"
    source.write_text(PRELUDE + "int kmx_main(int core) {\n" + body + "\n}\n")
    program = km.Program("calls", kernels=tmp_path / "kernels")
    program.thread(cluster=1, sources=[source], cores=cores, heap=heap)
    return program


def _words(tmp_path, body: str, count: int, **thread) -> list[int]:
    result, _ = run_to_end(_program(tmp_path, body, **thread))
    assert result.code == 0
    return result.words[:count].tolist()


MEMORY_POLICY = r"""
    void* buffer = malloc(1 << 20);
    unsigned long nodes = 1;
    int mode = -1;
    uint32_t out[6] = {
        said(syscall(SYS_mbind, buffer, 1 << 20, 1 /* MPOL_PREFERRED */, &nodes, 64, 0)),
        said(syscall(SYS_get_mempolicy, &mode, 0, 0, 0, 0)),
        said(syscall(SYS_set_mempolicy, 1, &nodes, 64)),
        said(syscall(SYS_migrate_pages, 0, 64, &nodes, &nodes)),
        said(syscall(SYS_move_pages, 0, 0, 0, 0, 0, 0)),
        said(syscall(SYS_set_mempolicy_home_node, buffer, 1 << 20, 0, 0)),
    };
    kmx_result(0, out, 6);
    return 0;
"""


def test_the_memory_policy_calls_are_enosys_as_on_a_kernel_without_numa(tmp_path):
    assert _words(tmp_path, MEMORY_POLICY, 6) == [ENOSYS] * 6


CPUS = r"""
    cpu_set_t set;
    uint32_t out[10];
    CPU_ZERO(&set);
    out[0] = said(syscall(SYS_sched_getaffinity, 0, sizeof set, &set));  /* (the bytes it wrote) */
    out[1] = CPU_COUNT(&set) + 10 * !!CPU_ISSET(core, &set);
    out[2] = said(sched_getcpu()) - 1000 == (uint32_t)core;
    out[3] = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
    out[4] = said(syscall(SYS_sched_getaffinity, 0, 4, &set));  /* shorter than a word */
    out[5] = said(syscall(SYS_sched_getaffinity, 77, sizeof set, &set));  /* no such task */
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    out[6] = said(sched_setaffinity(0, sizeof set, &set));  /* pinned where it is */
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    out[7] = CPU_COUNT(&set) + 10 * !!CPU_ISSET(core, &set);
    CPU_ZERO(&set);
    CPU_SET(9, &set);  /* no CPU of the thread */
    out[8] = said(sched_setaffinity(0, sizeof set, &set));
    unsigned cpu = 99, node = 99;
    out[9] = said(syscall(SYS_getcpu, &cpu, &node, 0)) == 1000 && cpu == (unsigned)core && node == 0;
    kmx_result(10 * core, out, 10);
    return 0;
"""


def test_each_core_is_a_cpu_of_the_process(tmp_path):
    words = _words(tmp_path, CPUS, 40, cores=4)
    for core in range(4):
        assert words[10 * core:10 * core + 10] == [1008, 14, 1, 4, EINVAL, ESRCH, 1000, 11, EINVAL, 1], core


def test_a_core_asked_to_move_to_another_cpu_is_a_fault_that_says_so(tmp_path):
    body = "    cpu_set_t set;\n    CPU_ZERO(&set);\n    CPU_SET(1, &set);\n    sched_setaffinity(0, sizeof set, &set);\n    return 0;"
    with pytest.raises(km.ThreadFault) as caught:
        run_to_end(_program(tmp_path, body, cores=2))
    assert caught.value.cause == (
        "sched_setaffinity: core 0 is asked to run only on CPU 1; each core of the thread is a CPU "
        "of its own (CPUs 0 to 1) and cannot move to another (docs/c-library.md)")
    lines = (tmp_path / "calls.c").read_text().splitlines()
    assert caught.value.line == 1 + next(i for i, line in enumerate(lines) if "sched_setaffinity" in line)


MEMORY = r"""
    if (core != 0) return 0;  /* (one core allocates: the other is there to be counted) */
    struct sysinfo before, after;
    uint32_t out[12];
    out[0] = said(sysinfo(&before));
    char* volatile big = malloc(3 << 20);  /* (mapped: malloc asks for pages of its own) */
    memset(big, 1, 3 << 20);  /* (volatile: the compiler would drop a block nothing reads) */
    out[1] = said(sysinfo(&after));
    out[2] = (uint32_t)(before.totalram * before.mem_unit >> 20);
    out[3] = (uint32_t)((before.freeram - after.freeram) * before.mem_unit >> 20);
    out[4] = before.freeram <= before.totalram && before.totalram == after.totalram;
    out[5] = before.procs;
    out[6] = before.mem_unit;
    out[7] = (uint32_t)(sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) >> 20);
    out[8] = before.totalswap + before.loads[0] + before.totalhigh + before.sharedram;
    out[9] = before.uptime;
    kmx_result(0, out, 10);
    free(big);
    return 0;
"""


def test_sysinfo_gives_the_threads_heap_as_its_memory(tmp_path):
    words = _words(tmp_path, MEMORY, 10, cores=2, heap=32 * MiB)
    assert words[:3] == [1000, 1000, 32]
    assert words[3] in (3, 4)  # (the allocator rounds up to pages of its own)
    assert words[4:9] == [1, 2, 1, 32, 0]
    assert words[9] <= 1  # seconds since the core started, one instruction a nanosecond


LIMITS = r"""
    struct rlimit r, raw[2];
    uint32_t out[24];
    int n = 0;
    const int resources[] = {RLIMIT_STACK, RLIMIT_DATA, RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_CORE, RLIMIT_CPU};
    for (int i = 0; i < 6; i++) {
        getrlimit(resources[i], &r);
        out[n++] = r.rlim_cur == RLIM_INFINITY ? 0xFFFFFFFFu : (uint32_t)(r.rlim_cur >> 10);
        out[n++] = r.rlim_cur == r.rlim_max;
    }
    out[n++] = said(syscall(SYS_getrlimit, RLIMIT_STACK, raw));
    out[n++] = (uint32_t)(raw[0].rlim_cur >> 10);
    out[n++] = said(syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, &r)) + r.rlim_max;
    out[n++] = said(getrlimit(99, &r));
    out[n++] = said(syscall(SYS_prlimit64, 77, RLIMIT_STACK, 0, &r));
    getrlimit(RLIMIT_STACK, &r);
    out[n++] = said(setrlimit(RLIMIT_STACK, &r));  /* as it is */
    r.rlim_cur /= 2;
    out[n++] = said(setrlimit(RLIMIT_STACK, &r));  /* lower */
    kmx_result(0, out, n);
    return 0;
"""


def test_the_limits_are_the_threads_own(tmp_path):
    words = _words(tmp_path, LIMITS, 19, cores=3, heap=16 * MiB)
    assert words[:12] == [1024, 1, 16 * 1024, 1, 0, 1, 0, 1, 0, 1, 0xFFFFFFFF, 1]  # (NOFILE 3 and NPROC 3: under 1 KiB)
    assert words[12:] == [1000, 1024, 1003, EINVAL, ESRCH, 1000, EPERM]


NOFILE = r"""
    struct rlimit r;
    getrlimit(RLIMIT_NOFILE, &r);
    uint32_t out[2] = {(uint32_t)r.rlim_cur, 0};
    getrlimit(RLIMIT_NPROC, &r);
    out[1] = (uint32_t)r.rlim_cur;
    kmx_result(0, out, 2);
    return 0;
"""


def test_a_thread_has_three_files_and_as_many_tasks_as_cores(tmp_path):
    assert _words(tmp_path, NOFILE, 2, cores=3) == [3, 3]


RANDOM = r"""
    uint32_t out[12] = {0};
    out[0] = said(getrandom(out + 2, 8, 0));
    out[1] = said(syscall(SYS_getrandom, out + 4, 8, 0x80));  /* no such flag */
    out[4] = said(getentropy(out + 6, 8));
    out[5] = said(getrandom(out + 8, 8, GRND_NONBLOCK | GRND_INSECURE));
    kmx_result(12 * core, out, 12);
    return 0;
"""


def test_getrandom_gives_each_core_its_own_stream_the_same_at_every_run(tmp_path):
    first = _words(tmp_path, RANDOM, 24, cores=2)
    for core in range(2):
        words = first[12 * core:12 * core + 12]
        assert words[:2] == [1008, EINVAL] and words[4:6] == [1000, 1008]
        streams = [words[2:4], words[6:8], words[8:10]]
        assert all(any(s) for s in streams) and len({tuple(s) for s in streams}) == 3  # three draws, three answers
    assert first[2:4] != first[14:16]  # each core its own
    assert _words(tmp_path, RANDOM, 24, cores=2) == first  # and every run the same


def test_a_call_not_served_is_a_fault_that_names_it(tmp_path):
    """A call a library may make at its start and the simulator does not serve is named, not
    left as a number (the memory policy calls were: "an ecall with 235 in a7")."""
    with pytest.raises(km.ThreadFault, match="the Linux system call rseq, which the simulator does not serve"):
        run_to_end(_program(tmp_path, "    syscall(SYS_rseq, 0, 0, 0, 0);\n    return 0;"))
