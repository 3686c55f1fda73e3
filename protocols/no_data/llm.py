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

import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import numpy as np
from pydantic import BaseModel, Field, create_model

from voirdire.protocol import ParseError, Session
from voirdire.structured import ReplySchema

from .generators import OracleGenerator, Proposal, uniform_bits
from .rubric import IP_RUBRIC, Label, Rubric

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

_LABEL = re.compile(r"\|label\|\s*\(?\s*([01])\s*\)?\s*\|label\|", re.IGNORECASE)
_LABEL_LOOSE = re.compile(r"\|label\|\s*\(?\s*([01])\b", re.IGNORECASE)
_DATAPOINT = re.compile(r"\|datapoint\|\s*\(?\s*([01]+)\s*\)?\s*\|datapoint\|", re.IGNORECASE)
_DATAPOINT_LOOSE = re.compile(r"\|datapoint\|\s*\(?\s*([01]+)\b", re.IGNORECASE)


# Prompt 1's label, asked through a reply schema in structured mode (the |label| anchors are read otherwise).
LABEL = ReplySchema.choice("0", "1", values=(0, 1))


def datapoint_schema(prompt: str, variables: Mapping[str, str], n_bits: int) -> ReplySchema:
    """x' in structured mode: one of Prompt 2's candidates, or any n-bit string for Prompt 3."""
    if prompt == PROMPT_PICK:
        return ReplySchema.choice(*variables["datapoints"].split("\n"))
    return ReplySchema.of(create_model("Datapoint", datapoint=(str, Field(pattern=f"^[01]{{{n_bits}}}$"))))


def parse_label(reply: str) -> Label | None:
    """The label between ``|label|`` anchors (Prompt 1); the last one wins. None if absent."""
    found = _LABEL.findall(reply) or _LABEL_LOOSE.findall(reply)
    return int(found[-1]) if found else None


def parse_datapoint(reply: str, n_bits: int | None = None) -> str | None:
    """The bit string between ``|datapoint|`` anchors (Prompts 2-3); the last one wins.

    With ``n_bits`` a string of another length counts as unparseable (it could never pass a challenge).
    """
    found = _DATAPOINT.findall(reply) or _DATAPOINT_LOOSE.findall(reply)
    if not found:
        return None
    x = found[-1]
    if n_bits is not None and len(x) != n_bits:
        return None
    return x


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


def _label_reply(reply: str) -> Label:
    """A 0/1 label between ``|label|`` anchors."""
    y = parse_label(reply)
    if y is None:
        raise ParseError("no |label| anchor with 0 or 1")
    return y


def _datapoint_reply(n_bits: int) -> Callable[[str], str]:
    def parse(reply: str) -> str:
        x = parse_datapoint(reply, n_bits)
        if x is None:
            raise ParseError("no |datapoint| anchor with a bit string of the datapoint's length")
        return x

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
                parse=parse,
                schema=schema,
                expected=EXPECTED[prompt],
                on_failure=self._outcome(prompt, attempt),
                temperature=temperature,
                seed=seed,
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
        y, _ = await self._ask(session, calls, PROMPT_EVALUATE, _label_reply, self.label_variables(x), LABEL)
        return int(rng.integers(2)) if y is None else y  # App. D.2: a random answer after five failures

    async def propose(
        self, session: Session, calls: LLMCalls, x: str, y_hat: Label, rng: np.random.Generator
    ) -> Proposal:
        prompt, variables = self.proposal_request(x, y_hat, rng)
        x_prime, reply = await self._ask(
            session, calls, prompt, _datapoint_reply(len(x)), variables, datapoint_schema(prompt, variables, len(x))
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
