"""What every executor shares.

- ``SessionJob``: everything needed to run a run's sessions, picklable, so that worker processes and Ray actors
  receive exactly what the run's own process would use (the protocol, the bound roles, the prompts it hashed
  into the header).
- ``SessionRunner``: one session on a ready set of clients, with the error isolation of a run: an exception
  inside a session becomes its error event and its ``Outcome``, never the run's.
- ``MaskingWriter``: the transcript writer that passes every record through ``mask_secrets``.
- ``Tally``: the run's bookkeeping in the process that holds the transcript (verdicts, errors, retries, the
  error budget, the progress bar), fed directly in one process and by messages from workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import pickle
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from voirdire.base import (
    MAX_CONCURRENCY,
    MAX_REPEATS,
    TOKEN_COUNT_MAX,
    CannotWrite,
    HtmlDisplay,
    IdList,
    SessionTimeout,
    VoirdireError,
    count_problem,
    mask_secrets,
    mask_tree,
    run_stopping,
    seconds_problem,
)
from voirdire.executors.repeats import item_of, repeat_seed
from voirdire.models import ModelPool, RoleSettings, endpoint_limits as _endpoint_limits, spec_label
from voirdire.session import PromptLibrary, Protocol, Session, Writer
from voirdire.transcript import REPEAT_STEP, Line, ResponseCache, RunHeader, TranscriptWriter, Verdict

if TYPE_CHECKING:
    from autogen_agentchat.agents import BaseChatAgent

    from voirdire.executors.spend import CostBudget

OnRetry = Callable[[str, BaseException, float], None]
Limits = dict[str, tuple[int, int]]  # endpoint label -> (current limit, requests in flight)


class RunSetupError(VoirdireError, ValueError):
    """A run that cannot start: an output path that cannot be written, a model that cannot be built, a bad
    concurrency or worker count, an executor that is not installed or cannot take the run."""


class RunResult(HtmlDisplay, BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    out: Path
    run_id: str
    session_ids: IdList = Field(
        default_factory=IdList,
        description="one per item, in item order (with repeats: one per item and repeat); a sequence of strings kept "
        "compactly, compared, pickled and dumped as a list",
    )
    verdicts: dict[str, Verdict] = Field(
        default_factory=dict, description="every session's verdict (none kept when run with keep_verdicts=False)"
    )
    errors: dict[str, str] = Field(default_factory=dict)
    skipped: int = 0
    elapsed_s: float = 0.0
    warnings: list[str] = Field(default_factory=list)
    retries: int = Field(0, description="model calls retried, over all sessions")
    stopped: str | None = Field(None, description="why the run stopped before its last session (max_errors)")
    not_started: int = Field(0, description="sessions never started because the run stopped")
    not_needed: int = Field(
        0, description="repeats never run: their item's status was settled (stop_when_decided)"
    )

    def __repr__(self) -> str:
        """One short line (a notebook shows the run as HTML)."""
        n = len(self.session_ids)
        stopped = f", stopped: {self.stopped}" if self.stopped else ""
        return (f"RunResult({str(self.out)!r}, {n} session{'s' * (n != 1)}: {len(self.verdicts)} verdict"
                f"{'s' * (len(self.verdicts) != 1)}, {len(self.errors)} error{'s' * (len(self.errors) != 1)}, "
                f"{self.skipped} resumed{stopped})")  # fmt: skip



_LINE: TypeAdapter[Any] = TypeAdapter(Line)


def masked_json(record: RunHeader | Any) -> str:
    """A record as its JSON line, every string passed through ``mask_secrets``."""
    return masked_line(record)[0]


def masked_line(record: RunHeader | Any) -> tuple[str, bool]:
    """A record as its JSON line, every string passed through ``mask_secrets``, and whether that changed it."""
    line: str = record.model_dump_json()
    if mask_secrets(line) == line:
        return line, False
    # something to hide: mask string by string, so the JSON stays exact
    return type(record).model_validate(mask_tree(record.model_dump(mode="json"))).model_dump_json(), True


class MaskingWriter(TranscriptWriter):
    """The JSONL transcript writer with every string of every record passed through ``mask_secrets``."""

    def write(self, record: RunHeader | Any) -> None:
        line: str = record.model_dump_json()
        if mask_secrets(line) != line:  # observers get the record only as written; a masked one they read back
            line, record = masked_json(record), None
        self.append(line, record)

    def write_json(self, line: str) -> None:
        """A record serialised (and masked) in another process, masked again with this process's secrets: a Ray
        worker may not know every key the driver does."""
        if mask_secrets(line) != line:
            line = masked_json(_LINE.validate_json(line))
        self.write_line(line)


@dataclass(frozen=True)
class SessionOptions:
    """How each session of a run runs, wherever it runs: the part of a run's options (``voirdire.runner.RunOptions``,
    which derives it) an executor needs, carried whole to every worker process and Ray actor."""

    cache: Path | None = None  # the reply cache file
    concurrency: int = 1  # sessions in flight per worker
    keep_verdicts: bool = True
    coalesce: bool = True  # identical deterministic requests of a session sent once (Session)
    session_timeout: float | None = None  # seconds a session may take in all (SessionTimeout); None: no limit
    repeats: int = 1  # sessions per item (voirdire.executors.repeats): above 1, session ids carry the repeat
    stop_when_decided: float | None = None  # sequential repeats at this --decided-at (voirdire.executors.sequential)

    def check(self) -> None:
        """What cannot run, said before anything is written: the one rule for these values."""
        if (problem := count_problem(self.repeats, 1, MAX_REPEATS, "sessions per item")) is not None:
            raise RunSetupError(f"repeats {problem}")
        if self.session_timeout is not None and (problem := seconds_problem(self.session_timeout)) is not None:
            raise RunSetupError(f"session_timeout {problem}")
        if (problem := concurrency_problem(self.concurrency)) is not None:
            raise RunSetupError(f"concurrency {problem}")


def concurrency_problem(value: int) -> str | None:
    """What is wrong with a number of sessions at a time (said after the option's name), None when nothing is."""
    return count_problem(value, 1, MAX_CONCURRENCY, "sessions at a time")


@dataclass(frozen=True)
class SessionJob:
    """A run's sessions, as a worker process or a Ray actor receives them (pickled)."""

    protocol: Protocol[Any, Any]
    run_id: str
    bound: dict[str, RoleSettings]  # every model-played role's settings
    labels: dict[str, str]  # each role's model as the header names it
    prompts: PromptLibrary  # loaded by the run's process: the prompts the header's digests describe
    structured: frozenset[str]
    out: Path
    options: SessionOptions


def pickled(job: SessionJob, where: str) -> bytes:
    """The job as other processes receive it. The standard pickle carries what it names by reference; where that
    fails (a prepared protocol holding lambdas, a class defined in a function), cloudpickle, which scikit-learn's
    joblib installs, carries functions and classes by value. What neither can carry is a one-line error."""
    try:
        return pickle.dumps(job)
    except Exception as exc:
        problem = f"{type(exc).__name__}: {exc}"
    try:
        import cloudpickle
    except ImportError:
        pass
    else:
        try:
            return bytes(cloudpickle.dumps(job))
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}"
    raise RunSetupError(
        f"{job.protocol.name}: the run cannot be sent to {where} ({problem}); run it in one process (workers=1)"
    )


@dataclass(frozen=True)
class Outcome:
    """How one session ended: its verdict, or its error (masked, one line)."""

    session_id: str
    verdict: Verdict | None = None
    error: str | None = None


class SessionRunner:
    """Runs sessions of one run on a ready set of clients: clients given in code, else the pool's, built from
    each role's spec."""

    def __init__(
        self,
        job: SessionJob,
        pool: ModelPool,
        clients: Mapping[str, ChatCompletionClient],
        replies: ResponseCache | None,
        on_retry: OnRetry | None = None,
    ) -> None:
        self.job = job
        self.pool = pool
        self.clients = clients
        self.replies = replies
        self.on_retry = on_retry

    def agents(
        self, item: BaseModel, on_retry: OnRetry | None, bound: Mapping[str, RoleSettings] | None = None
    ) -> dict[str, BaseChatAgent]:
        """The session's agents; ``bound``: the roles' settings for this session (a repeat's seeds), else the
        job's. A repeated session reads and writes no reply cache: each repeat sends its own requests."""
        from voirdire.agents import ModelAgent  # autogen-agentchat: imported by the first session, not by the CLI

        job = self.job
        replies = self.replies if job.options.repeats == 1 else None
        agents: dict[str, BaseChatAgent] = dict(job.protocol.deterministic_agents(item))
        for role, settings in (bound or job.bound).items():
            if role in self.clients:  # a client given in code: only what the role itself sets
                client, timeout, retries = self.clients[role], settings.timeout, settings.max_retries
            else:
                client = self.pool.get(settings.model, settings.api_key_env, settings.spec)
                timeout, retries = settings.timeout_s(), settings.retries()
            agents[role] = ModelAgent(
                role,
                client,
                settings,
                model_label=job.labels[role],
                cache=replies,
                timeout=timeout,
                max_retries=retries,
                on_retry=on_retry,
            )
        return agents

    async def run(self, item: BaseModel, sid: str, writer: Writer, on_retry: OnRetry | None = None) -> Outcome:
        """One session, its events written to ``writer``. Nothing of it (the Session, its agents) outlives the
        call, so a run of many sessions holds only those in flight."""
        job = self.job
        item_id, repeat = item_of(sid)
        bound = job.bound
        if repeat is not None:  # a repeat: seeds of its own (executors.repeats)
            bound = {r: s.model_copy(update={"seed": repeat_seed(s.seed, repeat)}) for r, s in job.bound.items()}
        session = Session(
            run_id=job.run_id,
            session_id=sid,
            protocol=job.protocol,
            agents=self.agents(item, on_retry or self.on_retry, bound),
            writer=writer,
            prompts=job.prompts,
            structured=job.structured,
            coalesce=job.options.coalesce,
        )
        session.start(item_id, item.model_dump(mode="json"), repeat=repeat)
        if repeat is not None:
            seeds = {r: s.seed for r, s in bound.items()}
            rule = job.options.stop_when_decided
            more = {"stop_when_decided": rule} if rule is not None else {}  # the stopping rule, for the report
            session.note(REPEAT_STEP, repeats=job.options.repeats, seeds=seeds, **more)
        deadline = asyncio.timeout(job.options.session_timeout)
        try:
            async with deadline:
                verdict = await job.protocol.run(item, session)
            return Outcome(sid, verdict=verdict)
        except (KeyboardInterrupt, asyncio.CancelledError, CannotWrite):  # a full disk ends the run, not a session
            raise
        except Exception as exc:  # isolate: one broken session never loses the others' work
            if isinstance(exc, TimeoutError) and deadline.expired():
                exc = SessionTimeout(
                    f"the session ran past its deadline of {job.options.session_timeout:g} s (session_timeout)"
                )
            tb = traceback.format_exc()
            invalid = _validation_error(exc)
            if invalid is not None:  # one line for the session, not pydantic's dump (the traceback keeps it)
                exc = out_of_bounds(invalid)
            session.error(exc, tb)
            return Outcome(sid, error=mask_secrets(f"{type(exc).__name__}: {exc}"))


class OutOfBounds(VoirdireError, ValueError):
    """A value a session was to record is out of the transcript's bounds (token counts of one call past
    ``voirdire.base.limits.TOKEN_COUNT_MAX``, summed over its requests or reported by a client given in code)."""


def _validation_error(exc: BaseException) -> ValidationError | None:
    """The pydantic ValidationError that ``exc`` is or was raised from, if any."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, ValidationError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def out_of_bounds(exc: ValidationError) -> OutOfBounds:
    """``exc`` in one line: which value of which record, and why; token counts said as such."""
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"])
    value = first.get("input")
    if where.endswith("_tokens") and isinstance(value, int) and not isinstance(value, bool):
        return OutOfBounds(
            f"a model call's {where} of {value:,} is not a token count voirdire keeps (whole numbers from 0 to "
            f"{TOKEN_COUNT_MAX:,} tokens a call, its requests' counts added up): the model's usage counts are wrong"
        )
    return OutOfBounds(f"a {exc.title} record could not be made: {where or 'value'}: {first['msg']}")


async def start_clients(
    pool: ModelPool, bound: Mapping[str, RoleSettings], clients: Mapping[str, ChatCompletionClient]
) -> None:
    """Build every role's client (read its script, load its model, set up its endpoint); a failure names the role
    and closes what was built."""
    for role, settings in bound.items():
        if role in clients:
            continue
        try:
            pool.get(settings.model, settings.api_key_env, settings.spec)
        except Exception as exc:
            await pool.close()
            if isinstance(exc, VoirdireError):
                raise
            raise RunSetupError(f"role {role}: {spec_label(settings.spec)} cannot start: {exc}") from exc


# ----------------------------------------------------------------------------------------- the progress line


def endpoint_limits() -> Limits:
    """This process's adaptive concurrency limit per endpoint: label -> (current limit, requests in flight)."""
    return dict(_endpoint_limits())


def merge_limits(snapshots: Iterable[Mapping[str, tuple[int, int]]]) -> Limits:
    """Several processes' limits as one: each has its own limiter per endpoint, so the endpoint sees the sums."""
    out: Limits = {}
    for snapshot in snapshots:
        for label, (limit, in_flight) in snapshot.items():
            was = out.get(label, (0, 0))
            out[label] = (was[0] + limit, was[1] + in_flight)
    return out


def limits_text(limits: Mapping[str, tuple[int, int]]) -> str:
    """``limit 64/200`` (in flight / current limit) for one endpoint, ``limits a:64 b:32`` (current limits) for
    several, nothing for none."""
    if not limits:
        return ""
    if len(limits) == 1:
        ((limit, in_flight),) = limits.values()
        return f"limit {in_flight}/{limit}"
    return "limits " + " ".join(f"{label}:{limit}" for label, (limit, _) in sorted(limits.items()))


class Tally:
    """The run's bookkeeping, in the process that holds the transcript: what ended how, the retries, the error
    budget (``allowed`` failed sessions, then the run stops: no further session starts) and the progress bar."""

    def __init__(
        self,
        result: RunResult,
        *,
        left: int,
        allowed: int | None,
        budget: str,
        bar: Any,
        keep_verdicts: bool = True,
        spend: CostBudget | None = None,
    ) -> None:
        self.result = result
        self.spend = spend  # --max-cost: the billed cost, fed by the transcript's records
        self.gate: Any = None  # sequential repeats (executors.sequential): told each session's decision
        self.left = left  # sessions this run has to run
        self.allowed = allowed
        self.budget = budget
        self.bar = bar
        self.keep_verdicts = keep_verdicts
        self.started = 0
        self.ended = 0
        # Where the progress line reads the endpoint limits: this process's limiter, or the workers' reports.
        self.limits: Callable[[], Mapping[str, tuple[int, int]]] = endpoint_limits

    @property
    def stopped(self) -> bool:
        return self.result.stopped is not None

    def start(self) -> bool:
        """Count a session as started; False once the run has stopped, when it must not start."""
        if self.stopped:
            return False
        spend = self.spend
        if spend is not None and spend.exhausted(self.started - self.ended):
            self.stop(spend.reason(self.started - self.ended, self.left - self.started))
            return False
        self.started += 1
        return True

    def end(self, sid: str, verdict: Verdict | None = None, error: str | None = None) -> None:
        """A session ended: with a verdict (``error`` None; the verdict may be left out when it is not kept), or
        with an error, which may stop the run."""
        result = self.result
        if error is not None:
            result.errors[sid] = error
            failed = len(result.errors)
            if (why := run_stopping(error)) is not None:  # every further session would meet it: stop at once
                self.stop(why)
            elif self.allowed is not None and failed > self.allowed:
                self.stop(
                    f"{failed} sessions failed, more than max_errors={self.budget} allows "
                    f"({self.allowed} of the {self.left} sessions to run)"
                )
        elif verdict is not None and self.keep_verdicts:
            result.verdicts[sid] = verdict
        self.ended += 1
        if self.gate is not None:
            self.gate.ended(sid, verdict.decision if verdict is not None and error is None else None)
        if self.spend is not None:
            self.spend.session_ended()
            skipped = self.gate.skipped if self.gate is not None else 0
            left = self.left - self.started - skipped  # a budget reached by the last session stops nothing
            if left > 0 and self.spend.exhausted(self.started - self.ended):
                self.stop(self.spend.reason(self.started - self.ended, left))
        self.show()
        if self.bar is not None:
            self.bar.update(1)

    def retry(self, count: int = 1) -> None:
        self.result.retries += count
        self.show()
        if self.bar is not None:
            self.bar.refresh()

    def stop(self, why: str) -> None:
        """No further session starts (the first reason is kept)."""
        if self.result.stopped is None:
            self.result.stopped = why
        if self.gate is not None:
            self.gate.stop()

    def finish(self) -> None:
        """The sessions never started, once the run is over."""
        skipped = self.gate.skipped if self.gate is not None else 0
        self.result.not_needed = skipped
        if self.stopped:
            self.result.not_started = self.left - self.started - skipped

    def show(self) -> None:
        if self.bar is None:
            return
        failed = len(self.result.errors)
        rate = f" ({failed / self.ended:.0%})" if self.ended else ""
        text = f"retries {self.result.retries}, errors {failed}{rate}"
        limits = limits_text(self.limits())
        self.bar.set_postfix_str(f"{text}, {limits}" if limits else text, refresh=False)


RUN_GC_THRESHOLD = 50_000
"""Objects allocated (less those freed) between two passes of the cyclic collector's first generation while a run's
sessions run (Python's default is 700)."""


class _Collector:
    """The cyclic collector while runs' sessions run. Its passes (one every 700 objects allocated) traversed the
    sessions' live coroutines, messages and records again and again, while the sessions make almost no cyclic
    garbage (what they drop goes by reference count), and start-up's objects (modules, the run's set-up) outlive the
    run: frozen, with a first-generation threshold of RUN_GC_THRESHOLD, the collector took 0.11 s instead of 0.58 s
    of a 1,000-session run's CPU (scenario b). Runs of one process may overlap (a notebook's tasks, a server's
    requests): the first to start sets it, the last to end puts back what it found; objects frozen by someone else
    (a pre-forking server) stay frozen, and nothing more is frozen then."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs = 0
        self.saved: tuple[int, ...] = ()
        self.froze = False

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self.lock:
            if not self.runs:
                self.saved = gc.get_threshold()
                self.froze = gc.get_freeze_count() == 0
                if self.froze:
                    gc.freeze()
                if self.saved[0]:  # 0: automatic collection is off, and stays off
                    gc.set_threshold(max(self.saved[0], RUN_GC_THRESHOLD), *self.saved[1:])
            self.runs += 1
        try:
            yield
        finally:
            with self.lock:
                self.runs -= 1
                if not self.runs:
                    gc.set_threshold(*self.saved)
                    if self.froze:
                        gc.unfreeze()


run_collector = _Collector()
