"""A run's progress off a terminal (a redirected log): whole lines, never a bar's carriage returns; and the run
summary's plurals and unreadable-replies warning, read as a user reads that log."""

from __future__ import annotations

import io

from voirdire.registry.plugins import reliability
from voirdire.reports import Report
from voirdire.runner.progress import PlainProgress, progress


def test_a_log_gets_whole_lines_not_carriage_returns() -> None:
    log = io.StringIO()
    bar = progress(3, "examine", log)  # a StringIO is no terminal
    assert isinstance(bar, PlainProgress)
    for _ in range(3):
        bar.update(1)
        bar.refresh()
    bar.set_postfix_str("retries 0, errors 0 (0%)")
    bar.close()
    assert "\r" not in log.getvalue()
    assert log.getvalue().splitlines()[-1] == "examine: 3/3 sessions [retries 0, errors 0 (0%)]"


def test_a_line_every_interval_and_one_at_the_end() -> None:
    log = io.StringIO()
    every = PlainProgress(2, "run", file=log, every_s=0.0)  # due at every update
    every.update(1)
    every.update(1)
    every.close()  # nothing new since the last line: not said twice
    assert log.getvalue().splitlines() == ["run: 1/2 sessions", "run: 2/2 sessions"]
    quiet = io.StringIO()
    never = PlainProgress(2, "run", file=quiet, every_s=1e9)
    never.update(2)
    never.close()
    assert quiet.getvalue().splitlines() == ["run: 2/2 sessions"]


def test_one_session_is_one_session() -> None:
    assert (
        Report(protocol="p", sessions=1, verdicts=1, errors=1).summary_lines()[0] == "p: 1 session, 1 verdict, 1 error"
    )
    assert Report(protocol="p", sessions=2).summary_lines()[0] == "p: 2 sessions, 0 verdicts, 0 errors"


def test_the_unreadable_warning_only_when_most_of_a_roles_replies_were() -> None:
    one_of_five = Report(protocol="p", parse_failures={"examiner · p/decision": 1},
                         replies={"examiner · p/decision": 1, "examiner · p/setup": 4})  # fmt: skip
    fields, lines = reliability(one_of_five)
    assert "fallback_warning" not in fields and not any(x.startswith("warning:") for x in lines)
    assert any("examiner · p/decision 1/1" in x for x in lines)  # the rate is still printed
    most = Report(protocol="p", parse_failures={"examiner · p/decision": 3, "examiner · p/setup": 1},
                  replies={"examiner · p/decision": 3, "examiner · p/setup": 3})  # fmt: skip
    fields, lines = reliability(most)
    assert "examiner · p/decision 3 of 3" in fields["fallback_warning"]
