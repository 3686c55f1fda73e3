"""The No-Data Algorithm as a voirdire protocol: one Session per datapoint (Alg. 1, lines 5-13).

``NoDataProtocol.run`` hands one datapoint to phase 1's ``label_datapoint`` — the single source of truth for
the EV protocol (§6.1) and the flip (Alg. 1, line 10, φ as the paper defines it) — with *adapters* as its
evaluator and verifier, so every exchange between the players goes through the Session and lands in the
transcript:

* ``evaluator``: a rule agent (``voirdire.agents.FunctionAgent``) around the phase-1 evaluator — the decision
  tree of §8.0.2 with the oracle generator or a lie of §8.1.1, optionally noisy (Table 3), or a scripted
  evaluator given in code — or, with ``evaluator="llm"``, a model role reached with the App. D.2 prompts
  through ``session.ask`` (``LLMEvaluator``);
* ``generator``: only when an LLM labels and a rule generator (oracle, a lie) proposes ``x'``;
* ``verifier``: a rule agent around phase 1's ``RuleVerifier`` (§8.0.3).

Each EV round is three named states: ``label`` (the evaluator's ŷ for x), ``propose`` (its commitment
``<x', ỹ'>``) and ``challenge`` (the evaluator sends ``x'`` — not ``ỹ'``, which no challenge reads, §6.1 — to the
verifier, which answers with the challenge it drew and the outcome). Then ``decision`` (Alg. 1's keep-or-flip)
and ``done``.
Requests to rule agents are JSON messages; every round's record (x', ỹ', challenge, outcome) and the decision
(success, revealed label, flip, final label) are ``step`` events, and the verdict carries the final label as
its decision and the EV success as ``accepted``.

Randomness. Phase 1 draws each datapoint's coins from ``SeedSequence(seed, spawn_key=(run, index))``, split
into evaluator, verifier and flip streams. The seed and the index travel in the item, so a session's outcome
depends only on (seed, index) — not on order, concurrency or resume — and equals the direct phase-1 path
(``run_experiment``) datapoint by datapoint. A rule evaluator's coins are its private state: the adapter hands
the evaluator stream to the rule agent by reference (``EvaluatorEndpoint.coins``) instead of serialising it
into the message. The verifier's draw is phase 1's ``RuleVerifier.draw`` on the verifier stream; because
``Verifier.draw`` is synchronous, the verifier's proxy takes it and hands it to the verifier agent the same way
(``VerifierEndpoint.challenge``, its private state, never inside the evaluator's message); the verifier agent
checks it and announces it in its reply.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from autogen_agentchat.agents import BaseChatAgent
from pydantic import BaseModel, ConfigDict, Field, model_validator

from voirdire.agents import FunctionAgent
from voirdire.protocol import Protocol, Session
from voirdire.transcript import Verdict

from .algorithm import EVENT_DECISION, EVENT_ROUND, NoDataParams, label_datapoint
from .challenges import Challenge, CheckOutcome, RuleVerifier
from .data import FILES, Dataset, load_split, rubric_name_for
from .evaluators import DecisionTreeLabeller, Evaluator, FeatureEncoding, Labeller, NoisyLabeller
from .experiments import ExperimentConfig, build_evaluator, build_generator, decision_tree
from .generators import Generator, LieSigmaMode, OracleGenerator, Proposal
from .llm import EVENT_PARSE_FAILURE, PROMPT_EVALUATE, LLMEvaluator
from .rubric import IP_RUBRIC, RUBRICS, Label, Rubric, SubsetMode

PROTOCOL_NAME = "no_data"
PROMPT_FOLDER = "no_data"
STATES = ("label", "propose", "challenge", "decision", "done")
EVALUATOR_KINDS = ("decision-tree", "llm", "scripted")
#: ``--generator`` choices of the protocol: the §8 strategies, the simulation's guesser, and the LLM itself.
PROTOCOL_GENERATORS = ("oracle", "lie-sigma", "lie-f", "lie-p", "random", "llm")


class NoDataItem(BaseModel):
    """One datapoint of one run: the session's unit. ``y`` is the reference label, used for scoring only — no
    player ever sees it (the verifier's challenges do not read labels, §6.1)."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    index: int = Field(ge=0, description="row of the data set; with the seed it fixes the datapoint's coins")
    x: str = Field(min_length=1, pattern=r"^[01]+$")
    y: Label | None = None
    seed: int = Field(0, ge=0, description="Alg. 1 seed of the run this datapoint belongs to")
    run: int = Field(0, ge=0, description="App. C.2 binary run j (0 for binary labels)")


class NoDataProtocolParams(BaseModel):
    """Everything that defines a run besides the seed (which the items carry, so one transcript can hold
    several seeds and a resumed run may add seeds) and the models (the header's role bindings)."""

    model_config = ConfigDict(extra="forbid")
    data: str = Field("ip", description="ip | oop | PATH (recorded so a transcript is not resumed on other data)")
    rubric: str | None = Field(None, description="the verifier's rubric (ip | oop); None: the named split's own")
    evaluator: Literal["decision-tree", "llm", "scripted"] = "decision-tree"
    generator: Literal["oracle", "lie-sigma", "lie-f", "lie-p", "random", "llm"] = "oracle"
    p: float = Field(0.1, ge=0.0, le=1.0, description="lie-p: probability of a random x' (§8.1.1)")
    label_noise: float = Field(0.0, ge=0.0, le=1.0, description="Table 3: the evaluator flips its label w.p.")
    rounds: int = Field(3, ge=1, description="EV rounds r (§8 uses 3)")
    phi: float = Field(0.6, ge=0.0, le=1.0, description="P(flip a failed label), Alg. 1 line 10")
    encoding: FeatureEncoding = "decimal"
    subsets: SubsetMode = "whole"
    epsilon: float | None = Field(None, description="App. C.1 relaxation of Challenge 2 (0 < ε ≤ 1/2)")
    lie_f_target: Literal["f", "bit-majority"] = "f"
    lie_sigma_mode: LieSigmaMode = Field("encoding", description="Lie 1: C(x) (paper) or a permutation (notebook)")
    llm_generation: Literal["pick", "generate"] = Field("pick", description="App. D.2 Prompt 2 or Prompt 3")
    exemplars: int = Field(5, ge=0, description="IP-train exemplars in Prompts 1 and 3 (App. D.2: five)")
    attempts: int = Field(5, ge=1, description="App. D.2: retry a parse failure up to five attempts")
    retry_temperature: float | None = Field(
        0.7, ge=0.0, description="sampling temperature of attempts 2-5 (ours; None: the role's own)"
    )
    relabel_each_round: bool = Field(True, description="the evaluator labels x again every round (notebook)")

    @model_validator(mode="after")
    def _consistent(self) -> NoDataProtocolParams:
        if self.generator == "llm" and self.evaluator != "llm":
            raise ValueError("generator 'llm' needs evaluator 'llm' (the LLM proposes x' with App. D.2 prompts)")
        if self.epsilon is not None and not 0 < self.epsilon <= 0.5:
            raise ValueError(f"epsilon must be in (0, 1/2] (App. C.1), got {self.epsilon}")
        if self.rubric is not None and self.rubric not in RUBRICS:
            raise ValueError(f"unknown rubric {self.rubric!r}; expected one of {', '.join(RUBRICS)}")
        if self.data not in FILES and self.rubric is None:
            raise ValueError(f"data {self.data!r} is a file: give its verifier rubric (rubric='ip' or 'oop')")
        return self

    @property
    def rubric_name(self) -> str:
        return rubric_name_for(self.data, self.rubric)

    def experiment_config(self, seed: int = 0) -> ExperimentConfig:
        """The phase-1 config of the same run (decision-tree evaluators and rule generators)."""
        generator = "oracle" if self.generator == "llm" else self.generator
        return ExperimentConfig(
            data=self.data,
            rubric=self.rubric,
            generator=generator,
            p=self.p,
            label_noise=self.label_noise,
            rounds=self.rounds,
            phi=self.phi,
            seed=seed,
            encoding=self.encoding,
            subsets=self.subsets,
            epsilon=self.epsilon,
            lie_f_target=self.lie_f_target,
            lie_sigma_mode=self.lie_sigma_mode,
        )

    def algorithm(self, seed: int) -> NoDataParams:
        return NoDataParams(rounds=self.rounds, phi=self.phi, seed=seed)


def make_items(
    dataset: Dataset, seeds: Sequence[int], *, offset: int = 0, limit: int | None = None
) -> list[NoDataItem]:
    """One item per (seed, datapoint), seeds outermost; ids ``seed<S>-<row>``. A datapoint keeps its row index
    under ``offset`` / ``limit``, so a slice of a run agrees with the whole run on every datapoint."""
    rows = list(enumerate(dataset.rows))[max(0, offset) :]
    if limit is not None:
        rows = rows[: max(0, limit)]
    width = len(str(max(len(dataset.rows) - 1, 0)))
    return [
        NoDataItem(id=f"seed{s}-{i:0{width}d}", index=i, x=row.x, y=row.y, seed=s) for s in seeds for i, row in rows
    ]


# ----------------------------------------------------------------------------------------- rule agents


class EvaluatorEndpoint:
    """A rule-played evaluator (or generator) behind a ``FunctionAgent``: a JSON request in, a JSON reply out.

    Requests: ``{"op": "label", "round", "x"}`` -> ``{"label": ŷ}``; ``{"op": "propose", "round", "x", "y_hat"}``
    -> ``{"x_prime", "y_tilde", "strategy", "rationale"}``. ``coins`` is the player's private random stream for
    the current datapoint (phase 1's evaluator stream), bound by the session's adapter.
    """

    def __init__(self, player: Evaluator | Generator) -> None:
        self.player = player
        self.coins: np.random.Generator | None = None

    async def __call__(self, text: str) -> str:
        request = json.loads(text)
        if self.coins is None:
            raise RuntimeError("the evaluator has no coins for this datapoint (bind them before a request)")
        op = request.get("op")
        if op == "label":
            label = getattr(self.player, "label", None)
            if label is None:
                raise ValueError(f"{type(self.player).__name__} only proposes; it does not label")
            y = await label(request["x"], int(request["round"]), self.coins)
            return json.dumps({"label": int(y)})
        if op == "propose":
            proposal = await self.player.propose(request["x"], int(request["y_hat"]), int(request["round"]), self.coins)
            return proposal.model_dump_json()
        raise ValueError(f"evaluator: unknown request {op!r}")


class VerifierEndpoint:
    """The rule verifier (§8.0.3) behind a ``FunctionAgent``.

    Request (from the evaluator): its commitment ``{"op": "commit", "round", "x", "x_prime"}`` — no label, since
    neither challenge reads one (§6.1). Reply: the challenge this verifier drew and the outcome, ``{"challenge",
    "challenge_name", "passed", "reason", "detail"}`` (phase 1's ``CheckOutcome`` plus the name). ``challenge`` is
    the verifier's private draw for the current round (phase 1's ``RuleVerifier.draw`` on the verifier stream),
    bound by the session's adapter like the evaluator's coins; it is used once.
    """

    def __init__(self, verifier: RuleVerifier) -> None:
        self.verifier = verifier
        self.challenge: Challenge | None = None

    async def __call__(self, text: str) -> str:
        request = json.loads(text)
        if request.get("op") != "commit":
            raise ValueError(f"verifier: unknown request {request.get('op')!r}")
        if self.challenge is None:
            raise RuntimeError("the verifier has not drawn a challenge for this round")
        challenge, self.challenge = self.challenge, None
        outcome = await self.verifier.check(challenge, request["x"], request["x_prime"])
        reply = outcome.model_dump(mode="json")
        return json.dumps({"challenge": reply.pop("challenge"), "challenge_name": challenge.name.lower(), **reply})


# ----------------------------------------------------------------------------------------- session adapters


@dataclass
class _Exchange:
    """What the adapters of one session share: the round in progress and the LLM's counters."""

    session: Session
    round: int = 0
    parse_failures: int = 0
    model_calls: int = 0

    def enter(self, state: str) -> None:
        self.session.enter(state, stage="ev", turn=self.round + 1)


def _endpoint(session: Session, role: str) -> EvaluatorEndpoint:
    agent = session.agent(role)
    fn = getattr(agent, "fn", None)
    if not isinstance(fn, EvaluatorEndpoint):
        raise TypeError(f"role {role!r} is not played by a rule evaluator in this configuration")
    return fn


@dataclass
class _RuleLabeller:
    """ŷ from the rule agent playing ``role``."""

    exchange: _Exchange
    role: str = "evaluator"

    async def label(self, x: str, round: int, rng: np.random.Generator) -> Label:
        _endpoint(self.exchange.session, self.role).coins = rng
        request = {"op": "label", "round": round, "x": x}
        reply = await self.exchange.session.send(self.role, json.dumps(request))
        return int(json.loads(reply.text)["label"])


@dataclass
class _RuleGenerator:
    """``<x', ỹ'>`` from the rule agent playing ``role``."""

    exchange: _Exchange
    role: str = "evaluator"
    name: str = "rule"

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal:
        _endpoint(self.exchange.session, self.role).coins = rng
        request = {"op": "propose", "round": round, "x": x, "y_hat": int(y_hat)}
        reply = await self.exchange.session.send(self.role, json.dumps(request))
        return Proposal.model_validate_json(reply.text)


@dataclass
class _SessionEvaluator:
    """What ``label_datapoint`` sees as the evaluator: enters the round's states, then asks the players."""

    exchange: _Exchange
    labeller: Labeller
    generator: Generator

    async def label(self, x: str, round: int, rng: np.random.Generator) -> Label:
        self.exchange.round = round
        self.exchange.enter("label")
        return await self.labeller.label(x, round, rng)

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal:
        self.exchange.enter("propose")
        return await self.generator.propose(x, y_hat, round, rng)


def _verifier_endpoint(session: Session) -> VerifierEndpoint:
    fn = getattr(session.agent("verifier"), "fn", None)
    if not isinstance(fn, VerifierEndpoint):
        raise TypeError("the verifier role is not played by the rule verifier")
    return fn


@dataclass
class _SessionVerifier:
    """What ``label_datapoint`` sees as the verifier: phase 1's draw, handed privately to the verifier agent,
    then the evaluator's commitment to that agent, which answers with the challenge and the outcome."""

    exchange: _Exchange
    rule: RuleVerifier

    def draw(self, rng: np.random.Generator) -> Challenge:
        challenge = self.rule.draw(rng)
        _verifier_endpoint(self.exchange.session).challenge = challenge
        return challenge

    async def check(self, challenge: Challenge, x: str, x_prime: str) -> CheckOutcome:
        ex = self.exchange
        ex.enter("challenge")
        # The evaluator's commitment: x' only. ỹ' stays in the round record; no challenge reads it (§6.1).
        request: dict[str, Any] = {"op": "commit", "round": ex.round, "x": x, "x_prime": x_prime}
        reply = await ex.session.send("verifier", json.dumps(request), sender="evaluator")
        outcome = CheckOutcome.model_validate_json(reply.text)
        if outcome.challenge != int(challenge):
            raise RuntimeError(f"the verifier answered challenge {outcome.challenge}, but drew {int(challenge)}")
        return outcome


_EXPECTED = {
    "evaluate": "a 0/1 label between |label| anchors (App. D.2, Prompt 1)",
    "generate_pick": "an n-bit datapoint between |datapoint| anchors (App. D.2, Prompt 2)",
    "generate": "an n-bit datapoint between |datapoint| anchors (App. D.2, Prompt 3)",
}


@dataclass
class _Recorder:
    """Phase-1 events -> transcript: round and decision records as steps, LLM parse failures as parse_failure."""

    exchange: _Exchange
    retry_temperature: float | None
    rounds: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        session = self.exchange.session
        if kind == EVENT_ROUND:
            self.rounds.append(data)
            session.note(kind, **data)
        elif kind == EVENT_DECISION:
            session.enter("decision", stage="alg1")
            session.note(kind, **data)
        elif kind == EVENT_PARSE_FAILURE:
            self.exchange.parse_failures += 1
            attempt, attempts, prompt = int(data["attempt"]), int(data["attempts"]), str(data["prompt"])
            if attempt + 1 < attempts:
                at = f" at temperature {self.retry_temperature}" if self.retry_temperature is not None else ""
                outcome = f"asked again{at} (attempt {attempt + 2} of {attempts})"
            elif prompt == PROMPT_EVALUATE:
                outcome = f"gave up after {attempts} attempts: a random label (App. D.2)"
            else:
                outcome = f"gave up after {attempts} attempts: a random x' (App. D.2)"
            session.parse_failure(
                str(data.get("role", "evaluator")),
                f"{PROMPT_FOLDER}/{prompt}",
                expected=_EXPECTED.get(prompt, "an anchored answer"),
                raw=str(data.get("reply", "")),
                error="no |label| anchor with 0 or 1"
                if prompt == PROMPT_EVALUATE
                else "no |datapoint| anchor with a bit string of the datapoint's length",
                outcome=outcome,
            )
        else:
            session.note(kind, **data)


# ----------------------------------------------------------------------------------------- the protocol


class NoDataProtocol(Protocol[NoDataItem, NoDataProtocolParams]):
    """Algorithm 1 with the EV protocol of §6.1, one datapoint per session (see the module docstring).

    Per-run state — the verifier, the decision tree (trained once on the IP train split, cached), the
    generators and the LLM's exemplars and candidate pool — is built once on the instance and shared by all
    sessions; per-session state lives in the adapters and the fresh rule agents.
    """

    name = PROTOCOL_NAME
    roles = ("evaluator", "verifier", "generator")
    states = STATES
    Item = NoDataItem
    Params = NoDataProtocolParams
    prompt_folder = PROMPT_FOLDER

    def __init__(
        self,
        params: NoDataProtocolParams | None = None,
        *,
        evaluator: Evaluator | None = None,
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        if evaluator is not None:
            params = (params or NoDataProtocolParams()).model_copy(update={"evaluator": "scripted"})
        elif params is not None and params.evaluator == "scripted":
            raise ValueError("evaluator 'scripted' needs an evaluator object: NoDataProtocol(params, evaluator=...)")
        super().__init__(params)
        self.root = root
        self._scripted = evaluator
        self._verifier: RuleVerifier | None = None
        self._rule_evaluator: Evaluator | None = None
        self._rule_generator: Generator | None = None
        self._llm_setup: tuple[list[tuple[str, Label]], list[str], OracleGenerator] | None = None

    # ------------------------------------------------------------------ per-run state, built once
    @property
    def rubric(self) -> Rubric:
        """The rubric of the phenomenon under test: what the verifier checks against (§8.0.3)."""
        return RUBRICS[self.params.rubric_name]

    @property
    def verifier(self) -> RuleVerifier:
        if self._verifier is None:
            self._verifier = RuleVerifier(self.rubric, subsets=self.params.subsets, epsilon=self.params.epsilon)
        return self._verifier

    def tree(self) -> DecisionTreeLabeller | None:
        """The §8.0.2 decision tree (phase 1's cached one), when it is the evaluator."""
        if self.params.evaluator != "decision-tree":
            return None
        return decision_tree(self.params.encoding, root=self.root)

    def rule_evaluator(self) -> Evaluator:
        """The evaluator the ``evaluator`` rule agent plays: phase 1's ``build_evaluator`` or the scripted one."""
        if self._rule_evaluator is None:
            if self._scripted is not None:
                self._rule_evaluator = self._scripted
            else:
                tree = self.tree()
                if tree is None:
                    raise ValueError("the LLM evaluator is a model role, not a rule agent")
                self._rule_evaluator = build_evaluator(self.params.experiment_config(), tree)
        return self._rule_evaluator

    def rule_generator(self) -> Generator:
        """The rule generator the ``generator`` agent plays when an LLM labels (IP rubric, as in §8.0.2)."""
        if self._rule_generator is None:
            self._rule_generator = build_generator(self.params.experiment_config())
        return self._rule_generator

    def llm_setup(self) -> tuple[list[tuple[str, Label]], list[str], OracleGenerator]:
        """The exemplars of Prompts 1 and 3 (the first ``exemplars`` IP-train rows) and Prompt 2's candidate pool
        (IP train, App. D.2), with the oracle that plants a matching candidate."""
        if self._llm_setup is None:
            train = load_split("ip", "train", self.root)
            exemplars = [(r.x, r.y) for r in train.rows[: self.params.exemplars]]
            oracle = OracleGenerator(IP_RUBRIC, train.xs, self.params.subsets)
            self._llm_setup = (exemplars, train.xs, oracle)
        return self._llm_setup

    def known_labels(self, xs: Sequence[str]) -> list[Label] | None:
        """The evaluator's plain labels (Table 2's "known" column), when it is the decision tree."""
        tree = self.tree()
        return None if tree is None else tree.predict_many(list(xs))

    # ------------------------------------------------------------------ roles
    def _generator_is_rule(self) -> bool:
        return self.params.evaluator == "llm" and self.params.generator != "llm"

    def required_roles(self) -> tuple[str, ...]:
        return ("evaluator", "verifier", "generator") if self._generator_is_rule() else ("evaluator", "verifier")

    def deterministic_agents(self) -> dict[str, BaseChatAgent]:
        agents: dict[str, BaseChatAgent] = {
            "verifier": FunctionAgent("verifier", VerifierEndpoint(self.verifier), description="rule verifier (§8.0.3)")
        }
        if self.params.evaluator != "llm":
            agents["evaluator"] = FunctionAgent(
                "evaluator", EvaluatorEndpoint(self.rule_evaluator()), description=f"{self.params.evaluator} evaluator"
            )
        elif self._generator_is_rule():
            agents["generator"] = FunctionAgent(
                "generator", EvaluatorEndpoint(self.rule_generator()), description=f"{self.params.generator} generator"
            )
        return agents

    def item_id(self, item: NoDataItem) -> str:
        return item.id or f"seed{item.seed}-{item.index}"

    # ------------------------------------------------------------------ one datapoint
    def _llm(self, session: Session, exchange: _Exchange, recorder: _Recorder) -> LLMEvaluator:
        exemplars, pool, oracle = self.llm_setup()

        async def ask(role: str, prompt: str, variables: dict[str, str], temperature: float | None = None) -> str:
            # Every App. D.2 call is a fresh conversation (the paper makes independent calls). A sampled retry
            # gets a seed derived from the session and call number: different each attempt, same each run.
            await session.reset(role)
            exchange.model_calls += 1
            seed = zlib.crc32(f"{session.session_id}:{exchange.model_calls}".encode()) if temperature else None
            reply = await session.ask(role, prompt, temperature=temperature, seed=seed, **variables)
            return reply.text

        p = self.params
        return LLMEvaluator(
            ask,
            rubric=IP_RUBRIC,  # "During OOP, the LLM was given the rubric for IP" (§8)
            exemplars=exemplars,
            pool=pool,
            strategy=p.llm_generation,
            role="evaluator",
            attempts=p.attempts,
            relabel_each_round=p.relabel_each_round,
            retry_temperature=p.retry_temperature,
            oracle=oracle,
            on_event=recorder,
        )

    def _players(self, session: Session) -> tuple[_Exchange, _Recorder, _SessionEvaluator, _SessionVerifier]:
        exchange = _Exchange(session)
        recorder = _Recorder(exchange, self.params.retry_temperature if self.params.evaluator == "llm" else None)
        labeller: Labeller
        generator: Generator
        if self.params.evaluator == "llm":
            llm = self._llm(session, exchange, recorder)
            labeller = NoisyLabeller(llm, self.params.label_noise) if self.params.label_noise > 0 else llm
            generator = llm if self.params.generator == "llm" else _RuleGenerator(exchange, "generator")
        else:
            labeller, generator = _RuleLabeller(exchange), _RuleGenerator(exchange)
        evaluator = _SessionEvaluator(exchange, labeller, generator)
        return exchange, recorder, evaluator, _SessionVerifier(exchange, self.verifier)

    async def run(self, item: NoDataItem, session: Session) -> Verdict:
        exchange, recorder, evaluator, verifier = self._players(session)
        decision = await label_datapoint(
            item.x,
            item.index,
            evaluator,
            verifier,
            self.params.algorithm(item.seed),
            run=item.run,
            on_event=recorder,
        )
        session.enter("done", stage="alg1")
        evidence = [
            f"round {r['round'] + 1}: challenge {r['challenge']} ({r['challenge_name']}) "
            + ("passed" if r["passed"] else f"failed: {r['reason']}")
            for r in recorder.rounds
        ]
        statistics: dict[str, Any] = {
            **decision.model_dump(),
            "seed": item.seed,
            "reference": item.y,
            "correct": None if item.y is None else decision.label == item.y,
            "challenges": [r["challenge"] for r in recorder.rounds],
        }
        if self.params.evaluator == "llm":
            statistics["parse_failures"] = exchange.parse_failures
            statistics["model_calls"] = exchange.model_calls
        return session.verdict(str(decision.label), accepted=decision.success, evidence=evidence, statistics=statistics)
