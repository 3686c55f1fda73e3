"""QA grading as voirdire protocols: every graded (question, system answer) pair is one Session with a transcript.

``QAEntailmentGrading`` runs the phase-1 evaluator pipeline (``pipeline.grade_item``: QA2D, entailment in both
directions against every gold answer, hierarchy, partial marks; §3, App. A.1, App. B.1, App. D) with its model
calls going through the Session, so each item's transcript holds the prompts and replies, the statements, both
entailment calls per gold answer, set membership, the partial-mark chain and every unreadable reply.

``LexicalMatchGrading`` and ``TokenF1Grading`` are the model-free baselines (Table 1 "Lexical Match", the
"F1 Score" baseline) as deterministic protocols with no roles: one step and one verdict per item, so a baseline
run leaves the same kind of transcript, resumes the same way, and is scored by the same report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from voirdire.protocol import Protocol, Session
from voirdire.transcript import Verdict

from .data import QAItem
from .lexical import matching_gold, normalize_answer
from .parsing import ENTAILMENT_LABELS
from .pipeline import (
    EXPLANATION_PROMPT,
    INFERENCE_SCORE_PROMPT,
    LLM_SCORE_PROMPT,
    QA2D_PROMPT,
    STATES,
    EntailmentBackend,
    EntailmentEvaluatorConfig,
    Exchange,
    GradedItem,
    grade_item,
)
from .token_f1 import DEFAULT_F1_THRESHOLD, token_f1

PROMPT_FOLDER = "qa_entailment"


def decision_word(judgment: bool | None) -> str:
    return {True: "correct", False: "incorrect", None: "undetermined"}[judgment]


def _agrees(judgment: bool | None, human: bool | None) -> bool | None:
    return None if judgment is None or human is None else judgment == human


# ----------------------------------------------------------------------------------------- entailment


class QAEntailmentParams(EntailmentEvaluatorConfig):
    """The evaluator's configuration (``EntailmentEvaluatorConfig``) plus what only a run over many items needs."""

    model_config = ConfigDict(extra="forbid")
    # The five EVOUNA systems of a question share its gold statements: convert each gold answer once per run.
    # A session that reuses a statement records it as a "statement" step with cached=True and from_session.
    share_gold_statements: bool = True
    # NLI backend only: class names in class-id order, for models whose config says LABEL_0, LABEL_1, ...
    nli_labels: tuple[str, ...] | None = Field(default=None, min_length=3, max_length=3)


# Per pipeline step: the prompt, what its parser expects, and the defined outcome when a reply cannot be read.
_STEP_PROMPTS = {
    "qa2d": QA2D_PROMPT,
    "entailment": "entailment",
    "explanation": EXPLANATION_PROMPT,
    "inference_score": INFERENCE_SCORE_PROMPT,
    "llm_score": LLM_SCORE_PROMPT,
}
_EXPECTED = {
    "statement": "one declarative statement (a leading 'S:' is allowed)",
    "entailment": 'exactly one of "entailment", "contradiction", "neutral"',
    "explanation": "reasoning steps numbered 1..n, optionally marked [[INFO]] / [[ASSUMPTION]]",
    "score": "a single number from 1 to 5",
}


def _outcome(data: Mapping[str, Any], params: EntailmentEvaluatorConfig) -> str:
    step, index = data.get("step"), data.get("gold_index")
    if step == "qa2d":
        if data.get("of") == "system":
            return "no system statement: no entailment test; the item is undetermined (scored as judged incorrect)"
        return f"no statement for gold answer {index}: both its directions are unknown"
    if step == "entailment":
        return (
            f"{data.get('direction')} against gold answer {index} is unknown: another gold answer may still decide "
            "membership, else the cell (and possibly the judgment) is undetermined"
        )
    if step == "explanation":
        rating = "; its difficulty rating (Inference + LLM Score) is still asked" if params.inference_llm_score else ""
        return f"no CIA / C / IA mark from gold answer {index}'s explanation{rating}"
    if step == "inference_score":
        return f"no Inference + LLM Score mark from gold answer {index}'s explanation"
    if step == "llm_score":
        return "no LLM Score mark: the answer is left out of that scheme's AUROC"
    return "reply left unparsed"


class _SessionAsk:
    """The pipeline's ``Ask`` over a Session: every call is a fresh conversation of the role (the paper makes
    independent API calls); earlier exchanges in ``context`` are replayed into the role's memory first."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.calls = 0

    async def __call__(
        self, role: str, prompt: str, variables: Mapping[str, str], context: Sequence[Exchange] = ()
    ) -> str:
        session = self.session
        await session.reset(role)
        for earlier_prompt, earlier_variables, reply in context:
            session.seed(role, earlier_prompt, **earlier_variables)
            session.remember(role, "assistant", reply, shown=False)
        self.calls += 1
        return (await session.ask(role, prompt, **variables)).text


class _Recorder:
    """Maps the pipeline's events onto the transcript: transitions, parse failures and structured steps."""

    def __init__(
        self, session: Session, params: QAEntailmentParams, sources: dict[tuple[str, str], str], question: str
    ):
        self.session, self.params, self.sources, self.question = session, params, sources, question
        self.failures: list[dict[str, Any]] = []

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        session = self.session
        if kind == "transition":
            session.enter(data["state"], stage=data["state"])
        elif kind == "parse_failure":
            step = data.get("step", "")
            roles = self.params.roles
            role = {"qa2d": roles.qa2d, "entailment": roles.entailment, "explanation": roles.explanation}.get(
                step, roles.scoring
            )
            prompt = _STEP_PROMPTS.get(step)
            session.parse_failure(
                role,
                f"{PROMPT_FOLDER}/{prompt}" if prompt else None,
                expected=_EXPECTED.get(data["parser"], data["parser"]),
                raw=data["raw"],
                error=data["reason"],
                outcome=_outcome(data, self.params),
            )
            failure = {k: data.get(k) for k in ("step", "parser", "reason", "gold_index", "direction", "of")}
            if "schemes" in data:  # the partial-mark schemes this reply costs (explanation / scoring steps)
                failure["schemes"] = data["schemes"]
            self.failures.append(failure)
        elif kind == "verdict":
            return  # becomes the session's verdict (run() below), with everything this event carries
        else:
            if kind == "statement" and data.get("of") == "gold":
                key = (self.question, data["answer"])
                if data.get("cached"):
                    data = {**data, "from_session": self.sources.get(key)}
                else:
                    self.sources.setdefault(key, session.session_id)
            payload = dict(data)
            if "name" in payload:  # Session.note's own parameter
                payload["name_"] = payload.pop("name")
            session.note(kind, **payload)


class QAEntailmentGrading(Protocol[QAItem, QAEntailmentParams]):
    """The entailment evaluator (§3, App. A.1): QA2D -> entailment both ways -> hierarchy -> partial marks.

    Every prompt goes to the ``evaluator`` role by default (the paper uses one model, GPT-3.5, for all of them);
    ``params.roles`` can send each step to another role. With ``backend="nli"`` the entailment test is a local
    cross-encoder (App. C.1, "Entailment (small)") loaded once per run, and only QA2D and partial marks use a model.
    """

    name = "qa_entailment"
    roles = ("evaluator",)
    states = STATES
    Item = QAItem
    Params = QAEntailmentParams
    prompt_folder = PROMPT_FOLDER

    def __init__(self, params: QAEntailmentParams | None = None, *, entailment: EntailmentBackend | None = None):
        super().__init__(params)
        self._backend = entailment  # an injected backend (tests), or the NLI model once loaded
        self._statements: dict[tuple[str, str], str] = {}
        self._statement_sources: dict[tuple[str, str], str] = {}

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

    @classmethod
    def item_from_record(cls, record: dict[str, Any]) -> QAItem:
        return QAItem.model_validate(record)

    def item_id(self, item: QAItem) -> str:
        return item.id

    def entailment_backend(self) -> EntailmentBackend | None:
        """The NLI cross-encoder for ``backend="nli"`` (loaded on first use, shared by every session); None for
        the LLM test, which the pipeline builds per session over the session's ``ask``."""
        if self._backend is None and self.params.backend == "nli":
            if not self.params.nli_model:
                raise ValueError("backend='nli' needs nli_model: a local cross-encoder folder or a cached model name")
            from .nli import CrossEncoderNLI  # lazy: torch and sentence-transformers are heavy, optional imports

            labels = self.params.nli_labels
            label_map = dict(enumerate(labels)) if labels else None
            if label_map and sorted(label_map.values()) != sorted(ENTAILMENT_LABELS):
                raise ValueError(f"nli_labels must name {list(ENTAILMENT_LABELS)} once each, got {list(labels)}")
            self._backend = CrossEncoderNLI(self.params.nli_model, label_map=label_map)  # type: ignore[arg-type]
        return self._backend

    async def run(self, item: QAItem, session: Session) -> Verdict:
        ask = _SessionAsk(session)
        record = _Recorder(session, self.params, self._statement_sources, item.question)
        graded = await grade_item(
            item,
            ask,
            self.params,
            on_event=record,
            entailment=self.entailment_backend(),
            statement_cache=self._statements if self.params.share_gold_statements else None,
        )
        return session.verdict(
            decision_word(graded.judgment),
            accepted=graded.judgment,
            evidence=_evidence(graded),
            statistics=entailment_statistics(graded, self.params, model_calls=ask.calls, failures=record.failures),
        )


def _evidence(g: GradedItem) -> list[str]:
    out = []
    if g.system_statement is not None:
        out.append(f"system statement: {g.system_statement}")
    for index, answer, statement in zip(g.gold_indices, g.gold_answers, g.gold_statements, strict=False):
        out.append(f"gold statement {index} ({answer}): {statement if statement is not None else '(unreadable)'}")
    if g.membership is not None:
        m = g.membership
        out.append(
            f"in A_sup: {m.in_sup} (witnesses {m.sup_witnesses}); in A_inf: {m.in_inf} (witnesses {m.inf_witnesses})"
        )
    out.append(f"cell: {g.cell.value if g.cell else 'undetermined'}")
    if g.note:
        out.append(g.note)
    return out


def entailment_statistics(
    g: GradedItem, params: EntailmentEvaluatorConfig, *, model_calls: int, failures: list[dict[str, Any]]
) -> dict[str, Any]:
    """What the report needs from one graded item, kept in its verdict so a transcript alone can be re-scored."""
    m = g.membership
    return {
        "evaluator": "entailment",
        "backend": params.backend,
        "decision_variant": g.decision,
        "system": g.system,
        "human_judgment": g.human_judgment,
        "judgment": g.judgment,
        "judgments": g.judgments,
        "agrees_with_human": _agrees(g.judgment, g.human_judgment),
        "cell": g.cell.value if g.cell else None,
        "cell_rank": g.cell.rank if g.cell else None,
        "in_sup": m.in_sup if m else None,
        "in_inf": m.in_inf if m else None,
        "sup_witnesses": m.sup_witnesses if m else [],
        "inf_witnesses": m.inf_witnesses if m else [],
        "system_statement": g.system_statement,
        "gold_statements": g.gold_statements,
        "gold_indices": g.gold_indices,
        "explanations": [
            {
                "gold_index": r.gold_index,
                "n_steps": r.explanation.n_steps if r.explanation else None,
                "n_info": r.explanation.n_info if r.explanation else None,
                "n_assumption": r.explanation.n_assumption if r.explanation else None,
                "marks": r.marks,
                "difficulty": r.difficulty,
            }
            for r in g.explanations
        ],
        "partial_marks": g.partial_marks,
        "ranking_scores": g.ranking_scores,
        "llm_score": g.llm_score,
        "model_calls": model_calls,
        "parse_failures": failures,
        "note": g.note,
    }


# ----------------------------------------------------------------------------------------- baselines


class LexicalMatchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Wang et al.'s rule lets a gold piece that normalises to "" match everything; Table 1 needs it (lexical.py).
    skip_empty_gold: bool = False


class TokenF1Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    threshold: float = Field(DEFAULT_F1_THRESHOLD, ge=0.0, le=1.0, description="the paper gives none; 0.5 is ours")


class _Baseline(Protocol[QAItem, Any]):
    evaluator: ClassVar[str]
    roles: ClassVar[tuple[str, ...]] = ()
    Item = QAItem
    # No prompts: the folder does not exist, so nothing is loaded and the header lists no prompt.
    prompt_folder = "qa_baselines"

    @classmethod
    def item_from_record(cls, record: dict[str, Any]) -> QAItem:
        return QAItem.model_validate(record)

    def item_id(self, item: QAItem) -> str:
        return item.id

    def _verdict(self, session: Session, item: QAItem, judgment: bool, evidence: list[str], **extra: Any) -> Verdict:
        return session.verdict(
            decision_word(judgment),
            accepted=judgment,
            evidence=evidence,
            statistics={
                "evaluator": self.evaluator,
                "system": item.system,
                "human_judgment": item.human_judgment,
                "judgment": judgment,
                "agrees_with_human": _agrees(judgment, item.human_judgment),
                **extra,
            },
        )


class LexicalMatchGrading(_Baseline):
    """Table 1 "Lexical Match" (Wang et al. 2023): some normalised gold answer occurs in the normalised answer."""

    name = "qa_lexical"
    evaluator = "lexical"
    states = ("match",)
    Params = LexicalMatchParams

    async def run(self, item: QAItem, session: Session) -> Verdict:
        gold = matching_gold(item.system_answer, item.gold_answers, skip_empty_gold=self.params.skip_empty_gold)
        normalized = normalize_answer(item.system_answer)
        session.note("lexical_match", normalized_answer=normalized, matched_gold=gold, judgment=gold is not None)
        evidence = [
            f"gold answer {gold!r} occurs in the normalised answer" if gold is not None else "no gold answer occurs"
        ]
        return self._verdict(session, item, gold is not None, evidence, matched_gold=gold)


class TokenF1Grading(_Baseline):
    """SQuAD token F1 against the best gold answer, judged correct at ``threshold`` (§2; Tables 3/13 baseline)."""

    name = "qa_token_f1"
    evaluator = "f1"
    states = ("match",)
    Params = TokenF1Params

    async def run(self, item: QAItem, session: Session) -> Verdict:
        scores = [token_f1(item.system_answer, g) for g in item.gold_answers]
        best = max(range(len(scores)), key=scores.__getitem__) if scores else None
        f1 = scores[best] if best is not None else 0.0
        judgment = f1 >= self.params.threshold
        session.note(
            "token_f1",
            f1=f1,
            best_gold=item.gold_answers[best] if best is not None else None,
            threshold=self.params.threshold,
            judgment=judgment,
        )
        evidence = [f"best token F1 {f1:.3f} (threshold {self.params.threshold})"]
        return self._verdict(session, item, judgment, evidence, f1=f1)


EVALUATORS: dict[str, type[Protocol[Any, Any]]] = {
    "lexical": LexicalMatchGrading,
    "f1": TokenF1Grading,
    "entailment": QAEntailmentGrading,
}

__all__ = [
    "EVALUATORS",
    "LexicalMatchGrading",
    "LexicalMatchParams",
    "QAEntailmentGrading",
    "QAEntailmentParams",
    "TokenF1Grading",
    "TokenF1Params",
    "decision_word",
    "entailment_statistics",
]
