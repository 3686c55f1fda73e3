"""How DCR's steps read in ``voirdire show``, the viewer and the export (display hints, no reader imports this
package). Per round: DCE's reasons (Eq. 1), each with the sentence it is about and whether Eq. 3 scores it; AMC's
table of the candidate's sentences with their ±1 marks (Eq. 2), the sentences no scored reason is about shown as
not evaluated, and Ẑ (Eq. 3); then RAI's rewrite (Eq. 4) as a word diff, with the sentences it removed (flagged
ones it deleted), lost (ones nobody flagged that are gone) and rewrote against its instructions. The verdict
shows Ẑ across rounds."""

from __future__ import annotations

from voirdire.kit import Column, StepView, Tone, VerdictView, Views

STATUS_TONES: dict[str, Tone] = {"consistent": "good", "inconsistent": "bad", "not evaluated": "muted"}
REASON_TONES: dict[str, Tone] = {"scored": "", "paragraph": "muted", "not_in_candidate": "bad", "repeated": "muted"}

VIEWS = Views(
    steps={
        "evaluation": StepView(
            title="DCE · reasons, round {round}",
            fields=(
                Column(key="is_consistent", label="evaluator: consistent", format="yesno"),
                Column(key="not_evaluated", label="sentences no reason is about", format="refs", missing="none"),
            ),
            table="reasons",
            columns=(
                Column(key="#", label="reason"),
                Column(key="sentence", label="about the sentence"),
                Column(key="reason", label="evaluator's reason"),
                Column(key="/reason_sentences", label="candidate sentence", format="refs", missing="none"),
                Column(key="/reason_status", label="in Eq. 3", tones=REASON_TONES),
            ),
        ),
        "score": StepView(
            title="AMC · candidate sentences, round {round}",
            fields=(
                Column(key="score", label="Ẑ", format="number"),
                Column(key="k", label="k"),
                Column(key="alpha", label="α"),
                Column(key="beta", label="β"),
                Column(key="not_evaluated", label="not evaluated (count as −1)"),
                Column(key="marks", label="marks", format="sign"),
            ),
            table="sentence_table",
            columns=(
                Column(key="#"),
                Column(key="text", label="candidate sentence"),
                Column(key="status", label="status", tones=STATUS_TONES),
                Column(key="marks", label="AMC mark", format="sign", missing="not marked"),
                Column(key="reasons", label="reasons", format="refs", missing="none"),
            ),
        ),
        "candidate_diff": StepView(
            title="RAI · rewrite for round {round}",
            fields=(
                Column(key="unchanged", label="sentences kept"),
                Column(key="removed", label="removed (flagged, deleted)", format="list", missing="none"),
                Column(key="lost", label="lost (not flagged)", format="list", missing="none"),
                Column(key="rewrote_consistent", label="warning: rewrote a consistent sentence", format="list",
                       missing="none"),
            ),
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
                Column(key="not_evaluated", label="sentences not evaluated", format="refs", missing="none"),
                Column(key="lost_sentences", label="sentences lost", format="yesno"),
                Column(key="amc_complete", label="AMC array complete", format="yesno"),
            ),
        ),
        subject=Column(key="candidate", label="final candidate"),
        score="score",  # Ẑ, the share of sentences consistent (Eq. 3): what calibrate's AUROC reads
    ),
    folded=("evaluator", "converter", "improver"),
)
