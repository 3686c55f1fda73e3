"""How far a run's verdicts can be trusted: intervals, agreement with people, paired tests, and a debiased
estimate from a few human labels (prediction-powered inference). See docs/certificate.md."""

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.certificate.agreement import (
        Confusion as Confusion,
        HumanAgreement as HumanAgreement,
        VerdictAgreement as VerdictAgreement,
        human_agreement as human_agreement,
        krippendorff_alpha as krippendorff_alpha,
        proportion as proportion,
        verdict_agreement as verdict_agreement,
    )
    from voirdire.certificate.calibration import (
        GOLD_SOURCE as GOLD_SOURCE,
        PEOPLE_SOURCE as PEOPLE_SOURCE,
        RANDOM_ASSUMPTION as RANDOM_ASSUMPTION,
        SCORE_STATISTICS as SCORE_STATISTICS,
        SMALL_N as SMALL_N,
        Calibration as Calibration,
        CalibrationError as CalibrationError,
        ConfigurationAgreement as ConfigurationAgreement,
        Disagreement as Disagreement,
        Judged as Judged,
        Run as Run,
        calibrate as calibrate,
        configuration_of as configuration_of,
        gold_of_rows as gold_of_rows,
        read_run as read_run,
        read_runs as read_runs,
        sample_lines as sample_lines,
        score_of as score_of,
    )
    from voirdire.certificate.comparison import (
        compare_and_pair as compare_and_pair,
        paired_transcripts as paired_transcripts,
    )
    from voirdire.certificate.estimate import Estimate as Estimate, estimate_run as estimate_run
    from voirdire.certificate.intervals import (
        DEFAULT_LEVEL as DEFAULT_LEVEL,
        DEFAULT_RESAMPLES as DEFAULT_RESAMPLES,
        DEFAULT_SEED as DEFAULT_SEED,
        OFF as OFF,
        Interval as Interval,
        bootstrap_f1 as bootstrap_f1,
        bootstrap_items as bootstrap_items,
        bootstrap_means as bootstrap_means,
        bootstrap_sums as bootstrap_sums,
        wilson as wilson,
    )
    from voirdire.certificate.labels import (
        Label as Label,
        LabelsError as LabelsError,
        label_words as label_words,
        read_labels as read_labels,
    )
    from voirdire.certificate.paired import (
        McNemar as McNemar,
        PairedRuns as PairedRuns,
        mcnemar_exact as mcnemar_exact,
        paired_difference as paired_difference,
        paired_runs as paired_runs,
    )
    from voirdire.certificate.ppi import PPIEstimate as PPIEstimate, ppi_mean as ppi_mean
    from voirdire.certificate.sample import draw_sample as draw_sample
    from voirdire.certificate.scores import (
        ReliabilityBin as ReliabilityBin,
        ScoreAgreement as ScoreAgreement,
        score_agreement as score_agreement,
    )
    from voirdire.certificate.section import (
        Certificate as Certificate,
        CertificateReading as CertificateReading,
        GuaranteeCount as GuaranteeCount,
        Source as Source,
        certificate_of as certificate_of,
        certificate_sources as certificate_sources,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
