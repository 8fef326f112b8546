"""The card: its DRAM banks, its clusters, and the host threads that run them.

Each cluster runs on a host thread of its own, in parallel on a host with several CPUs.
Inside a cluster the cores take turns as sim.machine.schedule decides, which makes every run of a
program the same. Clusters 2 and 3 share bank D7: by default they run in parallel, and a
thread that reaches the other cluster's regions races with it, as on a card; under a plan
(a schedule seed or a km.Schedule) they take turns on one host thread, so that the race
replays.

What a card holds, and until when:

- a cluster's engines and its cache's copies: until its thread ends (it returns, faults
  or is stopped). Its host thread frees them as its last act, so that a run that ended
  holds no engine and no host thread, stopped or not.
- DRAM, each line's story and the findings: while the card is reachable, for Python to
  read. `stop` keeps them; `abandon` (nobody can reach the run any more: komorebi's
  finalizer) frees them once the host threads are gone.

A forked child process has a copy of the card but none of its host threads, and its
memory files are the parent's: in a child every card is foreign, and nothing of it runs
or writes (`os.register_at_fork`).
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from typing import Sequence

import numpy as np

from ..._records import (
    AgentReport, CacheCounts, CacheEvents, CacheStory, Category, CorePlace, CoreProfile, Finding, Handed, Output,
    RegionPicture, SimulatorFailure, StoryStep,
)
from .cluster import Cluster
from ..memory.dram import Bank
from ..hart.faults import CoreFault, simulator_failure
from ..layout import DEFAULT_HEAP_BYTES, SHARES
from ..image.elf import ThreadImage
from ..kmx.outbox import Outbox
from .config import MachineConfig
from .schedule import Schedule, TurnLoop, is_agent, key
from ..debug.control import Attached
from ..debug.stub import DebugOptions, GdbStub
from ..observe import timeline

BLOCKED_POLL = 0.05  # seconds between looks at a paused cluster (also woken by Python)

# Cards whose cores may still run. At exit they are stopped: an engine still running while
# the interpreter tears down crashes the process. (sim.hart.core also keeps the binding's own
# exit-time finalizer from closing an engine under a running core.)
_live: "weakref.WeakSet[Card]" = weakref.WeakSet()
_stop_at_exit = []


def _stop_live_cards() -> None:
    for card in list(_live):
        card.stop()


def _forget_cards_in_child() -> None:
    """After os.fork, in the child: the parent's cards are not this process's."""
    _live.clear()


if hasattr(os, "register_at_fork"):  # (Windows has no fork)
    os.register_at_fork(after_in_child=_forget_cards_in_child)


class Card:
    def __init__(self, config: MachineConfig = MachineConfig(), debug: DebugOptions | None = None) -> None:
        """CONFIG: the options every thread shares (sim.machine.config). DEBUG: gdb, for
        the first thread placed (sim.debug.stub)."""
        self.config = config
        self._traced = False  # (the trace, config.trace, is written once)
        self.debug = debug
        self.stub: GdbStub | None = None
        self.banks = {name: Bank(name) for name in sorted({s.bank for s in SHARES.values()})}
        self.clusters: dict[int, Cluster] = {}
        self.pid = os.getpid()  # the process the card belongs to (see os.fork above)
        self._wake = threading.Condition()  # notified when Python takes a result
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.RLock()  # (re-entered when a finalizer runs inside it)
        self._started = False
        self._abandoned = False
        self._errors: list[tuple[int, BaseException]] = []  # bugs of ours in the host threads

    @property
    def foreign(self) -> bool:
        """The card belongs to another process: this is a forked child's copy."""
        return os.getpid() != self.pid

    @staticmethod
    def bank_sharers(clusters) -> set[int]:
        """Of CLUSTERS (numbers), those whose threads will reach each other's regions:
        clusters 2 and 3 when both have one (bank D7)."""
        numbers = set(clusters)
        return {n for n in numbers if any(m != n and SHARES[m].bank == SHARES[n].bank for m in numbers)}

    def place_thread(
        self,
        cluster: int,
        image: ThreadImage,
        regions: Sequence[tuple[str, np.ndarray | int]],
        words: Sequence[int],
        cores: int,
        shares_bank: bool = False,
        heap: int = DEFAULT_HEAP_BYTES,
        agents: Sequence[tuple[str, object]] = (),
    ) -> Cluster:
        """Place a thread on CLUSTER. SHARES_BANK: another thread of the card will reach
        its regions (`bank_sharers`), so its cache copies (sim.cache.model). AGENTS:
        (name, function) of each Tensix stand-in of the cluster (sim.noc.agent)."""
        share = SHARES[cluster]
        debugged = self.debug is not None and self.stub is None
        placed = Cluster(
            number=cluster, share=share, bank=self.banks[share.bank], image=image, regions=regions, words=words,
            cores=cores, outbox=Outbox(self._wake), config=self.config, shares_bank=shares_bank, heap=heap,
            debugged=debugged,
            scheduled=self.config.plan.groups_clusters or bool(agents),  # (a stand-in's steps come between a lone core's turns)
        )
        self.clusters[cluster] = placed
        for name, function in agents:
            placed.add_agent(name, function).on_deadline = self._wake_up
        if debugged:
            self.stub = GdbStub(placed, self.debug, self._stopping)
            placed.debugger = Attached(placed, self.stub)
        return placed

    def wait_for_debugger(self) -> None:
        """Once started: wait until gdb has attached to the thread it debugs (every core
        stopped at kmx_main), or the thread ended first. Nothing without gdb."""
        if self.stub is None:
            return
        while not self.stub.attached.wait(BLOCKED_POLL):  # (so that Ctrl-C reaches Python)
            if self._stopping.is_set() or not any(t.is_alive() for t in self._threads):
                return

    def start(self) -> None:
        """Start every cluster's host thread (not when the card was stopped already)."""
        with self._lock:
            if self._stopping.is_set() or self._started:
                return
            self._started = True
            for _, cluster in sorted(self.clusters.items()):  # clusters 2 and 3: bank D7
                for _, other in sorted(self.clusters.items()):
                    if other is not cluster and other.bank is cluster.bank:
                        cluster.share_bank_with(other)
            _live.add(self)
            if not _stop_at_exit:
                _stop_at_exit.append(atexit.register(_stop_live_cards))
            for group in self.groups():
                schedule = Schedule(self.config.plan, [c.number for c in group],
                                    [key(p) for c in group for p in (*c.cores, *c.agents)])
                by_key = {key(p): p for c in group for p in (*c.cores, *c.agents)}
                schedule.use_clocks([by_key[k] for k in schedule.keys])  # (timed: turns by the clocks)
                for cluster in group:
                    cluster.schedule = schedule
                    if len(group) > 1:  # (a stall of one would stop both: _schedule)
                        cluster.outbox.limit = None
                name = "-".join(str(c.number) for c in group)
                thread = threading.Thread(target=self._run, args=(group,), name=f"komorebi-cluster-{name}", daemon=True)
                self._threads.append(thread)
                thread.start()

    def groups(self) -> list[list[Cluster]]:
        """The clusters each host thread runs: under a plan other than round robin,
        clusters that share a bank (2 and 3) together, unless gdb debugs one; else each
        on its own."""
        groups: list[list[Cluster]] = []
        for _, cluster in sorted(self.clusters.items()):
            together = self.config.plan.groups_clusters and not cluster.debugger.alone
            home = next((g for g in groups if together and not g[0].debugger.alone and g[0].bank is cluster.bank), None)
            if home is None:
                groups.append([cluster])
            else:
                home.append(cluster)
        return groups

    def _run(self, group: list[Cluster]) -> None:
        try:
            self._schedule(group)
        except BaseException as error:  # a bug here must not vanish in a daemon thread
            for cluster in group:  # (each that had not handed its last item hears of it)
                self._failed(cluster, error)
        finally:
            for cluster in group:
                cluster.debugger.finished()
                self._retire(cluster)

    def schedule_record(self) -> tuple[list[tuple[int, int, int]], dict[int, int]]:
        """The turns every group took, group after group, and the instructions each
        cluster's group ran from kmx_main on (once the host threads are gone)."""
        turns: list[tuple[int, int, int]] = []
        instructions: dict[int, int] = {}
        seen = set()
        for _, cluster in sorted(self.clusters.items()):
            schedule = cluster.schedule
            if id(schedule) not in seen:
                seen.add(id(schedule))
                turns.extend(schedule.turns)
            if cluster.cores and cluster.cores[0].context.counting:  # (a lone core under round robin does not count)
                instructions[cluster.number] = schedule.main_instructions
        return turns, instructions

    def _failed(self, cluster: Cluster, error: BaseException) -> None:
        """A bug of the simulator's ended CLUSTER's thread: Python hears of it as a
        simulator failure (unless the thread had handed its last item already), never as
        the thread's mistake, and stop() raises it."""
        self._errors.append((cluster.number, error))
        cluster.faulted = True  # (its unflushed lines are not the news)
        if not cluster.outbox.has_last:
            fault = CoreFault(cluster.number, 0, 0, simulator_failure(error), category=Category.SIMULATOR)
            cluster.outbox.put_last(Handed(fault=fault.report()))

    def _schedule(self, clusters: list[Cluster]) -> None:
        """The clusters of one host thread (one, or 2 and 3 under a plan: `groups`) take
        turns as their schedule says, until each has ended. While none can run (Python
        has a submission to take) the thread waits. Grouped clusters' outboxes have no
        limit (`start`), so that none stalls in kmx_submit while Python waits for the
        other: when Python takes a result cannot move the interleaving."""
        schedule = clusters[0].schedule
        by_number = {cluster.number: cluster for cluster in clusters}
        live = list(clusters)
        # The turn loop in C (sim/native/sched.c) runs the turns that need no Python; the
        # trace's turns and gdb's are Python's, and so are pct's choices.
        native = (schedule.native is not None and self.config.turn_loop_in_c
                  and all(c.debugger.turns_in_c and not c.observers.hear_turns for c in clusters))
        agents = [agent for cluster in clusters for agent in cluster.agents]

        def settle() -> None:  # (what the barriers answered in C did to the cores' states)
            for cluster in clusters:
                cluster.settle_barrier()

        loop = TurnLoop(schedule, [core for cluster in clusters for core in cluster.cores], agents,
                        settle) if native else None
        for cluster in clusters:  # (the cache model's events are heard on this thread: sim/cache/events.py)
            cluster.cache_events.host = threading.get_ident()
        while live and not self._stopping.is_set():
            # (a cluster whose thread ended, returned or faulted, offers its stand-ins alone)
            ready = [p for cluster in live for p in (cluster.agents_ready() if cluster.ended else cluster.runnable())]
            agents_live = sum(1 for agent in agents if not agent.done)
            if not ready and any(cluster.unanswerable_wait() for cluster in live):
                continue  # (a stand-in's wait that nothing can answer fails: its step raises)
            if not ready:  # paused until Python takes a submission (or a stand-in's wait times out)
                if not live[0].debugger.idle():  # (a debugged cluster is alone in its group)
                    break
                with self._wake:
                    self._wake.wait(BLOCKED_POLL)
                continue
            if loop is not None:
                for cluster in live:
                    cluster.loop = loop
                try:
                    turn = loop.run(ready, agents_live)
                finally:
                    for cluster in live:
                        cluster.loop = None
                if turn is None:  # (between turns: asked to stop, to say where the cores are, or to hear a cache event)
                    for cluster in live:
                        cluster.catch_up()
                    continue
                participant, count, before, error = turn  # (a core, or a Tensix stand-in)
            else:
                participant, count = schedule.next_turn(ready, agents_live)
                before, error = (0 if is_agent(participant) else participant.cycles), None
            cluster = by_number[participant.context.cluster]
            if is_agent(participant):  # a Tensix stand-in's step (sim.noc.agent): no core's state changes
                cluster.catch_up()  # (what the cores' turns raised, first; a core's turn hears it as it starts)
                participant.step(cluster.agent_call)
                schedule.ran(participant, 1, 1)
            else:
                if not self._turn(cluster, participant, count, error):
                    break
                schedule.ran(participant, count, participant.cycles - before)
                self._after_turn(cluster)
            # (after the thread's end its stand-ins go on alone, until each has returned)
            live = [c for c in live if not c.ended or c.agents_live]

    @staticmethod
    def _turn(cluster: Cluster, core, count: int, error: int | None = None) -> bool:
        """Run CORE's turn of COUNT instructions (ERROR not None: finish the turn the turn
        loop began, whose engine ended with it), through the cluster's control (gdb's,
        or none: sim.debug.control); whether its host thread goes on."""
        cluster.running = core
        try:
            cluster.observers.turn_starts(core)  # (where the cache model's events are heard: a listener's failure is the cluster's)
            return cluster.debugger.run_turn(core, count, error)
        except CoreFault as fault:
            if not cluster.debugger.faulted(core, fault):
                cluster.fail(fault)
        except Exception as error:  # a bug of ours in a hook: this thread ends (not the session), not as its fault
            cluster.fail(core.fault(core.position()[0], simulator_failure(error), category=Category.SIMULATOR))
        finally:
            cluster.running = None
            cluster.observers.turn_ends(core)
        return True

    def _wake_up(self) -> None:
        """A stand-in's noc.wait timed out (sim.noc.agent): the host threads look again."""
        for cluster in list(self.clusters.values()):
            loop = cluster.loop
            if loop is not None:
                loop.ask()
        with self._wake:
            self._wake.notify_all()

    def _after_turn(self, cluster: Cluster) -> None:
        """After a turn of CLUSTER's: end it if its cores are done or stuck."""
        if cluster.ended:
            return
        if cluster.all_exited:
            cluster.finish()
        elif not self._stopping.is_set() and (fault := cluster.deadlock()) is not None:
            cluster.fail(fault)

    def _retire(self, cluster: Cluster) -> None:
        """Nothing will run on CLUSTER again: hand back what is still cached (prints what
        is pending; nothing if already ended), free the engines, wake Python."""
        try:
            for agent in cluster.agents:  # (a stand-in still at a call raises AgentStopped there)
                agent.stop()
            cluster.end()
        except BaseException as error:
            self._failed(cluster, error)
        finally:
            try:
                cluster.release()
            except BaseException as error:
                self._failed(cluster, error)
            finally:
                cluster.outbox.close()

    def _interrupt(self) -> None:
        for cluster in list(self.clusters.values()):
            core = cluster.running
            if core is not None:
                core.interrupt()
            loop = cluster.loop
            if loop is not None:  # (any of the group's cores may be running in C)
                loop.interrupt()
        with self._wake:
            self._wake.notify_all()

    def stop(self) -> None:
        """Halt every core and hand back what is still cached; DRAM stays to be read.
        Returns once every host thread is gone. Idempotent."""
        if self.foreign:
            return
        self._let_agents_finish()
        self._stopping.set()
        self._join()
        with self._lock:
            if not self._started:  # placed, never run (or the cores were run by hand)
                self._started = True
                for cluster in self.clusters.values():
                    self._retire(cluster)
        _live.discard(self)
        self._write_trace()
        if self._errors:  # said once
            (number, error), self._errors = self._errors[0], []
            raise SimulatorFailure(
                f"{Category.SIMULATOR.words}: the simulator failed while the thread on cluster {number} "
                f"ended: {error!r}"
            ) from error

    def _write_trace(self) -> None:
        """Write the trace (Session(trace=PATH)) once every host thread is gone; once."""
        with self._lock:
            if self.config.trace is None or self._traced:
                return
            self._traced = True
            timelines = [c.timeline for _, c in sorted(self.clusters.items()) if c.timeline is not None]
        try:
            timeline.write(self.config.trace, timelines)
        except OSError as error:
            raise OSError(error.errno, f"the trace could not be written to {str(self.config.trace)!r}: {error.strerror}") from None

    def _let_agents_finish(self) -> None:
        """When every thread has ended, the Tensix stand-ins still going finish first, so
        that what they return does not depend on when stop() came: nothing but them runs,
        and a wait nothing can answer fails at once (sim.noc.agent)."""
        while (any(t.is_alive() for t in self._threads) and self.clusters
               and all(c.ended for c in self.clusters.values())):
            for thread in self._threads:
                thread.join(0.05)

    def _join(self) -> None:
        # An interrupt that comes just before a core's engine starts is lost (the engine
        # clears its stop request as it starts), so it is said again until the thread ends.
        for thread in self._threads:
            while thread.is_alive():
                self._interrupt()
                thread.join(0.01)

    def abandon(self) -> None:
        """Nobody can reach the run any more: stop it without waiting, and free all it
        holds, DRAM too. A host thread of its own waits for the cores to stop, so that
        this returns at once: it is called from a finalizer, on any thread."""
        if self.foreign:
            return
        with self._lock:
            if self._abandoned:
                return
            self._abandoned = True
            self._stopping.set()
        try:
            threading.Thread(target=self._reap, name="komorebi-reaper", daemon=True).start()
        except RuntimeError:  # the interpreter is exiting: sim.machine.card stops what is live
            pass

    def _reap(self) -> None:
        try:
            self.stop()
        except RuntimeError:  # nobody is left to tell
            pass
        with self._lock:
            for cluster in self.clusters.values():
                cluster.discard()
            self.clusters = {}

    # -- what komorebi reads (its seam's side, komorebi._simulator): komorebi._records' data

    def numbers(self) -> list[int]:
        """The clusters with a thread, in order."""
        return sorted(self.clusters)

    def core_count(self, cluster: int) -> int:
        return len(self.clusters[cluster].cores)

    def region_names(self, cluster: int) -> list[str]:
        return [region.name for region in self.clusters[cluster].regions]

    def take(self, cluster: int, timeout: float | None) -> Handed | None:
        """CLUSTER's thread's next item (sim.kmx.outbox.Outbox.take)."""
        return self.clusters[cluster].outbox.take(timeout)

    def ended(self, cluster: int) -> tuple[bool, Handed | None]:
        """Whether nothing more comes from CLUSTER's thread, and its last item once taken."""
        outbox = self.clusters[cluster].outbox
        return outbox.closed, outbox.last

    def places(self, cluster: int) -> list[CorePlace]:
        """Where each of CLUSTER's cores is (sim.machine.cluster.Cluster.places)."""
        out = []
        for core, doing, frame, waiting_in in self.clusters[cluster].places():
            source = frame.source if frame is not None else None
            out.append(CorePlace(
                core.number, doing, frame.pc if frame is not None else None,
                source.file if source else None, source.line if source else None, waiting_in,
            ))
        return out

    def read(self, cluster: int, name: str) -> np.ndarray:
        """Region NAME of CLUSTER's thread as DRAM holds it, a new array (KeyError: no such
        region)."""
        for region in self.clusters[cluster].regions:
            if region.name == name:
                return region.read()
        raise KeyError(name)

    def findings(self, cluster: int | None = None) -> list[Finding]:
        """The checker's findings, cluster by cluster (or CLUSTER's)."""
        return [f for number, placed in sorted(self.clusters.items()) if cluster in (None, number)
                for f in placed.checker.findings]

    def cache_counts(self) -> list[CacheCounts]:
        """How each region fared in the card-size cache ([] for the unbounded one)."""
        out = []
        for number, cluster in sorted(self.clusters.items()):
            for region in cluster.regions:
                if region.cache.tile is None:
                    continue
                c = region.cache.counts()
                out.append(CacheCounts(number, region.name, *c["L1D"], *c["L2"], *c["L3"], *c["evicted"]))
        return out

    def timing(self) -> list[tuple] | None:
        """Each core's modelled time (sim.timing): (cluster, core, cycles, instructions,
        clock in MHz, where the cycles went, the model's counts), cluster by cluster; None
        without a timing model."""
        if self.config.timing is None:
            return None
        rows = []
        for number, cluster in sorted(self.clusters.items()):
            for core in cluster.cores:
                t = core.timing
                rows.append((number, core.number, t.cycles, t.instructions, self.config.timing.clock_mhz,
                             t.went(), t.counts()))
        return rows

    def profile(self) -> tuple[list[CoreProfile], list[CacheEvents]] | None:
        """Every core's profile and the cache's events by line, cluster by cluster, once
        each thread has counted up (None: not profiled)."""
        clusters = sorted(self.clusters.items())
        if not clusters or any(c.profile is None or c.profile.result is None for _, c in clusters):
            return None
        cores: list[CoreProfile] = []
        cache: list[CacheEvents] = []
        for _, cluster in clusters:
            counted, events = cluster.profile.result
            cores += counted
            cache += events
        return cores, cache

    def pictures(self, cluster: int | None = None) -> list[RegionPicture]:
        """Each region's lines as they are, cluster by cluster (or CLUSTER's)."""
        return [region.picture(number, placed.coherence, noc=placed.noc_said(region))
                for number, placed in sorted(self.clusters.items())
                if cluster in (None, number) for region in placed.regions]

    def story(self) -> CacheStory:
        """Every thread's cache story (sim.observe.story), cluster by cluster."""
        start: list[RegionPicture] = []
        steps: list[StoryStep] = []
        stopped = []
        for number, cluster in sorted(self.clusters.items()):
            story = cluster.story
            start += [region.picture(number, cluster.coherence, states)
                      for region, states in zip(cluster.regions, story.start)]
            steps += story.records()
            if story.stopped:
                stopped.append(f"cluster {number}: {story.stopped}")
        return CacheStory(tuple(start), tuple(steps), "; ".join(stopped))

    def agents(self, cluster: int) -> list[AgentReport]:
        """CLUSTER's Tensix stand-ins (sim.noc.agent), in the program's order."""
        out = []
        for agent in self.clusters[cluster].agents:
            doing, file, line = agent.place()
            out.append(AgentReport(agent.name, cluster, agent.done, agent.result, agent.error, agent.steps, doing,
                                   file, line))
        return out

    def output(self, cluster: int) -> Output:
        """What CLUSTER's thread printed (sim.kmx.console)."""
        printed = self.clusters[cluster].console
        return Output(printed.text, printed.dropped, printed.host_error)
