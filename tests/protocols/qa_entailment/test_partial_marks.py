"""Partial marks (App. D): explanation parsing, CIA / C / IA, LLM scores, ranking for AUROC."""

from __future__ import annotations

import pytest

from voirdire.protocols.qa_entailment.hierarchy import HierarchyCell
from voirdire.protocols.qa_entailment.parsing import ParseFailure
from voirdire.protocols.qa_entailment.partial_marks import (
    BOTTOM_TIER,
    TOP_TIER,
    best_mark,
    c,
    cia,
    explanation_marks,
    ia,
    inference_llm_score_mark,
    llm_score_mark,
    parse_explanation,
    ranking_score,
)

# App. D's worked example for "Nova Scotia, Canada" (a_2 of Figure 1).
PAPER_EXAMPLE = """1. The TV show the Curse of Oak Island is filmed on Oak Island. (Given in S1)

2. Oak Island is located in Nova Scotia, Canada. [[INFO]]

3. Therefore, the TV show the Curse of Oak Island is filmed in Nova Scotia, Canada. (Combining steps 1 and 2)"""


def _explanation(n_steps: int, info_steps: set[int], assumption_steps: set[int]) -> str:
    lines = []
    for i in range(1, n_steps + 1):
        marks = (" [[INFO]]" if i in info_steps else "") + (" [[ASSUMPTION]]" if i in assumption_steps else "")
        lines.append(f"{i}. step {i}.{marks}")
    return "\n".join(lines)


def test_parse_paper_example() -> None:
    parsed = parse_explanation(PAPER_EXAMPLE)
    assert not isinstance(parsed, ParseFailure)
    assert (parsed.n_steps, parsed.n_info, parsed.n_assumption) == (3, 1, 0)
    assert parsed.steps[1].info and not parsed.steps[0].info


@pytest.mark.parametrize(("n", "info", "assumption"), [(1, set(), set()), (3, {2}, set()), (4, {1, 3}, {2, 4})])
def test_schemes_follow_app_d_formulas(n: int, info: set[int], assumption: set[int]) -> None:
    parsed = parse_explanation(_explanation(n, info, assumption))
    assert not isinstance(parsed, ParseFailure)
    assert cia(parsed) == -(10 * n + 3 * len(info) + 5 * len(assumption))
    assert c(parsed) == -10 * n
    assert ia(parsed) == -(3 * len(info) + 5 * len(assumption))
    assert explanation_marks(parsed) == {"CIA": cia(parsed), "C": c(parsed), "IA": ia(parsed)}


def test_marker_variants_and_continuation_lines() -> None:
    reply = "Here are the steps:\n1) A is B. [[ info ]]\n   which needs more [[Assumption]]\nStep 2: So C."
    parsed = parse_explanation(reply)
    assert not isinstance(parsed, ParseFailure)
    assert parsed.preamble == "Here are the steps:"
    assert (parsed.n_steps, parsed.n_info, parsed.n_assumption) == (2, 1, 1)


@pytest.mark.parametrize("reply", ["", "A is B, so C. [[INFO]]", "1. a\n3. b", "2. a\n3. b", "1. a\n1. b"])
def test_malformed_explanations_fail(reply: str) -> None:
    parsed = parse_explanation(reply)
    assert isinstance(parsed, ParseFailure) and parsed.parser == "explanation"


def test_llm_score_marks() -> None:
    # Harder inference (5) must rank below an easier one (1); closer answers (5) above worse ones (1).
    assert inference_llm_score_mark(5) < inference_llm_score_mark(1)
    assert llm_score_mark(5) > llm_score_mark(1)
    # The authors' cot_vs_pr.ipynb (score_baseline) ranks by -closeness; reproducible by switch.
    assert llm_score_mark(5, negated=True) == -5.0 and llm_score_mark(1, negated=True) == -1.0
    for bad in (0, 6):
        with pytest.raises(ValueError):
            inference_llm_score_mark(bad)
        with pytest.raises(ValueError):
            llm_score_mark(bad)
    assert best_mark([None, -30.0, -20.0]) == -20.0 and best_mark([None]) is None


def test_ranking_score_tiers() -> None:
    inf, sup = HierarchyCell.INF_ONLY, HierarchyCell.SUP_ONLY
    assert ranking_score(HierarchyCell.NEITHER, None) == BOTTOM_TIER
    assert ranking_score(HierarchyCell.BOTH, None) == TOP_TIER
    assert ranking_score(sup, None) == TOP_TIER  # not explained by default (App. D explains A_inf − A_sup)
    assert ranking_score(inf, -38.0) == -38.0
    assert ranking_score(inf, None) is None and ranking_score(None, -1.0) is None
    assert ranking_score(sup, -12.0, explained_cells=(inf, sup)) == -12.0
    assert BOTTOM_TIER < -1000 < 1000 < TOP_TIER
