"""The LMvLM replies (§2, Table 1): the examiner's verdict and Yes/No answers, its questions, IDK, cloze claims.

The verdict ("correct" or "incorrect" about the claim) and the Yes/No answers (Stage 2's follow-up question, the AYS
baseline) are closed answers, read by the core reader (``voirdire.replies``) with this protocol's words; a refusal
(``ParseError``) is inconclusive, which the paper counts as a rejection. Kept here is what is LMvLM's own: the
examiner's questions, the IDK baseline's answer and the fill-in-the-blank claim.
"""

from __future__ import annotations

import re
from typing import Literal

from voirdire.kit import ParseError
from voirdire.kit.replies import Polar, read_conclusion, read_polar, read_yes_no

Decision = Literal["correct", "incorrect"]
# Stage 3's verdict, said of the claim (§2).
# "wrong" is read as "incorrect": "The claim is wrong." is read without hesitation. "true", "false" and
# their kin give no verdict (§2 asks for correct or incorrect: "the claim ... is false" is inconclusive), but they
# contradict one: "Correct. ... so the claim is false." is refused.
CLAIM_VERDICT = Polar(
    ("correct",),
    ("incorrect", "wrong"),
    ("claim", "claims", "statement", "assertion", "proposition"),
    vetoes=(
        ("true", "accurate", "right", "valid", "factual", "holds", "hold", "stands"),
        ("false", "untrue", "inaccurate", "mistaken", "erroneous", "invalid", "unfounded", "baseless"),
    ),
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def parse_decision(text: str) -> Decision:
    """Stage 3: "correct" or "incorrect" about the claim (§2), read by ``voirdire.replies.read_polar``."""
    return read_polar(text, CLAIM_VERDICT)  # type: ignore[return-value]


def parse_yes_no(text: str) -> bool:
    """Table 1 Stage 2 (i) and the AYS baseline: "Please answer with Yes or No" (``voirdire.replies.read_yes_no``)."""
    return read_yes_no(text) == "yes"


# A list item: "1.", "2)", "1.Who" (no space, as Table 16 of LMvLM prints it), "a.", "-", "*", "•", "Q1:",
# "Question 2." (matched on a stripped line, without backtracking); "1.5 million" is no item.
_NUMBERED = re.compile(
    r"(?:\d+[.)]\s*(?=[^\d\s])|(?:[a-z][.)]|[-*•]|Q(?:uestion)?\s*(?:\d+\s*)?[:.)])\s+)(\S.*)", re.IGNORECASE
)


# ---------------------------------------------------------------------------------------------------- questions

_SENTENCE_MARK = re.compile(r"([.?!\n])")
_LEAD_IN = re.compile(r"^[^?]*:\s*(?=\S[^:]*\?)")  # "To verify this, I would ask: Who ...?"


def split_questions(text: str) -> list[str]:
    """The examiner's questions: numbered or bulleted lines, else the sentences that end in '?'.

    Stage 1 feeds the examiner's questions to the examinee "one at a time" (§2), so they are split here.
    """
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    listed = [m.group(1) for ln in lines if (m := _NUMBERED.fullmatch(ln))]
    listed = [q for q in listed if "?" in q] or listed
    if listed:
        return [_LEAD_IN.sub("", q).strip() for q in listed]
    pieces = _SENTENCE_MARK.split(text)  # [text, mark, text, mark, ...]: linear, unlike a search for "...?"
    sentences = [pieces[k] + "?" for k in range(0, len(pieces) - 1, 2) if pieces[k + 1] == "?"]
    asked = [_LEAD_IN.sub("", s).strip() for s in sentences if len(s.strip()) > 1]
    if asked:
        return asked
    raise ParseError("no questions found in the examiner's reply")


_ECHOED = ("follow-up question", "followup question", "yes or no", "any follow-up", "any further question")


def questions_in_answer(text: str) -> list[str]:
    """The questions a Stage 2 answer asks itself, read from the conclusion it ends on ("No. Actually, wait, one
    more thing: 1. When was it released?"): its own questions, not the prompt's repeated. Empty when it asks
    none."""

    def asked(part: str) -> list[str]:
        found = [q for q in split_questions(part) if q.rstrip().endswith("?")]
        found = [q for q in found if not any(e in q.lower() for e in _ECHOED)]
        if not found:
            raise ParseError("no questions of its own")
        return found

    try:
        return read_conclusion(text, asked)
    except ParseError:
        return []


# ---------------------------------------------------------------------------------------------------- IDK

_IDK = re.compile(
    r"^\W*(?:(?:i\s*(?:a|')m\s+)?sorry\W+(?:but\s+)?)?i\s+(?:do\s*n[o’']?t|dont)\s+know\b(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_GUESS = _words("but however though although might maybe probably perhaps think believe guess likely possibly could")


def says_idk(text: str) -> bool:
    """IDK baseline (§4.1): the model answered "I don't know", and only that (the prompt asks for "'I don't know'
    only"). An apology before it is allowed ("Sorry, I don't know."); a guess after it is an answer ("I don't know
    for sure, but it is Paris.", "I don't know, maybe Paris")."""
    m = _IDK.match(text.strip())
    if not m:
        return False
    rest = [w.strip(".,;:!?\"'()") for w in m.group("rest").lower().split()]
    return not (_GUESS & set(rest)) and len(rest) <= 6


# ---------------------------------------------------------------------------------------------------- claims

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
