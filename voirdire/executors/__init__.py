"""Where a run's sessions run: in the run's own event loop (``run_protocol``), in worker processes on this machine
(``local``: ``--workers N``), or on a Ray cluster (``ray``: ``--executor ray``). All of them write one ordinary
transcript, and ``base`` holds what they share. Ray is imported only by ``ray``, and only when it is chosen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.executors.base import (
        RUN_GC_THRESHOLD,
        MaskingWriter,
        RunResult,
        RunSetupError,
        SessionJob,
        SessionOptions,
        SessionRunner,
        Tally,
        concurrency_problem,
        run_collector,
        start_clients,
    )
    from voirdire.executors.local import run_in_processes
    from voirdire.executors.ray import require_ray, run_on_ray
    from voirdire.executors.repeats import REPEAT_MARK, REPEAT_STEP, repeat_id, repeat_ids, repeat_seed, split_repeat
    from voirdire.executors.sequential import SequentialRepeats, additional, settled
    from voirdire.executors.spend import CostBudget

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.executors.base": (
            "RUN_GC_THRESHOLD", "MaskingWriter", "RunResult", "RunSetupError", "SessionJob", "SessionOptions",
            "SessionRunner", "Tally", "concurrency_problem", "run_collector", "start_clients",
        ),
        "voirdire.executors.local": ("run_in_processes",),
        "voirdire.executors.ray": ("require_ray", "run_on_ray"),
        "voirdire.executors.repeats": (
            "REPEAT_MARK", "REPEAT_STEP", "repeat_id", "repeat_ids", "repeat_seed", "split_repeat",
        ),
        "voirdire.executors.sequential": ("SequentialRepeats", "additional", "settled"),
        "voirdire.executors.spend": ("CostBudget",),
    },
)

EXECUTORS = ("local", "ray")

__all__ = [
    "REPEAT_MARK",
    "REPEAT_STEP",
    "RUN_GC_THRESHOLD",
    "CostBudget",
    "MaskingWriter",
    "RunResult",
    "RunSetupError",
    "SequentialRepeats",
    "SessionJob",
    "SessionOptions",
    "SessionRunner",
    "Tally",
    "additional",
    "concurrency_problem",
    "repeat_id",
    "repeat_ids",
    "repeat_seed",
    "require_ray",
    "run_collector",
    "run_in_processes",
    "run_on_ray",
    "settled",
    "split_repeat",
    "start_clients",
]
