"""What a run will cost before it runs (``--estimate``): one expected figure (requests, tokens, cost) and its bound.
The bound is the protocol's declared call budget (``CallBudget``) summed over the items and the repeats; the
expectation is what an earlier transcript of the same protocol and models actually took, scaled to this run, where
there is one (the headline says so), else the budget's own figure.

Requests: every reply a budget counts is at most one request (an endpoint that draws k samples in one request sends
fewer), so the sum is an upper bound wherever each role's figure is one (``Budget.bounded``), and an estimate
otherwise, naming the figure it assumes (LMvLM's questions per turn without ``--max-questions``). Retries of a failed
request and the one re-ask of a closed answer cut off at max_tokens come on top of it; the text says so.
Cost: completions are bounded by the replies × each role's max_tokens; prompts are not bounded by anything a run
declares, so their tokens are estimated: per call as an earlier transcript of the same protocol and models shows,
else from the item and the protocol's longest prompt file at four characters a token (earlier turns of a
conversation not counted). Nothing here calls a model or opens a file for writing; it reads only the headers of
the transcripts beside the run's own and, when one matches, that transcript.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from voirdire.models import RoleSettings, spec_label
from voirdire.registry import registrations
from voirdire.reports import Cost, Prices, run_cost
from voirdire.session import Budget, CallBudget, Figure, Protocol
from voirdire.transcript import ModelCall, RunHeader, SessionStart, Verdict, iter_records

if TYPE_CHECKING:  # the runner (and autogen under it) is imported by an estimate, not by importing the certificate
    from voirdire.runner import RoleTable

CHARS_PER_TOKEN = 4  # a rough rule for English text in GPT-style tokenizers; the estimate says it uses it
MAX_CANDIDATES = 200  # transcripts beside the run's own whose headers are read, newest first


@dataclass
class Earlier:
    """What an earlier transcript of the same protocol and models took: per role its calls, requests and billed
    tokens, the sessions it finished, and each assumed figure's observed values."""

    path: Path
    sessions: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)
    prompt_tokens: dict[str, int] = field(default_factory=dict)
    completion_tokens: dict[str, int] = field(default_factory=dict)
    all_prompt_tokens: dict[str, int] = field(default_factory=dict)  # cached calls' too: what a call's prompt holds
    cache_read_tokens: dict[str, int] = field(default_factory=dict)  # of the billed prompt tokens: the provider's
    cache_write_tokens: dict[str, int] = field(default_factory=dict)  # prompt cache read and written
    observed: dict[str, list[float]] = field(default_factory=dict)
    items: set[str] = field(default_factory=set)  # the items its sessions examined (repeats: several a session)

    def prompt_per_call(self, role: str) -> float | None:
        calls = self.calls.get(role)
        return self.all_prompt_tokens.get(role, 0) / calls if calls else None

    def figures(self, budget: CallBudget) -> dict[str, Figure]:
        out = {}
        for name, values in self.observed.items():
            if values:
                source = f"mean of {len(values)} observed in {self.path.name}"
                out[name] = Figure(statistics.fmean(values), source)
        return {k: v for k, v in out.items() if k in budget.assumed}


@dataclass(frozen=True)
class RoleLine:
    role: str
    model: str
    calls: int
    requests: int
    bounded: bool
    why: str
    prompt_tokens: int
    completion_tokens: int
    prompt_source: str


@dataclass(frozen=True)
class Estimate:
    """The bound (or estimate) on a run's requests and cost, and an earlier run's figures scaled to this one."""

    protocol: str
    items: int
    repeats: int
    roles: list[RoleLine]
    cost: Cost
    completion_cost: Cost
    paper: str
    figures: dict[str, Figure]
    earlier: Earlier | None
    expected_requests: int | None
    expected_cost: Cost | None
    declared: bool = True
    stop_when_decided: float | None = None  # sequential repeats at this share (--stop-when-decided)
    expected_tokens: int | None = None  # the earlier transcript's billed tokens, scaled to this run

    @property
    def tokens(self) -> int:
        return sum(r.prompt_tokens + r.completion_tokens for r in self.roles)

    def expected(self) -> dict[str, Any]:
        """The one expected figure: from the earlier transcript where there is one, else the budget's."""
        if self.earlier is not None and self.expected_requests is not None:
            cost = self.expected_cost.usd if self.expected_cost is not None else None
            return {"source": "transcript", "transcript": str(self.earlier.path), "requests": self.expected_requests,
                    "tokens": self.expected_tokens or 0, "cost_usd": cost}  # fmt: skip
        return {"source": "budget", "transcript": None, "requests": self.requests, "tokens": self.tokens,
                "cost_usd": self.cost.usd}  # fmt: skip

    @property
    def bounded(self) -> bool:
        return self.declared and all(r.bounded for r in self.roles)

    @property
    def requests(self) -> int:
        return sum(r.requests for r in self.roles)

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.roles)

    def payload(self) -> dict[str, Any]:
        """The estimate as ``--json`` prints it."""
        return {
            "protocol": self.protocol,
            "items": self.items,
            "repeats": self.repeats,
            "kind": "bound" if self.bounded else "estimate",
            "requests": self.requests,
            "calls": self.calls,
            "roles": {
                r.role: {
                    "model": r.model,
                    "calls": r.calls,
                    "requests": r.requests,
                    "bounded": r.bounded,
                    "why": r.why,
                    "prompt_tokens": r.prompt_tokens,
                    "completion_tokens": r.completion_tokens,
                    "prompt_tokens_from": r.prompt_source,
                }
                for r in self.roles
            },
            "cost_usd": self.cost.usd,
            "completion_cost_usd": self.completion_cost.usd,
            "unpriced": self.cost.unpriced_names,
            "assumed": {k: {"value": f.value, "source": f.source} for k, f in self.figures.items()},
            "earlier_transcript": str(self.earlier.path) if self.earlier else None,
            "expected_requests": self.expected_requests,
            "expected_cost_usd": self.expected_cost.usd if self.expected_cost else None,
            **({"stop_when_decided": self.stop_when_decided} if self.stop_when_decided is not None else {}),
            "expected": self.expected(),
        }

    def text(self) -> str:
        return "\n".join(self.lines())

    def lines(self) -> list[str]:
        runs = f"{self.items:,} item{'s' if self.items != 1 else ''}" + (
            f" × {self.repeats} repeats" if self.repeats > 1 else ""
        )
        if not self.declared:
            return [f"{self.protocol}: declares no call budget, so its requests cannot be bounded ({runs})"]
        kind = "a bound" if self.bounded else "an ESTIMATE (not a bound)"
        head = "at most" if self.bounded else "about"
        fewer = f" (one per reply; {self.calls:,} where an endpoint draws a call's samples in one request)"
        requests = f"requests: {head} {self.requests:,}" + (fewer if self.requests != self.calls else "")
        lines = [f"{self.protocol} on {runs}: {self._expected_text()}",
                 f"the protocol's call budget: {kind}", requests]
        for r in self.roles:
            mark = "≤" if r.bounded else "≈"
            counted = f"{mark} {r.requests:,} requests in {r.calls:,} calls"
            lines.append(f"  {r.role} ({r.model}): {counted}; per item: {r.why}")
        lines += [f"assumed: {name} = {f.value:.3g} ({f.source})" for name, f in self.figures.items()]
        lines.append(
            "not counted: retries of a failed request (--max-retries), of one refused by a rate limit (429), and one "
            "re-ask of a closed answer cut off at max_tokens"
        )
        lines.append(self._cost_line())
        if self.paper:
            lines.append(f"budget: {self.paper}")
        if self.stop_when_decided is not None and self.repeats > 1:
            lines.append(
                f"sequential repeats (--stop-when-decided at {self.stop_when_decided:g}): at most {self.repeats} "
                f"an item (the bound above), at least {_fewest(self.repeats, self.stop_when_decided)}; the expected "
                "figures take the repeats an earlier sequential run used per item"
            )
        return lines

    def _cost_line(self) -> str:
        if self.cost.usd is None:
            return f"cost: unknown ({self.cost.missing})" if self.cost.unpriced else "cost: unknown"
        sources = ", ".join(sorted({r.prompt_source for r in self.roles if r.calls})) or "nothing"
        completions = "at most" if self.bounded else "about"
        priced = " for the priced models" if self.cost.unpriced else ""
        line = (
            f"cost: about {self.cost.amount}{priced} (completions {completions} {self.completion_cost.amount} at each "
            f"role's max_tokens; prompts estimated from {sources})"
        )
        return f"{line}; {self.cost.missing}" if self.cost.unpriced else line

    def _expected_text(self) -> str:
        """The headline: the one expected figure, and where it comes from."""
        e = self.expected()
        if e["source"] == "transcript":
            cost = self.expected_cost.text() if self.expected_cost is not None else "unknown"
            where = (f"from {self.earlier.path} ({self.earlier.sessions:,} finished "  # type: ignore[union-attr]
                     f"session{'s' if self.earlier.sessions != 1 else ''}, scaled to this run)")  # type: ignore[union-attr]
        else:
            cost = self.cost.amount if self.cost.usd is not None else "unknown"
            where = ("from the protocol's call budget (no earlier transcript of the same protocol and models beside "
                     "the run's)")  # fmt: skip
        return f"expected {e['requests']:,} requests, {e['tokens']:,} tokens, cost {cost}, {where}"


def role_labels(protocol: Protocol[Any, Any], roles: Mapping[str, RoleSettings] | RoleTable) -> dict[str, str]:
    """Each model role's model as the transcript's header records it (rules play the others)."""
    from voirdire.runner import RoleTable, model_roles

    table = roles if isinstance(roles, RoleTable) else RoleTable(dict(roles))
    return {r: spec_label(table[r].spec) for r in model_roles(protocol)}


def earlier_transcript(out: Path, protocol: str, labels: Mapping[str, str]) -> Path | None:
    """The newest transcript of ``protocol`` with these models: the run's own file first, then the ones beside it."""
    for path in _candidates(out):
        header = _header(path)
        if header is None or header.protocol != protocol:
            continue
        if all(r in header.roles and header.roles[r].spec == label for r, label in labels.items()):
            return path
    return None


def _candidates(out: Path) -> Iterator[Path]:
    if out.is_file():
        yield out
    folder = out.parent if out.parent != Path("") else Path(".")
    if not folder.is_dir():
        return
    found = [p for p in folder.glob("*.jsonl") if p.is_file() and p != out and not p.name.endswith(".labels.jsonl")]
    found.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    yield from found[:MAX_CANDIDATES]


def _header(path: Path) -> RunHeader | None:
    try:
        first = next(iter(iter_records(path)), None)
    except Exception:  # not a transcript (another JSONL file in the folder): skipped, never an error
        return None
    return first if isinstance(first, RunHeader) else None


def read_earlier(path: Path, budget: CallBudget | None) -> Earlier:
    """Per role calls, requests and billed tokens, finished sessions, and each assumed figure's observed values."""
    seen = Earlier(path)
    started: set[str] = set()
    observers = {n: a.observe for n, a in (budget.assumed if budget else {}).items() if a.observe is not None}
    for record in iter_records(path):
        if isinstance(record, ModelCall):
            r = record.role
            seen.calls[r] = seen.calls.get(r, 0) + 1
            seen.requests[r] = seen.requests.get(r, 0) + record.requests
            seen.all_prompt_tokens[r] = seen.all_prompt_tokens.get(r, 0) + record.usage.prompt_tokens
            if not record.cached:
                seen.prompt_tokens[r] = seen.prompt_tokens.get(r, 0) + record.usage.prompt_tokens
                seen.completion_tokens[r] = seen.completion_tokens.get(r, 0) + record.usage.completion_tokens
                seen.cache_read_tokens[r] = seen.cache_read_tokens.get(r, 0) + record.usage.cache_read_tokens
                seen.cache_write_tokens[r] = seen.cache_write_tokens.get(r, 0) + record.usage.cache_write_tokens
        elif isinstance(record, SessionStart):
            started.add(record.session_id)
            seen.items.add(record.item_id or record.session_id)
        elif isinstance(record, Verdict):
            seen.sessions += 1
            for name, observe in observers.items():
                seen.observed.setdefault(name, []).extend(observe(record.statistics))
    seen.sessions = seen.sessions or len(started)
    return seen


def _prompt_chars(protocol: Protocol[Any, Any]) -> int:
    """The longest prompt file of the protocol, in characters (its templates, variables left in)."""
    prompts = protocol.prompt_library()
    try:
        prompts.preload(protocol.prompt_folder)
    except Exception:  # a prompt file that cannot be read: the run itself will say so, the estimate goes on
        return 0
    files = [prompts.get(name) for name in prompts.hashes(protocol.prompt_folder)]
    return max((sum(len(m.template) for m in p.spec.messages) for p in files), default=0)


def estimate_run(
    budget: CallBudget | None,
    protocol: Protocol[Any, Any],
    items: Sequence[BaseModel],
    roles: Mapping[str, RoleSettings] | RoleTable,
    prices: Prices,
    *,
    out: Path,
    repeats: int = 1,
    stop_when_decided: float | None = None,
) -> Estimate:
    """The estimate of running ``protocol`` on ``items`` (each ``repeats`` times) with these roles and prices; the
    earlier transcript is looked for at ``out`` (the run's own transcript) and beside it. The budget is the one
    the protocol's own registration declares (a command may run another protocol than its own, ``examine
    --baseline``), else ``budget``."""
    from voirdire.runner import RoleTable

    registered = registrations().get(protocol.name)
    budget = registered.budget if registered is not None and registered.budget is not None else budget
    table = roles if isinstance(roles, RoleTable) else RoleTable(dict(roles))
    labels = role_labels(protocol, table)
    found = earlier_transcript(out, protocol.name, labels)
    earlier = read_earlier(found, budget) if found is not None else None
    if budget is None:
        none = Cost(None, tuple(labels.values()))
        return Estimate(
            protocol=protocol.name, items=len(items), repeats=repeats, roles=[], cost=none, completion_cost=none,
            paper="", figures={}, earlier=earlier, expected_requests=None, expected_cost=None, declared=False,
        )  # fmt: skip
    figures = {**budget.defaults(), **(earlier.figures(budget) if earlier else {})}
    total = Budget()
    for item in items:
        total = total.plus(budget.of(protocol, item, figures))
    default_prompt = _default_prompt_tokens(protocol, items)
    lines, usage, completions = [], {}, {}
    for role, calls in total.roles.items():
        label = labels.get(role, role)
        per_call, source = default_prompt, "the item and the longest prompt file"
        observed = earlier.prompt_per_call(role) if earlier is not None else None
        if observed is not None and found is not None:
            per_call, source = observed, f"{found.name}'s prompt tokens per call"
        requests = calls.samples * repeats
        line = RoleLine(
            role=role,
            model=label,
            calls=calls.calls * repeats,
            requests=requests,
            bounded=calls.bounded,
            why=calls.why,
            prompt_tokens=round(per_call * calls.calls * repeats),
            completion_tokens=requests * table[role].max_tokens,
            prompt_source=source,
        )
        lines.append(line)
        _add(usage, label, (line.prompt_tokens, line.completion_tokens, requests))
        _add(completions, label, (0, line.completion_tokens, requests))
    sessions: float = len(items) * repeats
    if stop_when_decided is not None and earlier is not None and earlier.items and repeats > 1:
        # Sequential repeats: the repeats an item used in the earlier run, at most this run's.
        sessions = len(items) * min(repeats, earlier.sessions / len(earlier.items))
    expected_requests, expected_cost, expected_tokens = _expected(earlier, labels, sessions, prices)
    return Estimate(
        protocol=protocol.name,
        items=len(items),
        repeats=repeats,
        roles=lines,
        cost=run_cost(usage, prices),
        completion_cost=run_cost(completions, prices),
        paper=budget.paper,
        figures={k: f for k, f in figures.items() if any(not r.bounded and f.source in r.why for r in lines)},
        earlier=earlier,
        expected_requests=expected_requests,
        expected_cost=expected_cost,
        stop_when_decided=stop_when_decided,
        expected_tokens=expected_tokens,
    )


def _fewest(repeats: int, decided_at: float) -> int:
    """The fewest repeats after which an item's status can be settled (``executors.sequential``)."""
    from voirdire.executors import additional

    return additional({}, 0, repeats, repeats, decided_at)


def _default_prompt_tokens(protocol: Protocol[Any, Any], items: Sequence[BaseModel]) -> float:
    """A call's prompt without an earlier transcript: the item (as JSON) and the protocol's longest prompt file, at
    ``CHARS_PER_TOKEN``; a conversation's earlier turns are not counted (the estimate says where it comes from)."""
    item_chars = statistics.fmean(len(i.model_dump_json()) for i in items) if items else 0.0
    return (item_chars + _prompt_chars(protocol)) / CHARS_PER_TOKEN


def _add(usage: dict[str, tuple[int, ...]], label: str, more: tuple[int, ...]) -> None:
    was = usage.get(label, (0,) * len(more))
    usage[label] = tuple(a + b for a, b in zip(was, more, strict=True))


def _expected(
    earlier: Earlier | None, labels: Mapping[str, str], sessions: float, prices: Prices
) -> tuple[int | None, Cost | None, int | None]:
    """An earlier run's requests, cost and billed tokens per finished session, times this run's sessions; the tokens its
    provider's prompt cache read and wrote are priced at their own rates, as the earlier run was billed."""
    if earlier is None or not earlier.sessions:
        return None, None, None
    scale = sessions / earlier.sessions
    usage: dict[str, tuple[int, ...]] = {}
    for role, requests in earlier.requests.items():
        prompt, completion = earlier.prompt_tokens.get(role, 0), earlier.completion_tokens.get(role, 0)
        read, write = earlier.cache_read_tokens.get(role, 0), earlier.cache_write_tokens.get(role, 0)
        scaled = tuple(round(x * scale) for x in (prompt, completion, requests, read, write))
        _add(usage, labels.get(role, role), scaled)
    tokens = sum(p + c for p, c, *_ in usage.values())
    return round(sum(earlier.requests.values()) * scale), run_cost(usage, prices), tokens
