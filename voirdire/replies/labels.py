"""A choice among labels (entailment / neutral / contradiction, ...), read clause by clause.

The caller names its labels and their word forms in a ``Labels``; inside the reader a form is a token ``<kI>`` (kind
k, label I), and the two sides a directed label relates are ``<src>`` / ``<tgt>``. Lines that echo the prompt's
inputs ("Premise: ...") are skipped; sentences and clauses come from ``lexicon``. A *mention* is a label word in any
of its forms; adjacent mentions joined only by commas, "or", "and", "nor" or "/" form one group:

- all labels together are an echo of the prompt's options ("entailment, contradiction, or neutral") and say
  nothing, unless negated ("it is not entailment, contradiction, or neutral": none of them);
- two labels joined by "or" or "/" ("entailment or neutral") say neither, unless negated ("neither entailment nor
  contradiction", "does not entail or contradict": both are ruled out);
- two labels joined by "and" or a comma assert both.

Each mention is *asserted*, *negated* (an odd number of negations before it in its clause: "not", "no", "never",
"neither", "nor", "without", "non-", "rather than", "instead of"), *possible* (a possibility or partial hedge
governs it: "may", "might", "could", "possibly", "partially", "not a clear", or a short trailing clause such as
"(mostly)"), or *undetermined* ("I cannot determine whether", "unclear", "not necessarily"). A mention in a
question, a conditional ("if", "unless", "whether"), reported speech ("the premise states that ...") or with a
directed label the wrong way round ("the hypothesis entails the premise") says nothing; a label that is the subject
of a predicate is judged by it ("Entailment is false", "Contradiction is not how I would describe it": negated).
"Probably", "likely", "I think", "seems" leave a mention asserted.

Clauses are ranked: conclusions ("so", "therefore", "the answer is", "Answer:", "Label:"), then main clauses (a
contrast, "but ...", demotes what precedes it in its sentence), then subordinate clauses ("because", "since",
"which"), then concessive ones ("although", "despite") and the demoted ones. The first rank with an asserted label
decides if it holds one label; the reply is refused when it asserts another label in any but the concessive rank,
negates the decided one, or leaves another label possible in a main or concluding clause. With no asserted label,
all labels but one ruled out and that one left open give it ("neither entailment nor contradiction" is neutral);
anything else is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from voirdire.replies.schema import ParseError

from . import lexicon as lx

Kind = Literal["noun", "adjective", "verb", "passive", "symmetric", "symmetric_passive"]
_KIND_MARK = {"noun": "n", "adjective": "j", "verb": "a", "passive": "p", "symmetric": "s", "symmetric_passive": "q"}
_MAX_LABELS = 10


@dataclass(frozen=True)
class Labels:
    """The labels of a choice and how a reply may name them.

    ``forms`` holds (word, label, kind): a noun ("entailment"), an adjective ("contradictory"), a directed verb
    ("entails"; its passive, "entailed") that holds only from a ``source`` word to a ``target`` word, or a symmetric
    verb ("contradicts"; its passive, "contradicted"). Lines opening with an ``echo_fields`` name and a colon
    ("Premise: ...") are the prompt's inputs repeated, and skipped."""

    names: tuple[str, ...]
    forms: tuple[tuple[str, str, Kind], ...]
    source: tuple[str, ...] = ()
    target: tuple[str, ...] = ()
    echo_fields: tuple[str, ...] = ()


def _forms(marks: str) -> frozenset[str]:
    return frozenset(f"<{m}{i}>" for m in marks for i in range(_MAX_LABELS))


# The caller's words as tokens (``_vocabulary``): <nI> a noun of label I, <jI> an adjective, <aI> a directed verb,
# <pI> its passive, <sI> a symmetric verb, <qI> its passive; <src> and <tgt> the two sides of a directed label.
_LABEL_WORDS = _forms("njapsq")
_NOUNS = _forms("n")
_PASSIVE = _forms("p")
_SYMMETRIC = _forms("jsq")
_VERBS = _forms("apsq")
_PASSIVE_VERBS = _forms("pq")
_SOURCE = frozenset({"<src>"})
_TARGET = frozenset({"<tgt>"})


@cache
def _vocabulary(labels: Labels) -> tuple[dict[str, str], re.Pattern[str] | None]:
    if len(labels.names) > _MAX_LABELS:
        raise ValueError(f"at most {_MAX_LABELS} labels")
    index = {name: i for i, name in enumerate(labels.names)}
    out = {word: f"<{_KIND_MARK[kind]}{index[label]}>" for word, label, kind in labels.forms}
    out.update({w: "<src>" for w in labels.source})
    out.update({w: "<tgt>" for w in labels.target})
    fields = "|".join(re.escape(f) for f in labels.echo_fields)
    echo = re.compile(rf"^[\s*_#>`\-]*(?:{fields})\s*[*_]*\s*:", re.IGNORECASE) if fields else None
    return out, echo


def _tokens(text: str, labels: Labels) -> list[str]:
    vocabulary, echo = _vocabulary(labels)
    return _values(lx.tokens(text, vocabulary, echo=echo))


def _values(tokens: list[str]) -> list[str]:
    """ "entailment: no" → "not entailment"; "contradiction: yes" → "contradiction" (a label followed by a value)."""
    out: list[str] = []
    k, n = 0, len(tokens)
    while k < n:
        tok = tokens[k]
        if tok in _LABEL_WORDS and k + 2 < n and tokens[k + 1] in (":", "=", "—"):
            value = tokens[k + 2]
            if value in _NEGATIVE_VALUES:
                out.extend(["not", tok])
                k += 3
                continue
            if value in _POSITIVE_VALUES:
                out.append(tok)
                k += 3
                continue
        out.append(tok)
        k += 1
    return out


_OBJECT_MODIFIERS = lx.words("the a an given stated original provided second first other")
_OBJECT_PRONOUNS = lx.words("it this them each one")
_OBJECT_FOLLOWERS = lx.words(
    "or nor and but because as since so therefore thus hence while which if when too either not in at all"
)
_GROUP_GLUE = lx.words(", or and nor / either neither a an the")

_SPLIT_ALWAYS = lx.SPLIT_ALWAYS | {"if"}  # "entailment only if ...": a condition, however it is joined
_CONCESSIVE = lx.words("although though despite albeit initially")
_OPENING_CONCESSIVE = _CONCESSIVE | lx.words("while whereas")  # "While it may seem neutral, ..."
_SUBORDINATE = lx.SUBORDINATE | {"that"}
_OPENING_SUBORDINATE = lx.words("because since as given when")
# A label reply concludes with a heading naming what it gives ("Label:", "Relationship:") or "the answer is".
_HEADINGS = lx.CONCLUSION_HEADINGS | lx.words("label relation relationship result prediction classification output")
_CONCLUSION_PAIRS = {("the", w) for w in ("answer", "label", "relationship", "relation")} | {("final", "label")}

# "entailment: no", "contradiction = true": a value after a label word.
_NEGATIVE_VALUES = lx.words("no none false 0 n incorrect wrong")
_POSITIVE_VALUES = lx.words("yes true 1 y correct right")
_PARTIAL_AFTER_NOT = lx.words(
    "clear clearly fully full complete completely strict strictly entirely exactly direct directly obvious "
    "obviously perfect perfectly total totally"
)
_UNDETERMINED = lx.UNDETERMINED | {"necessarily"}
_KNOWING = lx.KNOWING | lx.words("call classify label")
_POSSIBLE = lx.MAYBE | lx.PARTIAL | lx.words("may might could")
_DIFFICULT = lx.words("hard difficult tricky")
_ASKED = lx.words("whether if to that what which")
_REPORTED = lx.words(
    "says said states stated mentions mentioned claims claimed describes described contains contained includes "
    "included reads asserts quotes"
)
_WINDOW = 16  # how far a mention looks back in its clause, in tokens

Status = Literal["asserted", "negated", "possible", "undetermined"]
Rank = Literal["conclusion", "main", "subordinate", "concessive", "none"]
_RANK_ORDER: tuple[Rank, ...] = ("conclusion", "main", "subordinate", "concessive")
_ANSWERED: dict[str, Status] = {"yes": "asserted", "no": "negated"}


@dataclass(slots=True)
class _Mention:
    labels: tuple[int, ...]
    status: Status
    rank: Rank = "none"


@dataclass(slots=True)
class _Clause:
    tokens: list[str]
    rank: Rank
    mentions: list[_Mention] = field(default_factory=list)
    unsure: bool = False  # a clause that only says the reply is unsure ("hard to say", "I'm not sure")


def _unsure(words: list[str], asked: bool = False) -> bool:
    """Words that say the reply cannot tell ("unclear", "hard to say", "I cannot determine"); with ``asked``, a
    negated verb of knowing counts only with what it cannot tell ("I cannot tell whether ...")."""
    if any(w in _UNDETERMINED for w in words) or (any(w in _DIFFICULT for w in words) and _KNOWING.intersection(words)):
        return True
    return lx.withheld(words, _KNOWING) and (not asked or any(w in _ASKED for w in words))


def _groups(sent: list[str]) -> list[tuple[int, int]]:
    """Spans [start, end) of label words joined only by commas, "or", "and", "nor", "/" and articles."""
    spans: list[tuple[int, int]] = []
    k, n = 0, len(sent)
    while k < n:
        if sent[k] not in _LABEL_WORDS:
            k += 1
            continue
        start = end = k
        j = k + 1
        while j < n and (sent[j] in _GROUP_GLUE or sent[j] in _LABEL_WORDS):
            if sent[j] in _LABEL_WORDS:
                end = j
            j += 1
        spans.append((start, end + 1))
        k = end + 1
    return spans


def _clauses(sent: list[str]) -> list[tuple[int, int, str]]:
    """Clause spans [start, end) of a sentence with the word that opened each; groups are never cut."""
    inside = {k for start, end in _groups(sent) for k in range(start + 1, end)}
    return [(a, b, sent[a]) for a, b in lx.clauses(sent, _SPLIT_ALWAYS, lx.SPLIT_AFTER_COMMA, keep=inside)]


def _direction_ok(words: list[str], k: int) -> bool:
    """Whether a directed verb at ``k`` ("entails") runs from the source to the target (or names neither)."""
    word = words[k]
    before = next((w for w in reversed(words[max(0, k - _WINDOW) : k]) if w in _SOURCE or w in _TARGET), "")
    after_words = words[k + 1 : k + 8]
    if word in _PASSIVE:
        if after_words[:1] == ["by"] or after_words[1:2] == ["by"]:
            agent = next((w for w in after_words if w in _SOURCE or w in _TARGET), "")
            if agent in _TARGET:
                return False
        return before not in _SOURCE
    after = next((w for w in after_words if w in _SOURCE or w in _TARGET), "")
    return before not in _TARGET and after not in _SOURCE


def _status(words: list[str], k: int, lo: int) -> Status | None:
    """How the clause words before the mention at ``k`` (from ``lo``, the end of the previous mention) govern it;
    None when it says nothing (reported speech)."""
    before = words[max(lo, k - _WINDOW) : k]
    if any(w in _REPORTED for w in before):
        return None
    if _unsure(before, asked=True):
        return "undetermined"  # "I cannot tell whether", "not enough information to determine"
    if any(
        before[j] in ("may", "might", "could") and j + 1 < len(before) and before[j + 1] == "not"
        for j in range(len(before))
    ):
        return "negated"  # "it could not be entailment"
    if any(w in _POSSIBLE for w in before):
        return "possible"
    negation = next((j for j, w in enumerate(before) if w in lx.NEGATORS), len(before))
    if any(w in _PARTIAL_AFTER_NOT for w in before[negation + 1 :]):
        return "possible"  # "not a clear entailment", "does not fully entail"
    return "negated" if lx.negations(before) % 2 else "asserted"


def _predicate(words: list[str], start: int, end: int, status: Status) -> Status | None:
    """A noun label followed by a verb is that verb's subject: its predicate says whether the label holds."""
    if words[end - 1] not in _NOUNS or end >= len(words) or words[end] not in lx.SUBJECT_VERBS:
        return status
    judged = lx.judged(words[end : end + 6])
    if judged is None or judged:
        return None if judged is None else status
    return {"asserted": "negated", "negated": "asserted"}.get(status, status)  # type: ignore[return-value]


def _object_ok(words: list[str], end: int) -> bool:
    """Whether a label verb ending a group at ``end`` is said of the source / target pair: its object is one
    of them, a pronoun ("it", "each other"), or nothing (the clause ends, or goes on with a conjunction). A passive
    ("entailed by", "contradicted by") is checked on its agent."""
    k = end
    if words[end - 1] in _PASSIVE_VERBS:
        if k < len(words) and words[k] == "by":
            k += 1
        else:
            return True
    while k < len(words) and words[k] in _OBJECT_MODIFIERS:
        k += 1
    if k >= len(words):
        return True
    word = words[k]
    return (
        word in _SOURCE
        or word in _TARGET
        or word in _OBJECT_PRONOUNS
        or word in _OBJECT_FOLLOWERS
        or (not word[0].isalnum() and word not in _LABEL_WORDS)
        or (len(word) > 4 and word.endswith("ly"))
    )


def _mentions(words: list[str], n_labels: int) -> list[_Mention]:
    out: list[_Mention] = []
    lo = 0
    for start, end in _groups(words):
        labels: list[int] = []
        glue: set[str] = set()
        for k in range(start, end):
            w = words[k]
            if w in _GROUP_GLUE:
                glue.add(w)
            elif w in _NOUNS or w in _SYMMETRIC or _direction_ok(words, k):
                labels.append(int(w[2:-1]))
        distinct = tuple(dict.fromkeys(labels))
        if not distinct:
            continue
        status = _status(words, start, lo)
        lo = end
        if status is None:
            continue
        status = _predicate(words, start, end, status)
        if status is None:
            continue
        if words[end - 1] in _VERBS and not _object_ok(words, end):
            # "The premise entails AIDS-related cancer", "it contradicts the claim that ...": said of something else
            # than the pair; it leaves its label open (a conflict with a label given elsewhere), or says nothing.
            if status != "asserted":
                continue
            status = "possible"
        if len(distinct) == n_labels:
            # The prompt's options: an echo says nothing; negated, the reply says none of them.
            if status == "negated":
                out.append(_Mention(distinct, "negated"))
            continue
        if len(distinct) == 2:
            disjunctive = bool(glue & {"or", "/", "nor"})
            if status == "negated" and (disjunctive or "neither" in words[max(0, start - 2) : start]):
                out.append(_Mention(distinct, "negated"))
            elif status == "asserted" and not disjunctive:
                out.extend(_Mention((label,), "asserted") for label in distinct)
            elif status != "asserted" or disjunctive:
                continue  # "entailment or neutral": neither is said
            continue
        out.append(_Mention(distinct, status))
    return out


def _read_clauses(tokens: list[str], n_labels: int) -> list[_Clause]:
    clauses: list[_Clause] = []
    carry = False  # a heading such as "Answer:" or "The answer is:" makes the next clause with a label conclude
    said = lx.sentences(tokens)
    for i, sentence in enumerate(said):
        sent, question = sentence.tokens, sentence.question
        restated = lx.answered(said, i)
        if restated is not None:  # "Entailment? Yes.", "Is it a contradiction? No.": one label asked and answered
            asked = [m for m in _mentions(restated[0], n_labels) if m.status == "asserted" and len(m.labels) == 1]
            for m in asked[:1] if len(asked) == 1 else []:
                clauses.append(_Clause(restated[0], "main", [_Mention(m.labels, _ANSWERED[restated[1]], "main")]))
            continue
        hypothetical = sent[0] in lx.HYPOTHETICAL
        spans = _clauses(sent)
        here: list[_Clause] = []
        opened = demoted = 0  # clauses before these indices were already left open / demoted (linear time)
        for start, end, first in spans:
            words = sent[start:end]
            mentions = [] if question or hypothetical else _mentions(words, n_labels)
            if first in lx.HYPOTHETICAL:
                mentions = []
                for earlier in here[opened:]:  # "Entailment if the dates match", "..., only if ...": a condition
                    for m in earlier.mentions:
                        m.status = "undetermined"
                opened = len(here)
            conclusion = lx.concludes(words, 4, _HEADINGS, _CONCLUSION_PAIRS)
            if first in lx.CONTRAST:
                rank: Rank = "main"
                if mentions:  # a contrast that gives a label overrides what precedes it in the sentence
                    for earlier in here[demoted:]:
                        earlier.rank = "concessive"
                        for m in earlier.mentions:
                            m.rank = "concessive"
                    demoted = len(here)
                if not mentions and any(w in lx.NEGATORS for w in words):
                    for earlier in here[opened:]:  # "..., but it is not": what came before is left open
                        for m in earlier.mentions:
                            m.status = "undetermined"
                    opened = len(here)
            elif first in _CONCESSIVE or (start == 0 and first in _OPENING_CONCESSIVE):
                rank = "concessive"
            elif (first in _SUBORDINATE and start > 0) or (start == 0 and first in _OPENING_SUBORDINATE):
                rank = "subordinate"
            else:
                rank = "main"
            if (conclusion or carry) and rank == "main":
                rank = "conclusion"
            if not mentions and words and len(words) <= 4 and any(w in _POSSIBLE for w in words) and here:
                for m in here[-1].mentions:  # "Entailment (mostly)", "Neutral, maybe."
                    if m.status == "asserted":
                        m.status = "possible"
            if mentions:
                carry = False
            elif conclusion and len(words) <= 4:
                carry = True
            for m in mentions:
                m.rank = rank
            unsure = not mentions and not question and rank in ("conclusion", "main") and _unsure(words)
            here.append(_Clause(words, rank, mentions, unsure))
        if lx.doubted([c.tokens for c in here]):  # "Entailment, though I am not certain": left open
            for m in (m for c in here for m in c.mentions if m.status == "asserted"):
                m.status = "possible"
        clauses.extend(here)
    return clauses


def read_label(reply: str, labels: Labels) -> str:
    """The one label of ``labels`` the reply gives (see the module's docstring), or ``ParseError`` saying why not."""
    if not reply.strip():
        raise ParseError("empty reply")
    clauses = _read_clauses(_tokens(reply, labels), len(labels.names))
    names = labels.names
    mentions = [m for c in clauses for m in c.mentions]
    asserted = {r: {m.labels[0] for m in mentions if m.status == "asserted" and m.rank == r} for r in _RANK_ORDER}
    strong = ("conclusion", "main", "subordinate")
    negated = {label for m in mentions if m.status == "negated" and m.rank in strong for label in m.labels}
    possible = {
        label for m in mentions if m.status == "possible" and m.rank in ("conclusion", "main") for label in m.labels
    }
    decided = next((asserted[r] for r in _RANK_ORDER if asserted[r]), set())
    if len(decided) > 1:
        raise ParseError(f"reply gives several labels: {sorted(names[i] for i in decided)}")
    if decided:
        (label,) = decided
        others = {x for r in strong for x in asserted[r]} - {label}
        if others:
            raise ParseError(f"reply names {names[label]!r} and also {sorted(names[i] for i in others)}")
        if label in negated:
            raise ParseError(f"reply says {names[label]!r}, then negates it")
        if possible - {label}:
            open_ = sorted(names[i] for i in possible - {label})
            raise ParseError(f"reply says {names[label]!r} but leaves {open_} open")
        return names[label]
    left = [i for i in range(len(names)) if i not in negated]
    if len(left) == 1 and left[0] not in possible and not any(c.unsure for c in clauses):
        return names[left[0]]  # "neither entailment nor contradiction"
    said = [f"ruled out: {sorted(names[i] for i in negated)}"] if negated else []
    said += [f"left open: {sorted(names[i] for i in possible)}"] if possible else []
    raise ParseError(f"no single one of {', '.join(names)} is given" + (f" ({'; '.join(said)})" if said else ""))
