"""Run a protocol over one item or a dataset: role binding, concurrency, progress, resume, error isolation."""

from __future__ import annotations

import asyncio
import fcntl
import importlib.metadata
import sys
import time
import traceback
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from autogen_agentchat.agents import BaseChatAgent
from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel, ConfigDict, Field

from voirdire.agents import ModelAgent
from voirdire.cache import ResponseCache
from voirdire.errors import VoirdireError
from voirdire.models import ModelPool, ModelSpecError, RoleSettings, parse_spec, spec_label
from voirdire.prompts import PromptLibrary
from voirdire.protocol import Protocol, Session
from voirdire.registry import known_roles
from voirdire.transcript import (
    MemoryWriter,
    RoleBinding,
    RunHeader,
    Transcript,
    TranscriptWriter,
    Verdict,
    load,
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
    """The output transcript belongs to a different run (protocol, parameters or models differ)."""


class RunResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    out: Path
    run_id: str
    session_ids: list[str] = Field(default_factory=list, description="one per item, in item order")
    verdicts: dict[str, Verdict] = Field(default_factory=dict)
    errors: dict[str, str] = Field(default_factory=dict)
    skipped: int = 0
    elapsed_s: float = 0.0
    warnings: list[str] = Field(default_factory=list)


def client_label(client: ChatCompletionClient) -> str:
    """A client given in code: its type, and its model when the client says (so caches never mix two models)."""
    model = (
        getattr(client, "_create_args", {}).get("model")
        if isinstance(getattr(client, "_create_args", None), dict)
        else None
    )
    return f"client:{type(client).__name__}" + (f":{model}" if model else "")


def default_out(kind: str, dataset: str | Path | None) -> Path:
    """``transcripts/<kind>-<dataset>.jsonl`` for a dataset (stable, so re-running resumes), else a timestamped file."""
    if dataset is not None:
        return Path("transcripts") / f"{kind}-{Path(dataset).stem}.jsonl"
    return Path("transcripts") / f"{kind}-{datetime.now().strftime('%Y%m%d-%H%M%S')}.jsonl"


def package_versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


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
    previous = load(out)
    last = next(
        (h for h in reversed(previous.headers) if any(s.run_id == h.run_id for s in previous.sessions.values())), None
    )
    for field in ("protocol", "parameters", "roles", "prompts"):
        if last is not None and getattr(last, field) != getattr(header, field):
            raise ResumeError(
                f"{out}: holds a run with different {field} ({getattr(last, field)!r}); "
                "use another --out, or --fresh to start over"
            )
    return previous


@contextmanager
def _exclusive(out: Path) -> Iterator[None]:
    """One run at a time per transcript: a second one would redo unfinished sessions or unlink the file."""
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = out.with_name(out.name + ".lock")
    with lock.open("w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResumeError(f"{out}: another run is writing this transcript") from None
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)
            fcntl.flock(fh, fcntl.LOCK_UN)


async def run_protocol(
    protocol: Protocol[Any, Any],
    items: Sequence[BaseModel],
    *,
    out: str | Path,
    roles: Mapping[str, RoleSettings] | None = None,
    clients: Mapping[str, ChatCompletionClient] | None = None,
    concurrency: int = 1,
    resume: bool = True,
    progress: bool = False,  # a progress bar on stderr, shown when more than one session is left to run
    prompts: PromptLibrary | None = None,
    dataset: str | None = None,
    command: list[str] | None = None,
    seed: int | None = None,
    cache: str | Path | None = None,
) -> RunResult:
    """Run ``protocol`` on every item, writing one transcript; finished sessions in ``out`` are skipped.

    ``clients`` maps a role to a ready ``ChatCompletionClient`` (scripted clients in tests); other roles are
    built from their ``RoleSettings`` spec. ``cache`` is a JSONL file of replies to deterministic requests.
    An exception inside one session is recorded as an error event for that session and the run goes on; the
    session has no verdict, so a resumed run retries it.
    """
    out = Path(out)
    clients = dict(clients or {})
    roles = dict(roles or {})
    prompts = prompts or protocol.prompt_library()
    prompts.preload(protocol.prompt_folder)
    bound = bind_roles(protocol, roles, clients)
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
        seed=seed,
        prompts=prompts.hashes(protocol.prompt_folder),
        packages=package_versions(),
        dataset=dataset,
        command=command,
        transitions=protocol.machine.as_record(),
        display=protocol.display,
        paper=protocol.paper or None,
    )
    ids = [protocol.item_id(it) or f"item-{i + 1}" for i, it in enumerate(items)]
    if len(set(ids)) != len(ids):
        raise ValueError("item ids must be unique within a run")
    with _exclusive(out):  # held until the transcript is closed
        finished: set[str] = set()
        result = RunResult(out=out, run_id=header.run_id, session_ids=ids, warnings=notes)
        if out.exists() and out.stat().st_size > 0:
            if resume:
                done = _resumable(out, header)
                finished = done.finished()
                by_id = dict(zip(ids, items, strict=True))
                for sid in finished & set(ids):
                    if done.sessions[sid].item != by_id[sid].model_dump(mode="json"):
                        raise ResumeError(
                            f"{out}: session {sid!r} was run on a different item; use another --out, or --fresh"
                        )
                    result.verdicts[sid] = done.sessions[sid].verdict  # type: ignore[assignment]
            else:
                out.unlink()
        result.skipped = len(finished & set(ids))

        structured = frozenset(r for r, s in bound.items() if s.structured)
        pool = ModelPool()
        replies = ResponseCache(cache) if cache is not None else None
        sem = asyncio.Semaphore(max(1, concurrency))
        left = len(ids) - result.skipped
        bar = _progress(left, protocol.name) if progress and left > 1 else None
        start = time.perf_counter()

        def agents_for_session(item: BaseModel) -> dict[str, BaseChatAgent]:
            agents: dict[str, BaseChatAgent] = dict(protocol.deterministic_agents(item))
            for role, settings in bound.items():
                client = clients[role] if role in clients else pool.get(settings.model)
                agents[role] = ModelAgent(role, client, settings, model_label=labels[role], cache=replies)
            return agents

        with TranscriptWriter(out) as writer:
            writer.write(header)

            async def one(item: BaseModel, sid: str) -> None:
                async with sem:
                    session = Session(
                        run_id=header.run_id,
                        session_id=sid,
                        protocol=protocol,
                        agents=agents_for_session(item),
                        writer=writer,
                        prompts=prompts,
                        structured=structured,
                    )
                    session.start(sid, item.model_dump(mode="json"))
                    try:
                        verdict = await protocol.run(item, session)
                        result.verdicts[sid] = verdict
                    except (KeyboardInterrupt, asyncio.CancelledError):
                        raise
                    except Exception as exc:  # isolate: one broken session never loses the others' work
                        session.error(exc, traceback.format_exc())
                        result.errors[sid] = f"{type(exc).__name__}: {exc}"
                    if bar is not None:
                        bar.update(1)

            try:
                await asyncio.gather(*(one(it, sid) for it, sid in zip(items, ids, strict=True) if sid not in finished))
            finally:
                if bar is not None:
                    bar.close()
                await pool.close()
        result.elapsed_s = round(time.perf_counter() - start, 3)
    return result


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
