"""The entailment evaluator (§3, App. A.1, App. D) as one async function per graded item.

    QA2D (Table 14 row 1): question + system answer -> system statement; question + each gold answer -> gold
        statement (cached per question and gold answer, since every system shares them).
    Entailment test (Table 14 row 2) in both directions against every gold statement:
        system statement => gold statement (A_sup), gold statement => system statement (A_inf).
    Hierarchy (§3, App. B.1): the cell and the judgment under the "union" and "minus" decision variants.
    Partial marks (App. D, Table 17) for answers in the explained cells (A_inf − A_sup by default).

Model access goes through ``ask(role, prompt_name, variables, context) -> reply`` so that the Session can render
``prompts/qa_entailment/<prompt_name>.yaml``, call the model bound to the role and record the call; this module
parses the replies and reports each step through ``on_event(kind, data)``. Event kinds: "transition" (data
``{"state": one of STATES}``), "statement", "entailment", "parse_failure", "membership", "explanation",
"partial_mark", "verdict".
Entailment can instead come from an NLI cross-encoder (``nli.CrossEncoderNLI``; the paper's "small" variant).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, field_validator

from .data import QAItem
from .hierarchy import (
    DECISION_VARIANTS,
    DecisionVariant,
    GoldEntailment,
    HierarchyCell,
    Membership,
    judged_correct,
    membership,
)
from .parsing import (
    CLOSENESS_SCALE,
    DIFFICULTY_SCALE,
    EntailmentLabel,
    ParseFailure,
    parse_entailment,
    parse_score,
    parse_statement,
)
from .partial_marks import (
    EXPLANATION_SCHEMES,
    InferenceExplanation,
    best_mark,
    explanation_marks,
    inference_llm_score_mark,
    llm_score_mark,
    parse_explanation,
    ranking_score,
)

# One earlier exchange of a conversation: (prompt name, its variables, the reply the model gave to it).
Exchange = tuple[str, Mapping[str, str], str]


class Ask(Protocol):
    """``await ask(role, prompt, variables, context)`` -> the reply text of the model bound to ``role``.

    Every call is a fresh conversation for the role: the ``context`` exchanges (each prompt rendered with its
    variables, followed by the model's reply as an assistant turn), then ``prompt`` rendered with ``variables``.
    The paper makes independent API calls, so only the "Inference + LLM Score" follow-up passes a context."""

    def __call__(
        self, role: str, prompt: str, variables: Mapping[str, str], context: Sequence[Exchange] = ()
    ) -> Awaitable[str]: ...


# on_event(kind, data): data is JSON-serialisable.
OnEvent = Callable[[str, dict[str, Any]], None]

# The states announced by "transition" events, in order.
STATES: tuple[str, ...] = ("qa2d", "entailment", "hierarchy", "partial_marks")

# Prompt names = file stems under prompts/qa_entailment/.
QA2D_PROMPT = "qa2d"
ENTAILMENT_PROMPT = "entailment"
EXPLANATION_PROMPT = "inference_explanation"
INFERENCE_SCORE_PROMPT = "inference_score"
LLM_SCORE_PROMPT = "llm_score"

Direction = Literal["system_entails_gold", "gold_entails_system"]


class EntailmentOutcome(BaseModel):
    """One entailment test: the label (None when the reply could not be read) and what it came from."""

    label: EntailmentLabel | None
    raw: str | None = None  # the model's reply (LLM backend)
    probabilities: dict[str, float] | None = None  # class probabilities (NLI backend)
    failure: ParseFailure | None = None


class EntailmentBackend(Protocol):
    name: str

    async def entail(self, premise: str, hypothesis: str) -> EntailmentOutcome: ...


class LLMEntailment:
    """Entailment test by prompting a model role with the Table 14 entailment prompt."""

    name = "llm"

    def __init__(self, ask: Ask, role: str = "evaluator", prompt: str = ENTAILMENT_PROMPT) -> None:
        self._ask = ask
        self.role = role
        self.prompt = prompt

    async def entail(self, premise: str, hypothesis: str) -> EntailmentOutcome:
        raw = await self._ask(self.role, self.prompt, {"premise": premise, "hypothesis": hypothesis})
        parsed = parse_entailment(raw)
        if isinstance(parsed, ParseFailure):
            return EntailmentOutcome(label=None, raw=raw, failure=parsed)
        return EntailmentOutcome(label=parsed, raw=raw)


class Roles(BaseModel):
    """Which model role answers each step (any role; the paper uses one model for all)."""

    qa2d: str = "evaluator"
    entailment: str = "evaluator"
    explanation: str = "evaluator"
    scoring: str = "evaluator"


class EntailmentEvaluatorConfig(BaseModel):
    backend: Literal["llm", "nli"] = "llm"
    # Local path (or cached Hugging Face name) of an NLI cross-encoder, for backend="nli".
    nli_model: str | None = None
    decision: DecisionVariant = "union"
    roles: Roles = Field(default_factory=Roles)
    # Partial marks: the Table 17 explanation (gives CIA, C, IA), its follow-up difficulty rating
    # ("Inference + LLM Score"), and the direct "LLM Score" baseline; each costs model calls, hence switches.
    explain: bool = True
    inference_llm_score: bool = False
    llm_score: bool = False
    # LLM Score mark: "closeness" (1..5, higher = closer, the prompt's meaning) or "negated" (-closeness, what the
    # authors' cot_vs_pr.ipynb ranks by for Table 13's 0.8827).
    llm_score_sign: Literal["closeness", "negated"] = "closeness"
    # App. D explains A_inf − A_sup; the released code also explains A_sup − A_inf.
    explain_cells: tuple[HierarchyCell, ...] = (HierarchyCell.INF_ONLY,)
    # Use at most this many gold answers, in file order (TQ carries ~14 aliases per question).
    max_gold_answers: int | None = Field(default=None, ge=1)

    @field_validator("explain_cells")
    @classmethod
    def _one_directional(cls, cells: tuple[HierarchyCell, ...]) -> tuple[HierarchyCell, ...]:
        allowed = {HierarchyCell.INF_ONLY, HierarchyCell.SUP_ONLY}
        if not set(cells) <= allowed:
            raise ValueError("explain_cells may hold only A_inf - A_sup and A_sup - A_inf (one-way entailment)")
        return cells

    def schemes(self) -> list[str]:
        """The partial-mark schemes this configuration produces."""
        out: list[str] = list(EXPLANATION_SCHEMES) if self.explain or self.inference_llm_score else []
        if self.inference_llm_score:
            out.append("inference_llm_score")
        if self.llm_score:
            out.append("llm_score")
        return out


class EntailmentCall(BaseModel):
    gold_index: int
    direction: Direction
    premise: str
    hypothesis: str
    backend: str
    outcome: EntailmentOutcome


class ExplanationRecord(BaseModel):
    """One partial-mark chain: the inference explanation from S1 to S2 and what was read from it."""

    gold_index: int
    cell: HierarchyCell
    s1: str
    s2: str
    raw: str
    explanation: InferenceExplanation | None
    marks: dict[str, float] = Field(default_factory=dict)
    difficulty: int | None = None
    difficulty_raw: str | None = None


class GradedItem(BaseModel):
    item_id: str
    system: str
    question: str
    system_answer: str
    human_judgment: bool | None
    gold_answers: list[str]  # the gold answers used (blank ones dropped, capped by max_gold_answers)
    gold_indices: list[int]  # their indices in the item's gold list
    system_statement: str | None = None
    gold_statements: list[str | None] = Field(default_factory=list)
    entailment_calls: list[EntailmentCall] = Field(default_factory=list)
    membership: Membership | None = None
    cell: HierarchyCell | None = None
    decision: DecisionVariant
    judgment: bool | None = None  # under ``decision``; None = undetermined
    judgments: dict[str, bool | None] = Field(default_factory=dict)  # under every decision variant
    explanations: list[ExplanationRecord] = Field(default_factory=list)
    llm_score: int | None = None
    llm_score_raw: str | None = None
    partial_marks: dict[str, float | None] = Field(default_factory=dict)
    ranking_scores: dict[str, float | None] = Field(default_factory=dict)
    failures: list[ParseFailure] = Field(default_factory=list)
    note: str | None = None


def _noop(kind: str, data: dict[str, Any]) -> None:
    return None


class _Grader:
    """State of one item's grading; a class only to share ask/emit/failures between the steps."""

    def __init__(
        self,
        item: QAItem,
        ask: Ask,
        config: EntailmentEvaluatorConfig,
        on_event: OnEvent,
        entailment: EntailmentBackend,
        statement_cache: MutableMapping[tuple[str, str], str] | None,
    ):
        self.item, self.ask, self.config, self.emit = item, ask, config, on_event
        self.entailment = entailment
        self.cache = statement_cache
        used = [(i, g) for i, g in enumerate(item.gold_answers) if g.strip()]
        if config.max_gold_answers is not None:
            used = used[: config.max_gold_answers]
        self.graded = GradedItem(
            item_id=item.id,
            system=item.system,
            question=item.question,
            system_answer=item.system_answer,
            human_judgment=item.human_judgment,
            gold_answers=[g for _, g in used],
            gold_indices=[i for i, _ in used],
            decision=config.decision,
        )

    def fail(self, failure: ParseFailure, **context: Any) -> None:
        self.graded.failures.append(failure)
        self.emit("parse_failure", {**failure.model_dump(), **context})

    async def statement(self, of: str, answer: str, index: int | None) -> str | None:
        key = (self.item.question, answer)
        if of == "gold" and self.cache is not None and key in self.cache:
            statement = self.cache[key]
            self.emit(
                "statement", {"of": of, "gold_index": index, "answer": answer, "statement": statement, "cached": True}
            )
            return statement
        raw = await self.ask(self.config.roles.qa2d, QA2D_PROMPT, {"question": self.item.question, "answer": answer})
        parsed = parse_statement(raw)
        if isinstance(parsed, ParseFailure):
            self.fail(parsed, step="qa2d", of=of, gold_index=index)
            return None
        if of == "gold" and self.cache is not None:
            self.cache[key] = parsed
        self.emit(
            "statement",
            {"of": of, "gold_index": index, "answer": answer, "statement": parsed, "raw": raw, "cached": False},
        )
        return parsed

    async def test(self, index: int, direction: Direction, premise: str, hypothesis: str) -> EntailmentLabel | None:
        outcome = await self.entailment.entail(premise, hypothesis)
        call = EntailmentCall(
            gold_index=index,
            direction=direction,
            premise=premise,
            hypothesis=hypothesis,
            backend=self.entailment.name,
            outcome=outcome,
        )
        self.graded.entailment_calls.append(call)
        self.emit("entailment", call.model_dump(mode="json"))
        if outcome.failure is not None:
            self.fail(outcome.failure, step="entailment", direction=direction, gold_index=index)
        return outcome.label

    def finish(self, note: str | None = None) -> GradedItem:
        g = self.graded
        g.note = note
        self.emit(
            "verdict",
            {
                "judgment": g.judgment,
                "decision": g.decision,
                "judgments": g.judgments,
                "cell": g.cell.value if g.cell else None,
                "partial_marks": g.partial_marks,
                "note": note,
            },
        )
        return g

    async def run(self) -> GradedItem:
        g, config = self.graded, self.config
        g.judgments = {v: None for v in DECISION_VARIANTS}
        if not g.gold_answers:
            return self.finish("no usable gold answer: undetermined")
        if not self.item.system_answer.strip():
            # Nothing to convert: an empty answer can neither entail nor be entailed by a gold statement.
            g.cell = HierarchyCell.NEITHER
            g.judgments = {v: judged_correct(g.cell, v) for v in DECISION_VARIANTS}
            g.judgment = g.judgments[config.decision]
            self.rank()
            return self.finish("empty system answer: placed in S - (A_sup ∪ A_inf) without model calls")

        # §3 / App. A.1: question-answer pairs become declarative statements (QA2D).
        self.emit("transition", {"state": "qa2d"})
        g.system_statement = await self.statement("system", self.item.system_answer, None)
        if g.system_statement is None:
            return self.finish("system statement unreadable: undetermined")
        g.gold_statements = [
            await self.statement("gold", gold, i) for i, gold in zip(g.gold_indices, g.gold_answers, strict=True)
        ]

        # App. A.1: the statements are premise and hypothesis "and vice versa", against every gold answer.
        self.emit("transition", {"state": "entailment"})
        results = []
        for index, gold_statement in zip(g.gold_indices, g.gold_statements, strict=True):
            if gold_statement is None:
                results.append(GoldEntailment(gold_index=index, system_entails_gold=None, gold_entails_system=None))
                continue
            sup = await self.test(index, "system_entails_gold", g.system_statement, gold_statement)
            inf = await self.test(index, "gold_entails_system", gold_statement, g.system_statement)
            results.append(GoldEntailment(gold_index=index, system_entails_gold=sup, gold_entails_system=inf))

        # §3, App. B.1: set membership, cell, and the judgment under both decision variants.
        self.emit("transition", {"state": "hierarchy"})
        g.membership = membership(results)
        g.cell = g.membership.cell
        g.judgments = {v: judged_correct(g.membership, v) for v in DECISION_VARIANTS}
        g.judgment = g.judgments[config.decision]
        self.emit("membership", {**g.membership.model_dump(mode="json"), "judgments": g.judgments})

        # App. D: partial marks inside the explained cells; every answer gets a ranking score per scheme.
        schemes = config.schemes()
        if schemes and g.cell in config.explain_cells:
            self.emit("transition", {"state": "partial_marks"})
            await self.partial_marks()
        self.rank()
        return self.finish()

    def rank(self) -> None:
        """One ranking score per enabled scheme, for AUROC against human judgments (Tables 3, 13)."""
        g = self.graded
        for scheme in self.config.schemes():
            g.ranking_scores[scheme] = ranking_score(
                g.cell, g.partial_marks.get(scheme), explained_cells=self.config.explain_cells
            )

    async def partial_marks(self) -> None:
        g, config, roles = self.graded, self.config, self.config.roles
        assert g.membership is not None and g.cell is not None and g.system_statement is not None
        statements = dict(zip(g.gold_indices, g.gold_statements, strict=True))
        if config.explain or config.inference_llm_score:
            # A_inf − A_sup: the gold statement entails the system one (S1 = gold); A_sup − A_inf: the reverse.
            inf = g.cell is HierarchyCell.INF_ONLY
            witnesses = g.membership.inf_witnesses if inf else g.membership.sup_witnesses
            for index in witnesses:
                gold_statement = statements[index]
                assert gold_statement is not None
                s1, s2 = (gold_statement, g.system_statement) if inf else (g.system_statement, gold_statement)
                raw = await self.ask(roles.explanation, EXPLANATION_PROMPT, {"s1": s1, "s2": s2})
                parsed = parse_explanation(raw)
                record = ExplanationRecord(
                    gold_index=index,
                    cell=g.cell,
                    s1=s1,
                    s2=s2,
                    raw=raw,
                    explanation=parsed if isinstance(parsed, InferenceExplanation) else None,
                )
                if isinstance(parsed, ParseFailure):
                    # Unnumbered steps cost CIA, C and IA (they count steps and markers) and nothing else.
                    self.fail(parsed, step="explanation", gold_index=index, schemes=list(EXPLANATION_SCHEMES))
                else:
                    record.marks = explanation_marks(parsed)
                if config.inference_llm_score and raw.strip():
                    # App. D: Table 17 row 2 is "an additional message after the explanation step", asked for every
                    # explanation the model gave (as the released cot.py does), whether or not its steps parse.
                    record.difficulty_raw = await self.ask(
                        roles.scoring, INFERENCE_SCORE_PROMPT, {}, [(EXPLANATION_PROMPT, {"s1": s1, "s2": s2}, raw)]
                    )
                    score = parse_score(record.difficulty_raw, scale=DIFFICULTY_SCALE)
                    if isinstance(score, ParseFailure):
                        self.fail(score, step="inference_score", gold_index=index, schemes=["inference_llm_score"])
                    else:
                        record.difficulty = score
                g.explanations.append(record)
                self.emit(
                    "explanation",
                    {
                        "gold_index": index,
                        "cell": g.cell.value,
                        "s1": s1,
                        "s2": s2,
                        "raw": raw,
                        "n_steps": parsed.n_steps if isinstance(parsed, InferenceExplanation) else None,
                        "n_info": parsed.n_info if isinstance(parsed, InferenceExplanation) else None,
                        "n_assumption": parsed.n_assumption if isinstance(parsed, InferenceExplanation) else None,
                        "marks": record.marks,
                        "difficulty": record.difficulty,
                    },
                )
            for scheme in EXPLANATION_SCHEMES:
                g.partial_marks[scheme] = best_mark(r.marks.get(scheme) for r in g.explanations)
            if config.inference_llm_score:
                g.partial_marks["inference_llm_score"] = best_mark(
                    inference_llm_score_mark(r.difficulty) for r in g.explanations if r.difficulty is not None
                )
        if config.llm_score:
            # Table 17 row 3: gold answers "split with /", as in EVOUNA and Wang et al.'s prompts.
            g.llm_score_raw = await self.ask(
                roles.scoring,
                LLM_SCORE_PROMPT,
                {"question": g.question, "golden_answers": "/".join(g.gold_answers), "system_answer": g.system_answer},
            )
            score = parse_score(g.llm_score_raw, scale=CLOSENESS_SCALE)
            if isinstance(score, ParseFailure):
                self.fail(score, step="llm_score", schemes=["llm_score"])
                g.partial_marks["llm_score"] = None
            else:
                g.llm_score = score
                g.partial_marks["llm_score"] = llm_score_mark(score, negated=config.llm_score_sign == "negated")
        for scheme, mark in g.partial_marks.items():
            self.emit("partial_mark", {"scheme": scheme, "mark": mark, "cell": g.cell.value})


async def grade_item(
    item: QAItem,
    ask: Ask,
    config: EntailmentEvaluatorConfig | None = None,
    *,
    on_event: OnEvent | None = None,
    entailment: EntailmentBackend | None = None,
    statement_cache: MutableMapping[tuple[str, str], str] | None = None,
) -> GradedItem:
    """Grade one system answer with the entailment evaluator.

    ``entailment`` defaults to the LLM entailment test on ``config.roles.entailment``; pass a
    ``CrossEncoderNLI`` (see ``make_entailment_backend``) for the NLI variant. ``statement_cache`` maps
    (question, gold answer) to its statement so the five systems of a question share one conversion."""
    config = config or EntailmentEvaluatorConfig()
    if entailment is None:
        if config.backend == "nli":
            raise ValueError("backend='nli' needs an entailment backend: pass make_entailment_backend(config, ask)")
        entailment = LLMEntailment(ask, role=config.roles.entailment)
    return await _Grader(item, ask, config, on_event or _noop, entailment, statement_cache).run()


def make_entailment_backend(config: EntailmentEvaluatorConfig, ask: Ask) -> EntailmentBackend:
    """The configured entailment backend; loads the NLI model (slow) when ``config.backend == "nli"``."""
    if config.backend == "llm":
        return LLMEntailment(ask, role=config.roles.entailment)
    if not config.nli_model:
        raise ValueError("backend='nli' needs nli_model: a local cross-encoder path or a cached model name")
    from .nli import CrossEncoderNLI  # lazy: torch and sentence-transformers are heavy, optional imports

    return CrossEncoderNLI(config.nli_model)
