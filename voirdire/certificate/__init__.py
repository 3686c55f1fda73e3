"""How far a run's verdicts can be trusted: intervals, agreement with people, paired tests, and a debiased
estimate from a few human labels (prediction-powered inference). See docs/certificate.md."""

from voirdire.certificate.agreement import (
    Confusion,
    HumanAgreement,
    VerdictAgreement,
    human_agreement,
    krippendorff_alpha,
    proportion,
    verdict_agreement,
)
from voirdire.certificate.calibration import (
    RANDOM_ASSUMPTION,
    Calibration,
    CalibrationError,
    Disagreement,
    Run,
    calibrate,
    read_run,
    sample_lines,
)
from voirdire.certificate.comparison import paired_transcripts
from voirdire.certificate.estimate import Estimate, estimate_run
from voirdire.certificate.intervals import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    bootstrap_items,
    wilson,
)
from voirdire.certificate.labels import Label, LabelsError, label_words, read_labels
from voirdire.certificate.paired import McNemar, PairedRuns, mcnemar_exact, paired_difference, paired_runs
from voirdire.certificate.ppi import PPIEstimate, ppi_mean
from voirdire.certificate.sample import draw_sample

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "RANDOM_ASSUMPTION",
    "Calibration",
    "CalibrationError",
    "Confusion",
    "Disagreement",
    "Estimate",
    "HumanAgreement",
    "Interval",
    "Label",
    "LabelsError",
    "McNemar",
    "PPIEstimate",
    "PairedRuns",
    "Run",
    "VerdictAgreement",
    "bootstrap_items",
    "calibrate",
    "draw_sample",
    "estimate_run",
    "human_agreement",
    "krippendorff_alpha",
    "label_words",
    "mcnemar_exact",
    "paired_difference",
    "paired_runs",
    "paired_transcripts",
    "ppi_mean",
    "proportion",
    "read_labels",
    "read_run",
    "sample_lines",
    "verdict_agreement",
    "wilson",
]
