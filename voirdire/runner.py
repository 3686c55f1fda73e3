"""Run a protocol over one item or a dataset: role binding, concurrency, progress, resume, error isolation.

Everything written to the transcript passes through ``voirdire.secrets.mask_secrets`` (``MaskingWriter``). A run
can be given an error budget (``max_errors``: a count, or a share of the sessions it has to run, ``"10%"``): once
more sessions have failed than it allows, no further session starts, the ones in flight finish, and the result
says why it stopped; the transcript stays consistent (sessions not started have no events), so re-running resumes.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import importlib.metadata
import math
import os
import sys
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from autogen_agentchat.agents import BaseChatAgent
from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel, BeforeValidator, ConfigDict

from voirdire.agents import ModelAgent
from voirdire.cache import ResponseCache
from voirdire.errors import VoirdireError
from voirdire.executors import EXECUTORS
from voirdire.executors.base import (  # MaskingWriter, RunResult, RunSetupError: callers import them from here
    MaskingWriter,
    RunResult,
    RunSetupError,
    SessionJob,
    SessionRunner,
    Tally,
    start_clients,
)
from voirdire.models import (
    ModelPool,
    ModelSpecError,
    RoleSettings,
    ScriptedChatCompletionClient,
    parse_spec,
    resolve_api_key,
    spec_label,
)
from voirdire.prompts import PromptLibrary
from voirdire.protocol import Protocol, Session
from voirdire.registry import known_roles
from voirdire.secrets import mask_tree
from voirdire.transcript import (
    MemoryWriter,
    RoleBinding,
    RunHeader,
    Transcript,
    Verdict,
    load_outline,
    new_run_id,
)

_PACKAGES = (
    "voirdire",
    "autogen-agentchat",
    "autogen-core",
    "autogen-ext",
    "langchain-core",
    "openai",
    "pydantic",
    "llama-cpp-python",
)


class ResumeError(VoirdireError, ValueError):
    """The output transcript belongs to a different run (protocol, dataset, parameters or models differ)."""


# How to start over, said by every refusal to resume: the command line's and the Python API's words.
START_OVER = "use another --out (out=), or --fresh (fresh=True) to start over"


@dataclass(frozen=True)
class ErrorBudget:
    """How many failed sessions a run tolerates: a count, or a share of the sessions it has to run."""

    count: int | None = None
    share: float | None = None

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
        return self.count if self.count is not None else math.floor((self.share or 0.0) * total + 1e-9)

    def __str__(self) -> str:
        return str(self.count) if self.count is not None else f"{(self.share or 0.0) * 100:g}%"


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

    def check(self) -> None:
        """What cannot run, said before anything is written."""
        if self.concurrency < 1:
            raise RunSetupError(f"concurrency must be at least 1 (sessions at a time), got {self.concurrency}")
        if self.workers < 1:
            raise RunSetupError(f"workers must be at least 1 (processes), got {self.workers}")
        if self.executor not in EXECUTORS:
            raise RunSetupError(f"executor {self.executor!r}: expected one of {', '.join(EXECUTORS)}")
        if self.ray_address is not None and self.executor != "ray":
            raise RunSetupError(f"ray_address {self.ray_address!r}: only with executor 'ray' (--executor ray)")


def client_label(client: ChatCompletionClient) -> str:
    """A client given in code: its type, and its model when the client says (so caches never mix two models)."""
    model = (
        getattr(client, "_create_args", {}).get("model")
        if isinstance(getattr(client, "_create_args", None), dict)
        else None
    )
    return f"client:{type(client).__name__}" + (f":{model}" if model else "")


def default_out(kind: str, dataset: str | Path | None) -> Path:
    """``transcripts/<kind>-<name>-<digest>.jsonl`` for a dataset, else a timestamped file.

    The digest is of the dataset's path relative to the working folder (``transcripts/`` is relative to it too):
    stable, so re-running the same command resumes, and different for two files of the same name in different
    folders, so their sessions never share a transcript."""
    if dataset is not None:
        where = Path(dataset)
        try:
            place = os.path.relpath(where.resolve(), Path.cwd().resolve())
        except ValueError:  # another drive (Windows)
            place = str(where.resolve())
        digest = hashlib.sha256(place.encode()).hexdigest()[:8]
        return Path("transcripts") / f"{kind}-{where.stem}-{digest}.jsonl"
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("transcripts") / f"{kind}-{stamp}-{uuid.uuid4().hex[:4]}.jsonl"


def check_writable(path: str | Path, label: str) -> None:
    """Fail now, naming ``label`` (``--report``, ``--cache``, ``transcript``), when ``path`` cannot be written,
    rather than after a run has paid for its model calls. Leaves no trace: an existing file is opened for
    appending and closed; for a new one, the nearest existing folder above it must be writable."""
    path = Path(path)
    if path.is_dir():
        raise RunSetupError(f"{label} {path}: is a folder, not a file")
    blocking = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise RunSetupError(f"{label} {path}: {blocking} is a file, not a folder")
    if path.exists():
        try:
            with path.open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            raise RunSetupError(f"{label} {path}: cannot be written ({exc.strerror})") from None
        return
    folder = next(p for p in path.absolute().parents if p.exists())
    if not os.access(folder, os.W_OK | os.X_OK):
        raise RunSetupError(f"{label} {path}: cannot be written (no permission to write in {folder})")


def _same_dataset(recorded: str, given: str) -> bool:
    """Whether two dataset paths name the same file (as written, normalised, or on disk)."""
    if recorded == given or os.path.normpath(recorded) == os.path.normpath(given):
        return True
    try:
        return os.path.samefile(recorded, given)
    except OSError:
        return False


def package_versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def model_roles(protocol: Protocol[Any, Any]) -> tuple[str, ...]:
    """The roles this configuration of ``protocol`` has a model play (its other roles are played by rules)."""
    rules = set(protocol.rule_roles())
    return tuple(r for r in protocol.required_roles() if r not in rules)


def role_problem(protocol: Protocol[Any, Any], role: str) -> tuple[str, bool] | None:
    """Why binding a model to ``role`` would do nothing in this run of ``protocol``, and whether that is an error:
    a role the protocol does not have, or one a rule plays, is; one of its roles that this configuration leaves
    out (DCR's improver with no rounds) is said but allowed, so one command line serves its configurations.
    None when the model would be used."""
    used = model_roles(protocol)
    if role in used:
        return None
    if role in protocol.rule_roles():
        return f"the {role} is a rule agent in this configuration, not a model", True
    if role in protocol.roles:
        return f"{protocol.name} does not use its {role} role in this configuration, so its model is not used", False
    return f"{protocol.name} has no role {role!r} (its model roles here: {_names(used)})", True


def _names(roles: Sequence[str]) -> str:
    return ", ".join(roles) or "none: it runs without models"


def bind_roles(
    protocol: Protocol[Any, Any],
    roles: Mapping[str, RoleSettings],
    clients: Mapping[str, ChatCompletionClient],
) -> dict[str, RoleSettings]:
    """Settings for every model-played role: the role's own, else ``*`` (all roles), else the embedded default."""
    rule_roles = set(protocol.rule_roles())
    # A role another registered protocol uses is ignored (one config serves several protocols); a name no
    # protocol uses is a typo and fails loudly.
    unknown = set(roles) - set(protocol.required_roles()) - known_roles() - {"*"}
    if unknown:
        raise ModelSpecError(
            f"{protocol.name} has no role(s) {sorted(unknown)}; its roles are {list(protocol.required_roles())}"
        )
    bound = {}
    for role in protocol.required_roles():
        if role in rule_roles:
            continue
        settings = roles.get(role) or roles.get("*") or RoleSettings()
        if role not in clients:  # fail before the run starts, not in the middle
            spec = parse_spec(settings.model)
            if spec.kind == "local" and spec.path and not Path(spec.path).is_file():
                raise ModelSpecError(f"{spec.path}: no such GGUF model file (role {role})")
        bound[role] = settings
    return bound


def check_credentials(bound: Mapping[str, RoleSettings], clients: Mapping[str, ChatCompletionClient]) -> None:
    """Every role's API key can be found (and is registered to be masked): a missing one fails before the run
    starts, naming the role and the variable."""
    for role, settings in bound.items():
        if role not in clients:
            try:
                resolve_api_key(parse_spec(settings.model), settings.api_key_env)
            except ModelSpecError as exc:
                raise ModelSpecError(f"role {role}: {exc}") from None


def independence_warnings(
    protocol: Protocol[Any, Any],
    bound: Mapping[str, RoleSettings],
    clients: Mapping[str, ChatCompletionClient] | None = None,
) -> list[str]:
    clients = clients or {}

    def served_by(role: str) -> object:
        return id(clients[role]) if role in clients else bound[role].model

    out = []
    for a, b in protocol.independent_roles:
        if a in bound and b in bound and served_by(a) == served_by(b):
            out.append(
                f"{a} and {b} are both served by {parse_spec(bound[a].model).text}: the paper allows one model in "
                f"both roles (prompted differently), but the examination is then not independent"
            )
    return out


def _resumable(out: Path, header: RunHeader) -> Transcript:
    """The transcript already at ``out``, if it is a run of the same protocol, parameters, models and prompts.

    A file holding only headers (a run that failed before its first session) does not bind the next run.
    """
    previous = load_outline(out)
    last = next(
        (h for h in reversed(previous.headers) if any(s.run_id == h.run_id for s in previous.sessions.values())), None
    )
    if last is None:
        return previous
    if last.dataset and header.dataset and not _same_dataset(last.dataset, header.dataset):
        raise ResumeError(f"{out}: holds a run on another dataset ({last.dataset}, not {header.dataset}); {START_OVER}")
    for field in ("protocol", "parameters", "roles", "prompts"):
        if getattr(last, field) != getattr(header, field):
            raise ResumeError(f"{out}: holds a run with different {field} ({getattr(last, field)!r}); {START_OVER}")
    return previous


@contextmanager
def _exclusive(out: Path) -> Iterator[None]:
    """One run at a time per transcript: a second one would redo unfinished sessions or unlink the file.

    The lock is ``<out>.lock``, held with ``flock`` and removed at the end. A run that locks the file checks that
    the path still names the file it locked: one removed meanwhile (by the run that held it) no longer guards
    anything, so it opens the path again. The holder removes the file while it still holds the lock, then
    releases it: whoever locks the old file next sees it was removed, and only the new file at the path counts.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = out.with_name(out.name + ".lock")
    fh = _acquire(lock, out)
    try:
        yield
    finally:
        try:
            if _same_file(fh, lock):
                lock.unlink(missing_ok=True)
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()


def _same_file(fh: Any, path: Path) -> bool:
    try:
        here, there = os.fstat(fh.fileno()), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _acquire(lock: Path, out: Path) -> Any:
    """The lock file at ``lock``, opened and locked; a ResumeError when another run holds it."""
    for _ in range(100):
        fh = lock.open("a")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise ResumeError(f"{out}: another run is writing this transcript") from None
        if _same_file(fh, lock):
            return fh
        fcntl.flock(fh, fcntl.LOCK_UN)  # locked a file its holder had just removed: try the path again
        fh.close()
    raise ResumeError(f"{out}: could not lock {lock}")  # pragma: no cover - a path replaced 100 times over


async def run_protocol(
    protocol: Protocol[Any, Any],
    items: Sequence[BaseModel],
    *,
    out: str | Path,
    roles: Mapping[str, RoleSettings] | None = None,
    clients: Mapping[str, ChatCompletionClient] | None = None,
    prompts: PromptLibrary | None = None,
    dataset: str | None = None,
    options: RunOptions | None = None,
    **option_values: Any,
) -> RunResult:
    """Run ``protocol`` on every item, writing one transcript; finished sessions in ``out`` are skipped. How it
    runs is ``options`` (``RunOptions``), or its fields given as keywords, which override it.

    ``clients`` maps a role to a ready ``ChatCompletionClient`` (scripted clients in tests); other roles are
    built from their ``RoleSettings`` spec, with its timeout and retries (the provider's defaults where unset).
    ``cache`` is a JSONL file of replies to deterministic requests. An exception inside one session is recorded as
    an error event for that session and the run goes on; the session has no verdict, so a resumed run retries it.
    ``max_errors`` (see ``ErrorBudget``) stops the run once more sessions have failed than it allows.
    ``keep_verdicts=False`` leaves ``RunResult.verdicts`` empty (the transcript has them): a run of very many
    sessions then holds only the sessions in flight. ``coalesce=False`` sends every request, even one identical to
    an earlier deterministic request of the same session (an endpoint whose greedy replies vary).

    Where sessions run (docs/architecture.md, "Executors"): ``concurrency`` at a time in this event loop; with
    ``workers=N`` in N processes on this machine, ``concurrency`` at a time in each, all appending to ``out``; with
    ``executor="ray"`` in N Ray actors (``ray_address``: None starts a local Ray instance, ``"auto"`` or an
    address joins a cluster) that send each finished session's records back here to be written. Sessions in
    other processes need their roles bound to model specs: clients given in code cannot be sent there.
    """
    opts = RunOptions(**{**dict(options or RunOptions()), **option_values})
    opts.check()
    concurrency, workers, executor, cache, keep_verdicts = (
        opts.concurrency,
        opts.workers,
        opts.executor,
        opts.cache,
        opts.keep_verdicts,
    )
    budget = opts.max_errors
    if executor == "ray":
        from voirdire.executors.ray import require_ray

        require_ray()  # before anything is written: not installed is a one-line error
    out = Path(out)
    check_writable(out, "transcript")
    if cache is not None:
        check_writable(cache, "cache")
    clients = dict(clients or {})
    roles = dict(roles or {})
    prompts = prompts or protocol.prompt_library()
    prompts.preload(protocol.prompt_folder)
    bound = bind_roles(protocol, roles, clients)
    check_credentials(bound, clients)
    elsewhere = executor == "ray" or workers > 1  # sessions run in other processes
    if elsewhere:
        _check_sendable(protocol, bound, clients, executor, workers)
    notes = independence_warnings(protocol, bound, clients)
    for note in notes:
        warnings.warn(note, stacklevel=2)

    # What the transcript names as each role's model: the redacted spec, or the client type given in code.
    labels = {r: client_label(clients[r]) if r in clients else spec_label(s.model) for r, s in bound.items()}
    header = RunHeader(
        run_id=new_run_id(),
        protocol=protocol.name,
        parameters=protocol.params.model_dump(mode="json"),
        roles={
            r: RoleBinding(
                spec=labels[r],
                temperature=s.temperature,
                max_tokens=s.max_tokens,
                seed=s.seed,
                structured=s.structured,
            )
            for r, s in bound.items()
        },
        seed=opts.seed,
        prompts=prompts.hashes(protocol.prompt_folder),
        packages=package_versions(),
        dataset=dataset,
        command=opts.command,
        transitions=protocol.machine.as_record(),
        display=protocol.display,
        paper=protocol.paper or None,
    )
    header = RunHeader.model_validate(mask_tree(header.model_dump(mode="json")))  # as the transcript holds it
    ids = [protocol.item_id(it) or f"item-{i + 1}" for i, it in enumerate(items)]
    if len(set(ids)) != len(ids):
        raise ValueError("item ids must be unique within a run")
    with _exclusive(out):  # held until the transcript is closed, and every worker process has ended
        finished: set[str] = set()
        result = RunResult(out=out, run_id=header.run_id, session_ids=ids, warnings=notes)
        if out.exists() and out.stat().st_size > 0:
            if opts.resume:
                done = _resumable(out, header)
                finished = done.finished()
                by_id = dict(zip(ids, items, strict=True))
                for sid in finished & set(ids):
                    if done.sessions[sid].item != mask_tree(by_id[sid].model_dump(mode="json")):
                        raise ResumeError(f"{out}: session {sid!r} was run on a different item; {START_OVER}")
                    if keep_verdicts:
                        result.verdicts[sid] = done.sessions[sid].verdict  # type: ignore[assignment]
                del done  # every event of the earlier runs: not kept for the length of this one
            else:
                out.unlink()
        result.skipped = len(finished & set(ids))
        # What is left, in item order: (item, session id) pairs, taken one at a time by whoever runs them.
        pending = [(it, sid) for it, sid in zip(items, ids, strict=True) if sid not in finished]
        left = len(pending)
        job = SessionJob(
            protocol=protocol,
            run_id=header.run_id,
            bound=bound,
            labels=labels,
            prompts=prompts,
            structured=frozenset(r for r, s in bound.items() if s.structured),
            out=out,
            cache=Path(cache) if cache is not None else None,
            concurrency=concurrency,
            keep_verdicts=keep_verdicts,
            coalesce=opts.coalesce,
        )
        pool = ModelPool()
        replies = ResponseCache(cache) if cache is not None else None
        # Worker processes for one session are not worth their start; Ray was asked for, so even one runs there.
        in_process = not elsewhere or left == 0 or (executor == "local" and left == 1)
        if left and in_process:  # before the header: a model that cannot be built fails the run once, not every
            await start_clients(pool, bound, clients)  # session (worker processes check theirs before it too)
        allowed = budget.allowed(left) if budget is not None else None
        bar = _progress(left, protocol.name) if opts.progress and left > 1 else None
        tally = Tally(result, left=left, allowed=allowed, budget=str(budget), bar=bar, keep_verdicts=keep_verdicts)
        start = time.perf_counter()
        try:
            if in_process:
                with MaskingWriter(out) as writer:
                    writer.write(header)
                    runner = SessionRunner(job, pool, clients, replies, on_retry=lambda *_: tally.retry())
                    await _run_here(runner, iter(pending), tally, writer, min(concurrency, left))
            elif executor == "local":
                from voirdire.executors.local import run_in_processes

                await run_in_processes(job, pending, min(workers, left), tally, header)
            else:
                from voirdire.executors.ray import run_on_ray

                await run_on_ray(
                    job, pending, min(workers, left), tally, header, address=opts.ray_address, replies=replies
                )
        finally:
            if bar is not None:
                bar.close()
            await pool.close()
        tally.finish()
        result.elapsed_s = round(time.perf_counter() - start, 3)
    return result


async def _run_here(
    runner: SessionRunner,
    pending: Iterator[tuple[BaseModel, str]],
    tally: Tally,
    writer: MaskingWriter,
    slots: int,
) -> None:
    """``slots`` tasks, each taking the next (item, session id) from ``pending`` when its session ends: at most
    ``slots`` sessions exist at a time, however many items there are."""

    async def work() -> None:
        for item, sid in pending:
            if not tally.start():
                return
            outcome = await runner.run(item, sid, writer)
            tally.end(sid, outcome.verdict, outcome.error)

    tasks = [asyncio.create_task(work()) for _ in range(slots)]
    try:
        await asyncio.gather(*tasks)
    finally:  # one task failed outside a session (a bug), or the run was cancelled: none is left running
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _check_sendable(
    protocol: Protocol[Any, Any],
    bound: Mapping[str, RoleSettings],
    clients: Mapping[str, ChatCompletionClient],
    executor: str,
    workers: int,
) -> None:
    """Sessions that run in other processes get the protocol and the roles' specs there: clients given in code
    (often holding state, like a script's replies in order) and a person at this terminal cannot go along."""
    where = "Ray actors (executor='ray')" if executor == "ray" else f"{workers} worker processes (workers={workers})"
    given = sorted(r for r in bound if r in clients)
    if given:
        raise RunSetupError(
            f"clients given in code (roles {', '.join(given)}) cannot be sent to {where}: bind the roles to model "
            "specs (RoleSettings(model=...), e.g. scripted:FILE), or run in one process (workers=1)"
        )
    for role, settings in bound.items():
        spec = parse_spec(settings.model)
        if spec.kind == "human":
            raise RunSetupError(f"role {role} is played by a person at this terminal: it cannot run in {where}")
        if spec.kind == "scripted" and spec.path and _replies_in_order(spec.path):
            warnings.warn(
                f"role {role}: {spec.path} gives replies in order, and each of the {where} reads its own copy of the "
                "script, so sessions may get other replies than in one process",
                stacklevel=3,
            )


def _replies_in_order(path: str) -> bool:
    """Whether a script consumes replies in order (state a worker's copy does not share); a script that cannot
    be read is left for the workers to report, as they start."""
    try:
        script = ScriptedChatCompletionClient.from_file(path).script
    except VoirdireError:
        return False
    return bool(script.replies) or any(rule.replies for rule in script.rules)


def _progress(total: int, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="session", file=sys.stderr, dynamic_ncols=True)


async def run_in_memory(
    protocol: Protocol[Any, Any],
    items: Sequence[BaseModel],
    *,
    clients: Mapping[str, ChatCompletionClient] | None = None,
    prompts: PromptLibrary | None = None,
    keep: bool = False,
    run_id: str = "memory",
) -> tuple[list[Verdict], MemoryWriter]:
    """Run ``protocol`` on every item, one after another, with its events kept in memory (``keep``) or only
    counted: the protocol's own code for batch experiments of many thousands of sessions that need the verdicts
    and no file. Model roles are played by ``clients``; an exception propagates (no isolation, no resume)."""
    prompts = prompts or protocol.prompt_library()
    prompts.preload(protocol.prompt_folder)
    writer = MemoryWriter(keep=keep)
    settings = RoleSettings()
    verdicts = []
    for i, item in enumerate(items):
        sid = protocol.item_id(item) or f"item-{i + 1}"
        agents: dict[str, BaseChatAgent] = dict(protocol.deterministic_agents(item))
        for role, client in (clients or {}).items():
            agents[role] = ModelAgent(role, client, settings, model_label=client_label(client))
        session = Session(
            run_id=run_id, session_id=sid, protocol=protocol, agents=agents, writer=writer, prompts=prompts
        )
        session.start(sid, item.model_dump(mode="json"))
        verdicts.append(await protocol.run(item, session))
    return verdicts, writer
