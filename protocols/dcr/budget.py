"""The model calls of one DCR item (Algorithm 1), declared beside its machine for ``--estimate``.

Each round r = 0..m evaluates the candidate once (DCE, Eq. 1: every sentence against the entire reference in one
call, Tables 7-8) and converts the reasons once (AMC, Eq. 2: one call for all of them, Table 9); rounds 0..m-1 may
improve it once (RAI, Eq. 4: the flagged sentences in one call, Table 10). The loop stops early when the candidate
scores 1 or a reply cannot be read, so m + 1 evaluator, m + 1 converter and m improver calls bound every item,
whatever its number of sentences (the sentences share their stage's one call).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voirdire.kit.budget import Budget, CallBudget, Figure, RoleCalls, merged

from .items import DCRItem


def dcr_budget(protocol: Any, item: DCRItem, figures: Mapping[str, Figure]) -> Budget:
    m = protocol.params.rounds
    return merged(
        {
            "evaluator": [RoleCalls.of(m + 1, why=f"DCE once in each of rounds 0..{m} (Algorithm 1, Eq. 1)")],
            "converter": [RoleCalls.of(m + 1, why=f"AMC once in each of rounds 0..{m} (Eq. 2)")],
            "improver": [RoleCalls.of(m, why=f"RAI once in each of rounds 1..{m} (Eq. 4)")],
        }
    )


DCR_BUDGET = CallBudget(per_item=dcr_budget, paper="DCR Algorithm 1: m improvement rounds (--rounds)")
