"""The entailment grader of Yao & Barbosa, "Accurate and Nuanced Open-QA Evaluation Through Textual Entailment".

One session grades one system answer (§3, App. A.1):

1. QA2D (Table 14 row 1): the question with the system answer, and with each gold answer, becomes a declarative
   statement. The systems of a question share its gold statements: each is converted once per run.
2. Entailment (Table 14 row 2): the system statement and every gold statement are premise and hypothesis "and
   vice versa": system ⇒ gold decides A_sup, gold ⇒ system decides A_inf.
3. Hierarchy (§3, App. B.1): the answer's cell, and its judgment under the "union" and "minus" decision variants.
4. Partial marks (App. D, Table 17) for answers in the explained cells (A_inf − A_sup by default): the inference
   explanation from S1 to S2 (CIA, C, IA), its difficulty rating ("Inference + LLM Score") and the direct
   "LLM Score" baseline.

A reply that cannot be read is recorded with the outcome the grader takes instead and never defaulted: an
unknown entailment direction makes membership three-valued, and the item may end "undetermined".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from voirdire.kit import Ask, DisplayHints, ParseError, Protocol, Reply, ReplySchema, Session, StateMachine, Verdict
from voirdire.kit.models import Device, pick_device

from . import plugin
from .data import QAItem
from .entailment import Direction, EntailmentBackend, EntailmentOutcome
from .graded import (
    EntailmentCall,
    ExplanationRecord,
    GradedItem,
    QAOutcome,
    decision_word,
    verdict_evidence,
    verdict_statistics,
)
from .hierarchy import DecisionVariant, GoldEntailment, HierarchyCell, membership
from .parsing import (
    CLOSENESS_SCALE,
    DIFFICULTY_SCALE,
    ENTAILMENT_LABELS,
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
)
from .views import VIEWS


class Statement(BaseModel):
    """QA2D's reply in structured mode: one declarative statement (Table 14 row 1). Bounded, so a grammar closes
    the JSON within a small reply budget instead of running into ``max_tokens``."""

    statement: str = Field(min_length=1, max_length=240)

    @field_validator("statement")
    @classmethod
    def _declarative(cls, text: str) -> str:
        text = text.strip()
        if not text or "\n" in text or text.endswith("?"):
            raise ValueError("one declarative sentence, not a question or several lines")
        return text


# The closed answers asked through reply schemas in structured mode (the paper's text is read otherwise).
STATEMENT = ReplySchema.of(Statement)
ENTAILMENT = ReplySchema.choice(*ENTAILMENT_LABELS)

T = TypeVar("T")

# The states in the order §3 takes them. The grading ends (done) after QA2D when the system statement is
# unreadable, after the hierarchy when the answer's cell is not explained, and at once for an empty answer or an
# item without a usable gold answer.
MACHINE = StateMachine(
    initial=("qa2d", "done"),
    edges={
        "qa2d": ("entailment", "done"),
        "entailment": ("hierarchy",),
        "hierarchy": ("partial_marks", "done"),
        "partial_marks": ("done",),
        "done": (),
    },
)
DISPLAY = DisplayHints(
    colors={"evaluator": "34"},
    item_fields=("question", "system", "system_answer"),
    gold_fields=("gold_answers",),
    quiet_states=("done",),
    views=VIEWS,
)
PROMPT_FOLDER = "qa_entailment"

# What each parser expects, as a parse failure records it.
EXPECTED = {
    "statement": "one declarative statement (a leading 'S:' is allowed)",
    "entailment": 'exactly one of "entailment", "contradiction", "neutral"',
    "explanation": "reasoning steps numbered 1..n, optionally marked [[INFO]] / [[ASSUMPTION]]",
    "score": "a single number from 1 to 5",
}


class Roles(BaseModel):
    """Which model role answers each step (any role; the paper uses one model, GPT-3.5, for all)."""

    qa2d: str = "evaluator"
    entailment: str = "evaluator"
    explanation: str = "evaluator"
    scoring: str = "evaluator"


class QAEntailmentParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    backend: Literal["llm", "nli"] = Field("llm", description="the entailment test: the model, or an NLI model")
    nli_model: str | None = Field(
        None,
        description="entailment by a local NLI cross-encoder (sentence-transformers) instead of the evaluator model; "
        "local files only (a saved model folder, or a name already in the Hugging Face cache)",
    )
    decision: DecisionVariant = Field("union", description="App. B.1 variant")
    roles: Roles = Field(default_factory=Roles)
    # Partial marks: the Table 17 explanation (gives CIA, C, IA), its follow-up difficulty rating
    # ("Inference + LLM Score"), and the direct "LLM Score" baseline; each costs model calls, hence switches.
    explain: bool = Field(
        True, description="explain A_inf - A_sup answers (Table 17 row 1): CIA, C and IA marks and their AUROC"
    )
    inference_llm_score: bool = Field(
        False,
        description="also rate each explanation's difficulty (Table 17 row 2, 'Inference + LLM Score'); "
        "implies the explanations (--partial-marks)",
    )
    llm_score: bool = Field(False, description="the direct 'LLM Score' baseline (Table 17 row 3)")
    # "closeness" (1..5, higher = closer, the prompt's meaning) or "negated" (-closeness, what the authors'
    # cot_vs_pr.ipynb ranks by for Table 13's 0.8827).
    llm_score_sign: Literal["closeness", "negated"] = Field(
        "closeness",
        description="rank the LLM Score baseline by -closeness, as the authors' cot_vs_pr.ipynb did for Table 13's "
        "0.8827 (default: +closeness, the prompt's meaning)",
    )
    # App. D explains A_inf − A_sup; the released code also explains A_sup − A_inf.
    explain_cells: tuple[HierarchyCell, ...] = Field(
        (HierarchyCell.INF_ONLY,),
        description="also give partial marks (explanations, LLM Score) to A_sup - A_inf answers, as the authors' "
        "released code does",
    )
    # TQ carries ~14 aliases per question.
    max_gold_answers: int | None = Field(
        None, ge=1, description="use at most N gold answers per question, in file order"
    )
    # The five EVOUNA systems of a question share its gold statements: convert each gold answer once per run.
    # A session that reuses a statement records it as a "statement" step with cached=True and from_session.
    share_gold_statements: bool = True
    # NLI backend only: class names in class-id order, for models whose config says LABEL_0, LABEL_1, ...
    nli_labels: tuple[str, ...] | None = Field(
        None,
        min_length=3,
        max_length=3,
        description="the NLI model's class names in class-id order, when its config only says LABEL_0..2 "
        "(e.g. contradiction,entailment,neutral)",
    )
    # NLI backend only: where the cross-encoder runs. "auto" is recorded as the device it picked (a GPU's kernels
    # may round a close call the other way, so the device is part of the run); without the NLI backend no local
    # model runs and it is None, so it never tells two LLM-graded runs apart.
    device: Device | None = Field(
        "auto", description="the NLI cross-encoder's device: auto (a GPU where there is one), cpu, cuda or mps"
    )

    @field_validator("explain_cells")
    @classmethod
    def _one_directional(cls, cells: tuple[HierarchyCell, ...]) -> tuple[HierarchyCell, ...]:
        if not set(cells) <= {HierarchyCell.INF_ONLY, HierarchyCell.SUP_ONLY}:
            raise ValueError("explain_cells may hold only A_inf - A_sup and A_sup - A_inf (one-way entailment)")
        return cells

    @field_validator("llm_score_sign")
    @classmethod
    def _sign_of_a_score(cls, sign: str, info: ValidationInfo) -> str:
        if sign == "negated" and not info.data.get("llm_score"):
            raise ValueError("only with --llm-score (llm_score=True)")
        return sign

    @field_validator("nli_labels")
    @classmethod
    def _three_labels(cls, labels: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if labels is not None and sorted(labels) != sorted(ENTAILMENT_LABELS):
            raise ValueError(f"must name {list(ENTAILMENT_LABELS)} once each, got {list(labels)}")
        return labels

    @model_validator(mode="after")
    def _rating_needs_explanations(self) -> QAEntailmentParams:
        # App. D: the difficulty rating is asked after the explanation, so it always comes with CIA, C and IA.
        if self.inference_llm_score:
            self.explain = True
        return self

    @model_validator(mode="after")
    def _device_picked(self) -> QAEntailmentParams:
        if self.backend != "nli":
            self.device = None
        elif self.device == "auto":
            self.device = pick_device("auto")  # type: ignore[assignment]
        return self

    def schemes(self) -> list[str]:
        """The partial-mark schemes this configuration produces."""
        out: list[str] = list(EXPLANATION_SCHEMES) if self.explain or self.inference_llm_score else []
        if self.inference_llm_score:
            out.append("inference_llm_score")
        if self.llm_score:
            out.append("llm_score")
        return out


def _raising(parser: Callable[[str], T | ParseFailure]) -> Callable[[str], T]:
    """A strict parser for ``Session.ask``: a ``ParseFailure`` becomes a ``ParseError`` with its reason."""

    def parse(text: str) -> T:
        value = parser(text)
        if isinstance(value, ParseFailure):
            raise ParseError(value.reason)
        return value

    return parse


def _failure(reply: Reply[Any], parser: str, step: str, **context: Any) -> dict[str, Any]:
    """The verdict's record of an unreadable reply (the transcript's parse_failure holds the reply itself)."""
    record = {"step": step, "parser": parser, "reason": reply.error, "gold_index": None, "direction": None, "of": None}
    return record | context  # gold_index / direction / of in place; "schemes" (the marks it costs) appended


class QAEntailmentGrading(Protocol[QAItem, QAEntailmentParams]):
    """The entailment grader (§3, App. A.1): QA2D -> entailment both ways -> hierarchy -> partial marks.

    Every prompt goes to the ``evaluator`` role by default (the paper uses one model for all of them);
    ``params.roles`` can send each step to another role. With ``backend="nli"`` the entailment test is a local
    cross-encoder (App. C.1, "Entailment (small)") loaded once per run, and only QA2D and partial marks use a model.
    """

    name, roles, paper = plugin.qa_entailment.name, plugin.qa_entailment.roles, plugin.qa_entailment.paper
    machine = MACHINE
    display = DISPLAY
    Item = QAItem
    Params = QAEntailmentParams
    Outcome = QAOutcome
    prompt_folder = PROMPT_FOLDER

    def __init__(self, params: QAEntailmentParams | None = None, *, entailment: EntailmentBackend | None = None):
        super().__init__(params)
        self._backend = entailment  # an injected backend (tests), or the NLI model once loaded
        self._statements: dict[tuple[str, str], tuple[str, str]] = {}  # (question, gold) -> statement, session

    def required_roles(self) -> tuple[str, ...]:
        p, r = self.params, self.params.roles
        needed = [r.qa2d]
        if p.backend == "llm" and self._backend is None:
            needed.append(r.entailment)
        if p.explain or p.inference_llm_score:
            needed.append(r.explanation)
        if p.inference_llm_score or p.llm_score:
            needed.append(r.scoring)
        return tuple(dict.fromkeys(needed))

    def entailment_backend(self) -> EntailmentBackend | None:
        """The NLI cross-encoder for ``backend="nli"`` (loaded on first use, shared by every session); None for
        the test by the evaluator model."""
        if self._backend is None and self.params.backend == "nli":
            if not self.params.nli_model:
                raise ValueError("backend='nli' needs nli_model: a local cross-encoder folder or a cached model name")
            from .nli import CrossEncoderNLI  # lazy: torch and sentence-transformers are heavy, optional imports

            labels = dict(enumerate(self.params.nli_labels)) if self.params.nli_labels else None
            self._backend = CrossEncoderNLI(
                self.params.nli_model,
                label_map=labels,
                device=self.params.device,  # type: ignore[arg-type]
            )
        return self._backend

    # ------------------------------------------------------------------ one graded answer, §3
    async def run(self, item: QAItem, session: Session) -> Verdict:
        p = self.params
        g = GradedItem.start(item, p.decision, p.max_gold_answers)
        if not g.gold_answers:
            return self._verdict(session, g, "no usable gold answer: undetermined")
        if not item.system_answer.strip():
            # Nothing to convert: an empty answer can neither entail nor be entailed by a gold statement.
            g.place(HierarchyCell.NEITHER)
            g.rank(p.schemes(), p.explain_cells)
            return self._verdict(session, g, "empty system answer: placed in S - (A_sup ∪ A_inf) without model calls")

        # §3, App. A.1: question-answer pairs become declarative statements (QA2D).
        session.enter("qa2d", stage="qa2d")
        g.system_statement = await self._statement(session, g, "system", item.system_answer, None)
        if g.system_statement is None:
            return self._verdict(session, g, "system statement unreadable: undetermined")
        golds = zip(g.gold_indices, g.gold_answers, strict=True)
        g.gold_statements = [await self._statement(session, g, "gold", gold, i) for i, gold in golds]

        # App. A.1: the statements are premise and hypothesis "and vice versa", against every gold answer.
        session.enter("entailment", stage="entailment")
        results = []
        for index, gold in zip(g.gold_indices, g.gold_statements, strict=True):
            sup = inf = None
            if gold is not None:
                sup = await self._entail(session, g, index, "system_entails_gold", g.system_statement, gold)
                inf = await self._entail(session, g, index, "gold_entails_system", gold, g.system_statement)
            results.append(GoldEntailment(gold_index=index, system_entails_gold=sup, gold_entails_system=inf))

        # §3, App. B.1: set membership, the cell, and the judgment under both decision variants.
        session.enter("hierarchy", stage="hierarchy")
        g.membership = membership(results)
        g.place(g.membership)
        session.note("membership", **g.membership.model_dump(mode="json"), judgments=g.judgments)

        # App. D: partial marks inside the explained cells; every answer gets a ranking score per scheme.
        if p.schemes() and g.cell in p.explain_cells:
            session.enter("partial_marks", stage="partial_marks")
            if p.explain or p.inference_llm_score:
                await self._explanations(session, g)
            if p.llm_score:
                await self._llm_score(session, g)
            for scheme, mark in g.partial_marks.items():
                session.note("partial_mark", scheme=scheme, mark=mark, cell=g.cell.value)  # type: ignore[union-attr]
        g.rank(p.schemes(), p.explain_cells)
        return self._verdict(session, g)

    def _verdict(self, session: Session, g: GradedItem, note: str | None = None) -> Verdict:
        g.note = note
        session.enter("done", stage="verdict")
        return session.verdict(
            decision_word(g.judgment),
            accepted=g.judgment,
            evidence=verdict_evidence(g),
            statistics=verdict_statistics(g, self.params.backend),
        )

    async def _ask(
        self, session: Session, g: GradedItem, role: str, prompt: str, request: Ask[Any], /, **variables: Any
    ) -> Reply[Any]:
        """A fresh conversation of ``role`` per prompt: the paper makes independent API calls."""
        await session.reset(role)
        g.model_calls += 1
        return await session.ask(role, prompt, request, **variables)

    # ------------------------------------------------------------------ QA2D, Table 14 row 1
    async def _statement(self, session: Session, g: GradedItem, of: str, answer: str, index: int | None) -> str | None:
        key = (g.question, answer)
        if of == "gold" and self.params.share_gold_statements and key in self._statements:
            statement, source = self._statements[key]
            session.note(
                "statement",
                of=of,
                gold_index=index,
                answer=answer,
                statement=statement,
                cached=True,
                from_session=source,
            )
            return statement
        what = "no system statement: no entailment test; the item is undetermined (scored as judged incorrect)"
        if of == "gold":
            what = f"no statement for gold answer {index}: both its directions are unknown"
        reply = await self._ask(
            session,
            g,
            self.params.roles.qa2d,
            "qa2d",
            Ask(parse=_raising(parse_statement), schema=STATEMENT, expected=EXPECTED["statement"], on_failure=what),
            question=g.question,
            answer=answer,
        )
        if reply.value is None:
            g.failures.append(_failure(reply, "statement", "qa2d", gold_index=index, of=of))
            return None
        if isinstance(reply.value, Statement):  # structured mode
            reply = Reply(text=reply.text, value=reply.value.statement)
        if of == "gold" and self.params.share_gold_statements:
            self._statements.setdefault(key, (reply.value, session.session_id))
        session.note(
            "statement", of=of, gold_index=index, answer=answer, statement=reply.value, raw=reply.text, cached=False
        )
        return str(reply.value)

    # ------------------------------------------------------------------ entailment, Table 14 row 2
    async def _entail(
        self, session: Session, g: GradedItem, index: int, direction: Direction, premise: str, hypothesis: str
    ) -> EntailmentLabel | None:
        backend = self.entailment_backend()
        if backend is not None:
            outcome = await backend.entail(premise, hypothesis)
        else:
            reply = await self._ask(
                session,
                g,
                self.params.roles.entailment,
                "entailment",
                Ask(
                    parse=_raising(parse_entailment),
                    schema=ENTAILMENT,
                    expected=EXPECTED["entailment"],
                    on_failure=f"{direction} against gold answer {index} is unknown: another gold answer may still "
                    "decide membership, else the cell (and possibly the judgment) is undetermined",
                ),
                premise=premise,
                hypothesis=hypothesis,
            )
            failure = None if reply.ok else ParseFailure(parser="entailment", reason=reply.error or "", raw=reply.text)
            outcome = EntailmentOutcome(label=reply.value, raw=reply.text, failure=failure)
            if failure is not None:
                g.failures.append(_failure(reply, "entailment", "entailment", gold_index=index, direction=direction))
        call = EntailmentCall(
            gold_index=index,
            direction=direction,
            premise=premise,
            hypothesis=hypothesis,
            backend=backend.name if backend is not None else "llm",
            outcome=outcome,
        )
        g.entailment_calls.append(call)
        session.note("entailment", **call.model_dump(mode="json"))
        return outcome.label

    # ------------------------------------------------------------------ partial marks, App. D, Table 17
    async def _explanations(self, session: Session, g: GradedItem) -> None:
        """Row 1 for each gold statement that witnesses the cell, then (Inference + LLM Score) row 2 as "an
        additional message after the explanation step", for every explanation the model gave (as the released
        cot.py does), whether or not its steps parse. The best mark over the explanations counts."""
        p, roles = self.params, self.params.roles
        assert g.membership is not None and g.cell is not None and g.system_statement is not None
        statements = dict(zip(g.gold_indices, g.gold_statements, strict=True))
        # A_inf − A_sup: the gold statement entails the system one (S1 = gold); A_sup − A_inf: the reverse.
        inf = g.cell is HierarchyCell.INF_ONLY
        for index in g.membership.inf_witnesses if inf else g.membership.sup_witnesses:
            gold = statements[index]
            assert gold is not None
            s1, s2 = (gold, g.system_statement) if inf else (g.system_statement, gold)
            rating = "; its difficulty rating (Inference + LLM Score) is still asked" if p.inference_llm_score else ""
            reply = await self._ask(
                session,
                g,
                roles.explanation,
                "inference_explanation",
                Ask(
                    parse=_raising(parse_explanation),
                    expected=EXPECTED["explanation"],
                    on_failure=f"no CIA / C / IA mark from gold answer {index}'s explanation{rating}",
                ),
                s1=s1,
                s2=s2,
            )
            explanation: InferenceExplanation | None = reply.value
            record = ExplanationRecord(
                gold_index=index, cell=g.cell, s1=s1, s2=s2, raw=reply.text, explanation=explanation
            )
            if explanation is None:
                # Unnumbered steps cost CIA, C and IA (they count steps and markers) and nothing else.
                schemes = list(EXPLANATION_SCHEMES)
                g.failures.append(_failure(reply, "explanation", "explanation", gold_index=index, schemes=schemes))
            else:
                record.marks = explanation_marks(explanation)
            if p.inference_llm_score and reply.text.strip():
                record.difficulty_raw, record.difficulty = await self._difficulty(session, g, index, s1, s2, reply.text)
            g.explanations.append(record)
            session.note(
                "explanation",
                gold_index=index,
                cell=g.cell.value,
                s1=s1,
                s2=s2,
                raw=reply.text,
                n_steps=explanation.n_steps if explanation else None,
                n_info=explanation.n_info if explanation else None,
                n_assumption=explanation.n_assumption if explanation else None,
                marks=record.marks,
                difficulty=record.difficulty,
            )
        for scheme in EXPLANATION_SCHEMES:
            g.partial_marks[scheme] = best_mark(r.marks.get(scheme) for r in g.explanations)
        if p.inference_llm_score:
            g.partial_marks["inference_llm_score"] = best_mark(
                inference_llm_score_mark(r.difficulty) for r in g.explanations if r.difficulty is not None
            )

    async def _difficulty(
        self, session: Session, g: GradedItem, index: int, s1: str, s2: str, explanation: str
    ) -> tuple[str, int | None]:
        """Table 17 row 2 in the explanation's conversation: the row 1 prompt and the model's explanation first."""
        role = self.params.roles.scoring
        await session.reset(role)
        session.seed(role, "inference_explanation", s1=s1, s2=s2)
        session.remember(role, "assistant", explanation, shown=False)
        g.model_calls += 1
        reply = await session.ask(
            role,
            "inference_score",
            Ask(
                parse=_raising(lambda text: parse_score(text, scale=DIFFICULTY_SCALE)),
                expected=EXPECTED["score"],
                on_failure=f"no Inference + LLM Score mark from gold answer {index}'s explanation",
            ),
        )
        if reply.value is None:
            g.failures.append(
                _failure(reply, "score", "inference_score", gold_index=index, schemes=["inference_llm_score"])
            )
        return reply.text, reply.value

    async def _llm_score(self, session: Session, g: GradedItem) -> None:
        """Table 17 row 3: gold answers "split with /", as in EVOUNA and Wang et al.'s prompts."""
        reply = await self._ask(
            session,
            g,
            self.params.roles.scoring,
            "llm_score",
            Ask(
                parse=_raising(lambda text: parse_score(text, scale=CLOSENESS_SCALE)),
                expected=EXPECTED["score"],
                on_failure="no LLM Score mark: the answer is left out of that scheme's AUROC",
            ),
            question=g.question,
            golden_answers="/".join(g.gold_answers),
            system_answer=g.system_answer,
        )
        g.llm_score_raw, g.llm_score = reply.text, reply.value
        if reply.value is None:
            g.failures.append(_failure(reply, "score", "llm_score", schemes=["llm_score"]))
            g.partial_marks["llm_score"] = None
        else:
            g.partial_marks["llm_score"] = llm_score_mark(reply.value, negated=self.params.llm_score_sign == "negated")
