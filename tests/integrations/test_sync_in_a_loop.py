"""``run_sync`` inside a running event loop (a Jupyter cell): the coroutine runs on a private loop in a worker
thread and its result or error comes back; an interrupt of the waiting thread (Jupyter's "interrupt kernel")
cancels the run instead of leaving it running."""

from __future__ import annotations

import asyncio
import signal
import threading

import pytest

from voirdire.api import run_sync


async def test_the_result_and_errors_come_back_from_the_worker_thread() -> None:
    caller = threading.get_ident()

    async def where() -> tuple[int, bool]:
        return threading.get_ident(), asyncio.get_running_loop() is not outer

    outer = asyncio.get_running_loop()
    ident, own_loop = run_sync(where(), "arun")
    assert ident != caller and own_loop

    async def fails() -> None:
        raise ValueError("from the run")

    with pytest.raises(ValueError, match="from the run"):
        run_sync(fails(), "arun")


def test_an_interrupt_while_waiting_cancels_the_run() -> None:
    running, cancelled = threading.Event(), threading.Event()

    async def forever() -> None:
        running.set()
        try:
            await asyncio.sleep(60)  # a run that would not end before the interrupt (a bound, not a measure)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def cell() -> None:  # a notebook cell: synchronous code inside a running loop
        run_sync(forever(), "arun")

    main = threading.get_ident()

    def interrupt_once_running() -> None:
        running.wait()
        # Jupyter's "interrupt kernel" sends the kernel SIGINT: a real signal, which wakes the waiting thread
        signal.pthread_kill(main, signal.SIGINT)

    # SIGINT raises KeyboardInterrupt in the waiting thread, as in a kernel (the test runner may handle it itself)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt_once_running, daemon=True).start()
    loop = asyncio.new_event_loop()  # run_until_complete, as a kernel's loop runs: SIGINT raises, not cancels
    try:
        with pytest.raises(KeyboardInterrupt):
            loop.run_until_complete(cell())
    finally:
        loop.close()
        signal.signal(signal.SIGINT, previous)
    assert cancelled.is_set()  # the worker's run was cancelled before run_sync gave the interrupt back
