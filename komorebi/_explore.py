"""km.explore: run a program under many schedules, and report the ones that fail.

    report = km.explore(make_program, check, schedules=200)
    failure = report.failures[0]
    with km.Session(schedule=failure.schedule) as session:   # the failing run, again
        ...

Schedule 0 is round robin, run here first: it builds the program (every worker then finds
it in the build cache) and counts the instructions each cluster's cores run, among which
PCT draws its change points. Schedules 1 on are drawn from SEED: "random" turns or "pct".
Each runs in a session of its own: `check(run)` is called once every thread has ended
and the run is stopped (`run.threads[c].results` holds what each thread handed); it
fails the schedule by raising or by returning False (numpy's False too: `(a == b).all()`);
any verdict but True, False, None or a numpy bool is a TypeError. A fault, a timeout and a coherence
finding fail it too, as FAIL_ON says.

The first failure of each kind is shrunk, as hypothesis shrinks an example: its recorded
turns are cut to the shortest prefix that still fails (round robin after it), then turns
are dropped one at a time and neighbours of one core merged while it still fails, then
turns shortened. The failure keeps both schedules: `found` as it ran, `schedule` shrunk.
"""

from __future__ import annotations

import numbers
import os
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from komorebi._errors import CoherenceWarning, OutputWarning, ThreadFault
from komorebi._program import Program
from komorebi._schedule import DEFAULT_QUANTUM, Schedule, check_quantum
import concurrent.futures as futures  # (light: its pools are imported where they are made)

KINDS = ("check", "fault", "timeout", "finding")
DEFAULT_FAIL_ON = ("check", "fault", "timeout")
STRATEGIES = ("pct", "random")
SHRINK_RUNS = 150  # at most this many runs to shrink one failure
SHRUNK_FAILURES = 3  # the first failure of each kind is shrunk, at most this many in all


@dataclass(frozen=True)
class Failure:
    """A schedule that failed: NUMBER (0: round robin), its KIND ("check", "fault",
    "timeout" or "finding"), the SCHEDULE that replays it (shrunk, when SHRINK_RUNS says
    it was tried) and its run's MESSAGE, and the turns it was FOUND with and their run's
    FOUND_MESSAGE (the same failure, maybe another message: another count lost...)."""

    number: int
    kind: str
    message: str
    schedule: Schedule
    found: Schedule
    shrink_runs: int = 0
    found_message: str = ""

    def __str__(self) -> str:
        return f"schedule {self.number}: {self.kind}: {self.message}\n  replay: {self.schedule}"


@dataclass(frozen=True)
class ExploreReport:
    """What km.explore found: SCHEDULES run, how many FAILED, each FAILURE (in schedule
    order), FIRST_FAILURE (how many schedules ran up to and with the first that failed;
    None: none failed), and how long it took."""

    strategy: str
    depth: int
    schedules: int
    failed: int
    failures: tuple[Failure, ...]
    first_failure: int | None
    seconds: float
    workers: int

    @property
    def ok(self) -> bool:
        return self.failed == 0

    @property
    def schedules_per_second(self) -> float:
        return self.schedules / self.seconds if self.seconds > 0 else float("inf")

    def __str__(self) -> str:
        head = (f"{self.schedules} schedules ({self.strategy}"
                f"{f', depth {self.depth}' if self.strategy == 'pct' else ''}), "
                f"{self.failed} failed, {self.seconds:.1f} s on {self.workers} worker{'s' if self.workers != 1 else ''}")
        if not self.failures:
            return head
        first = self.failures[0]
        return f"{head}; the first after {self.first_failure}:\n{first}"


@dataclass(frozen=True)
class _Settings:
    coherence: str
    timeout: float
    fail_on: tuple[str, ...]


@dataclass(frozen=True)
class _Outcome:
    number: int
    kind: str | None  # None: it passed
    message: str = ""
    turns: tuple[tuple[int, int, int], ...] = ()
    instructions: tuple[tuple[int, int], ...] = ()
    seconds: float = 0.0  # the run's wall-clock time


def _try(make_program: Callable[[], Program], check: Callable, number: int, schedule: Schedule,
         settings: _Settings, keep: bool = False) -> _Outcome:
    """Run one schedule and judge it. KEEP: return its turns even when it passed."""
    from komorebi._session import Session  # (the session imports this module's names)

    program = make_program()
    if not isinstance(program, Program):
        raise TypeError(f"make_program must return a km.Program, not {type(program).__name__}")
    kind = message = None
    started = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoherenceWarning)  # (a finding is the report's to tell)
        warnings.simplefilter("ignore", OutputWarning)
        with Session(settings.coherence, schedule=schedule) as session:
            run = session.load(program)
            deadline = time.monotonic() + settings.timeout
            for thread in run.threads.values():
                try:
                    while not thread.result(timeout=max(deadline - time.monotonic(), 0.001)).final:
                        pass
                except ThreadFault as fault:
                    if kind is None and "fault" in settings.fail_on:
                        kind, message = "fault", str(fault)
                except TimeoutError as error:
                    if kind is None and "timeout" in settings.fail_on:
                        kind, message = "timeout", str(error)
                    break
            run.stop()
            if kind is None and "finding" in settings.fail_on and run.findings:
                kind, message = "finding", str(CoherenceWarning(run.findings[0]))
            if kind is None and "check" in settings.fail_on:
                try:
                    verdict = check(run)
                except Exception as error:  # noqa: BLE001 - the check's way to say "wrong"
                    kind, message = "check", f"{type(error).__name__}: {error}".rstrip(": ")
                else:
                    if _fails(verdict):
                        kind, message = "check", "check(run) returned False"
            recorded = run.schedule
    if kind is None and not keep:
        return _Outcome(number, None)
    return _Outcome(number, kind, message or "", recorded.turns, recorded.instructions, time.monotonic() - started)


def _fails(verdict: Any) -> bool:
    """Whether check's VERDICT fails the schedule. Only a bool (numpy's too) or None is
    one: an array, a number or a string is refused rather than judged by its truth, which
    would pass a check that meant to fail (or raise numpy's "ambiguous" ValueError)."""
    if verdict is None or isinstance(verdict, (bool, np.bool_)):
        return verdict is not None and not verdict
    raise TypeError(
        f"check must return True, False or None (a numpy bool too), not {type(verdict).__name__}: a schedule "
        "fails when check returns False or raises (of an array, return (a == b).all())"
    )


# What forked workers inherit: token -> (make_program, check), set before the pool forks
# them, so that a lambda or a closure reaches them without pickling.
_inherited: dict[int, tuple[Callable, Callable]] = {}


def _try_all(make_program, check, jobs: Sequence[tuple[int, Schedule]], settings: _Settings,
             token: int | None = None) -> list[_Outcome]:
    """A worker's task: JOBS, one after another. TOKEN: the functions are _inherited's."""
    if token is not None:
        make_program, check = _inherited[token]
    return [_try(make_program, check, number, schedule, settings) for number, schedule in jobs]


def _schedule_for(strategy: str, seed: int, number: int, depth: int, quantum: int,
                  instructions: tuple[tuple[int, int], ...]) -> Schedule:
    drawn = seed * 2**32 + number  # (each schedule's own seed: the same for the same SEED)
    if strategy == "random":
        return Schedule.random(drawn, quantum)
    return Schedule("pct", seed=drawn, depth=depth, quantum=quantum, instructions=instructions)


def _merged(turns: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """TURNS with each run of turns of one core (within its group) made one."""
    out: list[tuple[int, int, int]] = []
    last: dict[int, int] = {}  # group -> index in out of its last turn
    for cluster, core, count in turns:
        group = 2 if cluster in (2, 3) else cluster
        at = last.get(group)
        if at is not None and at == len(out) - 1 and out[at][:2] == (cluster, core):
            previous = out[at][2]
            out[at] = (cluster, core, 0 if previous == 0 or count == 0 else previous + count)
            continue
        last[group] = len(out)
        out.append((cluster, core, count))
    return out


def _shrink(make_program, check, failure: _Outcome, quantum: int, settings: _Settings) -> tuple[Schedule, str, int]:
    """The smallest schedule found that fails as FAILURE did, its run's message, and
    the runs it took."""
    runs = 0
    seen: dict[tuple, tuple[bool, str]] = {tuple(failure.turns): (True, failure.message)}
    # A candidate that hangs costs its timeout: give it a few times the failing run's.
    quick = _Settings(settings.coherence, min(settings.timeout, max(2.0, 10 * failure.seconds)), settings.fail_on)

    def fails(turns: list[tuple[int, int, int]]) -> bool:
        nonlocal runs
        if tuple(turns) not in seen:
            runs += 1
            outcome = _try(make_program, check, failure.number, Schedule(turns=tuple(turns), quantum=quantum), quick)
            seen[tuple(turns)] = (outcome.kind == failure.kind, outcome.message)
        return seen[tuple(turns)][0]

    best = _merged(failure.turns)
    if not fails(best):  # (a turn cut short by a call, then the same core's: not the same as one)
        best = list(failure.turns)
    # 1. the shortest prefix that still fails (a bisection: failing is not monotone, so
    #    only a prefix seen failing is taken)
    low, high = 0, len(best)
    while low < high and runs < SHRINK_RUNS // 3:
        middle = (low + high) // 2
        if fails(best[:middle]):
            high = middle
        else:
            low = middle + 1
    if high < len(best) and fails(best[:high]):
        best = best[:high]
    # 2. drop turns, the last first (a dropped turn's instructions go to whoever runs next)
    at = len(best) - 1
    while at >= 0 and runs < SHRINK_RUNS:
        candidate = _merged(best[:at] + best[at + 1:])
        if fails(candidate):
            best = candidate
        at = min(at, len(best)) - 1
    # 3. shorter turns
    for at in range(len(best)):
        if runs >= SHRINK_RUNS:
            break
        cluster, core, count = best[at]
        if count > 1:
            candidate = best[:at] + [(cluster, core, count // 2)] + best[at + 1:]
            if fails(candidate):
                best = candidate
    assert seen[tuple(best)][0]  # (every step keeps a list seen failing)
    return Schedule(turns=tuple(best), quantum=quantum), seen[tuple(best)][1], runs


def _check_args(schedules, strategy, depth, coherence, workers, executor, timeout, fail_on, quantum, seed) -> tuple:
    check_quantum(quantum)
    for name, value, low in (("schedules", schedules, 1), ("depth", depth, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if value < low:
            raise ValueError(f"{name} must be {low} or more, not {value}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int, not {type(seed).__name__}")
    if not 0 <= seed < 2**31:
        raise ValueError(f"seed must be 0 to 2**31 - 1, not {seed}")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be 'pct' or 'random', not {strategy!r}")
    if coherence not in ("card", "strict"):
        raise ValueError(f"coherence must be 'card' or 'strict', not {coherence!r}")
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, numbers.Integral):
            raise TypeError(f"workers must be an int (local processes) or None, not {type(workers).__name__}")
        if workers < 1:
            raise ValueError(f"workers must be 1 or more processes, not {workers}")
        if executor is not None:
            raise ValueError("give workers (local processes) or an executor, not both")
    if executor is not None and not isinstance(executor, futures.Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor, not {type(executor).__name__}")
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or not timeout > 0:
        raise ValueError(f"timeout must be a number of seconds above 0, not {timeout!r}")
    fail_on = (fail_on,) if isinstance(fail_on, str) else tuple(fail_on)
    unknown = [kind for kind in fail_on if kind not in KINDS]
    if unknown or not fail_on:
        raise ValueError(f"fail_on takes some of {', '.join(map(repr, KINDS))}, not {fail_on!r}")
    return fail_on


def _progress(progress: Any, total: int):
    """A callable(done, failed) that shows PROGRESS: False/None nothing, True a tqdm bar,
    else PROGRESS itself, called as progress(done, total, failed)."""
    if progress is None or progress is False:
        return lambda done, failed: None, lambda: None
    if progress is True:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            raise ImportError("progress=True shows a tqdm bar: pip install tqdm "
                              "(or komorebi-sim[dask]), or pass a callable(done, total, failed)") from None
        bar = tqdm(total=total, unit="schedule", desc="km.explore")

        def show(done: int, failed: int) -> None:
            bar.n = done
            bar.set_postfix(failed=failed, refresh=False)
            bar.refresh()
        return show, bar.close
    if not callable(progress):
        raise TypeError(f"progress must be True, False or a callable(done, total, failed), not {type(progress).__name__}")
    return lambda done, failed: progress(done, total, failed), lambda: None


def _local_pool(workers: int, make_program, check) -> tuple[futures.Executor, int | None]:
    """N local processes, and the token their tasks find the functions by: on Linux they
    fork, and inherit them (a lambda or a closure too); elsewhere they spawn, and the
    functions are pickled by name (None)."""
    import multiprocessing
    import pickle

    if sys.platform.startswith("linux"):
        token = id(make_program) ^ id(check) ^ int(time.monotonic_ns())
        _inherited[token] = (make_program, check)
        return futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")), token
    try:
        pickle.dumps((make_program, check))
    except Exception as error:  # noqa: BLE001 - said as what to do instead
        raise TypeError(
            "make_program and check go to worker processes by name here: define them at a "
            f"module's top level, or run with workers=1 ({error})"
        ) from None
    return futures.ProcessPoolExecutor(workers), None


def explore(
    make_program: Callable[[], Program],
    check: Callable[[Any], Any],
    *,
    schedules: int = 1000,
    strategy: str = "pct",
    depth: int = 3,
    coherence: str = "card",
    workers: int | None = None,
    executor: futures.Executor | None = None,
    stop_at_first: bool = False,
    seed: int = 0,
    quantum: int = DEFAULT_QUANTUM,
    timeout: float = 60.0,
    fail_on: Iterable[str] = DEFAULT_FAIL_ON,
    shrink: bool = True,
    progress: Any = False,
) -> ExploreReport:
    """Run make_program() under SCHEDULES schedules and check each run (see the module's
    text). STRATEGY: "pct" (of DEPTH) or "random" (turns of 1 to 2 x QUANTUM). WORKERS:
    local processes (None: one a CPU); EXECUTOR: any concurrent.futures.Executor instead
    (Dask's `client.get_executor()`, Ray's...), which must reach the same build cache
    (the program's kernels folder) or build the program again. STOP_AT_FIRST: stop once
    a schedule fails (those before it still run). TIMEOUT: wall-clock seconds a schedule
    may take. SEED: the exploration's; the same SEED draws the same schedules."""
    fail_on = _check_args(schedules, strategy, depth, coherence, workers, executor, timeout, fail_on, quantum, seed)
    if not callable(make_program) or not callable(check):
        raise TypeError("make_program and check must be callables: make_program() -> km.Program, check(run)")
    settings = _Settings(coherence, float(timeout), fail_on)
    show, close = _progress(progress, schedules)
    started = time.perf_counter()
    outcomes: dict[int, _Outcome] = {}
    probe = _try(make_program, check, 0, Schedule(quantum=quantum), settings, keep=True)
    outcomes[0] = probe
    failed_numbers = [0] if probe.kind else []
    show(1, len(failed_numbers))
    numbers = range(1, schedules) if not (stop_at_first and probe.kind) else range(0)

    def schedule_of(number: int) -> Schedule:  # (drawn when its schedule is about to run: N may be huge)
        return _schedule_for(strategy, int(seed), number, depth, quantum, probe.instructions)

    count = workers if workers is not None else (None if executor is not None else (os.cpu_count() or 1))
    try:
        if numbers and executor is None and count == 1:
            for number in numbers:
                outcome = _try(make_program, check, number, schedule_of(number), settings)
                outcomes[number] = outcome
                if outcome.kind:
                    failed_numbers.append(number)
                show(len(outcomes), len(failed_numbers))
                if stop_at_first and outcome.kind:
                    break
        elif numbers:
            if executor is None:
                count = min(count, len(numbers))
            pool, token = (executor, None) if executor is not None else _local_pool(count, make_program, check)
            finished = False
            try:
                _run_on(pool, make_program, check, numbers, schedule_of, settings, stop_at_first, outcomes,
                        failed_numbers, show, count or _executor_workers(executor) or 2, token)
                finished = True
            finally:
                if executor is None:
                    _close_pool(pool, finished)
                    _inherited.pop(token, None)
    finally:
        close()
    if stop_at_first and failed_numbers:  # (workers may have run past the first failure)
        cut = min(failed_numbers)
        outcomes = {n: o for n, o in outcomes.items() if n <= cut}
    failures = []
    shrunk_kinds: set[str] = set()
    for number in sorted(n for n, o in outcomes.items() if o.kind):
        outcome = outcomes[number]
        found = Schedule(turns=outcome.turns, quantum=quantum, instructions=outcome.instructions)
        schedule, message, runs = found, outcome.message, 0
        if (shrink and outcome.kind not in shrunk_kinds and outcome.kind != "timeout"
                and len(shrunk_kinds) < SHRUNK_FAILURES):
            shrunk_kinds.add(outcome.kind)
            schedule, message, runs = _shrink(make_program, check, outcome, quantum, settings)
        failures.append(Failure(number, outcome.kind, message, schedule, found, runs, outcome.message))
    first = failures[0].number + 1 if failures else None
    seconds = time.perf_counter() - started
    used = 1 if not numbers else (count if executor is None else _executor_workers(executor))
    return ExploreReport(strategy, depth, len(outcomes), len(failures), tuple(failures), first, seconds, used)


def _close_pool(pool: futures.ProcessPoolExecutor, finished: bool) -> None:
    """Our local pool: waited for when its work is done; on an error or Ctrl-C, its
    workers are ended at once (a chunk of schedules may run for minutes)."""
    if finished:
        pool.shutdown(wait=True)
        return
    processes = list(getattr(pool, "_processes", {}).values())  # (before shutdown forgets them)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(5)


def _executor_workers(executor: futures.Executor) -> int:
    if isinstance(getattr(executor, "_max_workers", None), int):  # (concurrent.futures' own pools)
        return executor._max_workers
    client = getattr(executor, "_client", None)  # (distributed's ClientExecutor)
    if client is not None:
        try:
            return len(client.scheduler_info()["workers"])
        except Exception:  # noqa: BLE001 - a figure for the report only
            pass
    return 0


def _run_on(pool: futures.Executor, make_program, check, numbers: range, schedule_of, settings, stop_at_first,
            outcomes, failed_numbers, show, workers: int, token: int | None) -> None:
    """The schedules NUMBERS on POOL, a few at a task; OUTCOMES and FAILED_NUMBERS filled as
    they come. About two tasks a worker wait at a time, the next submitted as one ends, so
    that what a run costs does not depend on how many schedules were asked for past those
    that ran; STOP_AT_FIRST: none after the first failure is submitted."""
    size = max(1, min(16, len(numbers) // (4 * max(workers, 1))))
    window = 2 * max(workers, 1)
    starts = iter(range(numbers.start, numbers.stop, size))
    functions = (None, None) if token is not None else (make_program, check)
    pending: dict[futures.Future, int] = {}
    first_failed: int | None = None

    def submit() -> bool:
        start = next(starts, None)
        if start is None or (first_failed is not None and start > first_failed):
            return False
        chunk = [(n, schedule_of(n)) for n in range(start, min(start + size, numbers.stop))]
        pending[pool.submit(_try_all, *functions, chunk, settings, token)] = start
        return True

    try:
        while len(pending) < window and submit():
            pass
        while pending:
            done, _ = futures.wait(list(pending), return_when=futures.FIRST_COMPLETED)
            for future in done:
                pending.pop(future)
                if future.cancelled():
                    continue
                for outcome in future.result():
                    if first_failed is not None and outcome.number > first_failed:
                        continue  # (stop_at_first: a schedule after the first failure)
                    outcomes[outcome.number] = outcome
                    if outcome.kind:
                        failed_numbers.append(outcome.number)
                show(len(outcomes), len(failed_numbers))
                if stop_at_first and failed_numbers:
                    first_failed = min(failed_numbers)
                    for waiting, start in pending.items():
                        if start > first_failed:
                            waiting.cancel()
            while len(pending) < window and submit():
                pass
    finally:
        for future in pending:
            future.cancel()
