"""A graded answer's evidence reads as sentences: where the answer sits in §3's hierarchy (A_sup: the system
statement entails a gold statement; A_inf: a gold statement entails it), never a Python value or list."""

from __future__ import annotations

import pytest

from voirdire.protocols.qa_entailment.graded import GradedItem, verdict_evidence
from voirdire.protocols.qa_entailment.hierarchy import Membership


def graded(in_sup: bool | None, in_inf: bool | None, sup: list[int], inf: list[int]) -> GradedItem:
    return GradedItem(
        item_id="q", system="s", question="who wrote Dracula?", system_answer="Stoker", human_judgment=True,
        gold_answers=["Bram Stoker", "Stoker"], gold_indices=[0, 1], system_statement="Stoker wrote Dracula.",
        gold_statements=["Bram Stoker wrote Dracula.", "Stoker wrote Dracula."],
        membership=Membership(in_sup=in_sup, in_inf=in_inf, sup_witnesses=sup, inf_witnesses=inf, cell=None),
        decision="union",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("in_sup", "in_inf", "sup", "inf", "said"),
    [
        (True, True, [1], [0, 1], "in A_sup: the system statement entails gold statement 1; in A_inf: the system "
                                  "statement is entailed by gold statements 0, 1"),
        (False, None, [], [], "not in A_sup: the system statement entails no gold statement; A_inf undetermined "
                              "(an entailment reply was unreadable)"),
    ],
)  # fmt: skip
def test_membership_is_a_sentence(
    in_sup: bool | None, in_inf: bool | None, sup: list[int], inf: list[int], said: str
) -> None:
    evidence = verdict_evidence(graded(in_sup, in_inf, sup, inf))
    assert said in evidence
    assert not any(word in line for line in evidence for word in ("True", "False", "None", "[", "witnesses"))
