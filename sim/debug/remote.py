"""GDB's remote serial protocol, the wire: packets `$data#checksum`, their acks, and the
interrupt byte (Ctrl-C in gdb), over one TCP connection.

A reader thread of its own reads the socket all the time, so that an interrupt reaches
the run while the cores run (`on_interrupt`, called on that thread); the packets wait in
a queue for the debugger, which answers them on the cluster's host thread.
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


class Connection:
    """One gdb, connected. `receive` gives its packets (bytes, unescaped), or CLOSED."""

    def __init__(self, sock: socket.socket, on_interrupt: Callable[[], None]) -> None:
        self._socket = sock
        self._on_interrupt = on_interrupt
        self._packets: "queue.Queue[bytes | None]" = queue.Queue()
        self._send_lock = threading.Lock()
        self.acks = True  # until gdb asks for QStartNoAckMode
        self.closed = False
        self._reader = threading.Thread(target=self._read, name="komorebi-gdb-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buffer = bytearray()
        try:
            while True:
                chunk = self._socket.recv(65536)
                if not chunk:
                    break
                buffer += chunk
                while buffer:
                    if buffer[0] == INTERRUPT:
                        del buffer[0]
                        self._on_interrupt()
                    elif buffer[0] == ord("$"):
                        end = buffer.find(b"#")
                        if end < 0 or len(buffer) < end + 3:
                            break  # the rest is still coming
                        data, sum_text = bytes(buffer[1:end]), bytes(buffer[end + 1 : end + 3])
                        del buffer[: end + 3]
                        if self.acks:
                            good = sum_text.lower() == b"%02x" % checksum(data)
                            self._write(b"+" if good else b"-")
                            if not good:
                                continue
                        self._packets.put(unescape(data))
                    else:  # '+', '-' (acks of ours: the connection is reliable) and noise
                        del buffer[0]
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
