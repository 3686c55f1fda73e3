"""Claims from questions (LMvLM §4.1), shared by the examination and its baselines."""

from __future__ import annotations

from voirdire.kit import Session

from .items import ClaimItem
from .parsing import fill_blank, is_cloze


async def make_claim(session: Session, item: ClaimItem) -> str:
    """§4.1: the examinee answers the question as a claim C (its "belief"); a fill-in-the-blank query is
    completed and the completed sentence is the claim."""
    assert item.question is not None
    session.enter("claim", stage="claim")
    if is_cloze(item.question):
        reply = await session.ask("examinee", "claim_from_cloze", query=item.question)
        return fill_blank(item.question, reply.text)
    reply = await session.ask("examinee", "claim_from_question", question=item.question)
    return reply.text.strip()


def brief_examinee(session: Session, item: ClaimItem, claim: str) -> None:
    """Give the examinee its claim as its own earlier statement, when it was not made in this conversation."""
    if item.question and not is_cloze(item.question):
        session.seed("examinee", "claim_from_question", question=item.question)
        session.remember("examinee", "assistant", claim, shown=False)
    else:
        session.seed("examinee", "claim_context", claim=claim)
