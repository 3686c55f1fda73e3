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
from voirdire.certificate.intervals import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    bootstrap_items,
    wilson,
)
from voirdire.certificate.paired import McNemar, mcnemar_exact, paired_difference
from voirdire.certificate.ppi import PPIEstimate, ppi_mean
from voirdire.certificate.sample import draw_sample

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "Confusion",
    "HumanAgreement",
    "Interval",
    "McNemar",
    "PPIEstimate",
    "VerdictAgreement",
    "bootstrap_items",
    "draw_sample",
    "human_agreement",
    "krippendorff_alpha",
    "mcnemar_exact",
    "paired_difference",
    "ppi_mean",
    "proportion",
    "verdict_agreement",
    "wilson",
]
