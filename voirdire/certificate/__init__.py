"""How far a run's verdicts can be trusted: intervals, agreement with people, paired tests, and a debiased
estimate from a few human labels (prediction-powered inference). See docs/certificate.md."""

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
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
        GOLD_SOURCE,
        PEOPLE_SOURCE,
        RANDOM_ASSUMPTION,
        SCORE_STATISTICS,
        SMALL_N,
        Calibration,
        CalibrationError,
        ConfigurationAgreement,
        Disagreement,
        Judged,
        Run,
        calibrate,
        configuration_of,
        gold_of_rows,
        read_run,
        read_runs,
        sample_lines,
        score_of,
    )
    from voirdire.certificate.comparison import paired_transcripts
    from voirdire.certificate.estimate import Estimate, estimate_run
    from voirdire.certificate.intervals import (
        DEFAULT_LEVEL,
        DEFAULT_RESAMPLES,
        DEFAULT_SEED,
        OFF,
        Interval,
        bootstrap_f1,
        bootstrap_items,
        bootstrap_means,
        bootstrap_sums,
        wilson,
    )
    from voirdire.certificate.labels import Label, LabelsError, label_words, read_labels
    from voirdire.certificate.paired import McNemar, PairedRuns, mcnemar_exact, paired_difference, paired_runs
    from voirdire.certificate.ppi import PPIEstimate, ppi_mean
    from voirdire.certificate.sample import draw_sample
    from voirdire.certificate.scores import ReliabilityBin, ScoreAgreement, score_agreement
    from voirdire.certificate.section import (
        Certificate,
        CertificateReading,
        GuaranteeCount,
        Source,
        certificate_of,
        certificate_sources,
    )

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.certificate.agreement": (
            "Confusion", "HumanAgreement", "VerdictAgreement", "human_agreement", "krippendorff_alpha", "proportion",
            "verdict_agreement",
        ),
        "voirdire.certificate.calibration": (
            "GOLD_SOURCE", "PEOPLE_SOURCE", "RANDOM_ASSUMPTION", "SCORE_STATISTICS", "SMALL_N", "Calibration",
            "CalibrationError", "ConfigurationAgreement",
            "Disagreement", "Judged", "Run", "calibrate", "configuration_of", "gold_of_rows", "read_run", "read_runs",
            "sample_lines", "score_of",
        ),
        "voirdire.certificate.comparison": ("paired_transcripts",),
        "voirdire.certificate.estimate": ("Estimate", "estimate_run"),
        "voirdire.certificate.intervals": (
            "DEFAULT_LEVEL", "DEFAULT_RESAMPLES", "DEFAULT_SEED", "OFF", "Interval", "bootstrap_f1",
            "bootstrap_items", "bootstrap_means", "bootstrap_sums", "wilson",
        ),
        "voirdire.certificate.labels": ("Label", "LabelsError", "label_words", "read_labels"),
        "voirdire.certificate.paired": ("McNemar", "PairedRuns", "mcnemar_exact", "paired_difference", "paired_runs"),
        "voirdire.certificate.ppi": ("PPIEstimate", "ppi_mean"),
        "voirdire.certificate.sample": ("draw_sample",),
        "voirdire.certificate.scores": ("ReliabilityBin", "ScoreAgreement", "score_agreement"),
        "voirdire.certificate.section": (
            "Certificate", "CertificateReading", "GuaranteeCount", "Source", "certificate_of", "certificate_sources",
        ),
    },
)

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "GOLD_SOURCE",
    "OFF",
    "PEOPLE_SOURCE",
    "RANDOM_ASSUMPTION",
    "SCORE_STATISTICS",
    "SMALL_N",
    "Calibration",
    "CalibrationError",
    "Certificate",
    "CertificateReading",
    "ConfigurationAgreement",
    "Confusion",
    "Disagreement",
    "Estimate",
    "GuaranteeCount",
    "HumanAgreement",
    "Interval",
    "Judged",
    "Label",
    "LabelsError",
    "McNemar",
    "PPIEstimate",
    "PairedRuns",
    "ReliabilityBin",
    "Run",
    "ScoreAgreement",
    "Source",
    "VerdictAgreement",
    "bootstrap_f1",
    "bootstrap_items",
    "bootstrap_means",
    "bootstrap_sums",
    "calibrate",
    "certificate_of",
    "certificate_sources",
    "configuration_of",
    "draw_sample",
    "estimate_run",
    "gold_of_rows",
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
    "read_runs",
    "sample_lines",
    "score_agreement",
    "score_of",
    "verdict_agreement",
    "wilson",
]
