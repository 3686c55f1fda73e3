"""An LLM evaluator/generator driven by the App. D.2 prompts, through any model role.

The model is reached through ``ask(role, prompt, variables) -> reply text``; the Session supplies it, e.g.
``lambda role, prompt, v: session.ask(role, prompt, **v)`` returning ``.text`` (prompt files live in
``prompts/no_data/``: ``evaluate`` = Prompt 1, ``generate_pick`` = Prompt 2, ``generate`` = Prompt 3).
As in App. D.2, replies are parsed at the ``|label|`` / ``|datapoint|`` anchors, a parse failure is retried
(five attempts in all), and after the fifth failure a random label / random string is used. With
``retry_temperature`` set, attempts 2-5 are sampled at that temperature (ours: the paper's o3-mini ran at its
default sampling, so its retries differed; at temperature 0 five identical prompts give five identical replies).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from .algorithm import OnEvent
from .generators import OracleGenerator, Proposal, uniform_bits
from .rubric import IP_RUBRIC, Label, Rubric

# Prompt names inside the protocol's prompt folder (prompts/no_data/), as Session.ask addresses them.
PROMPT_EVALUATE = "evaluate"
PROMPT_PICK = "generate_pick"
PROMPT_GENERATE = "generate"
EVENT_PARSE_FAILURE = "nodata.parse_failure"

_LABEL = re.compile(r"\|label\|\s*\(?\s*([01])\s*\)?\s*\|label\|", re.IGNORECASE)
_LABEL_LOOSE = re.compile(r"\|label\|\s*\(?\s*([01])\b", re.IGNORECASE)
_DATAPOINT = re.compile(r"\|datapoint\|\s*\(?\s*([01]+)\s*\)?\s*\|datapoint\|", re.IGNORECASE)
_DATAPOINT_LOOSE = re.compile(r"\|datapoint\|\s*\(?\s*([01]+)\b", re.IGNORECASE)


class Ask(Protocol):
    """How the protocol reaches a model role: render ``prompt`` with ``variables``, return the reply text.

    ``temperature`` is passed (as a keyword) only for retries when ``LLMEvaluator.retry_temperature`` is set,
    so an ``ask`` without that keyword keeps working for evaluators that do not use it.
    """

    def __call__(self, role: str, prompt: str, variables: dict[str, str], **kwargs: Any) -> Awaitable[str]: ...


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


@dataclass
class LLMEvaluator:
    """The §8 LLM evaluator: labels with Prompt 1 and generates by picking (Prompt 2) or writing (Prompt 3).

    ``rubric`` is the rubric the model is shown — always IP in the paper, also for OOP data. ``pool`` holds
    candidate datapoints for picking (the IP train split in App. D.2); each pick offers one candidate that
    matches ``x`` under the rubric's total evaluation plus four random ones, shuffled. ``exemplars`` (the first
    IP-train rows) go in Prompt 1 and Prompt 3; Prompt 2 "does not utilise exemplars" (App. D.2). A Prompt 3
    exemplar's answer is the first datapoint the oracle would accept for it (``generation_exemplar_answer``).
    """

    ask: Ask
    rubric: Rubric = IP_RUBRIC
    exemplars: Sequence[tuple[str, Label]] = ()
    pool: Sequence[str] = ()
    strategy: Literal["pick", "generate"] = "pick"
    role: str = "evaluator"
    generator_role: str | None = None
    attempts: int = 5
    candidates: int = 5
    relabel_each_round: bool = True
    retry_temperature: float | None = None
    oracle: OracleGenerator | None = None
    on_event: OnEvent | None = None
    name: str = "llm"
    _labels: dict[str, Label] = field(init=False, repr=False, default_factory=dict)
    _oracle: OracleGenerator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.retry_temperature is not None and self.retry_temperature < 0:
            raise ValueError(f"retry_temperature must be >= 0, got {self.retry_temperature}")
        # A shared oracle (built once per run over the same pool) saves regrouping the pool per datapoint.
        self._oracle = self.oracle if self.oracle is not None else OracleGenerator(self.rubric, self.pool or None)

    async def _ask_parsed(
        self, role: str, prompt: str, variables: dict[str, str], parse: Callable[[str], Any]
    ) -> tuple[Any, str]:
        reply = ""
        for attempt in range(self.attempts):
            if attempt > 0 and self.retry_temperature is not None:
                reply = await self.ask(role, prompt, variables, temperature=self.retry_temperature)
            else:
                reply = await self.ask(role, prompt, variables)
            value = parse(reply)
            if value is not None:
                return value, reply
            if self.on_event is not None:
                self.on_event(
                    EVENT_PARSE_FAILURE,
                    {"prompt": prompt, "attempt": attempt, "attempts": self.attempts, "role": role, "reply": reply},
                )
        return None, reply

    def generation_exemplar_answer(self, x: str) -> str:
        """The answer of a Prompt 3 exemplar: the first ``x' ≠ x`` with the same total evaluation as ``x`` (pool
        order, then all n-bit strings in order), or ``x`` itself when nothing else matches."""
        return next((s for s in self._oracle.matches(x) if s != x), x)

    def generation_exemplars(self) -> str:
        return format_generation_exemplars(self.exemplars, self.generation_exemplar_answer, self.rubric)

    async def label(self, x: str, round: int, rng: np.random.Generator) -> Label:
        if not self.relabel_each_round and x in self._labels:
            return self._labels[x]
        variables = {
            "rubric": self.rubric.describe(),
            "exemplars": format_exemplars(self.exemplars, self.rubric),
            "x": x,
        }
        y, _ = await self._ask_parsed(self.role, PROMPT_EVALUATE, variables, parse_label)
        if y is None:
            y = int(rng.integers(2))  # App. D.2: give up after five failures with a random answer
        self._labels[x] = y
        return y

    def _candidates(self, x: str, rng: np.random.Generator) -> list[str]:
        match = self._oracle.pick(x, rng)
        others = [s for s in dict.fromkeys(self.pool) if s != match]
        k = min(self.candidates - 1, len(others))
        picked = [others[i] for i in rng.choice(len(others), size=k, replace=False)] if k else []
        out = [match, *picked]
        return [out[i] for i in rng.permutation(len(out))]

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal:
        role = self.generator_role or self.role
        variables = {"rubric": self.rubric.describe(), "x": x, "y": str(y_hat)}
        if self.strategy == "pick":
            variables["datapoints"] = "\n".join(self._candidates(x, rng))
            prompt = PROMPT_PICK
        else:
            # App. D.2, Prompt 3 caption: "this prompt does take exemplars ... the first five entries in the
            # training dataset, along with chain-of-thought-style rationale".
            variables["exemplars"] = self.generation_exemplars()
            prompt = PROMPT_GENERATE
        x_prime, reply = await self._ask_parsed(role, prompt, variables, lambda r: parse_datapoint(r, len(x)))
        strategy = f"{self.name}-{self.strategy}"
        if x_prime is None:
            return Proposal(
                x_prime=uniform_bits(len(x), rng),
                y_tilde=y_hat,
                strategy=strategy,
                rationale=f"unparseable after {self.attempts} attempts; random string (App. D.2)",
            )
        return Proposal(x_prime=x_prime, y_tilde=y_hat, strategy=strategy, rationale=reply)
