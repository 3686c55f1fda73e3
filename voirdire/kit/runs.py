"""Running sessions from a protocol's own code (its ``voirdire`` namespace functions, reproductions,
experiments): ``arun``, ``arun_dataset``, ``run_sync``, ``run_in_memory`` (a ``RunResult``), ``protocol`` (a
registered protocol by name), ``one_off_id`` (a single item's own session id), ``SessionFailed``, and ``stage`` (the
chat's progress line).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.api import (
        SessionFailed as SessionFailed,
        arun as arun,
        arun_dataset as arun_dataset,
        one_off_id as one_off_id,
        protocol as protocol,
        run_sync as run_sync,
    )
    from voirdire.chat import stage as stage
    from voirdire.runner import RunResult as RunResult, run_in_memory as run_in_memory

__getattr__, __dir__, __all__ = lazy_face(__name__)
