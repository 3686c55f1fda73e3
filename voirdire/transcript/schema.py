"""The one transcript schema shared by every protocol: the run header, the events, and a session as read back.

A transcript is a JSONL file: each invocation of a run appends a ``header`` line (the run spec), then events
keyed by ``session_id``, ``stage`` and ``turn``. Every line is validated against these models when it is read
(``voirdire.transcript.io``), so what a reader gets has the types declared here. A session may be attempted by
several runs (a resume after a crash); ``counting_attempt`` says which attempt counts, for every reader.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, TypeAdapter, model_serializer

from voirdire.base import TOKEN_COUNT_MAX, HtmlDisplay, VoirdireError
from voirdire.transcript.step_views import Views

A = TypeVar("A")

# 2: the header describes the protocol (transitions, display hints), so readers need not import it.
# 3: a repeated session's ``session_start`` carries its repeat index (``repeat``); version 2 kept it only in a
#    ``repeat`` step, which readers still take it from (``repeat_of``).
SCHEMA_VERSION = 3


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_run_id() -> str:
    return utcnow().strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


class TranscriptError(VoirdireError, ValueError):
    """A transcript file that cannot be read; the message names the file and line."""


class RoleBinding(BaseModel):
    """Which model serves a role, with secrets stripped (``voirdire.base.secrets.redact_url``)."""

    model_config = ConfigDict(extra="forbid")
    spec: str
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    structured: bool = Field(False, description="closed answers asked through reply schemas, not the paper's text")


class DisplayHints(BaseModel):
    """How a reader shows this protocol's sessions without importing it: role colours (ANSI SGR codes, mapped to
    web colours by the viewer), the item fields shown above the chat, the gold fields, states whose entry
    needs no divider, and the views of its steps and verdict (``voirdire.transcript.step_views``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    colors: dict[str, str] = Field(default_factory=dict)
    item_fields: tuple[str, ...] = ()
    gold_fields: tuple[str, ...] = ()
    quiet_states: tuple[str, ...] = ()
    views: Views = Field(default_factory=Views, description="how steps and the verdict read (transcript.step_views)")


class RunHeader(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["header"] = "header"
    schema_version: int = SCHEMA_VERSION
    run_id: str
    protocol: str
    created: datetime = Field(default_factory=utcnow)
    parameters: dict[str, Any] = Field(default_factory=dict)
    roles: dict[str, RoleBinding] = Field(default_factory=dict)
    seed: int | None = None
    prompts: dict[str, str] = Field(default_factory=dict, description="prompt name -> sha256 of its file")
    packages: dict[str, str] = Field(default_factory=dict)
    dataset: str | None = None
    command: list[str] | None = None
    transitions: dict[str, list[str]] = Field(
        default_factory=dict, description="the declared state machine: state -> next states, '[*]' -> initial"
    )
    display: DisplayHints = Field(default_factory=DisplayHints)
    paper: str | None = Field(None, description="the paper the protocol follows")


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")
    run_id: str
    session_id: str
    seq: int
    time: datetime = Field(default_factory=utcnow)
    stage: str | None = None
    turn: int | None = None
    branch: str | None = Field(
        None, description="the concurrent branch of the session that wrote it (LMvLM (Majority)'s examinations)"
    )


class SessionStart(_Event):
    kind: Literal["session_start"] = "session_start"
    item_id: str
    item: dict[str, Any]
    repeat: int | None = Field(None, ge=1, description="which repeat of the item this session is (--repeats, 1-based)")


class Message(_Event):
    kind: Literal["message"] = "message"
    sender: str
    receiver: str
    content: str
    prompt: str | None = Field(None, description="prompt file the content was rendered from, if any")
    quote: str | None = Field(None, description="the sender's own words inside a rendered prompt (chat view)")
    sample: int | None = Field(None, description="which of several samples drawn for one request (0-based)")


CALL_COUNT_MAX = 10**6
"""The most requests, retries or samples one model call may count: far above what any call takes, and a bound on
what a damaged or forged transcript can make a report add up (one printed "-28,000,000 requests")."""


class TokenUsage(BaseModel):
    """A call's tokens. ``prompt_tokens`` counts every prompt token; of them, ``cache_read_tokens`` the provider
    read from its prompt cache and ``cache_write_tokens`` it wrote there, each billed at its own rate; the rest is
    uncached input. Transcripts written before the provider's cache was recorded read as 0 of each."""

    model_config = ConfigDict(extra="forbid")
    prompt_tokens: int = Field(0, ge=0, le=TOKEN_COUNT_MAX)
    completion_tokens: int = Field(0, ge=0, le=TOKEN_COUNT_MAX)
    cache_read_tokens: int = Field(0, ge=0, le=TOKEN_COUNT_MAX, description="prompt tokens read from the cache")
    cache_write_tokens: int = Field(0, ge=0, le=TOKEN_COUNT_MAX, description="prompt tokens written to the cache")

    @property
    def uncached_input_tokens(self) -> int:
        return max(0, self.prompt_tokens - self.cache_read_tokens - self.cache_write_tokens)

    @model_serializer(mode="wrap")
    def _cache_only_when_used(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A call the provider did not cache is written as before: transcripts stay as small, and as readable.
        data: dict[str, Any] = handler(self)
        if not data.get("cache_read_tokens"):
            data.pop("cache_read_tokens", None)
        if not data.get("cache_write_tokens"):
            data.pop("cache_write_tokens", None)
        return data


class ModelCall(_Event):
    kind: Literal["model_call"] = "model_call"
    role: str
    model: str
    request_digest: str
    response: str
    usage: TokenUsage = Field(default_factory=TokenUsage)
    latency_s: float
    retries: int = Field(0, ge=0, le=CALL_COUNT_MAX)
    finish_reason: str | None = None
    cached: bool = Field(False, description="answered from the response cache, not the model")
    coalesced: bool = Field(
        False,
        description="answered by an identical deterministic request of the same session (in flight or done): "
        "no request of its own, no usage",
    )
    samples: int = Field(1, ge=1, le=CALL_COUNT_MAX, description="replies drawn by this call")
    requests: int = Field(1, ge=0, le=CALL_COUNT_MAX, description="requests (or generations) it took; 0 when cached")
    enforcement: str | None = Field(
        None, description="how a reply schema was held: grammar, response_format, validated or text-fallback"
    )


class Transition(_Event):
    kind: Literal["transition"] = "transition"
    from_state: str | None
    to_state: str
    reason: str | None = None


class ParseFailure(_Event):
    kind: Literal["parse_failure"] = "parse_failure"
    role: str
    prompt: str | None
    expected: str
    raw: str
    error: str
    outcome: str = Field(description="the defined outcome the protocol took instead")


class Step(_Event):
    """A protocol-specific structured record (e.g. one No-Data round: x', y', challenge, outcome, flip)."""

    kind: Literal["step"] = "step"
    name: str
    data: dict[str, Any] = Field(default_factory=dict)


class ErrorEvent(_Event):
    kind: Literal["error"] = "error"
    error_type: str
    message: str
    traceback: str | None = None
    role: str | None = Field(None, description="the role whose model call failed, when one did")
    retries: int = Field(
        0, ge=0, le=CALL_COUNT_MAX, description="how often that call was retried before it was given up"
    )


GuaranteeValue = bool | int | float | str | None | list[bool | int | float | str | None]


class Guarantee(BaseModel):
    """What the protocol's paper lets one say of this one verdict, where it says anything: LMvLM (Majority)'s vote
    margin, No-Data's Lemma 1 bound for the run's r and φ, the oracle–checker's acceptance bound, DCR's share of
    sentences scored. ``statement`` is the sentence a reader sees; ``values`` the numbers it was computed from
    and gives (flat, so that a report or a table reads them by name); ``source`` the section or equation."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: str = Field(min_length=1, description="what sort of guarantee: vote_margin, undetected_lie, ...")
    statement: str = Field(min_length=1, description="the guarantee in one sentence, as chat and viewer show it")
    values: dict[str, GuaranteeValue] = Field(default_factory=dict)
    source: str | None = Field(None, description="the paper's section, theorem or equation it rests on")


class Verdict(HtmlDisplay, _Event):
    kind: Literal["verdict"] = "verdict"
    decision: str
    accepted: bool | None = Field(None, description="True if the examined output is trusted")
    evidence: list[str] = Field(default_factory=list)
    statistics: dict[str, Any] = Field(default_factory=dict)
    guarantee: Guarantee | None = Field(
        None, description="what the paper guarantees of this verdict; None where it has none (and in transcripts "
        "written before verdicts carried one)"
    )

    def __repr__(self) -> str:
        """One short line (a notebook shows the verdict as HTML; ``model_dump()`` gives every field)."""
        said = {True: "accepted", False: "rejected", None: "neither accepted nor rejected"}[self.accepted]
        n = len(self.evidence)
        return f"Verdict({self.decision!r}, {said}, session {self.session_id!r}, {n} evidence line{'s' * (n != 1)})"



Event = Annotated[
    SessionStart | Message | ModelCall | Transition | ParseFailure | Step | ErrorEvent | Verdict,
    Field(discriminator="kind"),
]
Line = Annotated[RunHeader | Event, Field(discriminator="kind")]
_LINE = TypeAdapter(Line)


class SessionRecord(HtmlDisplay, BaseModel):
    """All events of one session, from the run attempt that finished it (or the latest attempt)."""

    session_id: str
    run_id: str
    item_id: str | None = None
    item: dict[str, Any] = Field(default_factory=dict)
    events: list[Any] = Field(default_factory=list)
    repeat: int | None = Field(None, description="which repeat of its item the session is; None: not a repeat")

    @property
    def verdict(self) -> Verdict | None:
        return next((e for e in reversed(self.events) if isinstance(e, Verdict)), None)

    @property
    def errors(self) -> list[ErrorEvent]:
        return [e for e in self.events if isinstance(e, ErrorEvent)]

    def of_kind(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


class Transcript(HtmlDisplay, BaseModel):
    path: str
    headers: list[RunHeader]
    sessions: dict[str, SessionRecord]

    @property
    def header(self) -> RunHeader | None:
        return self.headers[-1] if self.headers else None

    def finished(self) -> set[str]:
        return {sid for sid, s in self.sessions.items() if s.verdict is not None}


REPEAT_STEP = "repeat"  # the step a repeated session records first: its seeds (and, in version 2, its index)


def repeat_of(start: SessionStart | None, events: Iterable[Any]) -> int | None:
    """A session's repeat index: its ``session_start``'s; a version-2 session's from its ``repeat`` step."""
    if start is not None and start.repeat is not None:
        return start.repeat
    for e in events:
        if isinstance(e, Step) and e.name == REPEAT_STEP:
            index = e.data.get("index")
            return index if type(index) is int and index >= 1 else None
    return None


def counting_attempt(attempts: Iterable[A], reached_verdict: Callable[[A], bool]) -> A | None:
    """The attempt of a session that counts, among its attempts in order of first appearance: the last one that
    reached a verdict, else the latest. Every reader (``load``, the reports' fold, the viewer's index) asks this,
    so that they all show and count the same attempt; None when there is none."""
    chosen: A | None = None
    chosen_done = False
    for attempt in attempts:
        done = reached_verdict(attempt)
        if done or not chosen_done:
            chosen, chosen_done = attempt, done
    return chosen


def reading_order(events: Iterable[Any]) -> list[Any]:
    """A session's events with each concurrent branch's events together, at the place the branch began.

    Branches (LMvLM (Majority)'s examinations; ``e1/q2`` is a branch of ``e1``) run at once and their events
    interleave in ``seq`` order; read as a chat, each branch is one conversation, so its events are moved next to
    each other (each kept in ``seq`` order), and a branch of a branch likewise within its parent.
    """
    events = list(events)
    first: dict[str, int] = {}
    for e in events:
        if e.branch is not None:
            parts = e.branch.split("/")
            for i in range(1, len(parts) + 1):
                first.setdefault("/".join(parts[:i]), e.seq)
    if not first:
        return events

    def key(e: Any) -> tuple[int, ...]:
        if e.branch is None:
            return (e.seq,)
        parts = e.branch.split("/")
        return (*(first["/".join(parts[:i])] for i in range(1, len(parts) + 1)), e.seq)

    return sorted(events, key=key)
