"""Inspect AI scorers: every registered voirdire protocol as an Inspect scorer (``pip install 'voirdire[inspect]'``).

``voirdire.integrations.inspect.<protocol>(...)`` is the scorer of a registered protocol, made from the registry
(``from voirdire.integrations.inspect import <protocol>``; ``scorer("<protocol>", ...)`` for a name held in a
variable), so a protocol package installed later has its scorer too. For each sample it:

1. builds the protocol's item from the sample: each field of the protocol's ``Item`` is taken from the sample's
   ``metadata["voirdire"]`` when that names it, else by its name: a field for the output under test (``claim``,
   ``candidate``, ``answer``, ``summary``, ...) from the model's completion, one for the question or source
   (``question``, ``source``, ``document``, ...) from the sample's input, one for references (``gold_answers``,
   ``references``, ...) from the target; ``fields={"claim": "target"}`` says otherwise (``input``, ``output``,
   ``target``, ``metadata.KEY``);
2. binds each of the protocol's model roles: a role given as a keyword is a voirdire model spec
   (``"anthropic:claude-haiku-4-5"``, ``"scripted:replies.yaml"``), an Inspect model name (``"openai/gpt-4o-mini"``)
   or an Inspect ``Model``; a role not given is Inspect's model role of that name when the eval defines one
   (``--model-role examiner=...``), else the eval's own model;
3. runs the protocol on that one item and writes its voirdire transcript beside the Inspect log (the folder
   ``<log name>.voirdire/``, one file per sample and epoch; ``transcripts=DIR`` to choose), so ``voirdire view`` and
   ``voirdire report`` read it;
4. returns an Inspect ``Score``: ``value`` C (accepted), I (rejected) or N (no decision), ``answer`` the verdict's
   decision, ``explanation`` its evidence, and ``metadata`` with the transcript's path, the verdict's statistics and
   its guarantee (``Verdict.guarantee``: LMvLM (Majority)'s vote margin, ...; None where the protocol has none).

Other keywords are the protocol's parameters (``examinations=3``). Inspect's own calls go through Inspect (its
retries, limits and log); voirdire's model specs through voirdire's clients.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from autogen_core.models import (
    AssistantMessage,
    ChatCompletionClient,
    CreateResult,
    LLMMessage,
    RequestUsage,
    SystemMessage,
)

from voirdire.base import VoirdireError
from voirdire.models import PROVIDERS, TextOnlyClient, text_of
from voirdire.registry import registrations

INSTALL = "pip install 'voirdire[inspect]'"
OUTPUT_FIELDS = ("claim", "candidate", "candidate_answer", "answer", "prediction", "response", "summary", "output")
INPUT_FIELDS = ("question", "source", "document", "article", "context", "prompt", "input")
TARGET_FIELDS = ("gold_answers", "answers", "references", "reference", "gold", "target")


class InspectScorerError(VoirdireError, ValueError):
    """A scorer that cannot be made or cannot read a sample; the message says which and why."""


def _inspect() -> Any:
    try:
        import inspect_ai.scorer as scorers
    except ImportError:
        raise InspectScorerError(f"voirdire.integrations.inspect needs Inspect AI: {INSTALL}") from None
    return scorers


class InspectModelClient(TextOnlyClient):
    """A voirdire role played by an Inspect model: each call is ``Model.generate`` (Inspect's retries, limits,
    cache and log), with the role's ``max_tokens``, ``temperature`` and ``seed``."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model
        self._create_args = {"model": f"inspect/{model}"}  # read by client labels

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig

        chat = [
            ChatMessageSystem(content=text_of(m))
            if isinstance(m, SystemMessage)
            else ChatMessageAssistant(content=text_of(m))
            if isinstance(m, AssistantMessage)
            else ChatMessageUser(content=text_of(m))
            for m in messages
        ]
        config = GenerateConfig(
            max_tokens=args.get("max_tokens"), temperature=args.get("temperature"), seed=args.get("seed")
        )
        output = await self.model.generate(chat, config=config)
        usage = output.usage
        stop = output.stop_reason if output.choices else None
        return CreateResult(
            finish_reason="length" if stop == "max_tokens" else "stop",
            content=output.completion,
            usage=RequestUsage(
                prompt_tokens=usage.input_tokens if usage else 0,
                completion_tokens=usage.output_tokens if usage else 0,
            ),
            cached=False,
        )


def _is_spec(text: str) -> bool:
    """A voirdire model spec (``kind:...``, ``local``, ``human``), not an Inspect model name (``provider/model``)."""
    kind = text.partition(":")[0]
    return kind in PROVIDERS and (":" in text or text in ("local", "human"))


def _client_for(role: str, given: Any) -> tuple[str | None, ChatCompletionClient | None]:
    """(voirdire spec, None) or (None, client) for one role."""
    from inspect_ai.model import Model, get_model

    if isinstance(given, str) and _is_spec(given):
        return given, None
    if isinstance(given, str | Model):
        return None, InspectModelClient(get_model(given))
    if given is not None:
        raise InspectScorerError(f"role {role}: expected a voirdire model spec, an Inspect model name or Model")
    return None, InspectModelClient(get_model(role=role))  # the eval's model when it binds no such role


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):  # a list of chat messages: the last user turn is what was asked
        return str(getattr(value[-1], "text", value[-1])) if value else ""
    return str(value)


def _lookup(where: str, state: Any, target: Any) -> Any:
    if where == "output":
        return state.output.completion
    if where == "input":
        return _text(state.input)
    if where == "target":
        return list(target.target) if len(target.target) != 1 else target.text
    if where.startswith("metadata."):
        return (state.metadata or {}).get(where.removeprefix("metadata."))
    raise InspectScorerError(f"fields: {where!r} is not one of input, output, target, metadata.KEY")


def _record(item_fields: Mapping[str, Any], state: Any, target: Any, fields: Mapping[str, str]) -> dict[str, Any]:
    """The protocol item's record for one sample (see the module's step 1)."""
    given = dict((state.metadata or {}).get("voirdire") or {})
    record: dict[str, Any] = {}
    for name, info in item_fields.items():
        if name in given:
            record[name] = given[name]
        elif name in fields:
            record[name] = _lookup(fields[name], state, target)
        elif name == "id":
            record[name] = f"{state.sample_id}"
        elif name in OUTPUT_FIELDS:
            record[name] = state.output.completion
        elif name in INPUT_FIELDS:
            record[name] = _text(state.input)
        elif name in TARGET_FIELDS:
            many = any(word in str(info.annotation) for word in ("list", "tuple", "Sequence"))
            record[name] = list(target.target) if many else target.text
    return record


def _transcript_path(folder: str | None, state: Any) -> Path:
    from inspect_ai.log._samples import sample_active

    active = sample_active()
    name = f"{_safe(str(state.sample_id))}_epoch{state.epoch}.jsonl"
    if folder is not None:
        return Path(folder) / name
    log = active.log_location if active is not None else ""
    if not log or "://" in log:  # no local log (or one in a bucket): transcripts beside the working folder
        return Path("logs") / "voirdire" / name
    stem = Path(log).with_suffix("")
    return stem.parent / f"{stem.name}.voirdire" / name


SAFE_NAME = re.compile(r"[A-Za-z0-9._-]{1,100}")
"""A sample id used as it is in its transcript's file name."""


def _safe(text: str) -> str:
    """The file name part for a sample id; distinct ids give distinct names. An id of at most 100 safe characters
    is itself; any other is its first 100 characters with the rest made safe, then ``~`` and a digest of the whole
    id: ``a/b``, ``a b`` and ``a:b`` (all ``a_b`` once made safe) and ids sharing their first 100 characters each
    get a file of their own. ``~`` never occurs in a name of the first kind, so the two kinds never meet."""
    if SAFE_NAME.fullmatch(text):
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{re.sub(r'[^A-Za-z0-9._-]', '_', text)[:100]}~{digest}"


def scorer(name: str, **options: Any) -> Any:
    """The scorer of the registered protocol ``name`` (see the module's docstring for ``options``)."""
    return _factory(name)(**options)


def _factory(name: str) -> Callable[..., Any]:
    regs = registrations()
    if name not in regs:
        raise InspectScorerError(f"no registered protocol {name!r}; known: {', '.join(regs)}")
    reg = regs[name]
    scorers = _inspect()
    roles = tuple(reg.protocol.roles)

    def make(*, fields: Mapping[str, str] | None = None, transcripts: str | None = None, **options: Any) -> Any:
        bound = {r: options.pop(r) for r in list(options) if r in roles}
        params = options
        reg.protocol.Params(**params)  # a wrong parameter is an error now, not at the first sample

        async def score(state: Any, target: Any) -> Any:
            from voirdire.api import arun

            specs: dict[str, str] = {}
            clients: dict[str, ChatCompletionClient] = {}
            for role in roles:
                spec, client = _client_for(role, bound.get(role))
                if spec is not None:
                    specs[role] = spec
                elif client is not None:
                    clients[role] = client
            record = _record(reg.protocol.Item.model_fields, state, target, fields or {})
            out = _transcript_path(transcripts, state)
            out.parent.mkdir(parents=True, exist_ok=True)
            result = await arun(name, [record], out=out, models=specs, clients=clients, fresh=True, **params)
            verdict = next(iter(result.verdicts.values()), None)
            if verdict is None:
                error = next(iter(getattr(result, "errors", {}).values()), "no verdict")
                return scorers.Score(
                    value=scorers.NOANSWER, answer=None, explanation=str(error), metadata={"transcript": str(out)}
                )
            value = {True: scorers.CORRECT, False: scorers.INCORRECT}.get(verdict.accepted, scorers.NOANSWER)
            return scorers.Score(
                value=value,
                answer=verdict.decision,
                explanation="\n".join(verdict.evidence),
                metadata={
                    "transcript": str(out),
                    "decision": verdict.decision,
                    "statistics": verdict.statistics,
                    # what the protocol's paper guarantees of this verdict (None where it has nothing to give)
                    "guarantee": verdict.guarantee.model_dump(mode="json") if verdict.guarantee else None,
                },
            )

        return score

    make.__name__ = name
    make.__qualname__ = name
    make.__doc__ = f"Inspect scorer: voirdire's {name} protocol on each sample (roles: {', '.join(roles) or 'none'})."
    return scorers.scorer(metrics=[scorers.accuracy(), scorers.stderr()], name=f"voirdire/{name}")(make)


def __getattr__(name: str) -> Any:
    if name.startswith("_") or name not in registrations():
        raise AttributeError(f"module 'voirdire.integrations.inspect' has no attribute {name!r}")
    return _factory(name)


def __dir__() -> list[str]:
    return sorted([*globals(), *registrations()])
