from __future__ import annotations

from pathlib import Path

from voirdire.protocols.oracle_checker import LinearityChecker, LinearityParams, SentenceItem
from voirdire.protocols.oracle_checker.report import report
from voirdire.runner import run_protocol
from voirdire.transcript import load

from .oracles import SENTENCE, dropping_when_both_named_replaced, oracle


async def test_report_measures_of_table_1(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    items = [SentenceItem(id=f"s{i}", text=SENTENCE, gold=["Paris", "last week"]) for i in range(6)] + [
        SentenceItem(id="none", text="it rains.")
    ]
    params = LinearityParams(samples=3, tests=1, named_votes=1, synonym_votes=1)
    result = await run_protocol(LinearityChecker(params), items, out=out,
                                clients={"oracle": oracle(dropping_when_both_named_replaced)})  # fmt: skip
    assert not result.errors
    r = report(load(out))
    assert r.sessions == 7 and r.decisions.get("unreadable") == 1
    assert sum(r.decisions.values()) == 7 and r.sentence_acceptance is not None
    assert set(r.means) == {"a_test", "a_rate", "con_o", "con_rs", "n_entities"}
    assert r.means["con_o"] == 3 and r.means["n_entities"] == 3
    assert "A_rate~Con_o" in r.correlations  # constant Con_o: undefined, shown as n/a
    assert r.correlations["A_rate~Con_o"] is None
    assert r.oracle_requests_per_sentence is not None
    assert "per-sentence acceptance" in r.text()
    assert r.labelled["labelled"] == 12 and r.labelled["extracted"] == 6 and r.labelled["tested_labelled"] == 6
    assert r.labelled["tested_labelled_accepted"] == 6 * r.sentence_acceptance  # type: ignore[operator]
