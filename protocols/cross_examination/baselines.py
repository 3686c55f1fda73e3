"""Baselines of LMvLM §4.1 that need no logits: Are-you-sure (AYS) and I-don't-know (IDK).

Both ask only the examinee. Confidence-Based and IC-IDK need token probabilities or labelled demonstrations
and are not provided.
"""

from __future__ import annotations

from typing import Any

from voirdire.kit import Ask, Protocol, Session, StateMachine, Verdict

from . import plugin
from .claims import brief_examinee, make_claim
from .items import ClaimItem, claim_item_from_record
from .outcome import ClaimOutcome
from .parsing import is_cloze, parse_yes_no, says_idk
from .protocol import DISPLAY, YES_NO, CrossExaminationParams

# §4.1 baselines: an optional claim from the question, one question to the examinee, the verdict.
MACHINE = StateMachine(initial=("claim", "ask"), edges={"claim": ("ask",), "ask": ("done",), "done": ()})


class AreYouSure(Protocol[ClaimItem, CrossExaminationParams]):
    """AYS: right after claim generation ask "Are you sure regarding the correctness of your claim? Please answer
    with Yes or No" and take the answer as the prediction (§4.1). A reply that is neither is inconclusive and,
    as in LMvLM, counts as a rejection."""

    name, roles, paper = plugin.ays.name, plugin.ays.roles, plugin.ays.paper
    machine = MACHINE
    display = DISPLAY
    Item = ClaimItem
    Params = CrossExaminationParams
    Outcome = ClaimOutcome

    @classmethod
    def item_from_record(cls, record: dict[str, Any]) -> ClaimItem:
        return claim_item_from_record(record)

    async def run(self, item: ClaimItem, session: Session) -> Verdict:
        generated = item.claim is None
        if generated:
            claim = await make_claim(session, item)
        else:
            claim = item.claim or ""
            brief_examinee(session, item, claim)
        session.enter("ask", stage="ays")
        reply = await session.ask(
            "examinee",
            "ays",
            Ask(
                parse=parse_yes_no,
                schema=YES_NO,
                expected="Yes or No",
                on_failure="inconclusive: counted as a rejection",
            ),
        )
        decision = "inconclusive" if reply.value is None else ("correct" if reply.value else "incorrect")
        session.enter("done", stage="verdict")
        return session.verdict(
            decision,
            accepted=bool(reply.value),
            evidence=[reply.text],
            statistics={"claim": claim, "claim_generated": generated},
        )


class IDontKnow(Protocol[ClaimItem, CrossExaminationParams]):
    """IDK: the query gets "If you are not sure you know the answer, answer with 'I don't know' only."; if the
    model answers "I don't know" the corresponding claim is labelled false, otherwise true (§4.1).

    The claim judged is the one the plain §4.1 query produces (the same claims LMvLM and AYS are scored on),
    made in its own conversation; the IDK reply only decides the label.
    """

    name, roles, paper = plugin.idk.name, plugin.idk.roles, plugin.idk.paper
    machine = MACHINE
    display = DISPLAY
    Item = ClaimItem
    Params = CrossExaminationParams
    Outcome = ClaimOutcome

    @classmethod
    def item_from_record(cls, record: dict[str, Any]) -> ClaimItem:
        return claim_item_from_record(record)

    async def run(self, item: ClaimItem, session: Session) -> Verdict:
        if not item.question:
            raise ValueError("the IDK baseline needs the question: it asks the examinee to answer it afresh")
        generated = item.claim is None
        claim = item.claim or await make_claim(session, item)
        await session.reset("examinee")
        session.enter("ask", stage="idk")
        if is_cloze(item.question):
            reply = await session.ask("examinee", "idk_from_cloze", query=item.question)
        else:
            reply = await session.ask("examinee", "idk_from_question", question=item.question)
        idk = says_idk(reply.text)
        session.enter("done", stage="verdict")
        return session.verdict(
            "incorrect" if idk else "correct",
            accepted=not idk,
            evidence=[reply.text],
            statistics={"claim": claim, "claim_generated": generated, "said_idk": idk, "idk_reply": reply.text},
        )
