"""The --workers socket pair's ends (``voirdire.executors.channel.Channel``): a send never blocks the event loop,
so two processes that send each other more than their socket buffers hold while neither reads (a run's parent
dealing sessions, a worker sending ended sessions' records) cannot stop each other; a read never waits for the rest
of a message; messages stay in order and are read by a ``Connection`` too."""

from __future__ import annotations

import asyncio
import socket
import threading
from multiprocessing.connection import Connection

import pytest

from voirdire.executors.channel import Channel, frame

BIG = "x" * 100_000  # each message bigger than what a socket pair's buffer holds a few of


async def _collect(channel: Channel, count: int) -> list[object]:
    loop = asyncio.get_running_loop()
    got: list[object] = []
    done = loop.create_future()

    def readable() -> None:
        messages, ended = channel.receive()
        got.extend(messages)
        if (len(got) >= count or ended) and not done.done():
            done.set_result(None)

    loop.add_reader(channel.fd, readable)
    try:
        await done
    finally:
        loop.remove_reader(channel.fd)
    return got


async def test_both_ends_send_more_than_the_buffers_hold_without_reading_and_nothing_blocks() -> None:
    loop = asyncio.get_running_loop()
    a_sock, b_sock = socket.socketpair()
    a, b = Channel(a_sock.fileno(), loop), Channel(b_sock.fileno(), loop)
    try:
        for i in range(60):  # ~6 MB each way; a blocking send stops at the first full buffer, for good
            a.send(("to b", i, BIG))
            b.send(("to a", i, BIG))
        assert a.pending > 0 and b.pending > 0  # kept, not blocked on
        got_b, got_a = await asyncio.gather(_collect(b, 60), _collect(a, 60))
        assert got_b == [("to b", i, BIG) for i in range(60)]
        assert got_a == [("to a", i, BIG) for i in range(60)]
        await asyncio.gather(a.drain(), b.drain())
        assert a.pending == b.pending == 0
    finally:
        a.close()
        b.close()
        a_sock.close()
        b_sock.close()


async def test_a_message_whose_start_has_arrived_is_kept_until_its_rest_comes() -> None:
    loop = asyncio.get_running_loop()
    mine, theirs = socket.socketpair()
    channel = Channel(mine.fileno(), loop)
    try:
        data = frame({"session": "s1", "records": ("a", "b")})
        theirs.sendall(data[:7])
        await asyncio.sleep(0)
        assert channel.receive() == ([], False)
        theirs.sendall(data[7:] + frame("next"))
        assert channel.receive() == ([{"session": "s1", "records": ("a", "b")}, "next"], False)
        theirs.close()
        assert channel.receive() == ([], True)  # the other end is gone
        channel.send("dropped")  # not an error: the reader has said it is gone
    finally:
        channel.close()
        mine.close()


async def test_sent_from_a_thread_through_the_loop_and_read_by_a_connection() -> None:
    loop = asyncio.get_running_loop()
    mine, theirs = socket.socketpair()
    channel = Channel(mine.fileno(), loop)
    reader = Connection(theirs.detach())
    try:
        channel.send("first")
        thread = threading.Thread(target=channel.send, args=(("from a thread", 1),))
        thread.start()
        thread.join()
        await asyncio.sleep(0)  # the loop writes what the thread sent
        await channel.drain()
        assert reader.recv() == "first"
        assert reader.recv() == ("from a thread", 1)
    finally:
        channel.close()
        reader.close()
        mine.close()


def test_the_frame_is_connection_s() -> None:
    mine, theirs = socket.socketpair()
    writer, reader = Connection(mine.detach()), Connection(theirs.detach())
    try:
        writer.send_bytes(b"")  # nothing: only to show the framing below is what Connection reads
        assert reader.recv_bytes() == b""
        mine2 = socket.socket(fileno=writer.fileno())
        try:
            mine2.sendall(frame([1, "two", 3.0]))
        finally:
            mine2.detach()
        assert reader.recv() == [1, "two", 3.0]
    finally:
        writer.close()
        reader.close()


@pytest.mark.parametrize("size", [0, 1, 16_384])
def test_frames_of_any_size_round_trip(size: int) -> None:
    mine, theirs = socket.socketpair()
    try:
        mine.sendall(frame(b"z" * size) * 3)
        loop = asyncio.new_event_loop()
        try:
            channel = Channel(theirs.fileno(), loop)
            got: list[object] = []
            while len(got) < 3:
                got.extend(channel.receive()[0])
            channel.close()
        finally:
            loop.close()
        assert got == [b"z" * size] * 3
    finally:
        mine.close()
        theirs.close()
