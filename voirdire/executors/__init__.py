"""Where a run's sessions run: in the run's own event loop (``run_protocol``), in worker processes on this machine
(``local``: ``--workers N``), or on a Ray cluster (``ray``: ``--executor ray``). All of them write one ordinary
transcript, and ``base`` holds what they share. Ray is imported only by ``ray``, and only when it is chosen."""

from __future__ import annotations

from voirdire.executors.base import (
    MaskingWriter,
    RunResult,
    RunSetupError,
    SessionJob,
    SessionOptions,
    SessionRunner,
    Tally,
    concurrency_problem,
    start_clients,
)
from voirdire.executors.local import run_in_processes
from voirdire.executors.ray import require_ray, run_on_ray

EXECUTORS = ("local", "ray")

__all__ = [
    "MaskingWriter",
    "RunResult",
    "RunSetupError",
    "SessionJob",
    "SessionOptions",
    "SessionRunner",
    "Tally",
    "concurrency_problem",
    "require_ray",
    "run_in_processes",
    "run_on_ray",
    "start_clients",
]
