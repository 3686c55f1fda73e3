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
# "The correct answer is Paris" speaks of an answer, not of the claim.
_ATTRIBUTIVE = re.compile(r"\bthe\s+(?:in)?correct\s+\w+", re.IGNORECASE)
_DECISION = re.compile(r"\b(?:in)?correct\b", re.IGNORECASE)
# A negation in the few words before "correct" ("isn't correct", "cannot be verified as correct").
_NEGATION = re.compile(r"(?:\b(?:not|never|cannot|unlikely|no|neither|nor|hardly)\b|n[’']t\b)", re.IGNORECASE)
_CLAUSES = re.compile(r"[.;!?\n]+|,\s*(?:although|but|though|however|whereas|while)\b", re.IGNORECASE)


def _decisions(text: str) -> set[str]:
    found = set()
    for m in _DECISION.finditer(text):
        before = " ".join(text[: m.start()].split()[-5:])
        negated = bool(_NEGATION.search(before))
        word = m.group(0).lower()
        if word == "correct":
            found.add("incorrect" if negated else "correct")
        else:  # "not incorrect" is no clear verdict either way
            found |= {"correct", "incorrect"} if negated else {"incorrect"}
    return found


def parse_decision(text: str) -> Decision:
    """Stage 3: "correct" or "incorrect" (§2).

    A negated "correct" ("not correct", "isn't correct", "unlikely ... correct") is incorrect. When the reply
    says both, the clause about the claim decides ("The claim appears to be correct, although one answer was
    incorrect."). Otherwise both, or neither, is inconclusive, which the paper counts as a rejection.
    """
    cleaned = _ATTRIBUTIVE.sub(" ", _ECHOES.sub(" ", text))
    hits = _decisions(cleaned)
    if len(hits) > 1:
        about_claim = set().union(*(_decisions(c) for c in _CLAUSES.split(cleaned) if "claim" in c.lower()))
        if len(about_claim) == 1:
            hits = about_claim
    if len(hits) == 1:
        return hits.pop()  # type: ignore[return-value]
    if not hits:
        raise ParseError("no 'correct' or 'incorrect' in the examiner's conclusion")
    raise ParseError("the conclusion says both 'correct' and 'incorrect'")


_YES = r"yes|yeah|yep|sure|certainly|absolutely|of course"
_LEAD = re.compile(rf"^[\s\"'*_`>#:.\-]*({_YES}|no|nope)\b", re.IGNORECASE)
_ANY = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_BOTH = re.compile(r"^\W*(yes|no)\s+(and|or)\s+(yes|no)\b", re.IGNORECASE)  # "Yes and no" is no answer
# "no" as a quantifier is not an answer: "There is no doubt that my claim is correct."
_NOT_AN_ANSWER = re.compile(r"\bno\s+(?:doubt|reason\s+to\s+doubt|question\s+that)\b", re.IGNORECASE)
_HAVE_NONE = re.compile(
    r"\b(?:have|are)\s+no\s+(?:further|more|additional|other)?\s*(?:follow-up\s+)?questions\b", re.I
)
_HAVE_SOME = re.compile(
    r"\bhave\s+(?:some|a\s+few|a\s+couple\s+of|more|additional|further|several)\s+(?:follow-up\s+)?questions\b", re.I
)


def parse_yes_no(text: str) -> bool:
    """Table 1 Stage 2 (i) and the AYS baseline: "Please answer with Yes or No".

    The reply's first word decides ("Sure" and "Of course" are yes); failing that, "I have no further
    questions" / "I have a few questions", or a single Yes or No anywhere in the reply.
    """
    if _BOTH.match(text):
        raise ParseError("the reply says both Yes and No")
    lead = _LEAD.match(text)
    if lead:
        return lead.group(1).lower() not in ("no", "nope")
    if _HAVE_NONE.search(text):
        return False
    if _HAVE_SOME.search(text):
        return True
    found = {m.lower() for m in _ANY.findall(_NOT_AN_ANSWER.sub(" ", text))}
    if len(found) == 1:
        return found.pop() == "yes"
    raise ParseError("expected Yes or No" if not found else "the reply says both Yes and No")


_NUMBERED = re.compile(r"^\s*(?:\d+[.)]|[a-z][.)]|[-*•]|Q(?:uestion)?\s*\d*\s*[:.)])\s+(.*\S)\s*$", re.IGNORECASE)
_LEAD_IN = re.compile(r"^[^?]*:\s*(?=\S[^:]*\?)")  # "To verify this, I would ask: Who ...?"


def split_questions(text: str) -> list[str]:
    """The examiner's questions: numbered or bulleted lines, else the sentences that end in '?'.

    Stage 1 feeds the examiner's questions to the examinee "one at a time" (§2), so they are split here.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    listed = [m.group(1) for ln in lines if (m := _NUMBERED.match(ln))]
    listed = [q for q in listed if "?" in q] or listed
    if listed:
        return [_LEAD_IN.sub("", q).strip() for q in listed]
    asked = [_LEAD_IN.sub("", s).strip() for s in re.findall(r"[^.?!\n]*\?", text) if len(s.strip()) > 1]
    if asked:
        return asked
    raise ParseError("no questions found in the examiner's reply")


_IDK = re.compile(r"^\W*i\s+(?:do\s*n[o’']?t|dont)\s+know\b(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)


def says_idk(text: str) -> bool:
    """IDK baseline (§4.1): the model answered "I don't know", and only that (the prompt asks for "'I don't
    know' only"); "I don't know for sure, but it is Paris." is an answer."""
    m = _IDK.match(text.strip())
    if not m:
        return False
    rest = m.group("rest")
    return "but" not in rest.lower().split() and len(rest.split()) <= 6


_BLANK = re.compile(r"_{2,}|\[MASK\]|<mask>|\[BLANK\]", re.IGNORECASE)


def is_cloze(query: str) -> bool:
    return bool(_BLANK.search(query))


def fill_blank(query: str, completion: str) -> str:
    """Form the claim of a fill-in-the-blank query (§4.1): the query with the blank filled by the answer.

    The model often repeats the whole sentence; then its sentence is the claim. A completion that repeats the
    word after the blank ("X plays ____ music." → "Jazz music.") does not repeat it in the claim.
    """
    completion = completion.strip().splitlines()[0].strip() if completion.strip() else ""
    prefix, suffix = (p.strip() for p in _BLANK.split(query, maxsplit=1)) if is_cloze(query) else (query, "")
    if prefix and completion.lower().startswith(prefix.lower()[: max(8, len(prefix) // 2)]):
        return completion
    answer = completion.rstrip(".")
    next_word = suffix.split()[0].strip(".,;!?").lower() if suffix.split() else ""
    words = answer.split()
    if next_word and len(words) > 1 and words[-1].lower() == next_word:
        answer = " ".join(words[:-1])
    return _BLANK.sub(lambda _m: answer, query, count=1)
