"""GDB's remote serial protocol, the wire: packets `$data#checksum`, their acks, and the
interrupt byte (Ctrl-C in gdb), over one TCP connection.

A reader thread of its own reads the socket all the time, so that an interrupt reaches
the run while the cores run (`on_interrupt`, called on that thread); the packets wait in
a queue for the debugger, which answers them on the cluster's host thread.

A packet is at most the PacketSize the stub advertises (its data, escaped, between `$` and
`#`): a longer one is dropped as it comes, with a line on stderr, and the next packet is
read as usual. A `$` inside a packet (where the protocol escapes it), or in place of a
checksum digit, starts a new one, so a packet left unterminated cannot hide the ones
after it. The reader searches each chunk for what ends a packet, so a long packet or
noise costs no Python per byte.
"""

from __future__ import annotations

import queue
import socket
import threading
from typing import Callable

INTERRUPT = 0x03
CLOSED = None  # what receive gives once gdb has gone


def checksum(data: bytes) -> int:
    return sum(data) & 0xFF


def frame(payload: str | bytes) -> bytes:
    """PAYLOAD as a packet, its special characters escaped (`}` then the byte ^ 0x20)."""
    data = payload.encode("latin-1") if isinstance(payload, str) else payload
    escaped = bytearray()
    for byte in data:
        if byte in b"$#}*":
            escaped += bytes((0x7D, byte ^ 0x20))
        else:
            escaped.append(byte)
    return b"$" + bytes(escaped) + b"#%02x" % checksum(bytes(escaped))


def unescape(data: bytes) -> bytes:
    out, i = bytearray(), 0
    while i < len(data):
        if data[i] == 0x7D and i + 1 < len(data):
            out.append(data[i + 1] ^ 0x20)
            i += 2
        else:
            out.append(data[i])
            i += 1
    return bytes(out)


class PacketReader:
    """The bytes gdb sends, cut into what they mean: `feed(chunk)` gives a list of
    ("packet", (data unescaped, whether its checksum matches)), ("interrupt", None), and
    ("dropped", why) for a packet the stub will not read. Between packets and inside
    one, bytes are searched for what ends them (bytes.find), not looked at one by one."""

    def __init__(self, limit: int) -> None:
        self.limit = limit  # the most data between `$` and `#`
        self._data = bytearray()  # the packet's data so far
        self._state = "between"  # between packets; "data"; "skip" (a packet past the limit); "sum"
        self._sum = bytearray()

    def feed(self, chunk: bytes) -> list[tuple[str, object]]:
        out: list[tuple[str, object]] = []
        i, n = 0, len(chunk)
        while i < n:
            if self._state == "between":  # ('+', '-': acks of ours, and noise, are passed over)
                dollar = chunk.find(b"$", i)
                end = n if dollar < 0 else dollar
                out += [("interrupt", None)] * min(chunk.count(INTERRUPT, i, end), 1)
                if dollar < 0:
                    break
                self._state, self._data, i = "data", bytearray(), dollar + 1
            elif self._state in ("data", "skip"):
                hash_at, dollar_at = chunk.find(b"#", i), chunk.find(b"$", i)
                ends = [at for at in (hash_at, dollar_at) if at >= 0]
                end = min(ends) if ends else n
                if self._state == "data":
                    self._data += chunk[i:end]
                    if len(self._data) > self.limit:
                        out.append(("dropped", f"a packet longer than the PacketSize of {self.limit} bytes"))
                        self._state, self._data = "skip", bytearray()
                i = end
                if end == n:
                    break
                if end == dollar_at:  # (a new packet: the one before it never ended)
                    if self._state == "data":
                        out.append(("dropped", f"a packet with no end ({len(self._data)} bytes, then a new '$')"))
                    self._state, self._data = "data", bytearray()
                else:
                    self._state = "sum" if self._state == "data" else "skipsum"
                    self._sum = bytearray()
                i = end + 1
            else:  # "sum", "skipsum": the two digits of the checksum
                if chunk[i] == ord("$"):  # (a new packet where a digit should be: this one never ended)
                    out.append(("dropped", "a packet whose checksum was cut short by a new '$'"))
                    self._state, self._data, i = "data", bytearray(), i + 1
                    continue
                self._sum.append(chunk[i])
                i += 1
                if len(self._sum) == 2:
                    if self._state == "sum":
                        good = bytes(self._sum).lower() == b"%02x" % checksum(bytes(self._data))
                        out.append(("packet", (unescape(bytes(self._data)), good)))
                    self._state, self._data = "between", bytearray()
        return out


class Connection:
    """One gdb, connected. `receive` gives its packets (bytes, unescaped), or CLOSED."""

    def __init__(self, sock: socket.socket, on_interrupt: Callable[[], None], limit: int,
                 say: Callable[[str], None]) -> None:
        self._socket = sock
        self._on_interrupt = on_interrupt
        self._say = say  # (a packet dropped: a line on stderr)
        self._reader_state = PacketReader(limit)
        self._packets: "queue.Queue[bytes | None]" = queue.Queue()
        self._send_lock = threading.Lock()
        self.acks = True  # until gdb asks for QStartNoAckMode
        self.closed = False
        self._reader = threading.Thread(target=self._read, name="komorebi-gdb-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            while True:
                chunk = self._socket.recv(65536)
                if not chunk:
                    break
                for kind, value in self._reader_state.feed(chunk):
                    if kind == "interrupt":
                        self._on_interrupt()
                    elif kind == "dropped":
                        self._say(f"komorebi: gdb sent {value}: it is dropped, unanswered")
                    elif self.acks:  # a packet: acked, or refused for its checksum (gdb sends it again)
                        data, good = value
                        self._write(b"+" if good else b"-")
                        if good:
                            self._packets.put(data)
                    else:  # (no acks: the connection is reliable, and gdb would not send it again)
                        self._packets.put(value[0])
        except OSError:
            pass
        finally:
            self.closed = True
            self._packets.put(CLOSED)

    def _write(self, data: bytes) -> None:
        with self._send_lock:
            try:
                self._socket.sendall(data)
            except OSError:
                self.closed = True

    def send(self, payload: str | bytes) -> None:
        """Send one packet (an ack from gdb is not waited for: the connection is TCP)."""
        self._write(frame(payload))

    def receive(self, timeout: float | None) -> bytes | None | bool:
        """The next packet; CLOSED once gdb has gone; False when none came within TIMEOUT."""
        try:
            return self._packets.get(timeout=timeout)
        except queue.Empty:
            return CLOSED if self.closed else False

    def close(self) -> None:
        self.closed = True
        try:
            self._socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._socket.close()
