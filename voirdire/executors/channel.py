"""One end of a ``--workers`` socket pair, read and written without ever blocking the process's event loop.

Both ends of the pair (the run's process and a worker) run an event loop that reads the other's messages as they
arrive. With a blocking write, the two could stop each other for good: the parent, dealing a session to a worker
whose socket buffer was full, blocked and stopped reading, while that worker, sending an ended session's records to
the parent, whose buffer was full too, blocked as well (seen: a 2,000-session run, 200 in flight in each process,
both processes idle and the run never ending). A blocking read of the rest of a message whose start had arrived
could do the same. A ``Channel`` writes what the socket takes now and keeps the rest for the event loop to write
when the socket can take more, and reads what has arrived, keeping a message's start until its rest comes. Messages
are framed as ``multiprocessing.connection.Connection`` frames them (a 4-byte length, pickled by ``ForkingPickler``),
so a ``Connection`` on the other end can read them too (a worker's start-up, before its loop runs, does).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
import threading
from multiprocessing.reduction import ForkingPickler

_LONG = 0x7FFFFFFF  # Connection's frame: a 4-byte length, or -1 then an 8-byte length above this
_CHUNK = 1 << 18


def frame(message: object) -> bytes:
    """``message`` as ``Connection.send`` writes it."""
    payload = bytes(ForkingPickler.dumps(message))
    size = len(payload)
    head = struct.pack("!i", size) if size <= _LONG else struct.pack("!iQ", -1, size)
    return head + payload


class Channel:
    """Messages to and from the other end of the socket ``fd``, which stays blocking for a ``Connection`` on it;
    written at once as far as the socket takes them, the rest by the event loop ``loop`` when it can. A message
    sent from another thread goes through the loop. Once the other end is gone, messages sent are dropped:
    ``receive`` says it is gone."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        # A socket object of its own, on a duplicate of the descriptor, to read and write with MSG_DONTWAIT: setting
        # O_NONBLOCK instead would be shared with the Connection's descriptor.
        self._sock = socket.socket(fileno=os.dup(fd))
        self.fd = self._sock.fileno()
        self._loop = loop
        self._thread = threading.get_ident()
        self._out = bytearray()
        self._in = bytearray()
        self._closed = False
        self._drained: asyncio.Event | None = None

    # ------------------------------------------------------------------ writing
    @property
    def pending(self) -> int:
        """Bytes sent but kept until the socket can take them."""
        return len(self._out)

    def send(self, message: object) -> None:
        if self._closed:
            return
        data = frame(message)
        if threading.get_ident() != self._thread:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the run is over
                self._loop.call_soon_threadsafe(self._write, data)
            return
        self._write(data)

    def _write(self, data: bytes) -> None:
        if self._closed:
            return
        if self._out:  # in order: after what is waiting
            self._out += data
            return
        sent = self._try(data)
        if sent < len(data) and not self._closed:
            self._out += memoryview(data)[sent:]
            self._loop.add_writer(self.fd, self._flush)

    def _try(self, data: bytes | bytearray) -> int:
        try:
            return self._sock.send(data, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError:  # the other end is gone
            self._gone()
            return len(data)

    def _flush(self) -> None:
        sent = self._try(self._out)
        del self._out[:sent]
        if not self._out:
            self._idle()

    def _idle(self) -> None:
        with contextlib.suppress(Exception):  # the loop may have closed
            self._loop.remove_writer(self.fd)
        if self._drained is not None:
            self._drained.set()

    def _gone(self) -> None:
        self._out.clear()
        self._closed = True
        self._idle()

    async def drain(self) -> None:
        """Until everything sent is written, or the other end is gone."""
        while self._out and not self._closed:
            self._drained = asyncio.Event()
            await self._drained.wait()

    # ------------------------------------------------------------------ reading
    def receive(self) -> tuple[list[object], bool]:
        """The messages that have arrived whole, and whether the other end is gone (closed its end, or died)."""
        ended = False
        while True:
            try:
                chunk = self._sock.recv(_CHUNK, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                ended = True
                break
            if not chunk:
                ended = True
                break
            self._in += chunk
        return self._whole(), ended

    def _whole(self) -> list[object]:
        messages: list[object] = []
        buf, at = self._in, 0
        while len(buf) - at >= 4:
            (size,) = struct.unpack_from("!i", buf, at)
            start = at + 4
            if size == -1:
                if len(buf) - start < 8:
                    break
                (size,) = struct.unpack_from("!Q", buf, start)
                start += 8
            if len(buf) - start < size:
                break
            messages.append(ForkingPickler.loads(buf[start : start + size]))
            at = start + size
        del buf[:at]
        return messages

    def close(self) -> None:
        """Drop what is not written and close this end's duplicate descriptor (a Connection keeps the socket)."""
        self._gone()
        self._sock.close()
