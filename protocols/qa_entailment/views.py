"""How QA grading's steps read in ``voirdire show``, the viewer and the export (display hints): the QA2D statement
of each answer, each entailment test with its premise, hypothesis and label (Table 14), the hierarchy cell the
answer falls in, partial marks (App. D), and the baselines' matches; the verdict agrees with gold when its
statistic ``agrees_with_human`` says so."""

from __future__ import annotations

from voirdire.kit import Column, StepView, VerdictView, Views

VIEWS = Views(
    steps={
        "statement": StepView(
            title="QA2D statement of the {of} answer",
            fields=(
                Column(key="answer", label="answer"),
                Column(key="statement", label="statement", missing="unreadable"),
                Column(key="cached", label="reused", format="yesno"),
            ),
        ),
        "entailment": StepView(
            title="entailment test: {direction}",
            fields=(
                Column(key="premise", label="premise"),
                Column(key="hypothesis", label="hypothesis"),
                Column(key="outcome.label", label="label", missing="unreadable"),
                Column(key="backend", label="by"),
                Column(key="outcome.failure", label="failure", missing=""),
            ),
        ),
        "membership": StepView(
            title="hierarchy cell {cell}",
            fields=(
                Column(key="in_sup", label="in A_sup", format="yesno"),
                Column(key="in_inf", label="in A_inf", format="yesno"),
                Column(key="sup_witnesses", label="A_sup witnesses", format="refs", missing="none"),
                Column(key="inf_witnesses", label="A_inf witnesses", format="refs", missing="none"),
                Column(key="judgments", label="judgments"),
            ),
        ),
        "partial_mark": StepView(
            title="partial mark ({scheme})",
            fields=(Column(key="mark", label="mark", format="number"), Column(key="cell", label="cell")),
        ),
        "explanation": StepView(
            title="explanation for gold statement #{gold_index}",
            fields=(Column(key="s1", label="from"), Column(key="s2", label="to"), Column(key="cell", label="cell")),
        ),
        "lexical_match": StepView(
            title="lexical match",
            fields=(
                Column(key="normalized_answer", label="normalised answer"),
                Column(key="matched_gold", label="gold found in it", missing="none"),
                Column(key="judgment", label="judgment", format="yesno"),
            ),
        ),
        "token_f1": StepView(
            title="token F1",
            fields=(
                Column(key="f1", label="F1", format="number"),
                Column(key="best_gold", label="best gold"),
                Column(key="threshold", label="threshold", format="number"),
                Column(key="judgment", label="judgment", format="yesno"),
            ),
        ),
    },
    verdict=VerdictView(gold="agrees_with_human", gold_source="the dataset's human judgments"),
)
