"""The No-Data Algorithm (de Wynter 2025, "Labelling Data with Unknown References", arXiv:2506.03083).

The rubric model (§5, App. C), the verifier's challenges (§6.1.1, App. C.1), evaluators and generators (§8),
Lemma 1 / Theorem 1 (§7.1) and the data loaders are plain functions and classes; ``NoDataProtocol`` runs
Algorithm 1 with the EV protocol of §6.1, one session per datapoint, as ``voirdire nodata`` and as the batch
experiments that reproduce Tables 2-3. See docs/no_data.md.
"""

from typing import TYPE_CHECKING

from voirdire.kit import lazy_face

if TYPE_CHECKING:
    from .algorithm import Decision, KAryRun, NoDataParams, NoDataRun, RoundRecord, coins, flip_decision
    from .challenges import Challenge, CheckOutcome, RuleVerifier, Verifier, challenge_1, challenge_2
    from .data import DataError, Datapoint, Dataset, load_bitstrings, load_split, resolve_dataset
    from .evaluators import (
        ComposedEvaluator,
        DecisionTreeLabeller,
        Evaluator,
        Labeller,
        NoisyLabeller,
        RubricLabeller,
        ScriptedLabeller,
        decision_tree,
    )
    from .experiments import (
        ExperimentConfig,
        ExperimentReport,
        aggregate,
        no_data_algorithm,
        no_data_k_ary,
        run_experiment,
        run_seeds,
    )
    from .generators import (
        GENERATOR_NAMES,
        Generator,
        LieApproxGenerator,
        LieFGenerator,
        LieSigmaGenerator,
        OracleGenerator,
        Proposal,
        RandomGenerator,
        make_generator,
    )
    from .llm import LLMEvaluator, parse_datapoint, parse_label
    from .protocol import NoDataItem, NoDataProtocol, NoDataProtocolParams, make_items
    from .report import NoDataReport, SeedScore, aggregate_scores, report, score_run
    from .rubric import IP_RUBRIC, OOP_RUBRIC, RUBRICS, MajorityVote, Rubric, relevant_subsets
    from .theory import lemma1_undetected_probability, theorem1_accuracy_bound, theory_report

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.protocols.no_data.algorithm": (
            "Decision", "KAryRun", "NoDataParams", "NoDataRun", "RoundRecord", "coins", "flip_decision",
        ),
        "voirdire.protocols.no_data.challenges": (
            "Challenge", "CheckOutcome", "RuleVerifier", "Verifier", "challenge_1", "challenge_2",
        ),
        "voirdire.protocols.no_data.data": (
            "DataError", "Datapoint", "Dataset", "load_bitstrings", "load_split", "resolve_dataset",
        ),
        "voirdire.protocols.no_data.evaluators": (
            "ComposedEvaluator", "DecisionTreeLabeller", "Evaluator", "Labeller", "NoisyLabeller", "RubricLabeller",
            "ScriptedLabeller", "decision_tree",
        ),
        "voirdire.protocols.no_data.experiments": (
            "ExperimentConfig", "ExperimentReport", "aggregate", "no_data_algorithm", "no_data_k_ary", "run_experiment",
            "run_seeds",
        ),
        "voirdire.protocols.no_data.generators": (
            "GENERATOR_NAMES", "Generator", "LieApproxGenerator", "LieFGenerator", "LieSigmaGenerator",
            "OracleGenerator", "Proposal", "RandomGenerator", "make_generator",
        ),
        "voirdire.protocols.no_data.llm": ("LLMEvaluator", "parse_datapoint", "parse_label"),
        "voirdire.protocols.no_data.protocol": ("NoDataItem", "NoDataProtocol", "NoDataProtocolParams", "make_items"),
        "voirdire.protocols.no_data.report": ("NoDataReport", "SeedScore", "aggregate_scores", "report", "score_run"),
        "voirdire.protocols.no_data.rubric": (
            "IP_RUBRIC", "OOP_RUBRIC", "RUBRICS", "MajorityVote", "Rubric", "relevant_subsets",
        ),
        "voirdire.protocols.no_data.theory": (
            "lemma1_undetected_probability", "theorem1_accuracy_bound", "theory_report",
        ),
    },
)

__all__ = [
    "GENERATOR_NAMES",
    "IP_RUBRIC",
    "OOP_RUBRIC",
    "RUBRICS",
    "Challenge",
    "CheckOutcome",
    "ComposedEvaluator",
    "DataError",
    "Datapoint",
    "Dataset",
    "Decision",
    "DecisionTreeLabeller",
    "Evaluator",
    "ExperimentConfig",
    "ExperimentReport",
    "Generator",
    "KAryRun",
    "LLMEvaluator",
    "Labeller",
    "LieApproxGenerator",
    "LieFGenerator",
    "LieSigmaGenerator",
    "MajorityVote",
    "NoDataItem",
    "NoDataParams",
    "NoDataProtocol",
    "NoDataProtocolParams",
    "NoDataReport",
    "NoDataRun",
    "NoisyLabeller",
    "OracleGenerator",
    "Proposal",
    "RandomGenerator",
    "RoundRecord",
    "Rubric",
    "RubricLabeller",
    "RuleVerifier",
    "ScriptedLabeller",
    "SeedScore",
    "Verifier",
    "aggregate",
    "aggregate_scores",
    "challenge_1",
    "challenge_2",
    "coins",
    "decision_tree",
    "flip_decision",
    "lemma1_undetected_probability",
    "load_bitstrings",
    "load_split",
    "make_generator",
    "make_items",
    "no_data_algorithm",
    "no_data_k_ary",
    "parse_datapoint",
    "parse_label",
    "relevant_subsets",
    "report",
    "resolve_dataset",
    "run_experiment",
    "run_seeds",
    "score_run",
    "theorem1_accuracy_bound",
    "theory_report",
]
