"""gdb on a thread: km.Session(gdb=PORT) and KMX_GDB, driven by Debian's gdb-multiarch in
batch mode (and, for what batch mode cannot do, a Ctrl-C, by the protocol itself)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest

import komorebi as km
from komorebi.sim.debug import registers, remote
from tests import processes
from tests.conftest import HANG
from tests.threads import THREADS

GDB = shutil.which("gdb-multiarch")
if GDB is None and os.environ.get("KMX_REQUIRE_GDB"):  # (CI has it: .ci/run installs it)
    raise RuntimeError("KMX_REQUIRE_GDB is set, but gdb-multiarch is not installed (apt-get install gdb-multiarch)")
needs_gdb = pytest.mark.skipif(GDB is None, reason="gdb-multiarch is not installed (apt-get install gdb-multiarch)")

PROGRAM = """
import sys
from pathlib import Path
import numpy as np
import komorebi as km

kernels = Path(sys.argv[1])
kernels.mkdir(exist_ok=True)
program = km.Program("debugged", kernels=kernels)
program.thread(cluster=0, sources=[Path(sys.argv[2])], regions={{"data": np.arange(16, dtype=np.int32)}},
               words=[int(sys.argv[3])], cores={cores})
with km.Session({session}) as session:
    run = session.load(program)
    try:
        result = run.thread_result(timeout={timeout})
        while not result.final:
            result = run.thread_result(timeout={timeout})
        print("words", result.words[:4].tolist(), "code", result.code)
    except km.ThreadFault as fault:
        print("fault:", fault.cause)
    except TimeoutError:
        print("timed out")
    run.stop()
    print("data", run.thread.read("data").view(np.int32).tolist())
    {after}
"""


def start(tmp_path: Path, source: Path, word: int = 0, cores: int = 4, session: str = "", env=None, timeout=120,
          after: str = ""):
    """The program run unchanged, with KMX_GDB=0: (the process, the port, the ELF); AFTER:
    a line of Python it runs once the run has stopped."""
    script = tmp_path / "program.py"
    script.write_text(PROGRAM.format(cores=cores, session=session, timeout=timeout, after=after))
    return attachable([sys.executable, str(script), str(tmp_path / "kernels"), str(source), str(word)], env)


def attachable(command: list[str], env=None) -> tuple[subprocess.Popen, int, str]:
    """COMMAND started with KMX_GDB=0, in a process group of its own (tests/processes.py:
    the caller ends it with processes.end, whatever happens), once it says how to attach:
    (the process, the port, the ELF)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, env={**os.environ, "KMX_GDB": "0", **(env or {})})
    try:
        for line in process.stderr:  # the first line says how to attach
            found = re.search(r"target remote :(\d+)' (\S+)", line)
            if found:
                return process, int(found[1]), found[2]
        process.wait(timeout=HANG)
        raise AssertionError(f"the program never said how to attach: {process.stdout.read()}")
    except BaseException:
        processes.end(process)
        raise


def debug(tmp_path: Path, commands: list[str], source: Path = THREADS / "debugged.c", **kwargs) -> tuple[str, str]:
    """Run the thread under gdb-multiarch in batch mode with COMMANDS: (gdb's output,
    the program's)."""
    process, port, elf = start(tmp_path, source, **kwargs)
    try:
        arguments = [GDB, "-q", "-batch", "-nx", "-ex", f"target remote :{port}"]
        for command in commands:
            arguments += ["-ex", command]
        done = subprocess.run([*arguments, elf], capture_output=True, text=True, timeout=120)
        out, err = process.communicate(timeout=120)
    finally:
        processes.end(process)
    return done.stdout + done.stderr, out + err


@needs_gdb
def test_stops_every_core_at_kmx_main_breaks_prints_and_finishes(tmp_path):
    said, printed = debug(tmp_path, [
        "info threads", "break scale", "continue", "print value", "print factor", "finish",
        "print data[5]", "print *data@4", "monitor cache data", "delete", "continue",
    ])
    assert re.search(r"\* 1 +Thread 1 \(cluster 0 core 0, ready\) kmx_main \(core=core@entry=0\)", said), said
    for n in range(4):
        assert f"Thread {n + 1} (cluster 0 core {n}, ready) kmx_main (core=core@entry={n})" in said
    assert "Thread 1 hit Breakpoint 1, scale (value=0, factor=factor@entry=2)" in said
    assert "$1 = 0" in said and "$2 = 2" in said
    assert "Value returned is $3 = 1" in said
    assert "$4 = 5" in said and "$5 = {0, 1, 2, 3}" in said
    assert "cluster 0, region 'data' (ID 0, 64 bytes, 1 line, card mode)" in said
    assert "exited normally" in said
    assert "words [16, 70, 156, 274] code 0" in printed


@needs_gdb
def test_step_next_stepi_and_registers(tmp_path):
    said, printed = debug(tmp_path, [
        "break debugged.c:22", "continue", "step", "next", "stepi", "info registers pc", "print $vlenb",
        "print $cycle > 0", "print/x $ft0", "delete", "continue",
    ])
    assert "Breakpoint 1, kmx_main" in said
    assert re.search(r"scale \(value=0, factor=factor@entry=2\) at .*debugged.c:11", said), said
    assert re.search(r"\n12\t +return scaled \+ 1;", said), said
    assert "= 64" in said and "= 1" in said
    assert "exited normally" in said and "code 0" in printed


@needs_gdb
def test_in_timing_mode_gdb_breaks_steps_and_reads_the_modelled_cycles(tmp_path):
    said, printed = debug(tmp_path, [
        "break scale", "continue", "print $cycle", "print $instret", "next", "next", "print $cycle", "delete",
        "continue",
    ], session='timing="x280"', after='print("timed", run.timed, min(t.cycles for t in run.timing()) > 0)')
    assert "Thread 1 hit Breakpoint 1, scale (value=0, factor=factor@entry=2)" in said, said
    values = [int(v) for v in re.findall(r"^\$\d+ = (\d+)$", said, flags=re.M)]
    assert len(values) == 3, said
    cycle, instret, later = values
    assert cycle != instret  # (the model's cycles, not the instructions)
    assert later > cycle  # (two lines later: the core's clock went on)
    assert "exited normally" in said
    assert "words [16, 70, 156, 274] code 0" in printed and "timed True True" in printed


@needs_gdb
def test_a_watchpoint_on_a_region_word_stops_after_the_store(tmp_path):
    said, printed = debug(tmp_path, ["break debugged.c:19", "continue", "delete", "watch -l data[8]", "continue", "bt 1",
                                     "delete", "continue"])
    assert "Thread 3 hit Hardware watchpoint 2: -location data[8]" in said, said
    assert "Old value = 8" in said and "New value = 156" in said
    assert re.search(r"kmx_main \(core=core@entry=2\) at .*debugged.c:2[34]", said), said
    assert "data [16, 1, 2, 3, 70, 5, 6, 7, 156, 9, 10, 11, 274, 13, 14, 15]" in printed


@needs_gdb
def test_a_fault_stops_in_gdb_at_its_instruction(tmp_path):
    said, printed = debug(tmp_path, ["continue", "bt 1", "print total", "continue"], word=1)
    assert "a store to 0x8, which is a null pointer" in said  # (the fault's message, on gdb's console)
    assert "Thread 4 received signal SIGSEGV" in said
    assert re.search(r"kmx_main \(core=core@entry=3\) at .*debugged.c:28\n28\t +\*nowhere = total;", said), said
    assert "$1 = 274" in said
    assert "Program terminated with signal SIGSEGV" in said
    assert "fault: a store to 0x8, which is a null pointer" in printed


@needs_gdb
def test_an_ebreak_stops_and_goes_on_and_an_assert_is_sigabrt(tmp_path):
    said, printed = debug(tmp_path, ["continue", "continue"], word=2)
    assert "Thread 1 received signal SIGTRAP" in said and "exited normally" in said
    assert "code 0" in printed
    said, printed = debug(tmp_path, ["continue", "continue"], word=3)
    assert "Thread 3 received signal SIGABRT" in said, said
    assert "total == 0" in said and "fault:" in printed


@needs_gdb
def test_the_cores_interleave_as_without_gdb(tmp_path):
    """Stops do not move the turns: a racy counter ends the same with gdb as without."""
    source = THREADS / "racy.c"
    script = textwrap.dedent("""
        import sys
        from pathlib import Path
        import komorebi as km
        Path(sys.argv[1]).mkdir(exist_ok=True)
        program = km.Program("racy", kernels=Path(sys.argv[1]))
        program.thread(cluster=0, sources=[Path(sys.argv[2])], words=[20000, 0], cores=4)
        with km.Session(quantum=1000) as session:
            run = session.load(program)
            result = run.thread_result(timeout=120)
            while not result.final:
                result = run.thread_result(timeout=120)
            print("words", result.words[:8].tolist())
            run.stop()
    """)
    (tmp_path / "racy.py").write_text(script)
    command = [sys.executable, str(tmp_path / "racy.py"), str(tmp_path / "kernels"), str(source)]
    alone = subprocess.run(command, capture_output=True, text=True, timeout=120, env={**os.environ, "KMX_GDB": ""})
    process, port, elf = attachable(command)
    try:
        said = subprocess.run([GDB, "-q", "-batch", "-nx", "-ex", f"target remote :{port}", "-ex", "break racy.c:20",
                               "-ex", "continue", "-ex", "continue", "-ex", "thread 2", "-ex", "stepi", "-ex", "next",
                               "-ex", "delete", "-ex", "continue", elf], capture_output=True, text=True, timeout=120)
        out, _ = process.communicate(timeout=120)
    finally:
        processes.end(process)
    assert "hit Breakpoint 1" in said.stdout and "exited normally" in said.stdout, said.stdout + said.stderr
    assert out.strip() == alone.stdout.strip() and out.startswith("words [")


@needs_gdb
def test_detach_lets_the_run_go_on_and_kill_ends_it(tmp_path):
    said, printed = debug(tmp_path, ["break scale", "continue", "detach"])
    assert "detached" in said
    assert "words [16, 70, 156, 274] code 0" in printed
    said, printed = debug(tmp_path, ["break scale", "continue", "kill"])
    assert "fault: gdb killed the thread" in printed


def test_ctrl_c_stops_a_thread_that_never_ends(tmp_path):
    """The protocol by hand: continue, the interrupt byte, a stop reply, kill."""
    process, port, _ = start(tmp_path, THREADS / "forever.c", cores=1)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            talk = Talk(sock)
            assert talk.ask("?").startswith("T05thread:1;")
            for _ in range(2):  # (the second: no stale stop of the first Ctrl-C's)
                talk.send("vCont;c")
                assert talk.quiet(0.5)  # running: nothing comes back
                sock.sendall(b"\x03")
                assert talk.reply().startswith("T02thread:1;")
            pc = int.from_bytes(bytes.fromhex(talk.ask(f"p{registers.PC:x}")), "little")
            assert pc > 0x4000_0000_0000
            talk.send("vKill;1")
            assert talk.reply() == "OK"
        out, _ = process.communicate(timeout=60)
    finally:
        processes.end(process)
    assert "fault: gdb killed the thread" in out


def test_a_run_python_stops_tells_gdb_and_ends(tmp_path):
    """Python's thread_result times out while gdb lets the cores run; the session's close
    stops the run: gdb hears why, and the program ends."""
    process, port, _ = start(tmp_path, THREADS / "forever.c", cores=2, timeout=1.0)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            talk = Talk(sock)
            talk.ask("?")
            talk.send("vCont;c")
            said = bytes.fromhex(talk.reply()[1:]).decode()
            assert "the run was stopped from Python" in said
            assert talk.reply() == "X09"
        out, _ = process.communicate(timeout=60)
    finally:
        processes.end(process)
    assert "timed out" in out


class Talk:
    """A few packets of gdb's protocol, by hand (acks on)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.buffer = sock, b""

    def send(self, payload: str) -> None:
        self.sock.sendall(remote.frame(payload))

    def reply(self) -> str:
        while True:
            self.buffer = self.buffer.lstrip(b"+")
            if self.buffer.startswith(b"$") and b"#" in self.buffer and len(self.buffer) >= self.buffer.index(b"#") + 3:
                end = self.buffer.index(b"#")
                data, self.buffer = self.buffer[1:end], self.buffer[end + 3 :]
                try:
                    self.sock.sendall(b"+")
                except OSError:  # (the stub has closed the connection after its last word)
                    pass
                return remote.unescape(data).decode("latin-1")
            chunk = self.sock.recv(65536)
            assert chunk, "the stub closed the connection"
            self.buffer += chunk

    def ask(self, payload: str) -> str:
        self.send(payload)
        return self.reply()

    def quiet(self, seconds: float) -> bool:
        self.sock.settimeout(seconds)
        try:
            self.buffer += self.sock.recv(65536)
        except socket.timeout:
            return self.buffer.strip(b"+") == b""
        finally:
            self.sock.settimeout(60)
        return self.buffer.strip(b"+") == b""


def test_the_target_description_names_gdbs_riscv_features():
    tree = ElementTree.fromstring(registers.target_xml().split("\n", 2)[2])
    features = {f.get("name"): [r.get("name") for r in f.findall("reg")] for f in tree.findall("feature")}
    assert features["org.gnu.gdb.riscv.cpu"][:3] == ["zero", "ra", "sp"] and features["org.gnu.gdb.riscv.cpu"][-1] == "pc"
    assert len(features["org.gnu.gdb.riscv.fpu"]) == 35
    assert features["org.gnu.gdb.riscv.vector"] == [f"v{n}" for n in range(32)]
    assert {"vl", "vtype", "vlenb", "cycle"} <= set(features["org.gnu.gdb.riscv.csr"])
    numbers = [int(r.get("regnum")) for r in tree.iter("reg")]
    assert numbers == list(range(len(registers.REGISTERS)))
    assert {r.get("bitsize") for r in tree.iter("reg") if r.get("name").startswith("v") and r.get("name")[1:].isdigit()} == {"512"}


def test_packets_escape_what_the_protocol_reserves():
    framed = remote.frame("a$b#c}d*")
    assert framed.startswith(b"$") and b"}\x04" in framed and b"}\x03" in framed
    body = framed[1 : framed.index(b"#", len(framed) - 3)]
    assert remote.unescape(body) == b"a$b#c}d*"
    assert framed[-2:] == b"%02x" % remote.checksum(body)


def test_bad_gdb_ports_are_refused(tmp_path):
    with pytest.raises(TypeError, match="gdb must be a port number"):
        km.Session(gdb="1234")
    with pytest.raises(ValueError, match="0 to 65535"):
        km.Session(gdb=70000)
    os.environ["KMX_GDB"] = "port"
    try:
        with pytest.raises(ValueError, match="KMX_GDB must be a port number"):
            km.Session()
    finally:
        del os.environ["KMX_GDB"]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        program = km.Program("busy", kernels=tmp_path)
        program.thread(cluster=0, sources=[THREADS / "copy.c"], regions={"a": np.zeros(16, np.uint8)})
        with km.Session(gdb=port) as session:
            with pytest.raises(ValueError, match=f"gdb: cannot serve on 127.0.0.1:{port}"):
                session.load(program)


VECTORS = """
#include "kmx.h"
struct { volatile int side; volatile int watched; float v[64]; } g;
int kmx_main(int core) {
    int total = 0;
    for (int k = 0; k < 20; k++) {
        for (int i = 0; i < 64; i++)
            g.v[i] = g.v[i] * 2.0f + 1.0f;
        g.side = k;
        total += g.watched;
    }
    kmx_result(0, (uint32_t *)&total, 1);
    return 0;
}
"""


@needs_gdb
def test_vector_code_stops_at_every_breakpoint_and_its_watched_accesses(tmp_path):
    """The vector loop runs in the interpreter (sim/native/isa.c): it stops before a
    breakpoint, a vector store's bytes are its own, an interpreted load of a watched word
    is seen."""
    source = tmp_path / "vectors.c"
    source.write_text(VECTORS)
    hits = []
    for interpret in ("1", "0"):  # (0: no interpreter, a trap an instruction: the reference)
        said, _ = debug(tmp_path, ["break 8", *["continue"] * 40], source=source, cores=1, env={"KMX_INTERPRET": interpret})
        assert "exited normally" in said, said
        hits.append(said.count("Breakpoint 1, "))
    assert hits[0] == hits[1] > 1, hits
    said, printed = debug(tmp_path, ["watch g.v[2]", *["continue"] * 21], source=source, cores=1, session="profile=True",
                          after='c = run.profile().core(0); print("counted", sum(x.instructions for x in c.lines), c.instructions)')
    assert said.count("\nNew value = ") == 20, said
    counted = re.search(r"counted (\d+) (\d+)", printed)  # (a watchpoint's stop counts no instruction twice)
    assert counted and counted[1] == counted[2], printed
    said, _ = debug(tmp_path, ["rwatch g.watched", *["continue"] * 21], source=source, cores=1)
    assert said.count("\nValue = ") == 20, said


LOOP = """
#include "kmx.h"
volatile int sink[4];
int kmx_main(int core) {
    for (int i = 0; i < 30; i++) {
        sink[core] += i;
        for (volatile int j = 0; j < 7; j++) {}
    }
    return 0;
}
"""


@needs_gdb
@pytest.mark.parametrize("quantum", [13, 100_000])
def test_every_core_stops_at_a_breakpoint_whatever_the_turns(tmp_path, quantum):
    """gdb steps a core over a breakpoint with the breakpoint out and only that core
    resumed: the others must wait, or they would run past it."""
    source = tmp_path / "loop.c"
    source.write_text(LOOP)
    said, _ = debug(tmp_path, ["break 6", *["continue"] * 61], source=source, cores=2, session=f"quantum={quantum}")
    assert said.count("hit Breakpoint 1") == 60 and "exited normally" in said, said


@needs_gdb
def test_a_watchpoint_in_the_block_of_a_breakpoint(tmp_path):
    source = tmp_path / "both.c"
    source.write_text("""
#include "kmx.h"
volatile int flag;
int numbers[16];
int kmx_main(int core) {
    for (int r = 0; r < 4; r++) {
        numbers[r] = r * 3;
        flag = r;
        numbers[r + 4] = numbers[r] + 1;
    }
    return 0;
}
""")
    said, printed = debug(tmp_path, ["break 10", "watch flag", *["continue"] * 9], source=source, cores=1)
    assert "SIGSEGV" not in said and "exited normally" in said, said
    assert said.count("\nNew value = ") == 3, said


STALE = """
#include "kmx.h"
int32_t *data;
int kmx_main(int core) {
    uint64_t bytes;
    data = (int32_t *)kmx_region(0, &bytes);
    kmx_print("before the invalidate\\n");
    kmx_invalidate(0);
    kmx_print("after it\\n");
    data[1] = data[0] + 1;
    kmx_flush(0);
    return 0;
}
"""


@needs_gdb
def test_memory_reads_as_the_core_sees_it_and_writes_are_the_cores_stores(tmp_path):
    """Strict mode: before the invalidate a line of the region reads stale (what the core
    would load), after it Python's bytes; gdb's store is dirty in the cache, and the
    thread's flush takes it to DRAM, which Python reads."""
    source = tmp_path / "stale.c"
    source.write_text(STALE)
    said, printed = debug(tmp_path, ["break 7", "break 9", "continue", "print/x data[0]", "continue", "print data[0]",
                                     "set var data[2] = 77", "delete", "continue"],
                          source=source, cores=1, session='coherence="strict"')
    assert "$1 = 0xa5a5a5a5" in said and "$2 = 0" in said, said
    assert "data [0, 1, 77, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]" in printed, printed


@needs_gdb
def test_packets_the_stub_cannot_serve_get_an_error_and_the_run_goes_on(tmp_path):
    """Addresses past the address space, negative ones, spans that wrap, and a packet
    longer than PacketSize that never ends: each gets an E reply or is dropped with a
    line on stderr, and the next packet is answered."""
    process, port, _ = start(tmp_path, THREADS / "forever.c", cores=1)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            talk = Talk(sock)
            assert talk.ask("?").startswith("T05thread:1;")
            for packet in ["Z2,ffffffffffffffff,8", "Z0,-4,4", "Z1,-1,4", "Z4,10000000000000000,4",
                           "Z2,1000,0", "Z3,1000,ffffffff", "z2,ffffffffffffffff,8", "m-10,4",
                           "M10000000000000000,1:00", "Mfffffffffffffffe,4:00000000", "p-1",
                           "c10000000000000000", "qXfer:features:read:target.xml:-1,10"]:
                assert talk.ask(packet).startswith("E"), packet
            assert talk.ask("Z2,fffffffffffffff8,8") == "OK"  # (the last 8 bytes of the address space)
            assert talk.ask("z2,fffffffffffffff8,8") == "OK"
            sock.sendall(b"$m" + b"0" * (4 << 20))  # (a packet with no end, past PacketSize)
            assert talk.ask("?").startswith("T05thread:1;")
            sock.sendall(b"$qC" + b"1" * 100)  # (one with no end, then a new one)
            assert talk.ask("qC") == "QC1"
            talk.send("vKill;1")
            assert talk.reply() == "OK"
        out, err = process.communicate(timeout=60)
    finally:
        processes.end(process)
    assert "fault: gdb killed the thread" in out
    assert "gdb sent a packet longer than the PacketSize of 32768 bytes: it is dropped, unanswered" in err
    assert "gdb sent a packet with no end (102 bytes, then a new '$')" in err


def test_the_packet_reader_holds_at_most_a_packet_and_reads_the_next_one():
    reader = remote.PacketReader(limit=0x8000)
    events = reader.feed(b"+$?#3f\x03$g#6")
    assert events == [("packet", (b"?", True)), ("interrupt", None)]
    assert reader.feed(b"7") == [("packet", (b"g", True))]
    assert reader.feed(b"$g#00") == [("packet", (b"g", False))]  # (a bad checksum: acked with '-')
    dropped = reader.feed(b"$m")
    chunk = b"1" * 65536
    for _ in range(1024):  # 64 MiB with no '#'
        dropped += reader.feed(chunk)
        assert len(reader._data) <= reader.limit
    assert [kind for kind, _ in dropped] == ["dropped"]
    assert reader.feed(b"#00" + remote.frame("qC")) == [("packet", (b"qC", True))]
    assert reader.feed(remote.frame("a}b")) == [("packet", (b"a}b", True))]
    assert reader.feed(b"noise\x03\x03 between" * 1000) == [("interrupt", None)]
    # a '$' where a checksum digit should be: the packet before it never ended
    assert reader.feed(b"$abc#$?#3f") == [("dropped", "a packet whose checksum was cut short by a new '$'"),
                                        ("packet", (b"?", True))]
