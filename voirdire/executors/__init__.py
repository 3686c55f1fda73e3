"""Where a run's sessions run: in the run's own event loop (``run_protocol``), in worker processes on this machine
(``local``: ``--workers N``), or on a Ray cluster (``ray``: ``--executor ray``). All of them write one ordinary
transcript, and ``base`` holds what they share. Ray is imported only by ``ray``, and only when it is chosen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.executors.base import (
        RUN_GC_THRESHOLD as RUN_GC_THRESHOLD,
        MaskingWriter as MaskingWriter,
        RunResult as RunResult,
        RunSetupError as RunSetupError,
        SessionJob as SessionJob,
        SessionOptions as SessionOptions,
        SessionRunner as SessionRunner,
        Tally as Tally,
        concurrency_problem as concurrency_problem,
        run_collector as run_collector,
        start_clients as start_clients,
    )
    from voirdire.executors.local import run_in_processes as run_in_processes
    from voirdire.executors.ray import require_ray as require_ray, run_on_ray as run_on_ray
    from voirdire.executors.repeats import (
        SessionId as SessionId,
        item_of as item_of,
        repeat_id as repeat_id,
        repeat_ids as repeat_ids,
        repeat_seed as repeat_seed,
    )
    from voirdire.executors.sequential import (
        SequentialRepeats as SequentialRepeats,
        additional as additional,
        settled as settled,
    )
    from voirdire.executors.spend import CostBudget as CostBudget

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)

EXECUTORS = ("local", "ray")
