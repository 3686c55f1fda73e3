"""The oracle's calls for one item of the oracle–checker scheme (Zeng, Wang, Ibbetson 2024), declared beside the
machines for ``--estimate``. The checker is a rule: it calls no model.

Linearity (§3, §5.1, App. A): Prompt 1 on s (k samples in one call), then for each extracted entity at most one
Prompt 2 vote (App. A.2's rules decide most without it) and one Prompt 3 or 4 vote, then n tests of three
R-transformed sentences, each one Prompt 1 call of k samples (§5.1: 1 + 3n = 16 extraction calls, 165 replies in the
paper's count). The number of entities is the oracle's, not the parameters': the figure is an estimate that names
the entities per sentence it assumes.

Paraphrase (§4, App. B): one decision (Prompt 5); for a "yes" the Yes-prover (§4.3) asks Prompt 6 about each matched
phrase pair, at most one pair per token of the source sentence in each direction (ρ and ρ* share their pairs and
answers are kept); for a "no" the No-checker (Fig. 4) asks Prompt 7 for both sentences' paraphrases, aligns the pair
and each paraphrase with the other sentence, and asks ``no_tests`` decisions. The paraphrases are the oracle's
(Prompt 7 asks for five) and the tokens the parser's: an estimate, with both assumptions named.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from voirdire.kit.budget import Assumed, Budget, CallBudget, Figure, RoleCalls, merged

ENTITIES = "entities_per_sentence"
PARAPHRASES = "paraphrases_per_sentence"
DEFAULT_ENTITIES = 3.0  # ours: the paper reports no mean; a DocRED sentence names a few entities
_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokens(text: str) -> int:
    """Words and punctuation marks: what a phrase tree's leaves are, counted without loading the parser."""
    return len(_TOKEN.findall(text))


def _entities_seen(statistics: Mapping[str, Any]) -> list[float]:
    entities = statistics.get("entities")
    return [float(len(entities))] if isinstance(entities, list) else []


def _paraphrases_seen(statistics: Mapping[str, Any]) -> list[float]:
    pars = statistics.get("paraphrases")
    if not isinstance(pars, Mapping):
        return []
    return [float(len(v)) for v in pars.values() if isinstance(v, list)]


def linearity_budget(protocol: Any, item: Any, figures: Mapping[str, Figure]) -> Budget:
    p = protocol.params
    e = figures[ENTITIES]
    assumed = f"{e.value:.3g} entities per sentence assumed ({e.source})"
    n = e.count()
    return merged(
        {
            "oracle": [
                RoleCalls.of(
                    1 + 3 * p.tests,
                    samples_per_call=p.samples,
                    why=f"Prompt 1 on s and on 3 × {p.tests} R-transformed sentences, {p.samples} samples each (§5.1)",
                ),
                RoleCalls.of(
                    n,
                    samples_per_call=p.named_votes,
                    bounded=False,
                    why=f"at most one Prompt 2 vote per entity (App. A.2); {assumed}",
                ),
                RoleCalls.of(
                    n,
                    samples_per_call=p.synonym_votes,
                    bounded=False,
                    why="one Prompt 3/4 vote per entity (App. A.2)",
                ),
            ]
        }
    )


def paraphrase_budget(protocol: Any, item: Any, figures: Mapping[str, Figure]) -> Budget:
    p = protocol.params
    t1, t2 = tokens(item.sentence1), tokens(item.sentence2)
    k = figures[PARAPHRASES]
    pairs = t1 + t2  # Prompt 6 queries of one φ alignment: at most a pair per source token, each direction
    # A "no": both sentences' paraphrases (each about as long as its sentence) aligned with the other sentence.
    no = 2 + pairs + Figure(k.value * 2 * pairs, k.source).count() + p.no_tests
    return merged(
        {
            "oracle": [
                RoleCalls.of(1, why="the decision (Prompt 5)"),
                RoleCalls.of(
                    max(pairs, no),
                    bounded=False,
                    why=f"the Yes-prover's or the No-checker's queries, the larger: Prompt 6 pairs ≤ the {t1} + {t2} "
                    f"tokens (words and punctuation) per alignment, {k.value:.3g} paraphrases per sentence assumed "
                    f"({k.source}), {p.no_tests} test decision(s)",
                ),
            ]
        }
    )


LINEARITY_BUDGET = CallBudget(
    per_item=linearity_budget,
    assumed={ENTITIES: Assumed(DEFAULT_ENTITIES, "a stated default: the paper gives no mean", _entities_seen)},
    paper="Oracle–checker §5.1 (k samples, n tests: 1 + 3n extraction calls), App. A.2 (votes per entity)",
)
PARAPHRASE_BUDGET = CallBudget(
    per_item=paraphrase_budget,
    assumed={PARAPHRASES: Assumed(5.0, "Prompt 7 asks for five", _paraphrases_seen)},
    paper="Oracle–checker §4.1 (Fig. 4), §4.3 (Algorithm 1), App. B.1 (Prompts 5-7)",
)
