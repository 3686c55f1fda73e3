"""The shape every protocol shares (``Protocol``) and its only door to agents and the transcript (``Session``).

A protocol declares its roles, its state machine (``machine``), typed ``Item`` and ``Params`` (pydantic), its
prompt folder, its paper and how its sessions are displayed, and implements ``run``. The Session owns the agents
of one item: ``ask`` renders a prompt file, sends it to a role, records the message and the model call and parses
the reply; ``send`` sends literal text; ``enter`` takes a declared transition; ``note`` records a structured step;
``verdict`` ends the session. Because every protocol speaks through it, every transcript has the same shape and
show, report, resume and the viewer work for all of them.
"""

from __future__ import annotations

import asyncio
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol as TypingProtocol, TypeVar

from pydantic import BaseModel, ConfigDict

from voirdire.base import mask_secrets, shortened
from voirdire.replies import ParseError as ParseError, ReplySchema, echoed
from voirdire.session.ask import OPTIONS, Ask
from voirdire.session.machine import StateMachine, UndeclaredTransition
from voirdire.session.prompts import Prompt, PromptLibrary, library
from voirdire.transcript import (
    DisplayHints,
    ErrorEvent,
    Guarantee,
    Message,
    ModelCall,
    ParseFailure,
    RunHeader,
    SessionStart,
    Step,
    Transition,
    Verdict,
)

if TYPE_CHECKING:  # autogen (and the agents over it) is imported by a session, not by `voirdire --help` or `list`
    from autogen_agentchat.agents import BaseChatAgent
    from autogen_agentchat.messages import TextMessage

    from voirdire.agents import CallInfo

T = TypeVar("T")
_PLAIN: Ask[Any] = Ask()  # a request with no options: the reply is text, read by no parser

# Replies longer than this are read in a worker thread, so that reading one (linear, but in Python) never holds up
# the other sessions' model calls and timeouts on the event loop; a 256-token reply is about 1,000 characters.
LONG_REPLY_CHARS = 4_000
ItemT = TypeVar("ItemT", bound=BaseModel)
ParamsT = TypeVar("ParamsT", bound=BaseModel)


class Statistics(BaseModel):
    """A verdict's statistics as a protocol types them (its ``Protocol.Outcome``): the fields its report reads.

    The transcript holds them as JSON (``Verdict.statistics``); ``Protocol.outcome(verdict)`` reads them back as
    this model, so a report fold reads fields, not dictionary keys. Keys the model does not declare are kept (a
    protocol's later statistics, an older transcript)."""

    model_config = ConfigDict(extra="allow")


class Writer(TypingProtocol):
    """Where a Session's events go: a JSONL file (``TranscriptWriter``) or memory (``MemoryWriter``)."""

    def write(self, record: RunHeader | Any) -> None: ...


@dataclass(frozen=True)
class Reply(Generic[T]):
    """A role's reply: the raw text, the parsed value (None when parsing failed), and the parse error if any."""

    text: str
    value: T | None = None
    error: str | None = None
    samples: tuple[Reply[T], ...] = ()  # every sample, when ``ask(samples=k)`` drew k > 1 (this reply is the first)

    @property
    def ok(self) -> bool:
        return self.error is None


class Session:
    """One examination of one item, with agents built for it alone."""

    def __init__(
        self,
        *,
        run_id: str,
        session_id: str,
        protocol: Protocol[Any, Any],
        agents: Mapping[str, BaseChatAgent],
        writer: Writer,
        prompts: PromptLibrary,
        structured: frozenset[str] = frozenset(),
        coalesce: bool = True,
    ) -> None:
        self.run_id = run_id
        self.structured = structured  # roles asked for their closed answers through reply schemas
        self.session_id = session_id
        self.protocol = protocol
        self._agents = dict(agents)
        self._writer = writer
        # A counting MemoryWriter keeps nothing: then events are not even built (batch experiments of many
        # thousands of sessions); the seq still advances so the session behaves the same.
        self._record = getattr(writer, "keep", True) is not False
        self._prompts = prompts
        self.state: str | None = None
        self.stage: str | None = None
        self.turn: int | None = None
        self.branch_name: str | None = None  # set on a concurrent branch (see ``branch``)
        self._counter = [0]  # the session's event sequence, shared with its branches
        self._cut_off: list[str] = []  # replies cut off at max_tokens even when asked again (shared with branches)
        from autogen_core import CancellationToken

        from voirdire.agents import CallSharing

        self._token = CancellationToken()
        # Identical deterministic requests of this session (its branches included) are sent once.
        self._sharing = CallSharing() if coalesce else None
        for agent in self._agents.values():
            if hasattr(agent, "sharing"):
                agent.sharing = self._sharing

    # ------------------------------------------------------------------ recording
    def _base(self) -> dict[str, Any]:
        self._counter[0] += 1
        base = {
            "run_id": self.run_id,
            "session_id": self.session_id,
            "seq": self._counter[0],
            "stage": self.stage,
            "turn": self.turn,
        }
        if self.branch_name is not None:
            base["branch"] = self.branch_name
        return base

    def _write(self, event: type[Any], **fields: Any) -> None:
        """Record one event of type ``event`` (unless the writer keeps nothing)."""
        if self._record:
            record = self._base()
            record.update(fields)
            self._writer.write(event.model_validate(record))
        else:
            self._counter[0] += 1

    # ------------------------------------------------------------------ concurrent branches
    def branch(self, name: str, *, fresh: bool = True) -> Session:
        """A concurrent branch of this session (one of LMvLM (Majority)'s examinations): the same item, writer
        and event sequence, its own position in the state machine (starting from this session's), and its own
        conversations: each model agent is forked, empty (``fresh``) or with a copy of its conversation so far.
        Rule agents are shared. Its events carry ``branch=name``; ``join`` brings the branches back."""
        child = Session.__new__(Session)
        child.__dict__.update(self.__dict__)
        child.branch_name = name if self.branch_name is None else f"{self.branch_name}/{name}"
        child._agents = {
            role: agent.fork(keep_history=not fresh) if callable(getattr(agent, "fork", None)) else agent
            for role, agent in self._agents.items()
        }
        return child

    def join(self, branches: list[Session]) -> None:
        """Continue after ``branches`` ended: this session takes the state they all reached (an undeclared or
        divergent ending is a protocol bug)."""
        ends = {b.state for b in branches}
        if len(ends) > 1:
            raise UndeclaredTransition(f"{self.protocol.name}: branches ended in different states {sorted(ends)}")
        if ends:
            self.state = ends.pop()

    def start(self, item_id: str, item: Mapping[str, Any], repeat: int | None = None) -> None:
        """Open the session on its item; ``repeat``: which repeat of the item it is (``--repeats``), else None."""
        self._write(SessionStart, item_id=item_id, item=dict(item), repeat=repeat)

    def enter(
        self, state: str, *, stage: str | None = None, turn: int | None = None, reason: str | None = None
    ) -> None:
        """Take a transition of the protocol's declared state machine; an undeclared edge is a protocol bug."""
        if not self.protocol.machine.allows(self.state, state):
            raise UndeclaredTransition(
                f"{self.protocol.name}: {self.state or 'start'} -> {state} is not a declared transition"
            )
        previous, self.state = self.state, state
        if stage is not None:
            self.stage = stage
        self.turn = turn
        self._write(Transition, from_state=previous, to_state=state, reason=reason)

    def note(self, name: str, **data: Any) -> None:
        """Record a protocol-specific structured step (e.g. one No-Data round)."""
        self._write(Step, name=name, data=data)

    def error(self, exc: BaseException, tb: str | None = None) -> None:
        failed = _failed_call(exc)
        self._write(
            ErrorEvent,
            error_type=type(exc).__name__,
            message=mask_secrets(str(exc)),
            traceback=mask_secrets(tb) if tb else None,
            role=getattr(failed, "role", None),
            retries=getattr(failed, "retries", 0),
        )

    def verdict(
        self,
        decision: str,
        *,
        accepted: bool | None,
        evidence: list[str] | None = None,
        statistics: Mapping[str, Any] | Statistics | None = None,
        guarantee: Guarantee | None = None,
    ) -> Verdict:
        """End the session. ``statistics`` are checked against the protocol's ``Outcome`` (a wrong type is the
        protocol's bug, raised here rather than found by its report) and written as JSON; ``guarantee`` is what
        the protocol's paper guarantees of this verdict, where it has a bound or a count to give."""
        if isinstance(statistics, Statistics):
            stats = statistics.model_dump(mode="json", exclude_unset=True)
        else:
            stats = dict(statistics or {})
            if self.protocol.Outcome is not Statistics:  # the base declares nothing to check
                self.protocol.Outcome.model_validate(stats)
        # A verdict that rests on a reply cut off at max_tokens says so (the reply was read as unreadable).
        cut = [f"cut off: {c}" for c in self._cut_off]
        v = Verdict(
            **self._base(),
            decision=decision,
            accepted=accepted,
            evidence=[*(evidence or []), *cut],
            statistics=stats,
            guarantee=guarantee,
        )
        if self._record:
            self._writer.write(v)
        return v

    # ------------------------------------------------------------------ speaking
    def _agent(self, role: str) -> BaseChatAgent:
        try:
            return self._agents[role]
        except KeyError:
            raise KeyError(f"{self.protocol.name}: no agent bound to role {role!r}") from None

    async def ask(self, role: str, prompt: str, request: Ask[T] | None = None, /, **variables: Any) -> Reply[T]:
        """Render ``prompts/<protocol>/<prompt>.yaml`` with ``variables`` and send it to ``role``, as ``request``
        says (``Ask``: how the reply is read, how the request is sent; the default reads no closed answer).

        When reading fails the failure is recorded with the request's ``on_failure`` (the defined outcome the
        protocol takes) and the reply comes back with ``value=None``: the protocol decides, the session never
        guesses and never crashes on model text.
        """
        how: Ask[Any] = _PLAIN if request is None else request
        if not isinstance(how, Ask):
            raise TypeError(f"ask(): the request is an Ask, not {type(how).__name__}")
        clash = OPTIONS.intersection(variables)
        if clash:
            options = ", ".join(f"{n}=..." for n in sorted(clash))
            raise TypeError(f"ask(): {options} belong to the request, not to the prompt: pass Ask({options})")
        parse, schema, samples, sender, expected = how.parse, how.schema, how.samples, how.sender, how.expected
        shape = ReplySchema.of(schema) if schema is not None else None
        structured = shape is not None and (parse is None or role in self.structured)
        reader: Callable[[str], Any] | None = shape.validate if structured and shape is not None else parse
        if structured and shape is not None:
            expected = expected or shape.describe()
        name = f"{self.protocol.prompt_folder}/{prompt}"
        TextMessage, call_metadata, _, message_id = _agents()
        template = self._prompts.get(name)
        rendered = template.render(**variables)
        messages = []
        for i, m in enumerate(rendered):
            if m.role == "assistant":
                raise ValueError(f"{name}: assistant turns belong in a role's memory, not in ask()")
            last = i == len(rendered) - 1
            md = call_metadata(
                system=m.role == "system",
                temperature=how.temperature,
                seed=how.seed,
                schema=shape.to_wire() if structured and shape is not None and last else None,
                samples=samples if last else 1,
                fresh=how.fresh,
            )
            messages.append(TextMessage(content=m.content, source=sender, metadata=md, id=message_id()))
            self._write(
                Message,
                sender=sender if m.role == "user" else "system",
                receiver=role,
                content=m.content,
                prompt=name,
                quote=how.quote if m.role == "user" else None,
            )
        fixed = fixed_text(template)
        return await self._deliver(
            role, messages, parse=reader, expected=expected, on_failure=how.on_failure, prompt=name, fixed=fixed
        )

    async def send(
        self,
        role: str,
        content: str,
        *,
        sender: str = "moderator",
        parse: Callable[[str], T] | None = None,
        expected: str = "",
        on_failure: str = "",
    ) -> Reply[T]:
        """Send literal content (e.g. a JSON request to a rule agent) without a prompt file."""
        TextMessage = _agents()[0]
        self._write(Message, sender=sender, receiver=role, content=content)
        msg = TextMessage(content=content, source=sender)
        return await self._deliver(role, [msg], parse=parse, expected=expected, on_failure=on_failure, prompt=None)

    async def _deliver(
        self,
        role: str,
        messages: list[TextMessage],
        *,
        parse: Callable[[str], T] | None,
        expected: str,
        on_failure: str,
        prompt: str | None,
        fixed: tuple[str, ...] = (),
    ) -> Reply[T]:
        texts, cut = await self._call(role, messages)
        if cut is not None and parse is not None and len(texts) == 1:
            # A closed answer cut off at max_tokens is not read as if closed: asked again once with twice the budget
            # (the cut reply stays in the transcript, marked by its call's finish_reason), then, if cut off again,
            # it is unreadable and the protocol takes its outcome for that.
            self._write(Message, sender=role, receiver="moderator", content=texts[0], prompt=prompt)
            budget = 2 * cut
            self.note("reasked", role=role, prompt=prompt, reason="cut off at max_tokens", max_tokens=budget)
            TextMessage, call_metadata, _, _ = _agents()
            more = call_metadata(max_tokens=budget, reask=True)
            again = [TextMessage(content=m.content, source=m.source, metadata={**m.metadata, **more}) for m in messages]
            texts, cut = await self._call(role, again, budget)
            if cut is not None:
                error = f"cut off at max_tokens twice (finish_reason: length; asked again with max_tokens {budget})"
                self._cut_off.append(f"{role}'s reply to {prompt or 'a message'}: {error}")
                self._write(Message, sender=role, receiver="moderator", content=texts[0], prompt=prompt)
                self.parse_failure(
                    role, prompt, expected=expected, raw=texts[0], error=error, outcome=on_failure or "unreadable"
                )
                return Reply(text=texts[0], error=error)
        replies = [
            await self._read(role, prompt, t, i if len(texts) > 1 else None, parse, expected, on_failure, fixed)
            for i, t in enumerate(texts)
        ]
        if len(replies) == 1:
            return replies[0]
        first = replies[0]
        return Reply(text=first.text, value=first.value, error=first.error, samples=tuple(replies))

    async def _call(
        self, role: str, messages: list[TextMessage], budget: int | None = None
    ) -> tuple[list[str], int | None]:
        """Send ``messages`` to ``role`` and record its model calls: the reply texts, and the budget the reply ran
        out of when it was cut off at max_tokens (``finish_reason: length``; None otherwise): ``budget`` when the
        request set one, else the role's max_tokens."""
        CallInfo = _agents()[2]
        agent = self._agent(role)
        response = await agent.on_messages(messages, self._token)
        text = response.chat_message.to_model_text()
        texts = [text]
        cut: int | None = None
        for call in response.inner_messages or ():
            if isinstance(call, CallInfo):
                texts = call.samples or texts
                if call.finish_reason == "length":
                    role_budget = getattr(getattr(agent, "settings", None), "max_tokens", None)
                    cut = budget or role_budget or max(1, call.completion_tokens)
                self._write(
                    ModelCall,
                    role=role,
                    model=call.model,
                    request_digest=call.request_digest,
                    response=call.response,
                    # validated into a TokenUsage with the record (no model built here to be checked again)
                    usage={
                        "prompt_tokens": call.prompt_tokens,
                        "completion_tokens": call.completion_tokens,
                        "cache_read_tokens": call.cache_read_tokens,
                        "cache_write_tokens": call.cache_write_tokens,
                    },
                    latency_s=call.latency_s,
                    retries=call.retries,
                    finish_reason=call.finish_reason,
                    cached=call.cached,
                    coalesced=call.coalesced,
                    samples=max(1, len(call.samples)),
                    requests=0 if call.cached or call.coalesced else call.requests,
                    enforcement=call.enforcement,
                )
        return texts, cut

    async def _read(
        self,
        role: str,
        prompt: str | None,
        text: str,
        sample: int | None,
        parse: Callable[[str], T] | None,
        expected: str,
        on_failure: str,
        fixed: tuple[str, ...] = (),
    ) -> Reply[T]:
        """Record the reply and read it with ``parse``: a long reply in a worker thread (``LONG_REPLY_CHARS``),
        with every transcript write kept on the event loop. A reply that reproduces the prompt's own template or
        example (``fixed``: its text without the variables; ``voirdire.replies.echoed``) is a parse failure."""
        self._write(Message, sender=role, receiver="moderator", content=text, prompt=prompt, sample=sample)
        if parse is None:
            return Reply(text=text)
        echo = echoed(text, fixed) if fixed else None
        if echo is not None:
            expected = expected or getattr(parse, "__doc__", "") or ""
            self.parse_failure(role, prompt, expected=expected, raw=text, error=echo, outcome=on_failure)
            return Reply(text=text, error=echo)
        try:
            value = await asyncio.to_thread(parse, text) if len(text) > LONG_REPLY_CHARS else parse(text)
            return Reply(text=text, value=value)
        except ParseError as exc:
            expected = expected or getattr(parse, "__doc__", "") or ""
            self.parse_failure(role, prompt, expected=expected, raw=text, error=str(exc), outcome=on_failure)
            return Reply(text=text, error=str(exc))

    def parse_failure(
        self, role: str, prompt: str | None, *, expected: str, raw: str, error: str, outcome: str = ""
    ) -> None:
        """Record a reply that could not be parsed and the defined outcome the protocol took instead
        (for protocols that parse replies themselves rather than through ``ask(parse=...)``)."""
        self._write(
            ParseFailure,
            role=role,
            prompt=prompt,
            expected=expected,
            raw=shortened(raw),  # the whole reply is in its model call: not stored a third time
            error=error,
            outcome=outcome or "reply left unparsed",
        )

    def remember(self, role: str, speaker: str, text: str, *, shown: bool = True) -> None:
        """Put a turn into a role's memory without a model call (e.g. the examinee's own claim)."""
        agent = self._agent(role)
        seed = getattr(agent, "remember", None)
        if seed is None:
            raise TypeError(f"agent for role {role!r} keeps no conversation memory")
        seed(speaker, text)
        if shown:
            sender = role if speaker == "assistant" else ("system" if speaker == "system" else "moderator")
            self._write(Message, sender=sender, receiver=role, content=text)

    def seed(self, role: str, prompt: str, **variables: Any) -> None:
        """Put a rendered prompt into a role's memory without a model call (not shown in the chat)."""
        for m in self._prompts.get(f"{self.protocol.prompt_folder}/{prompt}").render(**variables):
            self.remember(role, m.role, m.content, shown=False)

    async def reset(self, role: str) -> None:
        """Start the role's conversation afresh (e.g. a new examination in LMvLM (Majority))."""
        await self._agent(role).on_reset(self._token)


class Protocol(ABC, Generic[ItemT, ParamsT]):
    """A paper's algorithm as an explicit state machine.

    Subclasses declare ``name``, ``paper``, ``roles`` (the roles a model or rule must play), ``machine``,
    ``Item`` and ``Params`` (pydantic) and ``display``, and implement ``run``. What most protocols share is a
    default: an item's id is its ``id`` field (``item_id``), a record becomes an item by the ``Item`` model's own
    fields and aliases (``item_from_record``), and the prompts are ``prompts/<package>/`` where ``<package>`` is
    the protocol's package (``prompt_folder``), under the package's own ``prompts/`` folder when it ships one
    (``prompt_root``, a third-party protocol), else voirdire's.
    ``independent_roles`` lists role pairs that should be different models (voirdire warns when they share a
    spec). Roles played by rules are named by ``rule_roles`` and built per session by ``deterministic_agents``.
    """

    name: ClassVar[str]
    paper: ClassVar[str] = ""
    roles: ClassVar[tuple[str, ...]]
    machine: ClassVar[StateMachine]
    Item: ClassVar[type[BaseModel]]
    Params: ClassVar[type[BaseModel]]
    prompt_folder: ClassVar[str]
    prompt_root: ClassVar[Path | None] = None  # the folder holding ``prompt_folder``; None: voirdire's prompts/
    display: ClassVar[DisplayHints] = DisplayHints()
    independent_roles: ClassVar[tuple[tuple[str, str], ...]] = ()
    Outcome: ClassVar[type[Statistics]] = Statistics  # the verdict statistics this protocol writes and reads

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        package = package_of(cls.__module__)
        if not hasattr(cls, "prompt_folder"):
            cls.prompt_folder = package.rsplit(".", 1)[-1]
        if cls.prompt_root is None:
            module = sys.modules.get(package)
            shipped = Path(module.__file__).parent / "prompts" if module and module.__file__ else None
            if shipped is not None and shipped.is_dir():
                cls.prompt_root = shipped

    def __init__(self, params: ParamsT | None = None) -> None:
        self.params: ParamsT = params if params is not None else self.Params()  # type: ignore[assignment]

    @property
    def states(self) -> tuple[str, ...]:
        return self.machine.states

    def required_roles(self) -> tuple[str, ...]:
        """Roles this configuration needs (a baseline may need fewer than the full protocol)."""
        return self.roles

    def rule_roles(self) -> tuple[str, ...]:
        """Roles of this configuration played by rules rather than models."""
        return ()

    def deterministic_agents(self, item: ItemT) -> dict[str, BaseChatAgent]:
        """The rule agents of ``rule_roles``, built for one session with whatever per-item state they hold."""
        return {}

    @classmethod
    def item_from_record(cls, record: dict[str, Any]) -> ItemT:
        """Build an item from a dataset record (protocols override this to accept their datasets' field names)."""
        return cls.Item.model_validate(record)  # type: ignore[return-value]

    def item_id(self, item: ItemT) -> str:
        """The item's ``id`` field ("" when it has none: the runner numbers it); override for another key."""
        return str(getattr(item, "id", None) or "")

    @classmethod
    def outcome(cls, verdict: Verdict) -> Statistics:
        """A verdict's statistics as this protocol's ``Outcome``."""
        return cls.Outcome.model_validate(verdict.statistics)

    def prompt_library(self) -> PromptLibrary:
        """The prompt files this protocol renders: voirdire's own, or its package's ``prompt_root``."""
        return PromptLibrary(self.prompt_root) if self.prompt_root is not None else library()

    @abstractmethod
    async def run(self, item: ItemT, session: Session) -> Verdict: ...


def package_of(module: str) -> str:
    """The package a protocol class belongs to: a built-in one's own package (the first three parts of its module's
    name), else the module's top-level package (``my_protocol`` for ``my_protocol.judge``)."""
    parts = module.split(".")
    if parts[:2] == ["voirdire", "protocols"] and len(parts) > 2:
        return ".".join(parts[:3])
    return parts[0]


@cache
def _agents() -> tuple[type[TextMessage], Callable[..., dict[str, str]], type[CallInfo], Callable[[], str]]:
    """autogen's message and voirdire's agents' names a session uses at every call, imported once at the first (a
    function-level ``from package import name`` looks the names up again at each call)."""
    from autogen_agentchat.messages import TextMessage

    from voirdire.agents import CallInfo, call_metadata, message_id

    return TextMessage, call_metadata, CallInfo, message_id


def _failed_call(exc: BaseException) -> BaseException | None:
    """The model call's failure behind ``exc`` (itself or a cause): it says the role and the retries it took."""
    seen: BaseException | None = exc
    for _ in range(8):  # a short chain; a cycle must not loop
        if seen is None:
            return None
        if isinstance(getattr(seen, "retries", None), int) and not isinstance(seen.retries, bool):  # type: ignore[attr-defined]
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


_FIXED: dict[tuple[str, str], tuple[str, ...]] = {}
_HOLE = "\x00"


def fixed_text(prompt: Prompt) -> tuple[str, ...]:
    """The prompt's own text, without its variables: its instructions, answer template and examples, as the
    model is shown them (rendered, so doubled braces are single), cut where a variable goes."""
    key = (prompt.name, prompt.sha256)
    if key not in _FIXED:
        rendered = prompt.render(**{v: _HOLE for v in prompt.spec.variables})
        _FIXED[key] = tuple(s for m in rendered for s in m.content.split(_HOLE) if s.strip())
    return _FIXED[key]
