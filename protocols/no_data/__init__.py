"""The No-Data Algorithm (de Wynter 2025, "Labelling Data with Unknown References", arXiv:2506.03083).

The rubric model (§5, App. C), the verifier's challenges (§6.1.1, App. C.1), evaluators and generators (§8),
Lemma 1 / Theorem 1 (§7.1) and the data loaders are plain functions and classes; ``NoDataProtocol`` runs
Algorithm 1 with the EV protocol of §6.1, one session per datapoint, as ``voirdire nodata`` and as the batch
experiments that reproduce Tables 2-3. See docs/no_data.md.
"""

from typing import TYPE_CHECKING

from voirdire.kit import lazy_face

if TYPE_CHECKING:
    from .algorithm import (
        Decision as Decision,
        KAryRun as KAryRun,
        NoDataParams as NoDataParams,
        NoDataRun as NoDataRun,
        RoundRecord as RoundRecord,
        coins as coins,
        flip_decision as flip_decision,
    )
    from .challenges import (
        Challenge as Challenge,
        CheckOutcome as CheckOutcome,
        RuleVerifier as RuleVerifier,
        Verifier as Verifier,
        challenge_1 as challenge_1,
        challenge_2 as challenge_2,
    )
    from .data import (
        DataError as DataError,
        Datapoint as Datapoint,
        Dataset as Dataset,
        load_bitstrings as load_bitstrings,
        load_split as load_split,
        resolve_dataset as resolve_dataset,
    )
    from .evaluators import (
        ComposedEvaluator as ComposedEvaluator,
        DecisionTreeLabeller as DecisionTreeLabeller,
        Evaluator as Evaluator,
        Labeller as Labeller,
        NoisyLabeller as NoisyLabeller,
        RubricLabeller as RubricLabeller,
        ScriptedLabeller as ScriptedLabeller,
        decision_tree as decision_tree,
    )
    from .experiments import (
        ExperimentConfig as ExperimentConfig,
        ExperimentReport as ExperimentReport,
        aggregate as aggregate,
        no_data_algorithm as no_data_algorithm,
        no_data_k_ary as no_data_k_ary,
        run_experiment as run_experiment,
        run_seeds as run_seeds,
    )
    from .generators import (
        GENERATOR_NAMES as GENERATOR_NAMES,
        Generator as Generator,
        LieApproxGenerator as LieApproxGenerator,
        LieFGenerator as LieFGenerator,
        LieSigmaGenerator as LieSigmaGenerator,
        OracleGenerator as OracleGenerator,
        Proposal as Proposal,
        RandomGenerator as RandomGenerator,
        make_generator as make_generator,
    )
    from .llm import LLMEvaluator as LLMEvaluator, parse_datapoint as parse_datapoint, parse_label as parse_label
    from .protocol import (
        NoDataItem as NoDataItem,
        NoDataProtocol as NoDataProtocol,
        NoDataProtocolParams as NoDataProtocolParams,
        make_items as make_items,
    )
    from .report import (
        NoDataReport as NoDataReport,
        SeedScore as SeedScore,
        aggregate_scores as aggregate_scores,
        report as report,
        score_run as score_run,
    )
    from .rubric import (
        IP_RUBRIC as IP_RUBRIC,
        OOP_RUBRIC as OOP_RUBRIC,
        RUBRICS as RUBRICS,
        MajorityVote as MajorityVote,
        Rubric as Rubric,
        relevant_subsets as relevant_subsets,
    )
    from .theory import (
        lemma1_undetected_probability as lemma1_undetected_probability,
        theorem1_accuracy_bound as theorem1_accuracy_bound,
        theory_report as theory_report,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
