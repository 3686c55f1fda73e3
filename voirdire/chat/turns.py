"""Transcript events as a chat: the one model that both readers render (``voirdire show`` in the terminal and the
web viewer).

A session's events become *turns*: ``Bubble`` (one message: a role's reply, its words carried to another role, a
prompt, or a line put in a role's memory), ``Divider`` (a transition of the declared state machine, with its stage
and round), ``Failure`` (a reply the protocol could not parse and the outcome it took), ``Note`` (a structured
step), ``Problem`` (an error) and ``Outcome`` (the verdict with its evidence). A reply carries the model call that
produced it (model, tokens, latency, retries, cache) and the prompts it answers, so a reader can show the rendered
prompt behind any message.

Everything protocol-specific comes from the run header (display hints, declared transitions), never from the
protocol's code. A stage named ``<lane>.<stage>`` (LMvLM (Majority) names its examinations ``e1.setup``,
``e2.setup``, ...) puts its turns in a *lane*; the web view shows lanes side by side.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from voirdire.reports import agrees_with_gold
from voirdire.transcript import (
    Card,
    Column,
    DisplayHints,
    ErrorEvent,
    Guarantee,
    Message,
    ModelCall,
    ParseFailure,
    RunHeader,
    SessionRecord,
    Step,
    StepView,
    Transition,
    Verdict,
    Views,
    card_of,
    complete,
    generic_card,
    lookup,
    reading_order,
)

HUMAN_SPEC = "human"  # the model spec (and the transcript's model label) of a role a person plays
MODERATOR = ("moderator", "system")  # senders that are the protocol itself, not a role
_LANE = re.compile(r"[A-Za-z0-9_-]+")  # a lane's name: one word (e1, e2, ...)

BubbleKind = Literal["reply", "relay", "prompt", "memory"]


@dataclass(frozen=True)
class Call:
    """The model call behind a reply."""

    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    retries: int
    cached: bool
    finish_reason: str | None
    coalesced: bool = False  # answered by an identical request of the same session
    samples: int = 1  # replies the call drew
    enforcement: str | None = None  # how a reply schema was held (tool_use, response_format, grammar, ...)

    @property
    def human(self) -> bool:
        return self.model == HUMAN_SPEC

    @property
    def cut_off(self) -> bool:
        """The reply ended at the token limit (``finish_reason: length``): it may be incomplete."""
        return self.finish_reason == "length"


# what a structured reply had to be, by how the backend held it to its schema
_FORMS = {"tool_use": "a tool call", "grammar": "JSON (grammar)", "text-fallback": "JSON (asked in the prompt)"}


def wanted_form(enforcement: str | None, expected: str) -> str:
    """``a tool call / JSON {"answer": …}``: the form a structured reply had to take, for a refusal's message."""
    if enforcement is None:
        return expected
    form = _FORMS.get(enforcement, "JSON")
    choices = expected.startswith("one of ") or " or " in expected
    shape = ' {"answer": …}' if choices and form.startswith("JSON") else ""
    return f"{form}{shape} ({expected})" if expected else form + shape


def got_form(raw: str) -> str:
    """What a reply that could not be read was: plain text, or JSON (or a fenced block) that did not fit."""
    body = raw.strip()
    if not body:
        return "an empty reply"
    return "JSON that does not fit" if body.startswith(("{", "[", "```", '"')) else "plain text"


@dataclass
class Bubble:
    """One message. ``kind``: ``reply`` (a role answers the protocol), ``relay`` (a role's words carried to another
    role), ``prompt`` (the protocol's own text to a role), ``memory`` (a line put in a role's memory without a model
    call). ``text`` is what the chat shows (a relay's own words), ``content`` the message as sent."""

    seq: int
    time: datetime
    sender: str
    receiver: str
    kind: BubbleKind
    text: str
    content: str
    prompt: str | None
    stage: str | None
    lane: str | None
    call: Call | None = None
    asked: list[Bubble] = field(default_factory=list)
    """The messages this reply answers (prompts and relays to the role since its last reply)."""
    folded: bool = False
    """A structured reply whose step card shows it (the display hints fold the role's replies)."""
    samples: list[Sample] = field(default_factory=list)
    """Every reply of a call that drew k > 1 (a protocol that samples k replies), in order, each with the parse
    failure of that sample; empty for a call of one reply (its failure, if any, is a turn of its own)."""

    def sample_groups(self) -> list[SampleGroup]:
        """The samples by distinct text, in order of first appearance, with the sample numbers that drew each."""
        groups: dict[str, SampleGroup] = {}
        for s in self.samples:
            g = groups.setdefault(s.text, SampleGroup(s.text, [], s.failure))
            g.numbers.append(s.number)
            g.failure = g.failure or s.failure
        return list(groups.values())

    def sample_summary(self) -> str:
        """``11 samples, 2 distinct, 2 unreadable``"""
        k, distinct = len(self.samples), len({s.text for s in self.samples})
        bad = sum(s.failure is not None for s in self.samples)
        expected = self.call.samples if self.call is not None else k
        parts = [f"{k} sample{'s' if k != 1 else ''}", f"{distinct} distinct"]
        if bad:
            parts.append(f"{bad} unreadable")
        if expected > k:
            parts.append(f"{expected - k} not recorded")
        return ", ".join(parts)

    @property
    def human(self) -> bool:
        return self.call is not None and self.call.human

    @property
    def rendered_prompt(self) -> str:
        """The prompt behind the message: what the role was sent (for a reply), or the message as sent."""
        if self.kind == "reply":
            return "\n\n".join(f"[{m.sender} → {m.receiver}] {m.content}" for m in self.asked)
        return self.content


@dataclass(frozen=True)
class Divider:
    """A transition: the state entered, its stage and round; ``quiet`` states are drawn without a divider and
    ``declared`` is False for an edge the header's state machine does not list."""

    seq: int
    state: str
    from_state: str | None
    stage: str | None
    lane: str | None
    round: int | None
    reason: str | None
    quiet: bool
    declared: bool

    @property
    def label(self) -> str:
        return self.state + (f" · round {self.round}" if self.round else "")

    @property
    def stage_name(self) -> str | None:
        """The stage without its lane (``e2.followup`` -> ``followup``); None when it only repeats the state or
        the round (a stage named ``round 2`` in round 2)."""
        name = self.stage.split(".", 1)[1] if self.stage and self.lane else self.stage
        return None if name in (self.state, f"round {self.round}") else name


@dataclass(frozen=True)
class Failure:
    seq: int
    role: str
    prompt: str | None
    expected: str
    raw: str
    error: str
    outcome: str
    lane: str | None
    enforcement: str | None = None
    """How the reply's call held it to a schema (structured mode), None for a reply read as the paper's text."""

    @property
    def wanted(self) -> str:
        """What the reply had to be: the expected form, and in structured mode how it was asked for."""
        return wanted_form(self.enforcement, self.expected)

    @property
    def got(self) -> str:
        return got_form(self.raw)

    @property
    def summary(self) -> str:
        """Why the reply could not be read: the parser's error, and for a structured reply what form was asked for
        and what came (``expected a tool call ('correct' or 'incorrect'), got plain text``)."""
        if self.enforcement is None:
            return self.error
        said = f" ({self.error})" if self.expected not in self.error else ""
        return f"expected {self.wanted}, got {self.got}{said}"


@dataclass(frozen=True)
class Sample:
    """One reply of a call that drew k; ``number`` counts from 1; ``failure`` when it could not be read."""

    number: int
    text: str
    failure: Failure | None = None


@dataclass
class SampleGroup:
    """Samples of one call with the same text."""

    text: str
    numbers: list[int]
    failure: Failure | None

    @property
    def label(self) -> str:
        """``samples 1–3, 5, 9–11``"""
        runs: list[list[int]] = []
        for n in self.numbers:
            if runs and n == runs[-1][-1] + 1:
                runs[-1].append(n)
            else:
                runs.append([n])
        spans = [str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs]
        return f"sample{'s' if len(self.numbers) > 1 else ''} " + ", ".join(spans)


@dataclass(frozen=True)
class Note:
    """A structured step as its card (the protocol's view of it, or its values as text); ``data`` as recorded."""

    seq: int
    name: str
    data: dict[str, Any]
    lane: str | None
    card: Card


@dataclass(frozen=True)
class Problem:
    seq: int
    error_type: str
    message: str
    traceback: str | None
    lane: str | None
    role: str | None = None  # the role whose model call failed, when one did
    retries: int = 0  # how often that call was retried


@dataclass(frozen=True)
class Outcome:
    """The verdict; ``subject`` is the text examined (labelled) when it is none of the item's values (a generated
    claim), ``card`` the statistics the display hints show beside the decision."""

    decision: str
    accepted: bool | None
    evidence: list[str]
    statistics: dict[str, Any]
    subject: tuple[str, str] | None = None
    card: Card | None = None
    correct: bool | None = None  # agrees with the gold label (the reports' one rule); None: no gold known
    guarantee: Guarantee | None = None  # what the protocol's paper guarantees of this verdict, where it has one

    @property
    def trust(self) -> str:
        return {True: "accepted", False: "rejected", None: ""}[self.accepted]


Turn = Bubble | Divider | Failure | Note | Problem | Outcome


@dataclass
class RoleTotals:
    """What one role cost in a session."""

    role: str
    models: list[str] = field(default_factory=list)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    cached: int = 0
    human: bool = False
    failed: int = 0  # calls given up on (an error, not a model call, records them)

    def add(self, call: Call) -> None:
        if call.model not in self.models:
            self.models.append(call.model)
        self.calls += 1
        self.prompt_tokens += call.prompt_tokens
        self.completion_tokens += call.completion_tokens
        self.latency_s += call.latency_s
        self.retries += call.retries
        self.cached += call.cached
        self.human = self.human or call.human


@dataclass
class Chat:
    """One session as a chat."""

    session_id: str
    run_id: str
    protocol: str
    item_id: str | None
    fields: list[tuple[str, str]]
    gold: list[str]
    turns: list[Turn]
    totals: dict[str, RoleTotals]
    models: dict[str, str]
    """role -> the model spec the run header binds it to"""
    colors: dict[str, str]
    """role -> ANSI SGR code from the display hints"""
    billed: dict[str, tuple[int, ...]] = field(default_factory=dict)
    """model label -> billed prompt tokens, billed completion tokens, requests, provider cache reads and writes
    (``voirdire.reports.prices.run_cost``)"""

    @property
    def verdict(self) -> Outcome | None:
        return next((t for t in reversed(self.turns) if isinstance(t, Outcome)), None)

    @property
    def status(self) -> str:
        if self.verdict is not None:
            return "finished"
        return "error" if any(isinstance(t, Problem) for t in self.turns) else "running"

    @property
    def calls(self) -> int:
        return sum(t.calls for t in self.totals.values())

    @property
    def humans(self) -> list[str]:
        """Roles a person played in this session."""
        return [r for r, t in self.totals.items() if t.human]

    def sections(self) -> list[tuple[str | None, list[Turn]]]:
        """Consecutive turns grouped by lane (None: outside any lane)."""
        out: list[tuple[str | None, list[Turn]]] = []
        for turn in self.turns:
            lane = None if isinstance(turn, Outcome) else turn.lane
            if out and out[-1][0] == lane:
                out[-1][1].append(turn)
            else:
                out.append((lane, [turn]))
        return out


def lane_of(stage: str | None) -> str | None:
    """``e2.followup`` -> ``e2``; a stage without a dot is in no lane."""
    head, dot, _ = (stage or "").partition(".")
    return head if dot and _LANE.fullmatch(head) else None  # "coin toss (Fig. 4)" names no lane


def item_fields(item: dict[str, Any], hints: DisplayHints) -> list[tuple[str, str]]:
    """The hinted item fields that have a value, or (no hints: a transcript written before they existed) every short
    scalar field."""
    if hints.item_fields:
        keys: tuple[str, ...] = hints.item_fields
    else:
        keys = tuple(
            k for k, v in item.items() if k != "id" and isinstance(v, str | int | float) and len(str(v)) <= 300
        )
    return [(k, str(item[k])) for k in keys if item.get(k) not in (None, "", [])]


def gold_values(item: dict[str, Any], hints: DisplayHints, limit: int = 8) -> list[str]:
    out: list[str] = []
    for key in hints.gold_fields:
        value = item.get(key)
        if value not in (None, "", []):
            out += [str(v) for v in (value[:limit] if isinstance(value, list) else [value])]
    return out


def chat_of(session: SessionRecord, header: RunHeader | None = None, *, merge: bool = True) -> Chat:
    """Turn a session's events into a chat, using only the run header for display (hints, declared edges).
    ``merge=False`` keeps a step that completes an earlier step's card as a card of its own (a live printer, which
    has printed the earlier card already)."""
    hints = header.display if header else DisplayHints()
    views = hints.views
    edges = header.transitions if header else {}
    turns: list[Turn] = []
    totals: dict[str, RoleTotals] = {}
    waiting: dict[str, list[Bubble]] = {}  # role -> messages it has been sent since its last reply
    calls: dict[str, Call] = {}  # role -> the call whose reply has not been recorded yet
    billed: dict[str, tuple[int, ...]] = {}
    sampling: dict[tuple[str, str | None], Bubble] = {}  # (role, lane) -> the bubble of a call drawing k samples
    last: Bubble | None = None  # the reply just read: a parse failure right after it is that reply's
    for e in reading_order(session.events):
        lane = lane_of(e.stage)
        if not isinstance(e, Message | ParseFailure):
            last = None
        if isinstance(e, Transition):
            turns.append(_divider(e, lane, hints, edges))
        elif isinstance(e, ModelCall):
            _record_call(e, calls, totals, billed)
        elif isinstance(e, Message):
            if e.sample and (e.sender, lane) in sampling and e.receiver == "moderator":
                # another reply of a call that drew k: a sample of its bubble, not a bubble of its own
                last = sampling[(e.sender, lane)]
                last.samples.append(Sample(e.sample + 1, e.content))
                continue
            bubble = _bubble(e, lane, waiting, calls)
            bubble.folded = bubble.kind == "reply" and bubble.sender in views.folded
            before = turns[-1] if turns else None
            if e.sample is None and _sample_of(bubble, before):  # written before replies carried their sample
                if not before.samples:  # type: ignore[union-attr]
                    before.samples.append(Sample(1, before.text))  # type: ignore[union-attr]
                before.samples.append(Sample(len(before.samples) + 1, bubble.text))  # type: ignore[union-attr]
                last = before  # type: ignore[assignment]
                continue
            if e.sample == 0 and bubble.kind == "reply":
                bubble.samples.append(Sample(1, bubble.text))
                sampling[(e.sender, lane)] = bubble
            elif bubble.kind == "reply":
                sampling.pop((e.sender, lane), None)
            last = bubble if bubble.kind == "reply" else None
            turns.append(bubble)
            continue
        elif isinstance(e, ParseFailure):
            enforcement = last.call.enforcement if last is not None and last.call is not None else None
            failure = Failure(e.seq, e.role, e.prompt, e.expected, e.raw, e.error, e.outcome, lane, enforcement)
            if last is not None and last.sender == e.role and last.samples:
                i = len(last.samples) - 1  # the sample just read
                last.samples[i] = Sample(last.samples[i].number, last.samples[i].text, failure)
            else:
                turns.append(failure)
            last = None
        elif isinstance(e, Step):
            note = _note(e, lane, views.steps.get(e.name), turns if merge else [])
            if note is not None:
                turns.append(note)
        elif isinstance(e, ErrorEvent):
            turns.append(Problem(e.seq, e.error_type, e.message, e.traceback, lane, e.role, e.retries))
            if e.role is not None:
                t = totals.setdefault(e.role, RoleTotals(e.role))
                t.failed += 1
                t.retries += e.retries
        elif isinstance(e, Verdict):
            turns.append(_outcome(e, session.item, views))
    return Chat(
        session_id=session.session_id,
        run_id=session.run_id,
        protocol=header.protocol if header else "",
        item_id=session.item_id,
        fields=item_fields(session.item, hints),
        gold=gold_values(session.item, hints),
        turns=turns,
        totals=totals,
        models={r: b.spec for r, b in header.roles.items()} if header else {},
        colors=dict(hints.colors),
        billed=billed,
    )


def _divider(e: Transition, lane: str | None, hints: DisplayHints, edges: Mapping[str, Any]) -> Divider:
    """A state change as a divider; ``declared``: an edge the run header's machine has (or no machine recorded)."""
    return Divider(
        seq=e.seq,
        state=e.to_state,
        from_state=e.from_state,
        stage=e.stage,
        lane=lane,
        round=e.turn,
        reason=e.reason,
        quiet=e.to_state in hints.quiet_states,
        declared=not edges or e.to_state in edges.get(e.from_state or "[*]", []),
    )


def _record_call(
    e: ModelCall, calls: dict[str, Call], totals: dict[str, RoleTotals], billed: dict[str, tuple[int, ...]]
) -> None:
    """A model call: the call its role's next reply shows, the role's totals, and what its model billed."""
    call = Call(
        model=e.model,
        prompt_tokens=e.usage.prompt_tokens,
        completion_tokens=e.usage.completion_tokens,
        latency_s=e.latency_s,
        retries=e.retries,
        cached=e.cached,
        finish_reason=e.finish_reason,
        coalesced=e.coalesced,
        samples=e.samples,
        enforcement=e.enforcement,
    )
    calls[e.role] = call
    totals.setdefault(e.role, RoleTotals(e.role)).add(call)
    p, c, r, read, write = billed.get(e.model, (0, 0, 0, 0, 0))
    if not e.cached:
        p, c = p + e.usage.prompt_tokens, c + e.usage.completion_tokens
        read, write = read + e.usage.cache_read_tokens, write + e.usage.cache_write_tokens
    billed[e.model] = (p, c, r + e.requests, read, write)


def _bubble(e: Message, lane: str | None, waiting: dict[str, list[Bubble]], calls: dict[str, Call]) -> Bubble:
    if e.sender == e.receiver:
        kind: BubbleKind = "memory"
    elif e.receiver == "moderator":
        kind = "reply"
    elif e.sender in MODERATOR:
        kind = "prompt"
    else:
        kind = "relay"
    bubble = Bubble(
        seq=e.seq,
        time=e.time,
        sender=e.sender,
        receiver=e.receiver,
        kind=kind,
        text=e.quote if kind == "relay" and e.quote else e.content,
        content=e.content,
        prompt=e.prompt,
        stage=e.stage,
        lane=lane,
    )
    if kind == "reply":
        bubble.asked = waiting.pop(e.sender, [])
        bubble.call = calls.pop(e.sender, None)
    elif kind in ("prompt", "relay"):
        waiting.setdefault(e.receiver, []).append(bubble)
    return bubble


def _note(e: Step, lane: str | None, view: StepView | None, turns: list[Turn]) -> Note | None:
    """The step as a card; None when it completed an earlier step's card (the same round's), which it joins."""
    data = dict(e.data)
    if view is not None and view.into:
        key = lookup(data, view.match) if view.match else None
        for t in reversed(turns):
            if isinstance(t, Note) and t.name == view.into and (not view.match or lookup(t.data, view.match) == key):
                complete(t.card, e.name, data, view)
                return None
    card = card_of(e.name, data, view) if view is not None else generic_card(e.name, data)
    return Note(e.seq, e.name, data, lane, card)


def _outcome(e: Verdict, item: dict[str, Any], views: Views) -> Outcome:
    shown: tuple[str, str] | None = None
    subject: Column | None = views.verdict.subject
    if subject is not None:
        value = lookup(e.statistics, subject.key)
        if isinstance(value, str) and value and value not in {str(v) for v in item.values()}:
            shown = (subject.heading, value)
    shows = views.verdict.shows
    card = card_of("verdict", dict(e.statistics), shows) if shows is not None else None
    correct = agrees_with_gold(e.statistics, views.verdict.gold)
    return Outcome(e.decision, e.accepted, list(e.evidence), dict(e.statistics), shown, card, correct, e.guarantee)


def _sample_of(bubble: Bubble, last: Turn | None) -> bool:
    """A reply with no call of its own right after a reply of the same role in the same lane that has one."""
    return (
        isinstance(last, Bubble)
        and bubble.kind == "reply"
        and last.kind == "reply"
        and bubble.call is None
        and last.call is not None
        and bubble.sender == last.sender
        and bubble.lane == last.lane
        and not bubble.asked
    )
