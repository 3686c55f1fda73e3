"""Strict parsers for the examiner's and examinee's replies (LMvLM §2, Table 1).

Substring tests are wrong here: "incorrect" contains "correct", and small models echo the question
("correct or incorrect?") before answering. Each parser either returns a value or raises ``ParseError``.
"""

from __future__ import annotations

import re
from typing import Literal

from voirdire.protocol import ParseError

Decision = Literal["correct", "incorrect"]

# Echoes of the Stage 3 question, removed before looking for the examiner's own conclusion.
_ECHOES = re.compile(r"\bcorrect\s+or\s+(?:possibly\s+)?incorrect\b|\bcorrectness\b", re.IGNORECASE)
_DECISION = re.compile(r"\b(?:not\s+(?:be\s+)?correct|incorrect|correct)\b", re.IGNORECASE)


def parse_decision(text: str) -> Decision:
    """Stage 3: "correct" or "incorrect" (§2). "not correct" counts as incorrect; both, or neither, is
    inconclusive, which the paper counts as a rejection."""
    hits = {"correct" if h.lower() == "correct" else "incorrect" for h in _DECISION.findall(_ECHOES.sub(" ", text))}
    if len(hits) == 1:
        return hits.pop()  # type: ignore[return-value]
    if not hits:
        raise ParseError("no 'correct' or 'incorrect' in the examiner's conclusion")
    raise ParseError("the conclusion says both 'correct' and 'incorrect'")


_LEAD = re.compile(r"^[\s\"'*_`>#:.\-]*(yes|no)\b", re.IGNORECASE)
_ANY = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_BOTH = re.compile(r"^\W*(yes|no)\s+(and|or)\s+(yes|no)\b", re.IGNORECASE)  # "Yes and no" is no answer


def parse_yes_no(text: str) -> bool:
    """Table 1 Stage 2 (i) and the AYS baseline: "Please answer with Yes or No"."""
    if _BOTH.match(text):
        raise ParseError("the reply says both Yes and No")
    lead = _LEAD.match(text)
    if lead:
        return lead.group(1).lower() == "yes"
    found = {m.lower() for m in _ANY.findall(text)}
    if len(found) == 1:
        return found.pop() == "yes"
    raise ParseError("expected Yes or No" if not found else "the reply says both Yes and No")


_NUMBERED = re.compile(r"^\s*(?:\d+[.)]|[-*•]|Q\d*[:.)])\s+(.*\S)\s*$")


def split_questions(text: str) -> list[str]:
    """The examiner's questions: numbered or bulleted lines, else the sentences that end in '?'.

    Stage 1 feeds the examiner's questions to the examinee "one at a time" (§2), so they are split here.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    listed = [m.group(1) for ln in lines if (m := _NUMBERED.match(ln))]
    listed = [q for q in listed if "?" in q] or listed
    if listed:
        return [q.strip() for q in listed]
    asked = [s.strip() for s in re.findall(r"[^.?!\n]*\?", text) if len(s.strip()) > 1]
    if asked:
        return asked
    raise ParseError("no questions found in the examiner's reply")


_IDK = re.compile(r"\bi\s+(?:do\s*n[o’']?t|dont)\s+know\b", re.IGNORECASE)


def says_idk(text: str) -> bool:
    """IDK baseline (§4.1): the model answered "I don't know"."""
    return bool(_IDK.search(text))


_BLANK = re.compile(r"_{2,}|\[MASK\]|<mask>|\[BLANK\]", re.IGNORECASE)


def is_cloze(query: str) -> bool:
    return bool(_BLANK.search(query))


def fill_blank(query: str, completion: str) -> str:
    """Form the claim of a fill-in-the-blank query (§4.1): the query with the blank filled by the answer.

    The model often repeats the whole sentence; then its sentence is the claim.
    """
    completion = completion.strip().splitlines()[0].strip() if completion.strip() else ""
    prefix = _BLANK.split(query, maxsplit=1)[0].strip()
    if prefix and completion.lower().startswith(prefix.lower()[: max(8, len(prefix) // 2)]):
        return completion
    answer = completion.rstrip(".")
    return _BLANK.sub(lambda _m: answer, query, count=1)
