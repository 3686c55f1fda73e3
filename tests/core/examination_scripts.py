"""Scripted examiner and examinee of one short cross-examination (the examinee claims Paris, the examiner asks one
question and finds the claim incorrect), shared by the command-line and Python API tests."""

from __future__ import annotations

from pathlib import Path

EXAMINER = """\
rules:
  - match: verify the correctness of the following claim
    reply: "1. Where is it?"
  - match: Do you have any follow-up questions
    reply: "No"
  - match: correct or incorrect\\?
    reply: "The claim is incorrect."
"""
EXAMINEE = """\
rules:
  - match: phrase your answer as a claim
    reply: "The answer is Paris."
  - match: regarding your claim
    reply: "It is in France."
  - match: Are you sure
    reply: "Yes"
"""


def scripted_models(folder: Path) -> dict[str, str]:
    """The two scripts written in ``folder``, as role -> model spec."""
    (folder / "examiner.yaml").write_text(EXAMINER)
    (folder / "examinee.yaml").write_text(EXAMINEE)
    return {"examiner": f"scripted:{folder / 'examiner.yaml'}", "examinee": f"scripted:{folder / 'examinee.yaml'}"}
