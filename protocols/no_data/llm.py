"""The LLM evaluator of §8 (App. D.2 prompts), asked through ``Session.ask`` in any model role.

Prompt files live in ``prompts/no_data/``: ``evaluate`` = Prompt 1 (label), ``generate_pick`` = Prompt 2 (pick
x' among candidates), ``generate`` = Prompt 3 (write x'). As in App. D.2, replies are parsed at the ``|label|`` /
``|datapoint|`` anchors, a parse failure is asked again (five attempts in all) and after the last failure a random
label / random string is used; every failure is a ``parse_failure`` event naming that outcome. Every call is a
fresh conversation (the paper makes independent calls). With ``retry_temperature`` set, attempts 2-5 are sampled
at that temperature (ours: the paper's o3-mini ran at its default sampling, so its retries differed; at
temperature 0 five identical prompts give five identical replies), each with its own seed derived from the
session and the call number: the attempts differ, and a re-run samples them the same way.
"""

from __future__ import annotations

import bisect
import contextlib
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel, Field, create_model

from voirdire.kit import Ask, ParseError, ReplySchema, Session
from voirdire.kit.replies import read_conclusion, read_number

from .generators import OracleGenerator, Proposal, uniform_bits
from .rubric import IP_RUBRIC, Label, Rubric

if TYPE_CHECKING:  # a type only: the registration (`voirdire --help`) does not import numpy
    import numpy as np

T = TypeVar("T")

# Prompt names inside the protocol's prompt folder (prompts/no_data/), as Session.ask addresses them.
PROMPT_EVALUATE = "evaluate"
PROMPT_PICK = "generate_pick"
PROMPT_GENERATE = "generate"
EXPECTED = {
    PROMPT_EVALUATE: "a 0/1 label between |label| anchors (App. D.2, Prompt 1)",
    PROMPT_PICK: "an n-bit datapoint between |datapoint| anchors (App. D.2, Prompt 2)",
    PROMPT_GENERATE: "an n-bit datapoint between |datapoint| anchors (App. D.2, Prompt 3)",
}

# The anchors of App. D.2's answer format, case and inner spaces aside ("|label|", "| Label |").
_LABEL_ANCHOR = re.compile(r"\|[ \t]*label[ \t]*\|", re.IGNORECASE)
_DATAPOINT_ANCHOR = re.compile(r"\|[ \t]*datapoint[ \t]*\|", re.IGNORECASE)
# What may sit between two anchors: the value alone, with markdown, quotes, brackets, a trailing period, or a name
# ("Label: 1", "y = 1", "x' = 0101"). Anything else ("0 or 1", "1 (or 0 if ...)", "(the label)", "not 1") is no value.
_WRAPPING = " \t\r\n*_`'\"()[]."
_LABEL_NAME = re.compile(r"(?:(?:label|y)[ \t]*)?[:=]", re.IGNORECASE)
_DATAPOINT_NAME = re.compile(r"(?:(?:datapoint|x'?|x′)[ \t]*)?[:=]", re.IGNORECASE)
# "Datapoint: 0110..." opening a block of the few-shot pattern (an exemplar echoed, or a new one invented); Prompt
# 3's exemplars also carry a "Label:" line.
_HEADER = re.compile(r"^[ \t#>*_-]*datapoint[ \t*_]*:[ \t*_]*([01]+)[ \t*_.]*$", re.IGNORECASE | re.MULTILINE)
_LABEL_LINE = re.compile(r"[ \t#>*_-]*label[ \t*_]*:[ \t*_]*[01][ \t*_.]*$", re.IGNORECASE)
# A label named without anchors: a "Label: 1" / "The label is 0" line, or a JSON object with a "label" key.
_NAMED_LABEL = re.compile(
    r"^[ \t#>*_-]*(?:the[ \t]+)?label[ \t*_]*(?:is[ \t]+|[:=])[^\n]*$"
    r"|\{[^{}\n]{0,200}[\"']label[\"'][ \t]*:[^{}\n]{0,200}\}",
    re.IGNORECASE | re.MULTILINE,
)
_MAX_VALUE = 400  # the longest text between two anchors read as a value

# Prompt 1's label, asked through a reply schema in structured mode (the |label| anchors are read otherwise).
LABEL = ReplySchema.choice("0", "1", values=(0, 1))


def datapoint_schema(prompt: str, variables: Mapping[str, str], n_bits: int) -> ReplySchema:
    """x' in structured mode: one of Prompt 2's candidates, or any n-bit string for Prompt 3."""
    if prompt == PROMPT_PICK:
        return ReplySchema.choice(*variables["datapoints"].split("\n"))
    return ReplySchema.of(create_model("Datapoint", datapoint=(str, Field(pattern=f"^[01]{{{n_bits}}}$"))))


def _anchored(reply: str, anchor: re.Pattern[str], name: re.Pattern[str], digits: int | None) -> list[tuple[int, str]]:
    """(position, value) of each anchored value. Anchors pair up left to right; a last unpaired anchor holds the
    rest of its line, or the next line when nothing follows it on its own ("|label|\\n1", as small models write)."""
    marks = [m.span() for m in anchor.finditer(reply)]
    out = []
    for k in range(0, len(marks), 2):
        start = marks[k][1]
        if k + 1 < len(marks):
            text = reply[start : marks[k + 1][0]]
        else:
            lead = len(reply[start:]) - len(reply[start:].lstrip())
            end = reply.find("\n", start + lead)
            text = reply[start : end if end >= 0 else len(reply)]
        if len(text) <= _MAX_VALUE and (found := _value(text, name, digits)):
            out.append((marks[k][0], found))
    return out


def _value(text: str, name: re.Pattern[str], digits: int | None) -> str | None:
    """The 0/1 string between two anchors (``digits`` of them, or any number when None), or None."""
    text = text.strip(_WRAPPING)
    if named := name.match(text):
        text = text[named.end() :].strip(_WRAPPING)
    if not text or text.strip("01") or (digits is not None and len(text) != digits):
        return None
    return text


def _blocks(reply: str, needs_label_line: bool) -> list[tuple[int, str]]:
    """(position, datapoint) of each "Datapoint: ..." header that opens a block of the few-shot pattern."""
    out = []
    for m in _HEADER.finditer(reply):
        if needs_label_line:
            end = reply.find("\n", m.end() + 1)
            if not _LABEL_LINE.fullmatch(reply, m.end() + 1, end if end >= 0 else len(reply)):
                continue
        out.append((m.start(), m.group(1)))
    return out


def _answer(values: list[tuple[int, str]], blocks: list[tuple[int, str]], x: str | None) -> set[str]:
    """The values given for ``x``: before any header, or under a header naming ``x``. A value under another
    datapoint's header answers that datapoint (an echoed exemplar, or the pattern carried on), not ours. Without
    ``x`` every value counts."""
    if x is None:
        return {v for _, v in values}
    heads = [pos for pos, _ in blocks]
    out = set()
    for pos, v in values:
        k = bisect.bisect_right(heads, pos) - 1
        if k < 0 or blocks[k][1] == x:
            out.add(v)
    return out


def parse_label(reply: str, x: str | None = None) -> Label | None:
    """The 0/1 label between ``|label|`` anchors (Prompt 1), or None.

    The anchors hold the label alone ("|label|\\n1\\n|label|", "|label| (0) |label|", "**1**", "Label: 1"); an
    unclosed last anchor holds its line ("|label|\\n1"). A reply that gives two different labels, or nothing between
    its anchors but text ("0 or 1", "(the label)", "not 1", "0.6"), is None: the reply says both or neither, and
    App. D.2 asks again. With ``x`` (the datapoint asked about), a label under a "Datapoint: ..." header for
    another datapoint is not ours: an echoed exemplar, or the few-shot pattern carried on after the answer.
    A reply without an anchored label is read by the shared reader of numbers (``voirdire.replies.read_number``
    in 0..1) on the lines that name the label, as a person reads them: "Label: 1", "The label is 1.",
    ``{"label": 0}`` -- unless it carries another datapoint's block (an echoed exemplar). A bare "1" or "The answer
    is: 1" names no label and stays unread. A reasoning block is left out and a later self-correction or final
    marker supersedes what came before (``voirdire.kit.read_conclusion``).
    """
    try:  # the conclusion the reply ends on: "|label| 0 |label| Wait, on second thought ... |label| 1 |label|" is 1
        return read_conclusion(reply, lambda part: _label_or_refusal(part, x))
    except ParseError:
        return None


def _label_or_refusal(reply: str, x: str | None) -> Label:
    blocks = _blocks(reply, needs_label_line=False)
    found = _answer(_anchored(reply, _LABEL_ANCHOR, _LABEL_NAME, 1), blocks, x)
    if not found and not any(head != x for _, head in blocks if x is not None):
        # No anchored label: the shared reader's, as a person reads it ("Label: 1", {"label": 0}), anchors aside.
        named = "\n".join(m.group(0) for m in _NAMED_LABEL.finditer(reply))
        with contextlib.suppress(ParseError):
            found = {str(read_number(named, 0, 1))} if named else found
    if len(found) != 1:
        raise ParseError("no single label between the anchors")
    return int(found.pop())  # type: ignore[return-value]


def parse_datapoint(reply: str, n_bits: int | None = None, *, x: str | None = None) -> str | None:
    """The bit string between ``|datapoint|`` anchors (Prompts 2-3), or None.

    Read as ``parse_label`` reads labels: the value alone between the anchors, the same answer wherever it is
    given, blocks for other datapoints (a "Datapoint: ..." header with its "Label:" line, as Prompt 3's exemplars
    run) left out when ``x`` is known. A bit string of another length than ``n_bits`` (default: ``len(x)``) is no
    answer (it could never pass a challenge; Prompt 3's "start with 0100" is one); two different answers of the
    right length are None.
    """
    if n_bits is None and x is not None:
        n_bits = len(x)
    values = _anchored(reply, _DATAPOINT_ANCHOR, _DATAPOINT_NAME, None)
    if n_bits is not None:
        values = [(pos, v) for pos, v in values if len(v) == n_bits]
    found = _answer(values, _blocks(reply, needs_label_line=True), x)
    return found.pop() if len(found) == 1 else None


def format_exemplars(rows: Sequence[tuple[str, Label]], rubric: Rubric = IP_RUBRIC) -> str:
    """Labelled exemplars in Prompt 1's answer format with criterion-by-criterion reasons (App. D.2)."""
    blocks = [f"Datapoint: {x}\n|reasons|\n{rubric.explain(x)}\n|reasons|\n|label|\n{y}\n|label|\n\n" for x, y in rows]
    return "".join(blocks)


def format_generation_exemplars(
    rows: Sequence[tuple[str, Label]], answer_for: Callable[[str], str], rubric: Rubric = IP_RUBRIC
) -> str:
    """Prompt 3's exemplars (App. D.2: "the first five entries in the training dataset, along with
    chain-of-thought-style rationale"), in Prompt 3's user turn and answer format.

    The paper does not print them; ours are: the row's datapoint and label, a rationale built from the rubric's
    criteria values (``Rubric.explain``: every criterion of ``C̄``, then σ), a sentence saying the answer has the
    same value on every criterion, and the answer ``answer_for(x)`` between ``|datapoint|`` anchors.
    """
    blocks = []
    for x, y in rows:
        x_prime = answer_for(x)
        blocks.append(
            f"Datapoint: {x}\nLabel: {y}\nRationale:\n{rubric.explain(x)}\n"
            f"- {x_prime} has the same value on every criterion above, so it is similar to {x} and also has "
            f"label {y}.\n|datapoint|\n{x_prime}\n|datapoint|\n\n"
        )
    return "".join(blocks)


def _label_reply(x: str) -> Callable[[str], Label]:
    """A 0/1 label between ``|label|`` anchors, for the datapoint ``x``."""

    def parse(reply: str) -> Label:
        y = parse_label(reply, x)
        if y is None:
            raise ParseError("no single 0/1 label between |label| anchors")
        return y

    return parse


def _datapoint_reply(x: str) -> Callable[[str], str]:
    """A bit string of ``x``'s length between ``|datapoint|`` anchors."""

    def parse(reply: str) -> str:
        x_prime = parse_datapoint(reply, x=x)
        if x_prime is None:
            raise ParseError("no single |datapoint| anchor with a bit string of the datapoint's length")
        return x_prime

    return parse


@dataclass
class LLMCalls:
    """One session's model calls and parse failures (the call number also seeds sampled retries)."""

    model_calls: int = 0
    parse_failures: int = 0


@dataclass
class LLMEvaluator:
    """The §8 LLM evaluator of a run: labels with Prompt 1 and generates by picking (Prompt 2) or writing
    (Prompt 3), through ``session.ask`` to ``role``.

    ``rubric`` is the rubric the model is shown -- always IP in the paper, also for OOP data. ``pool`` holds
    candidate datapoints for picking (the IP train split in App. D.2); each pick offers one candidate that
    matches ``x`` under the rubric's total evaluation plus four random ones, shuffled. ``exemplars`` (the first
    IP-train rows) go in Prompt 1 and Prompt 3; Prompt 2 "does not utilise exemplars" (App. D.2). A Prompt 3
    exemplar's answer is the first datapoint the oracle would accept for it (``generation_exemplar_answer``).
    The random fallbacks and the candidates draw on the evaluator's stream of the datapoint (``rng``).
    """

    rubric: Rubric = IP_RUBRIC
    exemplars: Sequence[tuple[str, Label]] = ()
    pool: Sequence[str] = ()
    strategy: Literal["pick", "generate"] = "pick"
    role: str = "evaluator"
    attempts: int = 5
    candidates: int = 5
    retry_temperature: float | None = None
    oracle: OracleGenerator | None = None
    name: str = "llm"
    _oracle: OracleGenerator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.retry_temperature is not None and self.retry_temperature < 0:
            raise ValueError(f"retry_temperature must be >= 0, got {self.retry_temperature}")
        # A shared oracle (built once per run over the same pool) saves regrouping the pool per datapoint.
        self._oracle = self.oracle if self.oracle is not None else OracleGenerator(self.rubric, self.pool or None)

    def _outcome(self, prompt: str, attempt: int) -> str:
        """What follows a reply that could not be parsed (App. D.2: ask again, then answer at random)."""
        if attempt + 1 < self.attempts:
            at = f" at temperature {self.retry_temperature}" if self.retry_temperature is not None else ""
            return f"asked again{at} (attempt {attempt + 2} of {self.attempts})"
        what = "a random label" if prompt == PROMPT_EVALUATE else "a random x'"
        return f"gave up after {self.attempts} attempts: {what} (App. D.2)"

    async def _ask(
        self,
        session: Session,
        calls: LLMCalls,
        prompt: str,
        parse: Callable[[str], T],
        variables: dict[str, str],
        schema: ReplySchema | None = None,
    ) -> tuple[T | None, str]:
        """Up to ``attempts`` independent calls until a reply parses; the value (None if none did) and the reply."""
        text = ""
        for attempt in range(self.attempts):
            temperature = self.retry_temperature if attempt > 0 else None
            await session.reset(self.role)
            calls.model_calls += 1
            seed = zlib.crc32(f"{session.session_id}:{calls.model_calls}".encode()) if temperature else None
            reply = await session.ask(
                self.role,
                prompt,
                Ask(
                    parse=parse,
                    schema=schema,
                    expected=EXPECTED[prompt],
                    on_failure=self._outcome(prompt, attempt),
                    temperature=temperature,
                    seed=seed,
                ),
                **variables,
            )
            text = reply.text
            if reply.ok:
                return reply.value, text
            calls.parse_failures += 1
        return None, text

    def generation_exemplar_answer(self, x: str) -> str:
        """The answer of a Prompt 3 exemplar: the first ``x' ≠ x`` with the same total evaluation as ``x`` (pool
        order, then all n-bit strings in order), or ``x`` itself when nothing else matches."""
        return next((s for s in self._oracle.matches(x) if s != x), x)

    def generation_exemplars(self) -> str:
        return format_generation_exemplars(self.exemplars, self.generation_exemplar_answer, self.rubric)

    def label_variables(self, x: str) -> dict[str, str]:
        """Prompt 1's variables."""
        return {"rubric": self.rubric.describe(), "exemplars": format_exemplars(self.exemplars, self.rubric), "x": x}

    def proposal_request(self, x: str, y_hat: Label, rng: np.random.Generator) -> tuple[str, dict[str, str]]:
        """The prompt and variables that ask for ``x'``: Prompt 2 with candidates, or Prompt 3 with exemplars."""
        variables = {"rubric": self.rubric.describe(), "x": x, "y": str(y_hat)}
        if self.strategy == "pick":
            variables["datapoints"] = "\n".join(self._candidates(x, rng))
            return PROMPT_PICK, variables
        # App. D.2, Prompt 3 caption: "this prompt does take exemplars ... the first five entries in the
        # training dataset, along with chain-of-thought-style rationale".
        variables["exemplars"] = self.generation_exemplars()
        return PROMPT_GENERATE, variables

    def _candidates(self, x: str, rng: np.random.Generator) -> list[str]:
        match = self._oracle.pick(x, rng)
        others = [s for s in dict.fromkeys(self.pool) if s != match]
        k = min(self.candidates - 1, len(others))
        picked = [others[i] for i in rng.choice(len(others), size=k, replace=False)] if k else []
        out = [match, *picked]
        return [out[i] for i in rng.permutation(len(out))]

    async def label(self, session: Session, calls: LLMCalls, x: str, rng: np.random.Generator) -> Label:
        y, _ = await self._ask(session, calls, PROMPT_EVALUATE, _label_reply(x), self.label_variables(x), LABEL)
        return int(rng.integers(2)) if y is None else y  # App. D.2: a random answer after five failures

    async def propose(
        self, session: Session, calls: LLMCalls, x: str, y_hat: Label, rng: np.random.Generator
    ) -> Proposal:
        prompt, variables = self.proposal_request(x, y_hat, rng)
        x_prime, reply = await self._ask(
            session, calls, prompt, _datapoint_reply(x), variables, datapoint_schema(prompt, variables, len(x))
        )
        strategy = f"{self.name}-{self.strategy}"
        if isinstance(x_prime, BaseModel):  # Prompt 3 in structured mode
            x_prime = str(x_prime.datapoint)  # type: ignore[attr-defined]
        if x_prime is None:
            return Proposal(
                x_prime=uniform_bits(len(x), rng),
                y_tilde=y_hat,
                strategy=strategy,
                rationale=f"unparseable after {self.attempts} attempts; random string (App. D.2)",
            )
        return Proposal(x_prime=x_prime, y_tilde=y_hat, strategy=strategy, rationale=reply)
