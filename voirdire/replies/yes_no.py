"""Yes or No: a leading answer, an answer stated in words, a lone "yes" / "no", or what the reply says of its
subject.

Read sentence by sentence: a leading answer ("Yes", "Sure", "Of course"; "No", "Nope", "Not really"), where an
emphatic negative is No ("Certainly not", "Absolutely not", "Of course not", "By no means") and an emphatic phrase
that stands alone is Yes ("No doubt.", "No doubt about it: ...", "Without a doubt."); an emphatic phrase that
governs a statement ("No doubt they differ.") is that statement, not an answer. Stated answers: having (no) further
questions, being (not) sure, "I think so" / "I don't". A lone "yes" or "no" ("so, no."). Questions and echoes of the
prompt ("Please answer with Yes or No.") say nothing. When nothing else answers, a caller's ``Polar`` reads what the
reply says of its subject ("They are not paraphrases." is No), and a numbered list of questions is a Yes (the
reply went straight to them); an answer word that says the opposite of what the reply says of its subject ("Yes.
..., so they are not equivalent.") is refused. Answers that disagree ("Yes and no", "Yes, I have no further
questions") raise ``ParseError``, as does a reply with no answer at all.
"""

from __future__ import annotations

import contextlib
import re
from typing import Literal

from voirdire.replies.schema import ParseError

from . import lexicon as lx
from .polar import _PERSONAL, Polar, read_polar, tokens

YesNo = Literal["yes", "no"]
_QUANTITY = lx.words(
    "some a few couple more additional further several two three four five another other one many follow-up followup "
    "of an"
)
_SURE_DEGREE = lx.words("am not very absolutely completely quite fairly pretty entirely totally 100 %")
_DONE = {("that", "is", "all"), ("i", "am", "done")}
_STATEMENT_WORDS = lx.SURE | lx.words(
    "question questions thing have ask need unsure uncertain <emph> think believe guess hope doubt doubts afraid do am "
    "enough everything all done nothing"
)
_ANSWER_WORDS = _STATEMENT_WORDS | lx.YES_WORDS | lx.EMPHATIC | lx.words("yes no nope nah negative not")
_WISH = lx.words("like want need have wish")


def _statements(tokens: list[str]) -> list[YesNo]:
    """Answers stated in words: having (no) further questions, being (not) sure, "I think so" / "I don't"."""
    out: list[YesNo] = []
    n = len(tokens)
    for k, w in enumerate(tokens):
        if w not in _STATEMENT_WORDS:
            continue
        nxt = tokens[k + 1 : k + 6]
        if w in ("question", "questions") and k >= 1:
            window = tokens[max(0, k - 6) : k]
            if "whether" in window or "if" in window or "asked" in window:
                continue
            if "no" in window or ("not" in window and ("have" in window or "need" in window)):
                out.append("no")
            elif (any(v in window for v in ("have", "add", "ask")) and any(q in window for q in _QUANTITY)) or (
                "my" in window[-3:] or "here" in window
            ):
                out.append("yes")
        elif w in ("ask", "need") and _unsure(tokens[max(0, k - 5) : k]):
            continue  # "I am not sure I need to ask anything more": a doubt, not an answer
        elif w == "ask" and k >= 2 and tokens[k - 1] == "to" and tokens[k - 2] in _WISH:
            negated = any(t in lx.NEGATORS for t in tokens[max(0, k - 5) : k])
            out.append("no" if negated else "yes")  # "I do not need to ask anything else", "nothing more I need to ask"
        elif w in ("thing", "question", "questions") and tuple(tokens[max(0, k - 2) : k]) == ("one", "more"):
            out.append("yes")  # "Wait, one more thing: ...", "One more question."
        elif w == "have" and tokens[k - 1 : k] in (["i"], ["do"]) and nxt[:1] == ["one"] and (
            nxt[1:2] in ([], [":"], ["."], [","], ["more"], ["question"])
        ):
            out.append("yes")  # "I do have one: where was he born?"
        elif (
            w == "need"
            and any(t in lx.NEGATORS for t in tokens[max(0, k - 3) : k])
            and any(t in ("more", "further", "additional", "anything", "else") for t in nxt[:3])
        ):
            out.append("no")  # "I do not need any more information"
        elif w in lx.SURE and k >= 1 and tokens[k - 1] in _SURE_DEGREE:
            window = tokens[max(0, k - 4) : k]
            if nxt[:1] and nxt[0] in ("how", "what", "if", "whether", "which", "where", "when", "who", "why"):
                continue  # "I'm not sure how to answer": not about the claim
            if nxt[:1] and nxt[0] in _PERSONAL:
                continue  # "I'm sure I can help": sure of something else
            if "i" in window or "am" in window:
                out.append("no" if "not" in window or "no" in window else "yes")
        elif w in ("unsure", "uncertain") and k >= 1 and tokens[k - 1] == "am":
            out.append("no")
        elif w == "<emph>" and k >= 1 and tokens[k - 1] in ("have", "is", "am"):
            out.append("yes")  # "I have no doubt", "there is no doubt that my claim is correct"
        elif w in ("think", "believe", "guess", "hope") and nxt[:1] == ["so"]:
            out.append("no" if "not" in tokens[max(0, k - 3) : k] else "yes")
        elif w in ("doubt", "doubts") and "i" in tokens[max(0, k - 4) : k]:
            out.append(
                "yes" if any(t in lx.NEGATORS for t in tokens[max(0, k - 3) : k]) else "no"
            )  # "I do not doubt it"
        elif w == "afraid" and nxt[:1] == ["not"]:
            out.append("no")
        elif w in ("do", "am") and k >= 1 and tokens[k - 1] == "i" and (k + 1 == n or tokens[k + 1] in (".", "!")):
            out.append("yes")  # "I do." / "I am."
        elif (
            w in ("do", "am")
            and k >= 1
            and tokens[k - 1] == "i"
            and nxt[:1] == ["not"]
            and (k + 2 == n or tokens[k + 2] in (".", "!", ","))
        ):
            out.append("no")  # "I do not." / "I am not."
        elif w in ("enough", "everything", "all") and tokens[max(0, k - 2) : k] in (["i", "have"], ["have", "got"]):
            out.append("no")  # "I have enough information", "I have everything I need"
        elif tuple(tokens[max(0, k - 2) : k + 1]) in _DONE or (
            w == "nothing" and nxt[:2] in (["more", "to"], ["else", "to"])
        ):
            out.append("no")  # "That's all.", "I'm done.", "Nothing else to ask."
    return out


def _unsure(before: list[str]) -> bool:
    """A negation of sureness before a word ("not sure I need"): what follows is doubted, not answered."""
    return any(t in lx.NEGATORS and before[j + 1 : j + 2] and before[j + 1] in lx.SURE for j, t in enumerate(before))


# A list item: "1.", "2)", "1.Who" (no space, as Table 16 of LMvLM prints it), "a.", "-", "*", "•", "Q1:",
# "Question 2." (matched on a stripped line, without backtracking); "1.5 million" is no item.
_NUMBERED = re.compile(
    r"(?:\d+[.)]\s*(?=[^\d\s])|(?:[a-z][.)]|[-*•]|Q(?:uestion)?\s*(?:\d+\s*)?[:.)])\s+)(\S.*)", re.IGNORECASE
)


def read_yes_no(text: str, content: Polar | None = None) -> YesNo:
    """ "yes" or "no" (see the module's docstring); ``content`` reads what the reply says of its subject when no
    answer word does."""
    found: list[YesNo] = []
    said = lx.sentences(tokens(text))
    if any(not s.question and lx.qualified(s.tokens) for s in said):
        raise ParseError("the reply qualifies its answer (a degree short of sure, or 'I could be wrong')")
    for sent in said:
        toks = sent.tokens
        if sent.question:
            if len(toks) == 1 and toks[0] in ("yes", "no"):
                found.append(toks[0])  # "Yes? No.": a tentative answer counts, so the two disagree
            continue
        for a, b in lx.clauses(toks, frozenset({"but"}), frozenset(), lambda start, comma: False):
            clause = toks[a + (toks[a] == "but") : b]
            if _ANSWER_WORDS.isdisjoint(clause):
                continue
            lead = lx.answer_word(clause)
            if lead is not None:
                found.append(lead)
                clause = clause[1:]
            found.extend(_statements(clause))
            found.extend(_lone_answers(clause))
    said_of_subject = None
    if content is not None:
        with contextlib.suppress(ParseError):  # nothing said of the subject either
            said_of_subject = "yes" if read_polar(text, content) == content.names[0] else "no"
    if said_of_subject is not None and found and set(found) != {said_of_subject}:
        # "Yes. ..., so they are not semantically equivalent.": the answer word and what the reply says disagree
        raise ParseError(f"the reply answers {found[0]!r} but says the opposite of its subject")
    if not found and said_of_subject is not None:
        found.append(said_of_subject)
    if not found and any(_asks(m.group(1)) for ln in text.splitlines() if (m := _NUMBERED.fullmatch(ln.strip()))):
        found.append("yes")  # the reply went straight to its follow-up questions
    values = set(found)
    if len(values) == 1:
        return values.pop()
    if values:
        raise ParseError("the reply says both Yes and No")
    raise ParseError("expected Yes or No")


def _asks(line: str) -> bool:
    """A listed question of the reply's own, not the prompt repeated ("1. Do you have any follow-up questions?")."""
    words = tokens(line)
    return "?" in words and "<echo>" not in words and "follow-up" not in words and "sure" not in words


def _lone_answers(tokens: list[str]) -> list[YesNo]:
    """A "yes" anywhere but in an echo, quoted speech or under negation; a "no" that ends a phrase ("so, no.")."""
    out: list[YesNo] = []
    n = len(tokens)
    for k, w in enumerate(tokens):
        if k == 0:
            continue
        before = tokens[max(0, k - 3) : k]
        if w == "yes" and "not" not in before and not (tokens[k - 1] in ("says", "said", "say") and k < 3):
            out.append("yes")
        elif w == "no" and (k + 1 == n or tokens[k + 1] in (".", "!", ",")):
            out.append("no")
    return out
