"""The DCR report: Table 5's improvement rate, Fig. 4's consistent share per round, stop reasons, correlation."""

from __future__ import annotations

from pathlib import Path

import pytest

from voirdire.protocols.dcr import report

from .helpers import BAD, GOOD, S1, S2, S2_FIXED, agents, amc, dce, item, rai, run


async def test_table5_and_fig4_from_the_verdicts(tmp_path: Path) -> None:
    inconsistent = dce((S1, GOOD), (S2, BAD))
    fixed = dce((S1, GOOD), (S2_FIXED, GOOD))
    clients = agents(
        # A: consistent at once; B: fixed in round 1; C: still inconsistent after round 1
        evaluator=[fixed, inconsistent, fixed, inconsistent, inconsistent],
        converter=[amc(1, 1), amc(1, -1), amc(1, 1), amc(1, -1), amc(1, -1)],
        improver=[rai((S1, S1), (S2, S2_FIXED)), rai((S1, S1), (S2, S2))],
    )
    items = [item(f"{S1} {S2_FIXED}", id="a", human=5.0), item(id="b", human=3.0), item(id="c", human=1.0)]
    r = report(await run(tmp_path, clients, items=items, rounds=1))
    assert (r.scored, r.unscored, r.consistent_initial) == (3, 0, 1)
    assert r.first_round is not None and (r.first_round.inconsistent, r.first_round.corrected) == (2, 1)
    assert r.first_round.rate == 0.5
    assert r.consistent_after_round == pytest.approx([1 / 3, 2 / 3])
    assert r.score_distribution == [
        {"[0,.25)": 0, "[.25,.5)": 0, "[.5,.75)": 2, "[.75,1)": 0, "1": 1},
        {"[0,.25)": 0, "[.25,.5)": 0, "[.5,.75)": 1, "[.75,1)": 0, "1": 2},
    ]
    assert r.stopped == {"consistent": 2, "max_rounds": 1}
    assert r.mean_initial_score == pytest.approx((1 + 0.5 + 0.5) / 3)
    assert r.correlation is not None and r.correlation.kind == "sample"  # no benchmark named: scores, no documents
    text = r.text()
    assert "Table 5 after round 1: inconsistent 2, corrected 1, improvement rate 50.00%" in text
    assert "Fig. 4 consistent after each round: r0 33.3%, r1 66.7%" in text
