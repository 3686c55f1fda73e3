"""How DCR's steps read in ``voirdire show``, the viewer and the export (display hints, no reader imports this
package): per round, DCE's table of candidate sentences with the evaluator's reason (Eq. 1) and AMC's ±1 mark
(Eq. 2) beside it, Ẑ (Eq. 3), then RAI's rewrite (Eq. 4) as a word diff; the verdict shows Ẑ across rounds."""

from __future__ import annotations

from voirdire.views import Column, StepView, VerdictView, Views

VIEWS = Views(
    steps={
        "evaluation": StepView(
            title="DCE · sentence reasons, round {round}",
            fields=(Column(key="is_consistent", label="evaluator: consistent", format="yesno"),),
            table="reasons",
            columns=(
                Column(key="#"),
                Column(key="sentence", label="candidate sentence"),
                Column(key="reason", label="evaluator's reason"),
                Column(key="/sentence_level", label="one sentence", format="yesno"),
            ),
        ),
        "score": StepView(
            into="evaluation",
            match="round",
            columns=(Column(key="marks", label="AMC mark", format="sign", missing="not marked"),),
            fields=(
                Column(key="score", label="Ẑ", format="number"),
                Column(key="alpha", label="α"),
                Column(key="beta", label="β"),
            ),
        ),
        "candidate_diff": StepView(
            title="RAI · rewrite for round {round}",
            fields=(Column(key="unchanged", label="sentences kept"),),
            diff=("before", "after"),
        ),
    },
    verdict=VerdictView(
        shows=StepView(
            title="consistency",
            fields=(
                Column(key="score", label="Ẑ", format="number", missing="unscored"),
                Column(key="scores", label="Ẑ by round", format="trend", missing="unscored"),
                Column(key="rounds", label="improvement rounds"),
                Column(key="stopped", label="stopped"),
            ),
        ),
        subject=Column(key="candidate", label="final candidate"),
    ),
    folded=("evaluator", "converter", "improver"),
)
