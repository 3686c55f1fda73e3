"""Prepare a run: every check that can fail before anything is written, the roles bound to their models, and the
run header the transcript will start with."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel

from voirdire.base import IdList, VoirdireError, mask_tree, max_reply_chars
from voirdire.executors import RunSetupError, SessionJob, repeat_ids
from voirdire.models import SLASH_KINDS, RoleSettings, ScriptedChatCompletionClient, spec_label
from voirdire.runner.options import RunOptions
from voirdire.runner.roles import RoleTable, bind_roles, check_credentials, client_label, independence_warnings
from voirdire.session import PromptLibrary, Protocol
from voirdire.transcript import RoleBinding, RunHeader, new_run_id

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


@dataclass(frozen=True)
class Prepared:
    """A run that passed every check: what resuming and executing it need."""

    protocol: Protocol[Any, Any]
    items: Sequence[BaseModel]
    ids: IdList  # one session id per item, in item order (per item and repeat with repeats: ITEM@r1, ...)
    header: RunHeader  # as the transcript will hold it (masked)
    job: SessionJob
    clients: Mapping[str, ChatCompletionClient]
    options: RunOptions
    notes: list[str]  # warnings said once, before the run

    def sessions(self) -> Iterator[tuple[str, BaseModel]]:
        """(session id, its item), in the order they run (an item's repeats together), made one at a time as
        they are taken: a run of many items holds no second table of them."""
        per_item, items = self.options.repeats, iter(self.items)
        item: BaseModel | None = None
        for i, sid in enumerate(self.ids):
            if i % per_item == 0:
                item = next(items)
            yield sid, item  # type: ignore[misc]

    @property
    def out(self) -> Path:
        return self.job.out

    @property
    def elsewhere(self) -> bool:
        """Whether the sessions run in other processes (worker processes, Ray actors)."""
        return self.options.executor == "ray" or self.options.workers > 1


def prepare(
    protocol: Protocol[Any, Any],
    items: Sequence[BaseModel],
    *,
    out: str | Path,
    roles: Mapping[str, RoleSettings] | RoleTable | None,
    clients: Mapping[str, ChatCompletionClient] | None,
    prompts: PromptLibrary | None,
    dataset: str | None,
    options: RunOptions,
) -> Prepared:
    """Check the options, the output paths, the roles' models and keys and the item ids, bind the roles, and
    build the header; nothing is written. A failure is a one-line ``VoirdireError``."""
    options.check()
    max_reply_chars()  # a bad VOIRDIRE_MAX_REPLY_CHARS is said before the run, not in every session
    if options.executor == "ray":
        from voirdire.executors import require_ray

        require_ray()  # before anything is written: not installed is a one-line error
    out = Path(out)
    check_writable(out, "transcript")
    if options.cache is not None:
        check_writable(options.cache, "cache")
    clients = dict(clients or {})
    prompts = prompts or protocol.prompt_library()
    prompts.preload(protocol.prompt_folder)
    bound = bind_roles(protocol, roles if isinstance(roles, RoleTable) else RoleTable(dict(roles or {})), clients)
    check_credentials(bound, clients)
    if options.executor == "ray" or options.workers > 1:
        _check_sendable(protocol, bound, clients, options.executor, options.workers)
    notes = independence_warnings(protocol, bound, clients)
    for note in notes:
        warnings.warn(note, stacklevel=3)
    # What the transcript names as each role's model: the redacted spec, or the client type given in code.
    labels = {r: client_label(clients[r]) if r in clients else spec_label(s.spec) for r, s in bound.items()}
    header = _header(protocol, bound, labels, prompts, dataset, options)
    if options.max_cost is not None:
        _check_priced(labels, options)
    item_ids = _item_ids(protocol, items)
    if len(set(item_ids)) != len(item_ids):
        raise ValueError("item ids must be unique within a run")
    ids = repeat_ids(item_ids, options.repeats)  # every id gets its suffix: unique ids stay unique
    if options.repeats > 1 and options.cache is not None:
        note = f"cache {options.cache}: not read or written by a run with repeats (every repeat is sent)"
        warnings.warn(note, stacklevel=3)
        notes.append(note)
    job = SessionJob(
        protocol=protocol,
        run_id=header.run_id,
        bound=bound,
        labels=labels,
        prompts=prompts,
        structured=frozenset(r for r, s in bound.items() if s.structured),
        out=out,
        options=options.sessions,
    )
    return Prepared(protocol, items, ids, header, job, clients, options, notes)


def _check_priced(labels: Mapping[str, str], options: RunOptions) -> None:
    """``max_cost`` counts what each call is billed: a role whose model has no price cannot be held to it."""
    from voirdire.reports import load_prices

    prices = load_prices(options.prices)
    unpriced = sorted({label for label in labels.values() if not prices.pricing(label).known})
    if unpriced:
        raise RunSetupError(
            f"--max-cost: no price for {', '.join(unpriced)}, so its cost cannot be counted; "
            "give one with --prices FILE"
        )


def _item_ids(protocol: Protocol[Any, Any], items: Sequence[BaseModel]) -> Sequence[str]:
    """One id per item (``Protocol.item_id``, else ``item-N``). A dataset file streamed to the run
    (``registry.ItemStream``) kept them in its checking pass: the file is not read once more for them, unless the
    protocol names its items otherwise."""
    known: IdList | None = getattr(items, "ids", None)
    if isinstance(known, IdList) and type(protocol).item_id is Protocol.item_id:
        return known
    return [protocol.item_id(it) or f"item-{i + 1}" for i, it in enumerate(items)]


def _header(
    protocol: Protocol[Any, Any],
    bound: Mapping[str, RoleSettings],
    labels: Mapping[str, str],
    prompts: PromptLibrary,
    dataset: str | None,
    options: RunOptions,
) -> RunHeader:
    """The run header, masked as the transcript holds it."""
    header = RunHeader(
        run_id=new_run_id(),
        protocol=protocol.name,
        parameters=protocol.params.model_dump(mode="json"),
        roles={
            r: RoleBinding(
                spec=labels[r], temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed, structured=s.structured
            )
            for r, s in bound.items()
        },
        seed=options.seed,
        prompts=prompts.hashes(protocol.prompt_folder),
        packages=package_versions(),
        dataset=dataset,
        command=options.command,
        transitions=protocol.machine.as_record(),
        display=protocol.display,
        paper=protocol.paper or None,
    )
    return RunHeader.model_validate(mask_tree(header.model_dump(mode="json")))


def default_out(
    kind: str, dataset: str | Path | None, identity: Mapping[str, Any] | None = None, *, base: Path | None = None
) -> Path:
    """``transcripts/<kind>-<name>-<digest>.jsonl`` for a dataset, else a timestamped file.

    The digest is of the dataset's path relative to the working folder (``transcripts/`` is relative to it too)
    and of ``identity``, what else makes a run distinct (its parameters and the roles' models and settings, as the
    resume check compares them): stable, so re-running the same command resumes, and different for two files of
    the same name in different folders, or for another ``--rounds`` or another model, so two runs never refuse
    each other's transcript. ``base``: the name a protocol gives a built-in dataset's run
    (``transcripts/dcr-summeval.jsonl``), which gets the digest too."""
    if dataset is not None:
        where = Path(dataset)
        try:
            place = os.path.relpath(where.resolve(), Path.cwd().resolve())
        except ValueError:  # another drive (Windows)
            place = str(where.resolve())
        text = place if identity is None else json.dumps([place, identity], sort_keys=True, default=str)
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        if base is not None:
            return base.parent / f"{base.stem}-{digest}{base.suffix or '.jsonl'}"
        return Path("transcripts") / f"{kind}-{where.stem}-{digest}.jsonl"
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("transcripts") / f"{kind}-{stamp}-{uuid.uuid4().hex[:4]}.jsonl"


def _model_text(settings: RoleSettings) -> str:
    """A role's model as a name digests it: `openai/gpt-4o-mini` as the `openai:gpt-4o-mini` it is (one run, one
    default name); every other spec as written, so the names runs already have stay theirs."""
    provider, slash, _ = settings.model.partition("/")
    return settings.spec.text if slash and provider in SLASH_KINDS else settings.model


def run_identity(
    protocol: Protocol[Any, Any], roles: Mapping[str, RoleSettings], *, repeats: int = 1
) -> dict[str, Any]:
    """What a default transcript name digests besides the dataset: the protocol, its parameters, each role's
    model and generation settings (those the run header records and a resume compares), and the repeats per item
    when there are several (a run without repeats keeps the name it always had)."""
    kept = ("model", "temperature", "max_tokens", "seed", "structured")
    identity: dict[str, Any] = {
        "protocol": protocol.name,
        "parameters": protocol.params.model_dump(mode="json"),
        "roles": {r: {k: _model_text(s) if k == "model" else getattr(s, k) for k in kept}
                  for r, s in sorted(roles.items())},
    }
    if repeats != 1:
        identity["repeats"] = repeats
    return identity


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


def package_versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


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
        spec = settings.spec
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
