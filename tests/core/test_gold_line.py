"""The terminal chat says whether the verdict agrees with gold, as the viewer's badge does, by the reports' one
rule (the verdict statistic the display hints name); nothing when no gold is known."""

from __future__ import annotations

import pytest

from voirdire.chat.terminal import outcome_lines
from voirdire.chat.turns import _outcome
from voirdire.transcript import Verdict, VerdictView, Views


def verdict(**statistics: object) -> Verdict:
    return Verdict(run_id="r", session_id="s", seq=1, decision="correct", accepted=True, statistics=statistics)


@pytest.mark.parametrize(("value", "line"), [(True, "right vs gold"), (False, "wrong vs gold")])
def test_the_verdict_says_right_or_wrong_against_gold(value: bool, line: str) -> None:
    out = _outcome(verdict(correct=value), {}, Views(verdict=VerdictView(gold="correct")))
    assert out.correct is value
    assert line in outcome_lines(out)


def test_nothing_is_said_without_gold() -> None:
    for views, stats in ((Views(), {"correct": True}), (Views(verdict=VerdictView(gold="correct")), {})):
        out = _outcome(verdict(**stats), {}, views)
        assert out.correct is None
        assert not any("gold" in line for line in outcome_lines(out))
