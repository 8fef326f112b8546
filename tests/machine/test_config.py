"""The card's options as one object (sim.machine.config): a session's defaults are the
machine's, and what the environment may still say is read where the session's options
enter (komorebi._simulator), not inside the machine."""

import pytest

import komorebi as km
from komorebi._backend import Options
from komorebi._simulator import Simulator
from komorebi.sim.machine.config import MachineConfig


def _options(session: km.Session) -> Options:
    return Options(session.coherence, session.quantum, session.schedule_seed, session.output_limit,
                   session.cache, session.cache_seed, session.gdb, session.profile, None, session.schedule)


def test_a_default_sessions_config_is_the_machines_default(monkeypatch):
    for name in ("KMX_INTERPRET", "KMX_REWRITE", "KMX_GDB"):
        monkeypatch.delenv(name, raising=False)
    session = km.Session()
    assert session.backend.config(_options(session)) == MachineConfig()


def test_the_environments_switches_are_read_by_the_backend(monkeypatch):
    monkeypatch.setenv("KMX_INTERPRET", "0")
    monkeypatch.setenv("KMX_REWRITE", "0")
    config = Simulator().config(_options(km.Session(backend=Simulator())))
    assert (config.interpret, config.rewrite) == (False, False)
    config = Simulator(interpret=True).config(_options(km.Session(backend=Simulator())))
    assert (config.interpret, config.rewrite) == (True, False)


def test_a_config_names_a_mode_it_does_not_know():
    with pytest.raises(ValueError, match="coherence must be one of"):
        MachineConfig(coherence="loose")
