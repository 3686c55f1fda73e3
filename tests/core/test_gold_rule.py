"""One rule says whether a verdict agrees with gold, for the report's charts, the viewer and export-html: the
verdict's own boolean statistic named by the display hints, else its ``accepted`` against its item's gold row."""

from __future__ import annotations

from types import SimpleNamespace

from voirdire.reports import Overview, agrees_with_gold, gold_from_rows, gold_labels


def test_the_verdict_s_own_statistic_comes_first() -> None:
    assert agrees_with_gold({"correct": False}, "correct", accepted=True, label=True) is False
    assert agrees_with_gold({"correct": "yes"}, "correct", accepted=True, label=False) is False  # not a boolean
    assert agrees_with_gold({"correct": True}, "", accepted=None, label=None) is None  # the hints name no key
    assert agrees_with_gold({}, accepted=False, label=False) is True
    assert agrees_with_gold({}, accepted=None, label=True) is None and agrees_with_gold({}, accepted=True) is None


def test_gold_labels_keep_boolean_rows_only() -> None:
    rows = [{"id": 1, "gold": True}, {"id": "b", "gold": "yes"}, {"gold": False, "id": "c"}, "not a row"]
    assert gold_labels(rows) == {"1": True, "c": False} and gold_labels(None) == {}


def test_rows_fill_in_only_verdicts_that_do_not_say() -> None:
    rows = [{"id": "a", "gold": True}, {"id": "b", "gold": True}, {"id": "c", "gold": False}]
    report = SimpleNamespace(rows=rows)  # a protocol's report with rows
    values = [
        Overview("a", "no", False, None, ()),
        Overview("b", "yes", True, False, ()),  # said by its own statistic: kept
        Overview("c", "no", None, None, ()),  # no accepted: nothing to compare
        Overview(None, "yes", True, None, ()),
    ]
    filled = gold_from_rows(report, values)  # type: ignore[arg-type]
    assert [v.correct for v in filled] == [False, False, None, None]
