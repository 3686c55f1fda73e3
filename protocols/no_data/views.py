"""How No-Data's steps read in ``voirdire show``, the viewer and the export (display hints): each EV round of
Algorithm 1 with its proposal x′, ỹ′, the challenge drawn and the verifier's check; the decision with the label
Algorithm 1 outputs; the verdict agrees with gold when its statistic ``correct`` says so."""

from __future__ import annotations

from voirdire.kit import Column, StepView, VerdictView, Views

from .algorithm import DECISION_STEP, ROUND_STEP

VIEWS = Views(
    steps={
        ROUND_STEP: StepView(
            title="challenge {challenge}: {challenge_name}",
            fields=(
                Column(key="y_hat", label="ŷ"),
                Column(key="x_prime", label="x′"),
                Column(key="y_tilde", label="ỹ′"),
                Column(key="strategy", label="strategy"),
                Column(key="passed", label="verifier's check", format="check"),
                Column(key="reason", label="reason", missing=""),
            ),
        ),
        DECISION_STEP: StepView(
            title="Algorithm 1 decision",
            fields=(
                Column(key="success", label="EV protocol", format="check"),
                Column(key="rounds_run", label="rounds"),
                Column(key="revealed", label="ỹ′ revealed"),
                Column(key="flipped", label="flipped (φ)", format="yesno"),
                Column(key="label", label="label output"),
            ),
        ),
    },
    verdict=VerdictView(gold="correct", gold_source="the dataset's answer key"),
)
