"""The No-Data Algorithm as a voirdire protocol: one session per datapoint (de Wynter 2025, Alg. 1, §6.1).

``NoDataProtocol.run`` is Algorithm 1's loop body (lines 5-13) with the EV protocol of §6.1 as line 5: for each
of ``r`` rounds the evaluator labels ``x`` (state ``label``), commits to ``<x', ỹ'>`` (``propose``), and sends
``x'`` to the verifier, which draws one of the two challenges and answers with it and the outcome
(``challenge``); the first failure ends the EV protocol, and ``ỹ'`` is revealed either way (§6.1.2). Then
``decision`` keeps ``ỹ'`` on success and flips it with probability φ on failure (line 10), and ``done``.

The players:

* ``verifier``: always a rule agent, §8.0.3's rule matcher over the rubric of the phenomenon under test;
* ``evaluator``: a rule agent -- the decision tree of §8.0.2 with the oracle generator or a lie of §8.1.1,
  optionally noisy (Table 3), or an evaluator object given in code (``evaluator="scripted"``) -- or, with
  ``evaluator="llm"``, a model role asked with the App. D.2 prompts (``llm.LLMEvaluator``);
* ``generator``: a rule agent proposing ``x'`` when an LLM labels and a rule generator (oracle, a lie) proposes.

Rule agents are built per session by ``deterministic_agents(item)``, each holding its own random stream for the
datapoint (``algorithm.coins``); requests and answers travel as JSON messages (``rule_agents``). The LLM's
random fallbacks and candidates use the evaluator's stream, the flip its own stream, so a session's outcome
depends only on (seed, row) and equals the batch runs of ``experiments`` (the same code, in memory).
Each round's record (x', ỹ', challenge, outcome) and the decision are ``step`` events; the verdict carries
the final label as its decision and the EV success as ``accepted``.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from voirdire.kit import DisplayHints, Protocol, Session, StateMachine, Verdict

from . import plugin
from .algorithm import (
    DECISION_STEP,
    ROUND_STEP,
    AlgorithmParams,
    Decision,
    NoDataOutcome,
    RoundRecord,
    coins,
    flip_decision,
)
from .challenges import CheckOutcome, RuleVerifier, Verifier
from .data import FILES, Dataset, load_split, rubric_name_for
from .evaluators import (
    ComposedEvaluator,
    DecisionTreeLabeller,
    Evaluator,
    FeatureEncoding,
    NoisyLabeller,
    decision_tree,
)
from .generators import Generator, LieFTarget, LieSigmaMode, OracleGenerator, Proposal, rule_generator
from .llm import LLMCalls, LLMEvaluator
from .rubric import IP_RUBRIC, RUBRICS, Label, Rubric, SubsetMode
from .theory import verdict_guarantee
from .views import VIEWS

if TYPE_CHECKING:  # autogen's agents: imported by a session's rule players, not by the registration
    from autogen_agentchat.agents import BaseChatAgent

# §6.1: a round is label -> propose -> challenge; after a challenge comes the next round (its label, or its
# proposal when the evaluator labels once) or, after the last round or a failure, Alg. 1's decision.
MACHINE = StateMachine(
    initial=("label",),
    edges={
        "label": ("propose",),
        "propose": ("challenge",),
        "challenge": ("label", "propose", "decision"),
        "decision": ("done",),
        "done": (),
    },
)
DISPLAY = DisplayHints(
    colors={"evaluator": "34", "verifier": "35", "generator": "32"},
    item_fields=("x",),
    gold_fields=("y",),
    quiet_states=("done",),
    views=VIEWS,
)


class NoDataItem(BaseModel):
    """One datapoint of one run: the session's unit. ``y`` is the reference label, used for scoring only: no
    player ever sees it (the verifier's challenges do not read labels, §6.1)."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    index: int = Field(ge=0, description="row of the data set; with the seed it fixes the datapoint's coins")
    x: str = Field(min_length=1, pattern=r"^[01]+$")
    y: Label | None = None
    seed: int = Field(0, ge=0, description="Alg. 1 seed of the run this datapoint belongs to")
    run: int = Field(0, ge=0, description="App. C.2 binary run j (0 for binary labels)")


class NoDataProtocolParams(AlgorithmParams):
    """Everything that defines a run besides the seed (which the items carry, so one transcript can hold several
    seeds and a resumed run may add seeds) and the models (the header's role bindings)."""

    model_config = ConfigDict(extra="forbid")
    rubric: Literal["ip", "oop"] | None = Field(
        None,
        description="the verifier's rubric: required with a data file (never guessed from its name); "
        "for ip / oop it defaults to the split's own",
    )
    data: str = Field(
        "ip",
        description="ip / oop = the paper's in-/out-of-phenomenon test split (498 points); "
        "PATH = a JSON [[x, y], ...] file",
    )
    evaluator: Literal["decision-tree", "llm", "scripted"] = Field("decision-tree", description="who labels")
    generator: Literal["oracle", "lie-sigma", "lie-f", "lie-p", "random", "llm"] = Field(
        "oracle",
        description="how the evaluator produces x': oracle (matching datapoint, §8), lie-sigma / lie-f / lie-p (the "
        "lies of §8.1.1), llm (the LLM picks or writes it, App. D.2); default: oracle for the decision tree, llm "
        "for the LLM",
    )
    p: float = Field(0.1, ge=0.0, le=1.0, description="lie-p: probability of a random x' (paper: 0.1)")
    label_noise: float = Field(0.0, ge=0.0, le=1.0, description="the evaluator flips its own label w.p. (Table 3: 0.1)")
    encoding: FeatureEncoding = Field("decimal", description="decision-tree features")
    subsets: SubsetMode = Field("whole", description="S_x of Challenge 1")
    epsilon: float | None = Field(None, description="App. C.1: Challenge 2 fails iff δ(C(x), C(x')) ≥ ε, 0 < ε ≤ 1/2")
    lie_f_target: LieFTarget = Field("f", description="lie-f matches f(x') (paper) or the bits' majority (notebook)")
    lie_sigma_mode: LieSigmaMode = Field(
        "encoding",
        description="lie-sigma outputs an x' with C(x') = C(x) but not necessarily C̄(x) (paper, §8.1.1) or one "
        "whose C(x') is a permutation of C(x) (authors' notebook)",
    )
    llm_generation: Literal["pick", "generate"] = Field("pick", description="App. D.2 Prompt 2 (pick) or Prompt 3")
    exemplars: int = Field(5, ge=0, description="IP-train exemplars in Prompts 1 and 3 (App. D.2: five)")
    attempts: int = Field(5, ge=1, description="attempts per call before a random answer (App. D.2: 5)")
    retry_temperature: float | None = Field(
        0.7, ge=0.0, description="sampling temperature of attempts 2.. (ours; None: the role's own)"
    )
    relabel_each_round: bool = Field(True, description="the LLM labels x again every round (notebook)")

    @model_validator(mode="before")
    @classmethod
    def _generator_follows_the_evaluator(cls, data: Any) -> Any:
        """An LLM evaluator generates x' itself unless a rule generator is named."""
        if isinstance(data, dict) and data.get("generator") is None:
            data = {k: v for k, v in data.items() if k != "generator"}
            if data.get("evaluator") == "llm":
                data["generator"] = "llm"
        return data

    @field_validator("data")
    @classmethod
    def _a_file_needs_its_rubric(cls, data: str, info: ValidationInfo) -> str:
        if data not in FILES and not os.path.exists(data):  # neither: say so, rather than ask for its rubric
            if os.sep in data or os.path.splitext(data)[1]:  # a path the user meant as a file
                raise ValueError(f"{data}: data file not found")
            close = difflib.get_close_matches(data, list(FILES), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"{data!r} is neither a built-in data set ({', '.join(FILES)}) nor a file{hint}")
        if data not in FILES and info.data.get("rubric") is None:
            raise ValueError(
                f"{data} is a data file: give its verifier rubric ('ip' or 'oop'); it is not guessed from the name"
            )
        return data

    @field_validator("generator")
    @classmethod
    def _llm_generator(cls, generator: str, info: ValidationInfo) -> str:
        if generator == "llm" and info.data.get("evaluator") != "llm":
            raise ValueError("generator 'llm' needs evaluator 'llm' (the LLM proposes x' with App. D.2 prompts)")
        return generator

    @field_validator("epsilon")
    @classmethod
    def _epsilon(cls, epsilon: float | None) -> float | None:
        if epsilon is not None and not 0 < epsilon <= 0.5:
            raise ValueError(f"epsilon must be in (0, 1/2] (App. C.1), got {epsilon}")
        return epsilon

    @field_validator("llm_generation", "exemplars", "attempts", "retry_temperature", "relabel_each_round")
    @classmethod
    def _llm_only(cls, value: Any, info: ValidationInfo) -> Any:
        default = cls.model_fields[str(info.field_name)].default
        if value != default and info.data.get("evaluator") != "llm":
            raise ValueError("only with evaluator 'llm'")
        return value

    @property
    def rubric_name(self) -> str:
        return rubric_name_for(self.data, self.rubric)


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


class NoDataProtocol(Protocol[NoDataItem, NoDataProtocolParams]):
    """Algorithm 1 with the EV protocol of §6.1, one datapoint per session (see the module docstring).

    Per-run state -- the verifier, the decision tree (trained once on the IP train split, cached), the generators
    and the LLM's exemplars and candidate pool -- is built once on the instance and shared by all sessions; each
    session gets fresh rule agents holding that datapoint's streams. ``evaluator`` (an object with ``label`` and
    ``propose``) plays the evaluator instead of the decision tree; ``verifier`` (``draw`` and ``check``) replaces
    the rule verifier over the parameters' rubric.
    """

    name, roles, paper = plugin.no_data.name, plugin.no_data.roles, plugin.no_data.paper
    machine = MACHINE
    display = DISPLAY
    Item = NoDataItem
    Params = NoDataProtocolParams
    Outcome = NoDataOutcome

    def __init__(
        self,
        params: NoDataProtocolParams | None = None,
        *,
        evaluator: Evaluator | None = None,
        verifier: Verifier | None = None,
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        if evaluator is not None:
            params = (params or NoDataProtocolParams()).model_copy(update={"evaluator": "scripted"})
        elif params is not None and params.evaluator == "scripted":
            raise ValueError("evaluator 'scripted' needs an evaluator object: NoDataProtocol(params, evaluator=...)")
        super().__init__(params)
        self.root = root
        self._scripted = evaluator
        self._verifier = verifier
        self._tree: DecisionTreeLabeller | None = None
        self._rule_evaluator: Evaluator | None = None
        self._rule_generator: Generator | None = None
        self._llm: LLMEvaluator | None = None

    # ------------------------------------------------------------------ per-run state, built once
    @property
    def rubric(self) -> Rubric:
        """The rubric of the phenomenon under test: what the verifier checks against (§8.0.3)."""
        return RUBRICS[self.params.rubric_name]

    @property
    def verifier(self) -> Verifier:
        if self._verifier is None:
            self._verifier = RuleVerifier(self.rubric, subsets=self.params.subsets, epsilon=self.params.epsilon)
        return self._verifier

    def tree(self) -> DecisionTreeLabeller | None:
        """The §8.0.2 decision tree (trained once per process), when it is the evaluator."""
        if self._tree is None and self.params.evaluator == "decision-tree":
            self._tree = decision_tree(self.params.encoding, root=self.root)
        return self._tree

    def rule_generator(self) -> Generator:
        """The rule generator: the evaluator generates with the rubric it knows, IP, on every data set (§8.0.2)."""
        if self._rule_generator is None:
            p = self.params
            name = "oracle" if p.generator == "llm" else p.generator
            self._rule_generator = rule_generator(
                name, IP_RUBRIC, p=p.p, subsets=p.subsets, lie_sigma_mode=p.lie_sigma_mode, lie_f_target=p.lie_f_target
            )
        return self._rule_generator

    def rule_evaluator(self) -> Evaluator:
        """The evaluator the ``evaluator`` rule agent plays: the (noisy) decision tree and the rule generator,
        or the evaluator given in code."""
        if self._rule_evaluator is None:
            if self._scripted is not None:
                self._rule_evaluator = self._scripted
            else:
                tree = self.tree()
                if tree is None:
                    raise ValueError("the LLM evaluator is a model role, not a rule agent")
                noise = self.params.label_noise
                labeller = NoisyLabeller(tree, noise) if noise > 0 else tree
                self._rule_evaluator = ComposedEvaluator(labeller, self.rule_generator())
        return self._rule_evaluator

    def llm(self) -> LLMEvaluator:
        """The LLM evaluator's setup: the first ``exemplars`` IP-train rows for Prompts 1 and 3 and Prompt 2's
        candidate pool (IP train, App. D.2), with the oracle that plants a matching candidate. The LLM is shown
        the IP rubric ("During OOP, the LLM was given the rubric for IP", §8)."""
        if self._llm is None:
            p = self.params
            train = load_split("ip", "train", self.root)
            self._llm = LLMEvaluator(
                rubric=IP_RUBRIC,
                exemplars=[(r.x, r.y) for r in train.rows[: p.exemplars]],
                pool=train.xs,
                strategy=p.llm_generation,
                attempts=p.attempts,
                retry_temperature=p.retry_temperature,
                oracle=OracleGenerator(IP_RUBRIC, train.xs, p.subsets),
            )
        return self._llm

    def prepare(self) -> None:
        """Build the per-run state now (train the tree, read the train split): a bad setup fails before a run."""
        _ = self.verifier
        if self.params.evaluator == "llm":
            self.llm()
            if self._generator_is_rule():
                self.rule_generator()
        else:
            self.rule_evaluator()

    # ------------------------------------------------------------------ roles and agents
    def _generator_is_rule(self) -> bool:
        return self.params.evaluator == "llm" and self.params.generator != "llm"

    def required_roles(self) -> tuple[str, ...]:
        return ("evaluator", "verifier", "generator") if self._generator_is_rule() else ("evaluator", "verifier")

    def rule_roles(self) -> tuple[str, ...]:
        if self.params.evaluator != "llm":
            return ("evaluator", "verifier")
        return ("verifier", "generator") if self._generator_is_rule() else ("verifier",)

    def deterministic_agents(self, item: NoDataItem) -> dict[str, BaseChatAgent]:
        """The rule players of this datapoint's session, each with its own stream of the datapoint."""
        from .rule_agents import evaluator_agent, verifier_agent  # autogen's agents: imported by a session only

        seed, index, run = item.seed, item.index, item.run
        agents: dict[str, BaseChatAgent] = {
            "verifier": verifier_agent(self.verifier, coins(seed, index, run, "verifier"))
        }
        if self.params.evaluator != "llm":
            evaluator = self.rule_evaluator()
            what = f"{self.params.evaluator} evaluator"
            agents["evaluator"] = evaluator_agent("evaluator", evaluator, coins(seed, index, run, "evaluator"), what)
        elif self._generator_is_rule():
            what = f"{self.params.generator} generator"
            agents["generator"] = evaluator_agent(
                "generator", self.rule_generator(), coins(seed, index, run, "generator"), what
            )
        return agents

    def item_id(self, item: NoDataItem) -> str:
        return item.id or f"seed{item.seed}-{item.index}"

    # ------------------------------------------------------------------ one datapoint: Alg. 1, lines 5-13
    async def run(self, item: NoDataItem, session: Session) -> Verdict:
        p = self.params
        llm = _LLMTurn(self.llm(), session, item) if p.evaluator == "llm" else None
        rounds: list[RoundRecord] = []
        y_hat: Label | None = None
        # Line 5, EV(x, E, V, C, r) (§6.1): rounds until r have passed or the evaluator fails a test (§6.1.2).
        for r in range(p.rounds):
            if y_hat is None or p.relabel_each_round:
                session.enter("label", stage="ev", turn=r + 1)
                y_hat = await self._label(session, item, r, llm)
            session.enter("propose", stage="ev", turn=r + 1)
            proposal = await self._propose(session, item, y_hat, r, llm)  # <x', ỹ'>, fixed for the round
            session.enter("challenge", stage="ev", turn=r + 1)
            outcome = await self._challenge(session, item, r, proposal.x_prime)
            record = RoundRecord(
                run=item.run,
                index=item.index,
                round=r,
                x=item.x,
                y_hat=y_hat,
                x_prime=proposal.x_prime,
                y_tilde=proposal.y_tilde,
                challenge=outcome.challenge,
                challenge_name=outcome.challenge_name,
                passed=outcome.passed,
                reason=outcome.reason,
                strategy=proposal.strategy,
            )
            session.note(ROUND_STEP, **record.model_dump())
            rounds.append(record)
            if not record.passed:
                break  # a failed test ends the EV protocol in a failure state; ỹ' is revealed either way
        # Lines 6-12: keep the revealed ỹ' on success, flip it with probability φ on failure.
        session.enter("decision", stage="alg1")
        success, revealed = rounds[-1].passed, rounds[-1].y_tilde
        label, flipped = flip_decision(success, revealed, p.phi, coins(item.seed, item.index, item.run, "flip"))
        decision = Decision(
            run=item.run,
            index=item.index,
            x=item.x,
            success=success,
            revealed=revealed,
            flipped=flipped,
            label=label,
            rounds_run=len(rounds),
        )
        session.note(DECISION_STEP, **decision.model_dump())
        session.enter("done", stage="alg1")
        evidence = [_evidence(r) for r in rounds]
        statistics = self._statistics(item, decision, rounds, llm)
        # The decision names what it is (Algorithm 1's output label), so a reader sees "label 1", not a bare "1".
        guarantee = verdict_guarantee(p.rounds, p.phi, len(rounds), success, p.rubric_name)
        return session.verdict(
            f"label {label}", accepted=success, evidence=evidence, statistics=statistics, guarantee=guarantee
        )

    # ------------------------------------------------------------------ the players' moves
    async def _label(self, session: Session, item: NoDataItem, round: int, llm: _LLMTurn | None) -> Label:
        """The evaluator's label ŷ of x this round: the LLM with Prompt 1, or the rule evaluator's answer."""
        if llm is not None:
            return await llm.label(self.params.label_noise)
        reply = await session.send("evaluator", json.dumps({"op": "label", "round": round, "x": item.x}))
        return int(json.loads(reply.text)["label"])

    async def _propose(
        self, session: Session, item: NoDataItem, y_hat: Label, round: int, llm: _LLMTurn | None
    ) -> Proposal:
        """The commitment <x', ỹ'> (§6.1.1): the LLM with Prompt 2 or 3, or the rule evaluator's (or, beside an
        LLM, the rule generator's) answer."""
        if llm is not None and self.params.generator == "llm":
            return await llm.propose(y_hat)
        role = "generator" if self._generator_is_rule() else "evaluator"
        request = {"op": "propose", "round": round, "x": item.x, "y_hat": y_hat}
        reply = await session.send(role, json.dumps(request))
        return Proposal.model_validate_json(reply.text)

    async def _challenge(self, session: Session, item: NoDataItem, round: int, x_prime: str) -> _Outcome:
        """The evaluator's commitment goes to the verifier: ``x'`` only, since no challenge reads ``ỹ'`` (§6.1);
        the verifier answers with the challenge it drew and the outcome."""
        request = {"op": "commit", "round": round, "x": item.x, "x_prime": x_prime}
        reply = await session.send("verifier", json.dumps(request), sender="evaluator")
        return _Outcome.model_validate_json(reply.text)

    def _statistics(
        self, item: NoDataItem, decision: Decision, rounds: list[RoundRecord], llm: _LLMTurn | None
    ) -> dict[str, Any]:
        tree = self.tree()
        statistics: dict[str, Any] = {
            **decision.model_dump(),
            "seed": item.seed,
            "reference": item.y,
            "correct": None if item.y is None else decision.label == item.y,
            # Table 2's "known" column: the decision tree's own label of x, without the EV protocol or noise.
            "known_label": None if tree is None else tree.predict(item.x),
            "challenges": [r.challenge for r in rounds],
        }
        if llm is not None:
            statistics["parse_failures"] = llm.calls.parse_failures
            statistics["model_calls"] = llm.calls.model_calls
        return statistics


class _Outcome(CheckOutcome):
    """The verifier's answer: the outcome of the challenge it drew, and the challenge's name."""

    challenge_name: str


class _LLMTurn:
    """The LLM evaluator within one session: the App. D.2 prompts through ``session.ask``, the evaluator's
    stream of the datapoint for its random fallbacks, candidates and Table 3's label noise, and its counters."""

    def __init__(self, llm: LLMEvaluator, session: Session, item: NoDataItem) -> None:
        self.llm, self.session, self.x = llm, session, item.x
        self.coins = coins(item.seed, item.index, item.run, "evaluator")
        self.calls = LLMCalls()

    async def label(self, noise: float) -> Label:
        y = await self.llm.label(self.session, self.calls, self.x, self.coins)
        return 1 - y if noise > 0 and self.coins.random() < noise else y

    async def propose(self, y_hat: Label) -> Proposal:
        return await self.llm.propose(self.session, self.calls, self.x, y_hat, self.coins)


def _evidence(r: RoundRecord) -> str:
    return f"round {r.round + 1}: challenge {r.challenge} ({r.challenge_name}) " + (
        "passed" if r.passed else f"failed: {r.reason}"
    )
