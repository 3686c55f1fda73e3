"""The shape every protocol shares: named states, the roles it needs, typed parameters, and the Session.

The Session is a protocol's only door to agents and to the transcript: ``ask`` renders a prompt file, sends it to
a role's agent, records the message and the model call, and parses the reply; ``enter`` records state transitions;
``note`` records structured steps; ``verdict`` ends the session. Because every protocol speaks through it, every
transcript has the same shape and the viewer and resume work for all of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.messages import TextMessage
from autogen_core import CancellationToken
from pydantic import BaseModel

from voirdire.models import mask_secrets
from voirdire.prompts import PromptLibrary
from voirdire.transcript import (
    ErrorEvent,
    Message,
    ModelCall,
    ParseFailure,
    SessionStart,
    Step,
    TokenUsage,
    TranscriptWriter,
    Transition,
    Verdict,
)

T = TypeVar("T")
ItemT = TypeVar("ItemT", bound=BaseModel)
ParamsT = TypeVar("ParamsT", bound=BaseModel)

# Message metadata understood by voirdire.agents.ModelAgent (strings: autogen metadata is str -> str).
# ROLE_KEY="system" makes the text a system message; TEMPERATURE_KEY and SEED_KEY override sampling for one call.
ROLE_KEY = "voirdire.role"
TEMPERATURE_KEY = "voirdire.temperature"
SEED_KEY = "voirdire.seed"


class ParseError(ValueError):
    """Raised by a reply parser when a model's text does not have the expected form."""


@dataclass(frozen=True)
class Reply(Generic[T]):
    """A role's reply: the raw text, the parsed value (None when parsing failed), and the parse error if any."""

    text: str
    value: T | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Session:
    """One examination of one item. Not shared between items; agents are fresh per session."""

    def __init__(
        self,
        *,
        run_id: str,
        session_id: str,
        protocol: Protocol[Any, Any],
        agents: Mapping[str, BaseChatAgent],
        writer: TranscriptWriter,
        prompts: PromptLibrary,
    ) -> None:
        self.run_id = run_id
        self.session_id = session_id
        self.protocol = protocol
        self.agents = dict(agents)
        self.writer = writer
        self.prompts = prompts
        self.state: str | None = None
        self.stage: str | None = None
        self.turn: int | None = None
        self._seq = 0
        self._token = CancellationToken()

    # ------------------------------------------------------------------ recording
    def _base(self) -> dict[str, Any]:
        self._seq += 1
        return {
            "run_id": self.run_id,
            "session_id": self.session_id,
            "seq": self._seq,
            "stage": self.stage,
            "turn": self.turn,
        }

    def start(self, item_id: str, item: Mapping[str, Any]) -> None:
        self.writer.write(SessionStart(**self._base(), item_id=item_id, item=dict(item)))

    def enter(
        self, state: str, *, stage: str | None = None, turn: int | None = None, reason: str | None = None
    ) -> None:
        """Record a transition of the protocol's state machine (``state`` must be one of its named states)."""
        if state not in self.protocol.states:
            raise ValueError(f"{self.protocol.name}: unknown state {state!r} (states: {self.protocol.states})")
        previous, self.state = self.state, state
        if stage is not None:
            self.stage = stage
        self.turn = turn
        self.writer.write(Transition(**self._base(), from_state=previous, to_state=state, reason=reason))

    def note(self, name: str, **data: Any) -> None:
        """Record a protocol-specific structured step (e.g. one No-Data round)."""
        self.writer.write(Step(**self._base(), name=name, data=data))

    def error(self, exc: BaseException, tb: str | None = None) -> None:
        self.writer.write(
            ErrorEvent(
                **self._base(),
                error_type=type(exc).__name__,
                message=mask_secrets(str(exc)),
                traceback=mask_secrets(tb) if tb else None,
            )
        )

    def verdict(
        self,
        decision: str,
        *,
        accepted: bool | None,
        evidence: list[str] | None = None,
        statistics: dict[str, Any] | None = None,
    ) -> Verdict:
        v = Verdict(
            **self._base(),
            decision=decision,
            accepted=accepted,
            evidence=evidence or [],
            statistics=statistics or {},
        )
        self.writer.write(v)
        return v

    # ------------------------------------------------------------------ speaking
    def agent(self, role: str) -> BaseChatAgent:
        try:
            return self.agents[role]
        except KeyError:
            raise KeyError(f"{self.protocol.name}: no agent bound to role {role!r}") from None

    async def ask(
        self,
        role: str,
        prompt: str,
        *,
        parse: Callable[[str], T] | None = None,
        expected: str = "",
        on_failure: str = "",
        sender: str = "moderator",
        quote: str | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        **variables: Any,
    ) -> Reply[T]:
        """Render ``prompts/<protocol>/<prompt>.yaml`` with ``variables`` and send it to ``role``.

        When ``parse`` raises ``ParseError`` the failure is recorded with ``on_failure`` (the defined outcome the
        protocol takes) and the reply comes back with ``value=None``: the protocol decides, the session never
        guesses and never crashes on model text. ``quote`` is what ``sender`` itself said inside the prompt
        (e.g. the examiner's question), shown by the chat view instead of the whole prompt.
        """
        name = f"{self.protocol.prompt_folder}/{prompt}"
        rendered = self.prompts.get(name).render(**variables)
        meta: dict[str, str] = {}
        if temperature is not None:
            meta[TEMPERATURE_KEY] = str(temperature)
        if seed is not None:  # a sampled call that must still be reproducible
            meta[SEED_KEY] = str(seed)
        messages = []
        for m in rendered:
            if m.role == "assistant":
                raise ValueError(f"{name}: assistant turns belong in a role's memory, not in ask()")
            md = dict(meta, **({ROLE_KEY: "system"} if m.role == "system" else {}))
            messages.append(TextMessage(content=m.content, source=sender, metadata=md))
            self.writer.write(
                Message(
                    **self._base(),
                    sender=sender if m.role == "user" else "system",
                    receiver=role,
                    content=m.content,
                    prompt=name,
                    quote=quote if m.role == "user" else None,
                )
            )
        return await self._deliver(role, messages, parse=parse, expected=expected, on_failure=on_failure, prompt=name)

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
        """Send literal content (e.g. a JSON request to a deterministic role) without a prompt file."""
        self.writer.write(Message(**self._base(), sender=sender, receiver=role, content=content))
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
    ) -> Reply[T]:
        agent = self.agent(role)
        response = await agent.on_messages(messages, self._token)
        text = response.chat_message.to_model_text()
        call = getattr(agent, "last_call", None)
        if call is not None:
            self.writer.write(
                ModelCall(
                    **self._base(),
                    role=role,
                    model=call.model,
                    request_digest=call.request_digest,
                    response=call.response,
                    usage=TokenUsage(prompt_tokens=call.prompt_tokens, completion_tokens=call.completion_tokens),
                    latency_s=call.latency_s,
                    retries=call.retries,
                    finish_reason=call.finish_reason,
                    cached=getattr(call, "cached", False),
                )
            )
        self.writer.write(Message(**self._base(), sender=role, receiver="moderator", content=text, prompt=prompt))
        if parse is None:
            return Reply(text=text)
        try:
            return Reply(text=text, value=parse(text))
        except ParseError as exc:
            expected = expected or getattr(parse, "__doc__", "") or ""
            self.parse_failure(role, prompt, expected=expected, raw=text, error=str(exc), outcome=on_failure)
            return Reply(text=text, error=str(exc))

    def parse_failure(
        self, role: str, prompt: str | None, *, expected: str, raw: str, error: str, outcome: str = ""
    ) -> None:
        """Record a reply that could not be parsed and the defined outcome the protocol took instead
        (for protocols that parse replies themselves rather than through ``ask(parse=...)``)."""
        self.writer.write(
            ParseFailure(
                **self._base(),
                role=role,
                prompt=prompt,
                expected=expected,
                raw=raw,
                error=error,
                outcome=outcome or "reply left unparsed",
            )
        )

    def remember(self, role: str, speaker: str, text: str, *, shown: bool = True) -> None:
        """Put a turn into a role's memory without a model call (e.g. the examinee's own claim)."""
        agent = self.agent(role)
        seed = getattr(agent, "remember", None)
        if seed is None:
            raise TypeError(f"agent for role {role!r} keeps no conversation memory")
        seed(speaker, text)
        if shown:
            sender = role if speaker == "assistant" else ("system" if speaker == "system" else "moderator")
            self.writer.write(Message(**self._base(), sender=sender, receiver=role, content=text))

    def seed(self, role: str, prompt: str, **variables: Any) -> None:
        """Put a rendered prompt into a role's memory without a model call (not shown in the chat)."""
        for m in self.prompts.get(f"{self.protocol.prompt_folder}/{prompt}").render(**variables):
            self.remember(role, m.role, m.content, shown=False)

    async def reset(self, role: str) -> None:
        """Start the role's conversation afresh (e.g. a new examination in LMvLM (Majority))."""
        await self.agent(role).on_reset(self._token)


class Protocol(ABC, Generic[ItemT, ParamsT]):
    """A paper's algorithm as an explicit state machine.

    Subclasses declare ``name``, ``roles`` (the roles a model or rule must play), ``states``, ``Item`` and
    ``Params`` (pydantic), ``prompt_folder``, and implement ``run``. ``independent_roles`` lists role pairs that
    should be different models (voirdire warns when they share a spec).
    """

    name: ClassVar[str]
    roles: ClassVar[tuple[str, ...]]
    states: ClassVar[tuple[str, ...]]
    Item: ClassVar[type[BaseModel]]
    Params: ClassVar[type[BaseModel]]
    prompt_folder: ClassVar[str]
    independent_roles: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init__(self, params: ParamsT | None = None) -> None:
        self.params: ParamsT = params if params is not None else self.Params()  # type: ignore[assignment]

    def required_roles(self) -> tuple[str, ...]:
        """Roles this configuration needs (a baseline may need fewer than the full protocol)."""
        return self.roles

    def deterministic_agents(self) -> dict[str, BaseChatAgent]:
        """Roles played by rules rather than models, built fresh for each session."""
        return {}

    @classmethod
    def item_from_record(cls, record: dict[str, Any]) -> ItemT:
        """Build an item from a dataset record (protocols override this to accept their datasets' field names)."""
        return cls.Item.model_validate(record)  # type: ignore[return-value]

    @abstractmethod
    def item_id(self, item: ItemT) -> str: ...

    @abstractmethod
    async def run(self, item: ItemT, session: Session) -> Verdict: ...
