"""How a run runs (``RunOptions``), whoever starts it, and how many failed sessions it tolerates (``ErrorBudget``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from voirdire.base import MAX_WORKERS, count_problem
from voirdire.executors import EXECUTORS

if TYPE_CHECKING:
    from voirdire.executors import SessionOptions


@dataclass(frozen=True)
class ErrorBudget:
    """How many failed sessions a run tolerates: a count, or a share of the sessions it has to run."""

    count: int | None = None
    share: float | None = None
    floor: int = 0  # a share never tolerates fewer than this many (the default budget's: a small run is not stopped)

    @classmethod
    def parse(cls, value: int | str | ErrorBudget) -> ErrorBudget:
        """``5`` or ``"5"`` (more than 5 failed sessions stop the run), ``"10%"`` (more than 10 % of them)."""
        if isinstance(value, ErrorBudget):
            return value
        text = str(value).strip()
        try:
            if text.endswith("%"):
                share = float(text[:-1]) / 100
                if 0 <= share <= 1:
                    return cls(share=share)
            elif int(text) >= 0:
                return cls(count=int(text))
        except ValueError:
            pass
        raise ValueError(f"max_errors {text!r}: expected a count N >= 0 or a share P% (0-100), e.g. 5 or 10%")

    def allowed(self, total: int) -> int:
        """Failed sessions tolerated among ``total``."""
        if self.count is not None:
            return self.count
        return max(self.floor, math.floor((self.share or 0.0) * total + 1e-9))

    def __str__(self) -> str:
        if self.count is not None:
            return str(self.count)
        return f"{(self.share or 0.0) * 100:g}%" + (f" (at least {self.floor})" if self.floor else "")


DEFAULT_MAX_ERRORS = ErrorBudget(share=0.5, floor=10)
"""The command line's budget when ``--max-errors`` is not given: a run stops once more than half of its sessions
(and more than 10) have failed, so a broken endpoint or config does not fail every item one by one; a small run
with a few failures still finishes (exit status 3). An endpoint that refuses everything stops sooner
(``voirdire.base.errors.EndpointDown``)."""


def _budget(value: Any) -> Any:
    return None if value is None else ErrorBudget.parse(value)


class RunOptions(BaseModel):
    """How a run runs, whoever starts it: the command line builds one from its options, the Python API from its
    keyword arguments, and ``run_protocol`` reads nothing else. What the run is of (the protocol, its items, the
    roles' models, the transcript) is given beside it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    concurrency: int = 1
    resume: bool = True
    progress: bool = False  # a progress bar on stderr, shown when more than one session is left to run
    seed: int | None = None  # the run's seed, as the header records it
    command: list[str] | None = None  # the command line, as the header records it (masked)
    cache: Path | None = None
    max_errors: Annotated[ErrorBudget | None, BeforeValidator(_budget)] = None
    keep_verdicts: bool = True
    workers: int = 1
    executor: str = "local"
    ray_address: str | None = None
    coalesce: bool = True
    session_timeout: float | None = None  # seconds one session may take in all; None: only its calls' own bounds
    repeats: int = 1  # sessions per item, each with seeds of its own and no reply cache (voirdire.executors.repeats)
    stop_when_decided: bool = False  # repeats stop once an item's status at decided_at cannot change
    decided_at: float = 0.8  # the share that decides an item (the report's --decided-at), for stop_when_decided
    max_cost: float | None = None  # USD: stop (resumably) once billed cost and sessions in flight reach it
    prices: Path | None = None  # a price file over the packaged table, for max_cost (the report's --prices)
    session_cost: float | None = None  # max_cost: a session's expected USD until the run's first session ends

    @property
    def sessions(self) -> SessionOptions:
        """How each session runs, as the executors carry it to every worker."""
        from voirdire.executors import SessionOptions

        return SessionOptions(
            cache=self.cache,
            concurrency=self.concurrency,
            keep_verdicts=self.keep_verdicts,
            coalesce=self.coalesce,
            session_timeout=self.session_timeout,
            repeats=self.repeats,
            stop_when_decided=self.decided_at if self.stop_when_decided else None,
        )

    def check(self) -> None:
        """What cannot run, said before anything is written."""
        from voirdire.executors import RunSetupError

        self.sessions.check()
        if (problem := count_problem(self.workers, 1, MAX_WORKERS, "processes")) is not None:
            raise RunSetupError(f"workers {problem}")
        if self.executor not in EXECUTORS:
            raise RunSetupError(f"executor {self.executor!r}: expected one of {', '.join(EXECUTORS)}")
        if self.ray_address is not None and self.executor != "ray":
            raise RunSetupError(f"ray_address {self.ray_address!r}: only with executor 'ray' (--executor ray)")
        if self.stop_when_decided:
            if self.repeats < 2:
                raise RunSetupError("stop_when_decided: only with repeats (--repeats N, N at least 2)")
            if not 0.5 < self.decided_at <= 1:
                raise RunSetupError(f"decided_at must be above 0.5 and at most 1, got {self.decided_at}")
            if self.workers > 1 or self.executor != "local":
                raise RunSetupError(
                    "stop_when_decided: the repeats are released in one process (workers 1, the local executor); "
                    f"got workers {self.workers}, executor {self.executor!r}"
                )
        if self.max_cost is not None:
            if not 0 < self.max_cost < math.inf:
                raise RunSetupError(f"max_cost must be a positive number of USD, got {self.max_cost}")
            if self.workers > 1 or self.executor != "local":
                raise RunSetupError(
                    "max_cost: the budget is kept in one process (workers 1, the local executor); "
                    f"got workers {self.workers}, executor {self.executor!r}"
                )
