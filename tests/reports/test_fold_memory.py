"""What a report keeps per session, by structure (docs/performance.md, flat memory): LMvLM's report holds the
fold's own row of each session, not a second, validated copy of every row made at the end of a run."""

from __future__ import annotations

import json

from voirdire.protocols.cross_examination.scoring import Report, Scored, _finish


def test_the_report_rows_are_the_folds_rows_not_copies() -> None:
    values = [
        Scored({"id": f"c{k}", "claim": f"Claim {k}.", "decision": "correct", "accepted": True, "gold": k % 2 == 0},
               ((2, (2,), 0, False),))
        for k in range(4)
    ]  # fmt: skip
    report = _finish(values, "cross_examination", {"sessions": 4, "verdicts": 4}, ci=0.0)
    assert all(row is value.row for row, value in zip(report.rows, values, strict=True))
    again = Report.model_validate_json(report.model_dump_json())  # the JSON and its schema are as before
    assert again.rows == [value.row for value in values]
    assert json.loads(report.model_dump_json())["rows"][1] == {"id": "c1", "claim": "Claim 1.", "decision": "correct",
                                                               "accepted": True, "gold": False}  # fmt: skip
    assert Report.model_json_schema()["properties"]["rows"]["items"]["type"] == "object"
