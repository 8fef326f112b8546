"""The probe points (sim/observe/observers.py): a listener hears what a run did, in order, and
only the points it overrides; one that hears turns hears every turn the schedule
recorded (the turn loop in C hands each to Python). And the scheduler's control
(sim/debug/control.py) is the unattended one unless gdb is attached."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from komorebi.sim.build.thread import build_thread
from komorebi.sim.machine.card import Card
from komorebi.sim.machine.config import MachineConfig
from komorebi.sim.machine.schedule import Plan
from komorebi.sim.debug.control import Unattended
from komorebi.sim.image.elf import load_image
from komorebi.sim.observe.observers import Observer, Observers

SOURCE = Path(__file__).resolve().parent.parent / "threads" / "traced.c"


class Recorder(Observer):
    def __init__(self) -> None:
        self.heard: list[tuple] = []

    def call_begins(self, call) -> None:
        source = call.source()
        self.heard.append(("call", call.core.number, call.name, call.region_id,
                           source.line if source is not None else None))

    def call_ends(self, call) -> None:
        self.heard.append(("returned", call.name))

    def flushed(self, core, region, lines_written: int) -> None:
        self.heard.append(("flushed", core.number, region.name, lines_written))

    def finding(self, finding) -> None:
        self.heard.append(("finding", finding.kind))

    def all_returned(self, codes) -> None:
        self.heard.append(("all returned", tuple(codes)))

    def ended(self) -> None:
        self.heard.append(("ended",))

    def released(self, cluster) -> None:
        self.heard.append(("released", cluster.number))


class TurnRecorder(Recorder):
    """Overrides a turn point: it hears every turn."""

    def turn_starts(self, core) -> None:
        self.heard.append(("turn", core.number))


def _run(turns: bool, word: int = 0):
    image = load_image(build_thread([SOURCE]).elf)
    card = Card(MachineConfig(plan=Plan.of_seed(300, 3)))
    cluster = card.place_thread(1, image, [("data", np.arange(1024, dtype=np.uint32))], [word], 4)
    assert isinstance(cluster.debugger, Unattended)
    recorder = TurnRecorder() if turns else Recorder()
    cluster.observers.add(recorder)
    card.start()
    last = None
    while last is None or not last.final and last.fault is None:
        last = cluster.outbox.take(600)
    card.stop()
    turns_taken, _ = card.schedule_record()
    return recorder.heard, last, turns_taken


def test_a_listener_hears_the_calls_flushes_and_end_in_order():
    heard, last, turns = _run(turns=False, word=1)
    assert last.final and last.code == 0 and len(turns) > 20
    lines = SOURCE.read_text().splitlines()
    flushes = [h for h in heard if h[0] == "call" and h[2] == "kmx_flush"]
    assert sorted(h[1] for h in flushes) == [0, 1, 2, 3]
    assert all(h[3] == 0 and "kmx_flush(0)" in lines[h[4] - 1] for h in flushes)
    assert sorted(h[1] for h in heard if h[0] == "flushed") == [0, 1, 2, 3]
    assert sum(h[3] for h in heard if h[0] == "flushed") >= 4  # (each core wrote its sum's line)
    calls = [h for h in heard if h[0] == "call"]
    assert len([h for h in heard if h[0] == "returned"]) == len(calls)
    assert ("finding", "unflushed-write") in heard  # (core 2's word nobody flushes, found at the end)
    end = [h[0] for h in heard[-3:]]
    assert end == ["ended", "all returned", "released"], heard[-5:]
    assert heard[-2] == ("all returned", (0, 0, 0, 0))
    assert heard.index(("finding", "unflushed-write")) < len(heard) - 2


def test_a_listener_that_hears_turns_hears_every_turn_the_schedule_took():
    heard, last, turns = _run(turns=True)
    assert last.final
    mine = [h[1] for h in heard if h[0] == "turn"]
    assert mine == [core for _, core, _ in turns]
    assert len(mine) > 20


def test_a_point_calls_only_the_listeners_that_override_it():
    class Turns(Observer):
        def __init__(self):
            self.n = 0

        def turn_ends(self, core):
            self.n += 1

    quiet, counting = Observer(), Turns()
    observers = Observers(quiet, counting)
    observers.turn_ends(None)
    observers.turn_starts(None)
    observers.flushed(None, None, 1)
    assert counting.n == 1
    assert observers.hear_turns and list(observers) == [quiet, counting]
    assert not Observers(quiet).hear_turns
