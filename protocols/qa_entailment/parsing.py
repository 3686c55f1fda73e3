"""Strict readers of model replies: entailment labels, QA2D statements and 1–5 scores.

A reply that does not say exactly one thing returns a ``ParseFailure`` (never a default value), so the caller
records it and the item's outcome is "undetermined" rather than silently wrong. A refusal costs an undetermined
item; a wrong reading would move a judgment, so every unclear case refuses. (The authors' released notebooks test
``'entailment' in reply.lower()``, which reads "not entailment" as entailment; we deliberately do not.)

The entailment reader works on clauses, not on words near a keyword. The reply is tokenised (lower case, quotes and
markdown dropped, contractions expanded, a few fixed phrases resolved: "no doubt", "rather than", "instead of"),
lines that echo the prompt's inputs ("Premise: ...", "Hypothesis: ...") are skipped, and the rest is cut into
sentences and clauses. A *mention* is a label word in any of its forms ("entailment", "entails", "entailed",
"contradiction", "contradicts", "contradictory", "neutral"); adjacent mentions joined only by commas, "or", "and",
"nor" or "/" form one group:

- all three labels together are an echo of the prompt's options ("entailment, contradiction, or neutral") and say
  nothing, unless negated ("it is not entailment, contradiction, or neutral": none of them);
- two labels joined by "or" or "/" ("entailment or neutral") say neither, unless negated ("neither entailment nor
  contradiction", "does not entail or contradict": both are ruled out);
- two labels joined by "and" or a comma assert both.

Each mention is *asserted*, *negated* (an odd number of negations before it in its clause: "not", "no",
"never", "neither", "nor", "without", "non-", "rather than", "instead of"), *possible* (a possibility or partial
hedge governs it: "may", "might", "could", "possibly", "maybe", "leaning", "partially", "mostly", "not a clear",
"not fully", or a short trailing clause such as "(mostly)", "maybe"), or *undetermined* ("I cannot determine
whether", "unclear", "not necessarily", "not enough information to determine"). A mention in a question, in a
conditional ("if", "unless", "whether"), in reported speech ("the premise states that ...") or with the
entailment the wrong way round ("the hypothesis entails the premise", "is entailed by the hypothesis") says
nothing. "Probably", "likely", "I think", "seems" leave a mention asserted.

Clauses are ranked: conclusions ("so", "therefore", "the answer is", "Answer:", "Label:", "in conclusion"), then
main clauses (a contrast, "but ...", demotes what precedes it in its sentence), then subordinate clauses
("because", "since", "as", "which", "while"), then concessive ones ("although", "though", "despite") and the
demoted ones. The first rank with an asserted label decides if it holds one label; the reply is refused when it
asserts another label in any but the concessive rank, negates the decided one, or leaves another label possible in
a main or concluding clause. With no asserted label, two labels ruled out and the third left open give the third
("neither entailment nor contradiction" is neutral); anything else is refused. Every reader is linear in the
reply's length: one tokenising regular expression without nested quantifiers, and bounded look-backs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

from pydantic import BaseModel

EntailmentLabel = Literal["entailment", "contradiction", "neutral"]
ENTAILMENT_LABELS: tuple[EntailmentLabel, ...] = ("entailment", "contradiction", "neutral")


class ParseFailure(BaseModel):
    """A model reply that the named parser could not read; ``raw`` is the reply as received."""

    parser: str
    reason: str
    raw: str


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# ---------------------------------------------------------------------------------------------------- tokens

_TOKEN = re.compile(r"[a-z0-9]+(?:['\-][a-z0-9]+)*|\n|[^\sa-z0-9]")
_TRANSLATE = str.maketrans({"“": '"', "”": '"', "’": "'", "‘": "'", "`": "'", "—": " — ", "–": " — ", "…": "."})
_NOISE = _words("* _ # > ~ | \" '")
_EXPAND = {
    "cannot": ["can", "not"],
    "can't": ["can", "not"],
    "won't": ["will", "not"],
    "isn't": ["is", "not"],
    "doesn't": ["does", "not"],
    "don't": ["do", "not"],
    "didn't": ["did", "not"],
    "aren't": ["are", "not"],
    "wasn't": ["was", "not"],
    "couldn't": ["could", "not"],
    "wouldn't": ["would", "not"],
    "shouldn't": ["should", "not"],
    "it's": ["it", "is"],
    "that's": ["that", "is"],
    "there's": ["there", "is"],
    "i'm": ["i", "am"],
    "i'd": ["i", "would"],
    "non-entailment": ["non", "entailment"],
    "non-contradiction": ["non", "contradiction"],
    "non-contradictory": ["non", "contradictory"],
    "not-entailment": ["not", "entailment"],
}
# Fixed phrases: emphatic positives that contain a negation, and negations spelled in two words.
_PHRASES: dict[tuple[str, ...], str] = {
    ("no", "doubt"): "<emph>",
    ("without", "a", "doubt"): "<emph>",
    ("without", "any", "doubt"): "<emph>",
    ("without", "doubt"): "<emph>",
    ("not", "only"): "<emph>",
    ("rather", "than"): "<not>",
    ("instead", "of"): "<not>",
    ("as", "opposed", "to"): "<not>",
    ("far", "from"): "<not>",
    ("anything", "but"): "<not>",
    ("by", "no", "means"): "<not>",
    ("in", "no", "way"): "<not>",
    ("even", "though"): "although",
    ("even", "if"): "although",
    ("at", "first", "glance"): "initially",
    ("at", "first", "sight"): "initially",
}
_PHRASE_FIRST = frozenset(k[0] for k in _PHRASES)
_PHRASE_MAX = max(len(k) for k in _PHRASES)
# Lines that echo the prompt's inputs, skipped whole (a premise may hold any word, a label word included).
_ECHO_LINE = re.compile(r"^[\s*_#>`\-]*(?:premise|hypothesis|s1|s2)\s*[*_]*\s*:", re.IGNORECASE)


def _tokens(text: str) -> list[str]:
    raw: list[str] = []
    for line in text.splitlines():
        if _ECHO_LINE.match(line):
            raw.append("\n")
            continue
        for tok in _TOKEN.findall(line.translate(_TRANSLATE).lower()):
            if tok in _NOISE:
                continue
            if tok == "-":  # a dash between spaces separates clauses ("Yes - entailment"); a hyphen stays in its word
                tok = "—"
            if tok.endswith("n't") and tok not in _EXPAND:
                raw.extend([tok[:-3], "not"])
            else:
                raw.extend(_EXPAND.get(tok, [tok]))
        raw.append("\n")
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        if raw[i] in _PHRASE_FIRST:
            for size in range(min(_PHRASE_MAX, n - i), 1, -1):
                repl = _PHRASES.get(tuple(raw[i : i + size]))
                if repl is not None:
                    out.append(repl)
                    i += size
                    break
            else:
                out.append(raw[i])
                i += 1
        else:
            out.append(raw[i])
            i += 1
    return _values(out)


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


# ---------------------------------------------------------------------------------------------------- mentions

_NOUNS: dict[str, EntailmentLabel] = {
    "entailment": "entailment",
    "entailments": "entailment",
    "contradiction": "contradiction",
    "contradictions": "contradiction",
    "neutral": "neutral",
    "neutrality": "neutral",
}
_ACTIVE = {"entail": "entailment", "entails": "entailment", "entailing": "entailment"}
_PASSIVE = {"entailed": "entailment"}
_SYMMETRIC = {
    "contradict": "contradiction",
    "contradicts": "contradiction",
    "contradicting": "contradiction",
    "contradicted": "contradiction",
    "contradictory": "contradiction",
}
_LABEL_WORDS = frozenset(_NOUNS) | frozenset(_ACTIVE) | frozenset(_PASSIVE) | frozenset(_SYMMETRIC)
_VERBS = frozenset(_ACTIVE) | frozenset(_PASSIVE) | _words("contradict contradicts contradicting contradicted")
_PASSIVE_VERBS = _words("entailed contradicted")
_OBJECT_MODIFIERS = _words("the a an given stated original provided second first other")
_OBJECT_PRONOUNS = _words("it this them each one")
_OBJECT_FOLLOWERS = _words(
    "or nor and but because as since so therefore thus hence while which if when too either not <not> in at all"
)
_GROUP_GLUE = _words(", or and nor / either neither a an the")
_PREMISE = _words("premise s1")
_HYPOTHESIS = _words("hypothesis s2")

_SENTENCE_END = frozenset({".", "!", "?", ";", "\n"})
_HARD_BREAK = _words(": — ( ) [ ] { }")
_SPLIT_ALWAYS = _words("but however although though whereas because if unless yet nevertheless nonetheless despite")
_SPLIT_AFTER_COMMA = _SPLIT_ALWAYS | _words(
    "which since as while so therefore thus hence and if when meaning indicating suggesting given or"
)
_CONTRAST = _words("but however yet nevertheless nonetheless still instead")
_CONCESSIVE = _words("although though despite albeit initially")
_OPENING_CONCESSIVE = _CONCESSIVE | _words("while whereas")  # "While it may seem neutral, ..."
_SUBORDINATE = _words("because since as which while whereas given when where that who")
_OPENING_SUBORDINATE = _words("because since as given when")
_HYPOTHETICAL = _words("if unless whether assuming suppose supposing provided")
_AUX = _words("is are was were do does did can could would should will has have am")
_CONCLUSION_FIRST = _words(
    "so therefore thus hence consequently overall ultimately finally answer label relation relationship result "
    "prediction classification verdict output conclusion"
)
_CONCLUSION_PAIRS = {
    ("in", "conclusion"),
    ("final", "answer"),
    ("my", "answer"),
    ("the", "answer"),
    ("final", "label"),
    ("the", "label"),
    ("the", "relationship"),
    ("the", "relation"),
    ("i", "conclude"),
}

_NEGATORS = _words(
    "not no never neither nor without none nothing non lack lacks lacking absence hardly barely scarcely fail fails "
    "failed failing <not>"
)
# A label as the subject of a verdict on it: "Entailment is false", "Contradiction does not apply", "Neutral is
# correct". Other predicates ("Entailment requires ...", "Entailment is when ...") define the word, asserting nothing.
_SUBJECT_VERBS = _words("is was are does do would will seems seem applies apply holds hold fits fit can should must")
_NEGATIVE_PREDICATES = _words(
    "wrong false incorrect inaccurate invalid inappropriate excluded unlikely impossible ruled untrue"
)
_POSITIVE_PREDICATES = _words(
    "correct right true answer appropriate valid case best label applies apply holds hold fits fit accurate "
    "relationship relation one verdict classification guess choice pick bet"
)
# "entailment: no", "contradiction = true": a value after a label word.
_NEGATIVE_VALUES = _words("no none false 0 n incorrect wrong")
_POSITIVE_VALUES = _words("yes true 1 y correct right")
_POSSIBLE = _words(
    "may might could possibly perhaps maybe potentially conceivably leaning lean leans borderline partially "
    "partly mostly somewhat weak weakly arguably possible slightly"
)
_PARTIAL_AFTER_NOT = _words(
    "clear clearly fully full complete completely strict strictly entirely exactly direct directly obvious "
    "obviously perfect perfectly total totally"
)
_UNDETERMINED = _words(
    "unclear uncertain unsure impossible unable whether undetermined undecided inconclusive insufficient unknown "
    "necessarily ambiguous"
)
_KNOWING = _words(
    "sure certain determine tell say decide know enough confirm clear conclude established call classify label judge"
)
_DIFFICULT = _words("hard difficult tricky")
_REPORTED = _words(
    "says said states stated mentions mentioned claims claimed describes described contains contained includes "
    "included reads asserts quotes"
)
_WINDOW = 16  # how far a mention looks back in its clause, in tokens

Status = Literal["asserted", "negated", "possible", "undetermined"]
Rank = Literal["conclusion", "main", "subordinate", "concessive", "none"]
_RANK_ORDER: tuple[Rank, ...] = ("conclusion", "main", "subordinate", "concessive")


@dataclass(slots=True)
class _Mention:
    labels: tuple[EntailmentLabel, ...]
    status: Status
    rank: Rank = "none"


@dataclass(slots=True)
class _Clause:
    tokens: list[str]
    rank: Rank
    mentions: list[_Mention] = field(default_factory=list)
    unsure: bool = False  # a clause that only says the reply is unsure ("hard to say", "I'm not sure")


def _unsure(words: list[str]) -> bool:
    if any(w in _UNDETERMINED for w in words):
        return True
    if any(w in _DIFFICULT for w in words) and any(w in _KNOWING for w in words):
        return True
    negation = next((j for j, w in enumerate(words) if w in _NEGATORS), None)
    return negation is not None and any(w in _KNOWING for w in words[negation + 1 :])


def _sentences(tokens: list[str]) -> list[tuple[list[str], bool]]:
    """Sentences at . ! ? ; and line breaks, each with whether it is a question ("...?", or opening with an
    auxiliary verb: "Is it entailment, contradiction, or neutral")."""
    out = []
    start = 0
    for i, tok in enumerate(tokens):
        if tok not in _SENTENCE_END:
            continue
        sent = tokens[start:i]
        start = i + 1
        if sent:
            question = tok == "?" or (sent[0] in _AUX and len(sent) > 1 and sent[1] != "not")
            out.append((sent, question))
    return out


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
    inside = [False] * len(sent)
    for start, end in _groups(sent):
        for k in range(start + 1, end):
            inside[k] = True
    out: list[tuple[int, int, str]] = []
    start = 0
    for k, tok in enumerate(sent):
        if inside[k]:
            continue
        prev = sent[k - 1] if k else ""
        if tok in _HARD_BREAK or tok == ",":
            if k > start:
                out.append((start, k, sent[start]))
            start = k + 1
        elif k > start and (tok in _SPLIT_ALWAYS or (prev == "," and tok in _SPLIT_AFTER_COMMA)):
            out.append((start, k, sent[start]))
            start = k
    if len(sent) > start:
        out.append((start, len(sent), sent[start]))
    return out


def _is_conclusion(words: list[str]) -> bool:
    head = words[:4]
    if head and head[0] in _CONCLUSION_FIRST:
        return True
    return any(pair in _CONCLUSION_PAIRS for pair in pairwise(head)) or any(
        w in ("therefore", "thus", "hence") for w in head
    )


def _direction_ok(words: list[str], k: int) -> bool:
    """Whether an "entail" verb at ``k`` runs from the premise to the hypothesis (or names neither)."""
    word = words[k]
    before = next((w for w in reversed(words[max(0, k - _WINDOW) : k]) if w in _PREMISE or w in _HYPOTHESIS), "")
    after_words = words[k + 1 : k + 8]
    if word in _PASSIVE:
        if after_words[:1] == ["by"] or after_words[1:2] == ["by"]:
            agent = next((w for w in after_words if w in _PREMISE or w in _HYPOTHESIS), "")
            if agent in _HYPOTHESIS:
                return False
        return before not in _PREMISE
    after = next((w for w in after_words if w in _PREMISE or w in _HYPOTHESIS), "")
    return before not in _HYPOTHESIS and after not in _PREMISE


def _status(words: list[str], k: int, lo: int) -> Status | None:
    """How the clause words before the mention at ``k`` (from ``lo``, the end of the previous mention) govern it;
    None when it says nothing (reported speech)."""
    before = words[max(lo, k - _WINDOW) : k]
    if any(w in _REPORTED for w in before):
        return None
    negations = [j for j, w in enumerate(before) if w in _NEGATORS]
    if any(w in _UNDETERMINED for w in before):
        return "undetermined"
    if any(w in _DIFFICULT for w in before) and any(w in _KNOWING for w in before):
        return "undetermined"
    if (
        negations
        and any(w in _KNOWING for w in before[negations[0] + 1 :])
        and any(w in ("whether", "if", "to", "that", "what", "which") for w in before[negations[0] + 1 :])
    ):
        return "undetermined"  # "I cannot tell whether", "not enough information to determine"
    if any(
        before[j] in ("may", "might", "could") and j + 1 < len(before) and before[j + 1] == "not"
        for j in range(len(before))
    ):
        return "negated"  # "it could not be entailment"
    if any(w in _POSSIBLE for w in before):
        return "possible"
    if negations and any(w in _PARTIAL_AFTER_NOT for w in before[negations[0] + 1 :]):
        return "possible"  # "not a clear entailment", "does not fully entail"
    return "negated" if len(negations) % 2 else "asserted"


def _predicate(words: list[str], start: int, end: int, status: Status) -> Status | None:
    """A noun label followed by a verb is that verb's subject: its predicate says whether the label holds."""
    if words[end - 1] not in _NOUNS or end >= len(words) or words[end] not in _SUBJECT_VERBS:
        return status
    after = words[end : end + 6]
    negative = any(w in _NEGATIVE_PREDICATES for w in after) != any(w in _NEGATORS for w in after)
    if not negative and not any(w in _POSITIVE_PREDICATES for w in after):
        return None  # "Entailment requires ...", "Entailment is when ...": a definition
    if not negative:
        return status
    return {"asserted": "negated", "negated": "asserted"}.get(status, status)  # type: ignore[return-value]


def _object_ok(words: list[str], end: int) -> bool:
    """Whether a label verb ending a group at ``end`` is said of the premise / hypothesis pair: its object is one
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
        word in _PREMISE
        or word in _HYPOTHESIS
        or word in _OBJECT_PRONOUNS
        or word in _OBJECT_FOLLOWERS
        or not word[0].isalnum()
        or (len(word) > 4 and word.endswith("ly"))
    )


def _mentions(words: list[str]) -> list[_Mention]:
    out: list[_Mention] = []
    lo = 0
    for start, end in _groups(words):
        labels: list[EntailmentLabel] = []
        glue: set[str] = set()
        for k in range(start, end):
            w = words[k]
            if w in _GROUP_GLUE:
                glue.add(w)
            elif w in _NOUNS:
                labels.append(_NOUNS[w])
            elif w in _SYMMETRIC:
                labels.append(_SYMMETRIC[w])  # type: ignore[arg-type]
            elif _direction_ok(words, k):
                labels.append(_ACTIVE.get(w) or _PASSIVE[w])  # type: ignore[arg-type]
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
        if len(distinct) == 3:
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


def _read_clauses(tokens: list[str]) -> list[_Clause]:
    clauses: list[_Clause] = []
    carry = False  # a heading such as "Answer:" or "The answer is:" makes the next clause with a label conclude
    for sent, question in _sentences(tokens):
        hypothetical = sent[0] in _HYPOTHETICAL
        spans = _clauses(sent)
        here: list[_Clause] = []
        opened = demoted = 0  # clauses before these indices were already left open / demoted (linear time)
        for start, end, first in spans:
            words = sent[start:end]
            mentions = [] if question or hypothetical else _mentions(words)
            if first in _HYPOTHETICAL:
                mentions = []
                for earlier in here[opened:]:  # "Entailment if the dates match", "..., only if ...": a condition
                    for m in earlier.mentions:
                        m.status = "undetermined"
                opened = len(here)
            conclusion = _is_conclusion(words)
            if first in _CONTRAST:
                rank: Rank = "main"
                if mentions:  # a contrast that gives a label overrides what precedes it in the sentence
                    for earlier in here[demoted:]:
                        earlier.rank = "concessive"
                        for m in earlier.mentions:
                            m.rank = "concessive"
                    demoted = len(here)
                if not mentions and any(w in _NEGATORS for w in words):
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
        clauses.extend(here)
    return clauses


def parse_entailment(reply: str) -> EntailmentLabel | ParseFailure:
    """Read the Table 14 entailment-test reply: which of "entailment", "contradiction", "neutral" it gives.

    "Entailment.", "**Neutral**", "Answer: contradiction", "The premise entails the hypothesis.", "It is not a
    contradiction, it is entailment.", "Neutral\\nThere is no entailment." and "The premise neither entails nor
    contradicts the hypothesis." (neutral) read as one label. "not entailment", "entailment or neutral", "It might
    be entailment", an echo of the options ("Is it entailment, contradiction, or neutral?"), "It is not
    entailment, contradiction, or neutral." and a reply that gives two labels ("Entailment\\nActually, it is
    neutral.", "Entailment. The hypothesis contradicts the premise.") fail.
    """
    if not reply.strip():
        return ParseFailure(parser="entailment", reason="empty reply", raw=reply)
    clauses = _read_clauses(_tokens(reply))
    mentions = [m for c in clauses for m in c.mentions]
    asserted = {r: {m.labels[0] for m in mentions if m.status == "asserted" and m.rank == r} for r in _RANK_ORDER}
    strong = ("conclusion", "main", "subordinate")
    negated = {label for m in mentions if m.status == "negated" and m.rank in strong for label in m.labels}
    possible = {
        label for m in mentions if m.status == "possible" and m.rank in ("conclusion", "main") for label in m.labels
    }
    decided = next((asserted[r] for r in _RANK_ORDER if asserted[r]), set())
    if len(decided) > 1:
        return ParseFailure(parser="entailment", reason=f"reply gives several labels: {sorted(decided)}", raw=reply)
    if decided:
        (label,) = decided
        others = {x for r in strong for x in asserted[r]} - {label}
        if others:
            return ParseFailure(
                parser="entailment", reason=f"reply names {label!r} and also {sorted(others)}", raw=reply
            )
        if label in negated:
            return ParseFailure(parser="entailment", reason=f"reply says {label!r}, then negates it", raw=reply)
        if possible - {label}:
            return ParseFailure(
                parser="entailment",
                reason=f"reply says {label!r} but leaves {sorted(possible - {label})} open",
                raw=reply,
            )
        return label
    left = [x for x in ENTAILMENT_LABELS if x not in negated]
    if len(negated) == 2 and left[0] not in possible and not any(c.unsure for c in clauses):
        return left[0]  # "neither entailment nor contradiction"
    said = [f"ruled out: {sorted(negated)}"] if negated else []
    said += [f"left open: {sorted(possible)}"] if possible else []
    return ParseFailure(
        parser="entailment",
        reason='no single one of "entailment", "contradiction", "neutral" is given'
        + (f" ({'; '.join(said)})" if said else ""),
        raw=reply,
    )


# ---------------------------------------------------------------------------------------------------- QA2D

# Wrappers a chat model puts around a one-word answer: markdown emphasis/code, quotes, trailing punctuation.
_WRAPPERS = "*_`\"'“”‘’ \t"
_PAIRS = (('"', '"'), ("“", "”"), ("'", "'"), ("‘", "’"), ("`", "`"), ("**", "**"), ("__", "__"), ("*", "*"))


def _clean_line(line: str) -> str:
    line = line.strip().strip(_WRAPPERS)
    line = line.rstrip(".!:;, \t").strip(_WRAPPERS)
    return line


def _unwrap(text: str) -> str:
    """Markdown emphasis, code marks or quotes around the whole text, removed as pairs (an inner quote stays)."""
    text = text.strip()
    changed = True
    while changed:
        changed = False
        for left, right in _PAIRS:
            if len(text) > len(left) + len(right) and text.startswith(left) and text.endswith(right):
                text = text[len(left) : -len(right)].strip()
                changed = True
    return text


# "S:", "Statement:", "Declarative statement:" (markdown around the marker allowed).
_STATEMENT_PREFIX = re.compile(
    r"^\s*(\*\*|__)?\s*(?:s|(?:the\s+)?(?:declarative\s+)?statement)\s*:\s*(?(1)(?:\*\*|__)?)\s*", re.IGNORECASE
)
# A lead-in before the statement: "Sure! Here's the statement:", "Here is the declarative statement:",
# "The statement is:" (the statement may follow on the same line).
_LEAD_IN = re.compile(
    r"^\s*(\*\*|__)?\s*(?:(?:sure|okay|ok|certainly|of course)[!,.]?\s*)?(?:here\s+is|here's|here\s+it\s+is|this\s+is)?"
    r"\s*(?:the|a|your|my)?\s*(?:converted\s+|declarative\s+)*statement(?:\s+is)?\s*:\s*(?(1)(?:\*\*|__)?)\s*",
    re.IGNORECASE,
)
_FIELD = re.compile(r"^[*_\s]*([a-z])[*_\s]*:", re.IGNORECASE)  # "Q:", "A:", "S:", or an invented "C:", "R:"
_BARE_FIELD = re.compile(r"^[*_\s]*[qas][*_\s]*:[*_\s]*$", re.IGNORECASE)


def parse_statement(reply: str) -> str | ParseFailure:
    """Read the Table 14 QA2D reply: the declarative statement it gives.

    One line, optionally after "S:" / "Statement:" or a lead-in ("Here is the statement:"), in quotes or markdown
    emphasis: "S: The TV show is filmed on Oak Island." reads as "The TV show is filmed on Oak Island.". The few-shot
    pattern may be carried on: a reply that re-emits the answer line first ("A: Cyrus\\nS: Cyrus wrote it.") gives
    the "S:" line, and a complete new "Q:"/"A:" block after the statement is cut off. Anything else fails: an empty
    reply, a question, an echoed "Q:" or "A:" line, a field the pattern does not have ("C: ..."), a second
    candidate statement ("W.C.R.E.\\nS: The first Nobel Prize ..."), or any other extra line ("I hope this helps!").
    The reply's content is not judged: whether the statement says what the pair says is the entailment test's job.
    """
    lines = [ln.strip() for ln in reply.splitlines() if ln.strip()]
    if not lines:
        return ParseFailure(parser="statement", reason="empty reply", raw=reply)
    lead = _LEAD_IN.match(lines[0])
    if lead:
        rest_of_line = lines[0][lead.end() :].strip()
        lines = [rest_of_line, *lines[1:]] if rest_of_line else lines[1:]
        if not lines:
            return ParseFailure(parser="statement", reason="a lead-in and no statement", raw=reply)
    first_field = _FIELD.match(lines[0])
    if first_field and first_field.group(1).lower() == "a" and len(lines) > 1:
        second = _FIELD.match(lines[1])
        if second and second.group(1).lower() == "s":
            lines = lines[1:]  # the answer line of the pattern re-emitted, then the statement
    rest = lines[1:]
    while rest and _BARE_FIELD.match(rest[-1]):
        rest = rest[:-1]  # a pattern marker with nothing after it ("S:") adds no candidate
    if rest:
        fields = [(m.group(1).lower() if (m := _FIELD.match(ln)) else "") for ln in rest]
        if not (fields[0] == "q" and "a" in fields[1:]):
            return ParseFailure(parser="statement", reason="more than one line; expected the statement only", raw=reply)
    first = lines[0]
    field = _FIELD.match(first)
    if field and field.group(1).lower() != "s":
        what = "a Q:/A: line" if field.group(1).lower() in "qa" else f"a {field.group(1).upper()}: line"
        return ParseFailure(parser="statement", reason=f"reply gives {what} instead of a statement", raw=reply)
    statement = _unwrap(_STATEMENT_PREFIX.sub("", first, count=1))
    if not statement or not statement.strip(_WRAPPERS + ".:"):
        return ParseFailure(parser="statement", reason="empty statement", raw=reply)
    if statement.endswith("?"):
        return ParseFailure(parser="statement", reason="a question, not a declarative statement", raw=reply)
    if statement.endswith(":"):
        return ParseFailure(parser="statement", reason="a lead-in to something else, not a statement", raw=reply)
    return statement


# ---------------------------------------------------------------------------------------------------- scores

# The Table 17 five-point scales, as the prompts print them ("5: Very hard", "5: The AI-generated answer is
# completely right."). A reply may echo its number's line; the label must then be that number's.
DIFFICULTY_SCALE: dict[int, str] = {
    1: "Very easy",
    2: "Easy",
    3: "Neither easy nor hard",
    4: "Hard",
    5: "Very hard",
}
CLOSENESS_SCALE: dict[int, str] = {
    1: "The AI-generated answer is completely wrong.",
    2: "The AI-generated answer is mostly wrong.",
    3: "The AI-generated answer is neither wrong nor right.",
    4: "The AI-generated answer is mostly right.",
    5: "The AI-generated answer is completely right.",
}
# A subject the model may keep or drop when it echoes a scale line ("5: completely right").
_LABEL_SUBJECT = re.compile(r"^(?:the\s+)?(?:ai[-\s]generated\s+|ai\s+)?answer\s+is\s+", re.IGNORECASE)

_SCORE_LINE = re.compile(
    r"^(?:(?:final\s+)?(?:score|rating|difficulty|closeness|answer)\s*[:=\-]?\s*)?(\d+)(?:\s*(?:/|out\s+of)\s*5)?"
    r"(?:\s*[:(\-–—]\s*(?P<label>.*))?$",
    re.IGNORECASE,
)
# An assertive tail that adds nothing to a score line: "2 - Easy, I think".
_ASSERTIVE_TAIL = re.compile(r"[,;]?\s*(?:i\s+think|i\s+believe|i\s+would\s+say|i'd\s+say)\W*$", re.IGNORECASE)
_SCORE_TOKEN = re.compile(r"\d+(?:[.,]\d+)?|[a-z0-9]+(?:['\-][a-z0-9]+)*|[^\sa-z0-9]")
# What may follow a number that is a score ("a 3.", "2 (Easy)", "4 out of 5", "4/5"); "3 steps" is no score.
_SCORE_NEXT = frozenset({"", ".", ",", ":", ";", "(", ")", "-", "–", "—", "/", "out", "!", "*"})
_RANGE_WORDS = frozenset({"to", "-", "–", "—", "and", "or", "/"})
_SCORE_HEDGES = frozenset(
    {"maybe", "perhaps", "around", "about", "approximately", "roughly", "possibly", "between", "or", "either"}
)
_SCORE_NEGATIONS = frozenset({"not", "no", "never", "isn't", "wasn't", "won't", "wouldn't", "cannot", "can't"})
_STEP_WORDS = frozenset({"step", "steps", "line", "row", "point", "number", "item", "s", "#"})


def _number(digits: str) -> int:
    """The value of a run of digits; a long run is just "too large" (int() refuses over 4,300 digits)."""
    return int(digits) if len(digits) <= 9 else 10**9


def _label_key(text: str) -> str:
    text = text.strip().strip(_WRAPPERS).rstrip(").!:;, \t").strip(_WRAPPERS)
    text = " ".join(text.lower().replace("–", "-").split())
    return _LABEL_SUBJECT.sub("", text)


_ALL_SCALE_LABELS = frozenset(_label_key(t) for sc in (DIFFICULTY_SCALE, CLOSENESS_SCALE) for t in sc.values())


def _read_score(line: str, low: int, high: int, scale: Mapping[int, str] | None) -> int | str | None:
    """The score on a score-shaped line ("4", "Score: 4", "2 - Easy"), why such a line is not one, or None when
    the line is not shaped as a score."""
    line = _ASSERTIVE_TAIL.sub("", line)
    match = _SCORE_LINE.match(_clean_line(line.replace("*", "").replace("`", "")))
    if match is None:
        return None
    value = _number(match.group(1))
    if not low <= value <= high:
        return f"{match.group(1)[:12]} is outside {low}..{high}"
    label = _label_key(match.group("label") or "")
    if label:
        if scale is None or value not in scale:
            return f"{value} is followed by {label!r}, but no label is expected"
        if label != _label_key(scale[value]):
            if label in _ALL_SCALE_LABELS:
                return f"{value} is followed by {label!r}, but the scale says {scale[value]!r}"
            return None  # more than a label ("4 (Hard) - it needs two assumptions"): read as a sentence
    return value


_SCALE_LINE = re.compile(r"^[\s*_`]*(\d+)[\s*_`]*[.):\-–—][\s*_`]*(.+)$")


def _echoes_scale(line: str, scale: Mapping[int, str] | None) -> bool:
    """Whether a line is one of the scale's own lines ("2: Easy", "2. Easy"), as a model echoing the prompt
    writes it."""
    match = _SCALE_LINE.match(line) if scale is not None else None
    if match is None:
        return False
    value = _number(match.group(1))
    return value in scale and _label_key(match.group(2)) == _label_key(scale[value])  # type: ignore[operator,index]


def _scale_shaped(line: str) -> bool:
    """A numbered line with text after it ("3: The AI-generated answer is neither correct nor right."): in a
    reply that echoes the scale, a copied line the model changed, not its score."""
    return _SCALE_LINE.match(line) is not None


def _prose_scores(line: str, low: int, high: int, scale: Mapping[int, str] | None) -> list[int] | str:
    """Scores given in a sentence ("I would rate it a 2.", "The difficulty is 2 (Easy)."), or why the line is
    unreadable (a hedge: "3 or 4", "maybe 4"; a range other than the scale's own "1 to 5")."""
    tokens = _SCORE_TOKEN.findall(line.lower())
    found: list[int] = []
    for k, tok in enumerate(tokens):
        if not tok.isdigit():
            continue
        value = _number(tok)
        prev, nxt = (tokens[k - 1] if k else ""), (tokens[k + 1] if k + 1 < len(tokens) else "")
        if k == 0 and nxt in (".", ")") and k + 2 < len(tokens):
            continue  # a numbered list item ("1. The premise ...")
        if prev in _STEP_WORDS or not low <= value <= high:
            continue  # "step 2", "S2", a year
        after = tokens[k + 2] if k + 2 < len(tokens) else ""
        if prev == "/" or (prev == "of" and k >= 2 and (tokens[k - 2] == "out" or tokens[k - 2].isdigit())):
            continue  # the "/5", "out of 5" or "of 5" after a score
        if prev in ("-", "−") and k == 1:
            return f"a negative number: -{tok}"
        if nxt in ("/", "of") and after == str(high):
            found.append(value)  # "4/5", "4 of 5"
            continue
        if nxt in _RANGE_WORDS and after.isdigit():
            if (value, _number(after)) == (low, high) or prev in ("from", "of"):
                continue  # the scale itself: "from 1 to 5", "a scale of 1-5"
            return f"a range or a choice of scores: {tok} {nxt} {after}"
        if prev in _RANGE_WORDS and k >= 2 and tokens[k - 2].isdigit():
            if (_number(tokens[k - 2]), value) == (low, high):
                continue  # the second end of the scale's own range
            return f"a range or a choice of scores: {tokens[k - 2]} {prev} {tok}"
        if nxt not in _SCORE_NEXT:
            continue  # "3 steps", "1 assumption"
        window = tokens[max(0, k - 3) : k]
        if any(w in _SCORE_HEDGES for w in window):
            return f"a hedged score: {' '.join(window)} {tok}"
        scope = []
        for w in reversed(tokens[max(0, k - 6) : k]):
            if w in (",", ";", ".", ":", "!"):
                break
            scope.append(w)
        if any(w in _SCORE_NEGATIONS or w.endswith("n't") for w in scope):
            continue  # "not 5", "not a 5", "I would not give it a 5"
        if nxt in (":", "(", "-", "–", "—") and scale is not None:
            label = []
            for w in tokens[k + 2 : k + 14]:
                if w in (")", ".", ";", ",", "!"):
                    break
                label.append(w)
            words = _label_key(" ".join(label))
            restated = label[:3] in (["the", "ai-generated", "answer"], ["ai-generated", "answer", "is"])
            if (words in _ALL_SCALE_LABELS or restated) and words != _label_key(scale[value]):
                return f"{value} is followed by {words!r}, but the scale says {scale[value]!r}"
        found.append(value)
    return found


def parse_score(
    reply: str, *, low: int = 1, high: int = 5, scale: Mapping[int, str] | None = None
) -> int | ParseFailure:
    """Read a Table 17 five-point reply ("Return a number from 1 to 5 only"): the one integer in [low, high] it gives.

    "4", "4.", "Score: 4", "**2**" and "4/5" parse. With the prompt's ``scale`` (``DIFFICULTY_SCALE``,
    ``CLOSENESS_SCALE``) the number may be followed by ":", "(", "-" or "–" and that number's own label, as a model
    echoing the prompt writes it: "1: Very easy", "5 (completely right)", "Rating: 2 - Easy"; an echo of the whole
    scale is skipped ("1: Very easy\\n...\\n5: Very hard\\n\\n2" is 2). A score may be given in a sentence: "I would
    rate it a 2.", "On a scale from 1 to 5, I'd rate it 2." ("3 steps", "step 2", "1 to 5" are no scores). A label
    that is not the number's ("4: Very easy"), a hedge ("3 or 4", "3-4", "maybe 4", "around 3"), a number out of
    range, no number ("four", "Easy"), and two different scores ("3\\n4", "Score: 2. Actually, 3.") fail. A
    separator with nothing after it ("4 -") is the bare number.
    """
    lines = [ln for ln in reply.splitlines() if ln.strip()]
    if not lines:
        return ParseFailure(parser="score", reason="empty reply", raw=reply)
    echoes = [ln for ln in lines if _echoes_scale(ln, scale)]
    if len(echoes) >= 3:  # the scale, copied from the prompt (some lines perhaps changed): not the score
        lines = [ln for ln in lines if not _scale_shaped(ln)]
        if not lines:
            return ParseFailure(parser="score", reason="reply only repeats the scale", raw=reply)
    found: list[int] = []
    for line in lines:
        value = _read_score(line, low, high, scale)
        if isinstance(value, str):
            return ParseFailure(parser="score", reason=value, raw=reply)
        if isinstance(value, int):
            found.append(value)
            continue
        if _echoes_scale(line, scale):  # "2. Easy": its own scale line
            found.append(_number(_SCALE_LINE.match(line).group(1)))  # type: ignore[union-attr]
            continue
        prose = _prose_scores(line, low, high, scale)
        if isinstance(prose, str):
            return ParseFailure(parser="score", reason=prose, raw=reply)
        found.extend(prose)
    values = sorted(set(found))
    if not values:
        return ParseFailure(parser="score", reason=f"no single number from {low} to {high}", raw=reply)
    if len(values) > 1:
        return ParseFailure(parser="score", reason=f"reply gives several scores: {values}", raw=reply)
    return values[0]
