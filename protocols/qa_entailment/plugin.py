"""The cards of the entailment grader and its two model-free baselines (entry points in the
``voirdire.protocols`` group): what ``voirdire --help`` and ``voirdire list`` show of them, as data; the
registrations are ``registration``'s, imported when a command runs one of them (``voirdire.kit.Card``)."""

from __future__ import annotations

from voirdire.kit import Card

PAPER = (
    "Yao & Barbosa. Accurate and Nuanced Open-QA Evaluation Through Textual Entailment "
    "(../shared/papers/entailment-qa-eval.txt)"
)

qa_entailment = Card(
    name="qa_entailment",
    target="voirdire.protocols.qa_entailment.registration:qa_entailment",
    roles=("evaluator",),
    paper=PAPER,
    command="qa-eval",
    help="grade QA answers (lexical | f1 | entailment) and score the grader against human judgments",
)
qa_lexical = Card(
    name="qa_lexical",
    target="voirdire.protocols.qa_entailment.registration:qa_lexical",
    roles=(),
    paper=PAPER,
    help=(
        'Table 1 "Lexical Match" (Wang et al. 2023): some normalised gold answer occurs in the normalised answer.'
    ),
)
qa_token_f1 = Card(
    name="qa_token_f1",
    target="voirdire.protocols.qa_entailment.registration:qa_token_f1",
    roles=(),
    paper=PAPER,
    help=(
        "SQuAD token F1 against the best gold answer, judged correct at ``threshold`` (§2; Tables 3/13 baseline)."
    ),
)
