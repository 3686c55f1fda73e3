"""Verdicts of one polarity pair said of a subject: "correct" / "incorrect" about "the claim", read clause by clause.

The caller names its pair and subject in a ``Polar`` (the words may have synonyms); inside the reader the words are
the tokens ``<pos>``, ``<neg>`` and ``<subject>``. The reply's sentences and clauses come from ``lexicon``; each
clause has a *role*:

- *main*, or *contrast* when it opens with "but", "however", "yet" (a contrast overrides what came before it);
- *subordinate*: concessive, causal and relative clauses ("although ...", "because ...", ", which ...");
- *hypothetical*: conditional clauses ("if ...", "unless ..."), which assert nothing;
- a *question* asserts nothing either ("Is the claim correct or incorrect?"), though a polar question answered
  right away ("Is the claim correct? No.", "Correct? No.") is read with its answer.

Every verdict word in a clause is a *mention*. Its *subject* is found by walking back over the verb group ("is not
entirely", "cannot be verified as"): the subject noun ("the claim", "the claim that X"), nothing or a pronoun (a
*bare* verdict: "Correct.", "it is incorrect"), or something else ("one of the answers", "the correct answer",
which are not verdicts on the claim). A verdict word that is itself the subject of a predicate ("Incorrect is not
how I would describe it", "Correct is the last word I would use") is a word talked about, not a verdict. Its
*polarity* comes from the negations in its scope: the verb group and the clause's frame before the subject ("I do
not think", "there is no doubt", "it is false that"), counted so that double negations cancel. A mention is *open*
rather than definite when a hedge governs it ("I cannot confirm that", "impossible to say whether", "may be",
"partially").

Definite mentions are ranked: conclusion clauses ("therefore", "in conclusion", "Verdict:"), then main clauses,
then subordinate ones. The first rank that has any decides if its mentions agree; if they disagree, or no rank has
a definite mention, the reader refuses with ``ParseError``. A reading of the wrong polarity would flip a verdict,
so every unclear case refuses. Linear in the reply's length: each look-back is bounded by a fixed window.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

from voirdire.replies.schema import ParseError

from . import lexicon as lx

About = Literal["claim", "bare", "other"]
Role = Literal["main", "contrast", "subordinate", "hypothetical"]
Value = Literal["<pos>", "<neg>"]


@dataclass(frozen=True)
class Polar:
    """A verdict pair and what it is said of: ``Polar(("correct",), ("incorrect",), ("claim", "statement"))``.

    The first word of each pair names the reading; the others are synonyms read the same way."""

    positive: tuple[str, ...]
    negative: tuple[str, ...]
    subjects: tuple[str, ...]
    vetoes: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    """Words that give no verdict but contradict one, positive and negative: "Correct. ... so the claim is false."
    is refused, where "The claim is false." alone names no verdict (``read_polar``)."""

    @property
    def names(self) -> tuple[str, str]:
        return self.positive[0], self.negative[0]


# ---------------------------------------------------------------------------------------------------- tokens

_WINDOW = 24  # how far a mention looks back for its subject and frame, in tokens


_VERDICTS = lx.words("<pos> <neg>")


def tokens(text: str, vocabulary: dict[str, str] | None = None) -> list[str]:
    """The reply's tokens (``lexicon.tokens``), a caller's words mapped onto ``<pos>``, ``<neg>``, ``<subject>``."""
    return lx.tokens(text, vocabulary or {}, quoted=_VERDICTS)


# ---------------------------------------------------------------------------------------------------- clauses


@dataclass(frozen=True, slots=True)
class _Clause:
    tokens: list[str]
    role: Role
    conclusion: bool


def _role(first: str) -> Role:
    if first in lx.CONTRAST:
        return "contrast"
    if first in lx.SUBORDINATE:
        return "subordinate"
    if first in lx.HYPOTHETICAL:
        return "hypothetical"
    return "main"


def _clauses(sentence: list[str]) -> list[_Clause]:
    """Cut a sentence into clauses. A clause that opens with a subordinator ends at its first comma ("Although one
    answer was incorrect, | the claim is correct"). A sentence that opens with a condition is hypothetical as a
    whole ("If the answers are right, the claim is correct")."""

    def comma_ends(start: int, k: int) -> bool:
        return _role(sentence[start]) in ("subordinate", "hypothetical") and _opens_clause(sentence, k)

    spans = lx.clauses(sentence, lx.SPLIT_ALWAYS, lx.SPLIT_AFTER_COMMA, comma_ends)
    pieces = [sentence[a:b] for a, b in spans]
    hypothetical = bool(pieces) and _role(pieces[0][0]) == "hypothetical" and not lx.forced_choice(pieces[0])
    out: list[_Clause] = []
    carry = False
    for p in pieces:
        role: Role = "hypothetical" if hypothetical else _role(p[0])
        conclusion = carry or lx.concludes(p)
        carry = len(p) <= 4 and lx.concludes(p) and not any(w in _VERDICTS for w in p)
        out.append(_Clause(p, role, conclusion))
    return out


def _opens_clause(sentence: list[str], comma: int) -> bool:
    """Whether the words after a comma start a new clause (a subject and a verb), not a list item."""
    rest = sentence[comma + 1 : comma + 1 + 8]
    return any(w in _VG_VERBS or w in lx.AUX for w in rest)


# ---------------------------------------------------------------------------------------------------- mentions

_CLAIM_NOUNS = lx.words("<subject>")
# What a bare verdict may be said of. "You are correct" is not among them: it addresses whoever asked.
_REFERENTS = lx.words("it this that which everything <echo> <emph>")
_PERSONAL = lx.words("i you we they he she it")
_UNIVERSAL = lx.words("all every each both everything whole")
# Words between a subject and its verdict word: copulas, evaluation verbs, modals, negations, degree adverbs.
_VG_VERBS = lx.words(
    "is was are were be been being am seems seem seemed appears appear appeared looks look looked sounds sound remains "
    "remain proves prove proved proven turns turned considered consider deemed deem judged regarded found find shown "
    "confirmed verified established determined rated assessed classified classify labelled labeled marked called call "
    "becomes become stands stays"
)
_VG_OTHER = lx.words(
    "to as a an out not never no itself also both neither nor either can could may might must shall should will would "
    "do does did has have had likely unlikely most more very quite half indeed in fact then still just so too all "
    "overall <emph> initially therefore thus hence now again even only hardly barely scarcely"
)
_NP_MODS = lx.words(
    "the a an this that these those its your my our their his her original initial given stated main entire whole "
    "final above said same first second specific underlying factual proposed overall examinee interviewee actual "
    "central core full present current"
)
_PREPOSITIONS = lx.words(
    "of about for regarding concerning on to against in with from by supporting behind within into at like than toward "
    "towards under over between among underlying contradicting including after before"
)
_PARTICIPLES = lx.words(
    "made given written said shown done put known stated presented provided proposed mentioned described examined "
    "discussed being offered produced generated advanced"
)
_FRAME_VERBS = lx.words(
    "think believe say conclude concluded feel guess suppose reckon assume judge decide therefore thus so hence "
    "overall ultimately finally clearly obviously is yes confident certain sure clear evident apparent obvious that "
    "conclusively confidently safely"
)
_AFTER_OK = lx.words(
    "that to and or but as because since in on for of according based given with from by if although though so "
    "therefore thus then now here there however too after before when while not nor overall itself either again indeed "
    "regarding about considering at except one ones enough anyway unless whereas yet per under which who is was even "
    "despite <echo> <emph> <q> also only all both no without upon hence whether i it this the my we let please"
)
_SAYING = lx.words(
    "say call conclude state claim assume describe consider label think believe suggest assert accept treat regard "
    "judge characterize deem classify argue write mark rate"
)
_VERB_BEFORE = lx.words("to i we me please you and")
_INHERENT_HEDGES = (
    lx.UNDETERMINED | lx.MAYBE | lx.words("difficult hard initially chance possibility hesitate hesitant reluctant")
)
_OPEN_MODALS = lx.words("may might could if")
_PARTIAL_OR_WOULD = lx.PARTIAL | {"would"}
_TOTALLY = lx.words("entirely completely fully totally wholly altogether 100")


@dataclass(frozen=True, slots=True)
class _Mention:
    value: Value | None  # None: hedged, possible, partial or hypothetical
    about: About


def _is_adverb(word: str) -> bool:
    return len(word) > 4 and word.endswith("ly") and word not in ("only", "family", "supply", "reply", "apply")


def _np_start(tokens: list[str], head: int, lo: int) -> int:
    """The first word of the noun phrase whose head is at ``head`` (determiners, possessives, adjectives)."""
    j = head - 1
    lo = max(lo, head - _WINDOW)
    while j >= lo and (tokens[j] in _NP_MODS or tokens[j].endswith("'s")):
        if tokens[j] in ("that", "this") and tokens[j + 1] in lx.DETERMINERS:
            break  # "that the claim": a complementiser, not a determiner
        j -= 1
    return j + 1


def _subject(tokens: list[str], h: int, lo: int) -> tuple[About, int]:
    """Classify the subject whose last word is at ``h``; return its kind and the index where it starts.

    A noun that is the object of a preposition is not the subject ("one of the answers about the claim" is about
    answers); a participle ("the claim made by the examinee") is skipped; a quantifier takes its kind from its
    "of" phrase when universal ("all of it") and is something else when partial ("one of the answers")."""
    for _ in range(8):
        if h < lo:
            return "bare", lo
        word = tokens[h]
        start = _np_start(tokens, h, lo)
        before = tokens[start - 1] if start - 1 >= lo else ""
        if before in _PREPOSITIONS and start - 2 >= lo:
            outer = start - 2
            while outer >= max(lo, h - _WINDOW) and tokens[outer] in _PARTICIPLES:
                outer -= 1
            if outer >= lo and tokens[outer] in _UNIVERSAL and before == "of":
                kind, _ = _subject(tokens, h, start)  # "all of it": the kind of "it"
                return kind, _np_start(tokens, outer, lo)
            h = outer
            continue
        if word in _PARTICIPLES or (
            word.endswith("ed") and len(word) > 4 and h - 1 >= lo and tokens[h - 1] in _CLAIM_NOUNS
        ):
            # "the claim made by ...": skip the participle; "the conclusion you provided": skip the relative clause
            h -= 2 if h - 1 >= lo and tokens[h - 1] in _PERSONAL else 1
            continue
        if word == "<q>":
            if start - 1 >= lo and tokens[start - 1] in _CLAIM_NOUNS:
                h = start - 1
                continue
            return "other", start
        if word in _CLAIM_NOUNS:
            return "claim", start
        if before in ("nor", "and", "or") and start - 2 >= lo:  # "neither the claim nor its premise is": coordinated
            h = start - 2
            continue
        if word in _REFERENTS or word in _UNIVERSAL:
            return "bare", h
        if word in _FRAME_VERBS or word == ",":  # "I would say incorrect", "Based on the answers, incorrect"
            return "bare", h + 1
        return "other", start  # a noun of its own ("the year", "Paris"), or a partial quantifier ("one of ...")
    return "other", lo


def _claim_complement(tokens: list[str], lo: int, hi: int) -> int | None:
    """The index of "claim" in "the claim that X is correct" / 'the claim "X" is correct', when that noun is the
    clause's own subject (not the object of a preposition)."""
    for j in range(max(lo, hi - _WINDOW), hi):
        if tokens[j] in _CLAIM_NOUNS and j + 1 < hi and tokens[j + 1] in ("that", "<q>", ",", "which", "of", "about"):
            start = _np_start(tokens, j, lo)
            if start - 1 < lo or tokens[start - 1] not in _PREPOSITIONS:
                return j
    return None


def _frame(tokens: list[str], lo: int, hi: int) -> list[str]:
    """The words before a subject that can scope over it. Words before a single comma are an introduction ("Based
    on the answers, ..."); between two commas, a parenthesis ("I do not think, given this, that ...")."""
    words = tokens[max(lo, hi - _WINDOW) : hi]
    commas = [k for k, w in enumerate(words) if w == ","]
    if len(commas) == 1:
        return words[commas[0] + 1 :]
    if len(commas) >= 2:
        return words[: commas[0]] + words[commas[-1] + 1 :]
    return words


def _hedged(words: list[str], vg: bool) -> bool:
    """A hedge governs the verdict: an inherently open word ("unclear", "whether", "perhaps"), an epistemic verb
    under negation ("cannot confirm", "not sure"), a modal of possibility ("may be"), or, in the verb group, a
    partial degree ("partially") or a conditional "would"."""
    present = set(words)
    if present & _INHERENT_HEDGES or (vg and present & _PARTIAL_OR_WOULD):
        return True
    if lx.withheld(words):
        return True
    if not present & _OPEN_MODALS:
        return False
    for k, w in enumerate(words):
        nxt = words[k + 1] if k + 1 < len(words) else ""
        if w in ("may", "might") and (vg or nxt in ("be", "have", "also", "well", "not", "")):
            return True
        if w == "could" and nxt not in ("not", "never") and (vg or nxt in ("be", "have", "also", "well", "")):
            return True
        if w == "if" and k > 0:  # "I do not know if ...": an indirect question
            return True
    return False


_NAMING = lx.words("word term label")


def _mention(tokens: list[str], v: int, lo: int) -> _Mention | None:
    """Read the verdict word at ``v`` in the clause ``tokens[lo:]``; None when it is no verdict at all (an
    attribute, "the correct answer"; a verb, "to correct"; an extraposed frame, "it is incorrect to say")."""
    word = tokens[v]
    prev = tokens[v - 1] if v - 1 >= lo else ""
    nxt = tokens[v + 1] if v + 1 < len(tokens) else ""
    if word == "<pos>" and prev in _VERB_BEFORE and prev != "and":
        return None
    if (v == lo or prev in _NAMING) and nxt in lx.SUBJECT_VERBS:  # "Incorrect is not how I would describe it"
        judged = lx.judged(tokens[v + 1 : v + 7])
        if not judged:
            return _Mention(None if judged is None else _OTHER[word], "bare")  # type: ignore[index]
    # Walk back over the verb group; a comma-delimited parenthesis inside it is stepped over.
    j = v - 1
    vg: list[str] = []
    floor = max(lo, v - _WINDOW)
    while j >= floor:
        w = tokens[j]
        if w in _VERDICTS:  # a coordinated predicate, "neither correct nor incorrect": its negations are its own
            j -= 1
            vg = []
            continue
        if w in _VG_VERBS or w in _VG_OTHER or _is_adverb(w) or w in lx.PARTIAL:
            vg.append(w)
            j -= 1
            continue
        if w == ",":
            k = j - 1
            while k >= floor and tokens[k] != ",":
                k -= 1
            if k < floor:
                break
            j = k - 1
            continue
        break
    if (
        nxt
        and (nxt[0].isalpha() or nxt in _CLAIM_NOUNS)
        and nxt not in _AFTER_OK
        and nxt not in _VERDICTS
        and nxt not in _VG_OTHER
    ):
        # "the correct answer", "an incorrect date": an attribute, unless it is the predicate of a copula
        # about a claim noun ("this is an incorrect claim") or stands alone ("Incorrect claim.").
        alone = j < lo == 0 and v + 2 >= len(tokens)  # "Incorrect claim."
        predicative = nxt in _CLAIM_NOUNS and (alone or set(vg) & _VG_VERBS)
        if not predicative:
            return None
    about, start = _subject(tokens, j, lo) if j >= lo else ("bare", lo)
    if about == "other":
        claim = _claim_complement(tokens, lo, v)
        if claim is not None:
            about, start = "claim", _np_start(tokens, claim, lo)
    after = tokens[v + 2] if v + 2 < len(tokens) else ""
    if about == "bare" and j >= lo and tokens[j] == "it" and (nxt == "that" or (nxt == "to" and after in _SAYING)):
        return None  # "it is correct that ...", "it is incorrect to say ...": a frame, read with what follows
    frame = _frame(tokens, lo, start)
    vg_words = list(reversed(vg))
    negations = lx.negations(frame) + lx.negations(vg_words)
    value: Value = word if negations % 2 == 0 else _OTHER[word]  # type: ignore[assignment,index]
    if _hedged(frame, vg=False) or _hedged(vg_words, vg=True):
        return _Mention(None, about)
    if "not" in vg_words and _TOTALLY.intersection(vg_words) and (word == "<neg>" or "either" in tokens[v + 1 : v + 3]):
        return _Mention(None, about)  # "not entirely incorrect" is partly correct, where "not entirely correct" is not
    if any(w in lx.HYPOTHETICAL for w in tokens[v + 1 : v + 1 + _WINDOW // 3]):
        return _Mention(None, about)  # "the claim is correct if we trust the second answer"
    return _Mention(value, about)


_CONNECTIVES = (lx.SPLIT_ALWAYS | lx.SPLIT_AFTER_COMMA | {","}) - lx.words("not which who whom whose given considering")


def _clause_mentions(clause: list[str], concessions: bool = False) -> list[_Mention]:
    """The clause's mentions; with ``concessions``, a word opening the clause before a comma ("True, ...") is
    left out."""
    lo = 0
    while lo < len(clause) and clause[lo] in _CONNECTIVES:
        lo += 1
    out = []
    for v in range(lo, len(clause)):
        if concessions and v == lo and clause[v + 1 : v + 2] == [","]:
            continue
        if clause[v] in _VERDICTS:
            m = _mention(clause, v, lo)
            if m is not None:
                out.append(m)
    return out


_OTHER = {"<pos>": "<neg>", "<neg>": "<pos>"}


def _answered_question(said: list[lx.Sentence], k: int) -> _Mention | None:
    """ "Is the claim correct? No.", "Correct? No." — a polar question about the subject answered right away."""
    answered = lx.answered(said, k)
    mentions = [m for m in _clause_mentions(answered[0]) if m.about in ("claim", "bare")] if answered else []
    if len(mentions) != 1 or mentions[0].value is None:
        return None
    value = mentions[0].value
    return _Mention(_OTHER[value] if answered[1] == "no" else value, "claim")  # type: ignore[index]


def _resolve(tiers: list[list[_Mention]], names: tuple[str, str]) -> str:
    hedged = False
    pos, neg = names
    for tier in tiers:
        values = {m.value for m in tier if m.value is not None}
        hedged = hedged or any(m.value is None for m in tier)
        if len(values) == 1:
            return pos if values.pop() == "<pos>" else neg
        if len(values) > 1:
            raise ParseError(f"the reply says both '{pos}' and '{neg}'")
    if hedged:
        raise ParseError(f"the reply hedges: no definite '{pos}' or '{neg}'")
    raise ParseError(f"no '{pos}' or '{neg}' in the reply")


@dataclass(slots=True)
class _Read:
    """A reply's mentions by rank; ``conclusions`` one list per concluding clause, in the reply's order, each with
    its place (the clause's number); ``later`` the main clauses' mentions with their places."""

    conclusions: list[tuple[int, list[_Mention]]]
    main: list[_Mention]
    subordinate: list[_Mention]
    later: list[tuple[int, _Mention]]


def _last_conclusion(read: _Read, names: tuple[str, str]) -> str | None:
    """The verdict of the reply's last concluding clause that says one ("3. So the claim is correct. ... 5.
    Therefore the claim is incorrect." is incorrect); a main clause after it that says the opposite is refused.
    None when no concluding clause names the verdict."""
    for place, mentions in reversed(read.conclusions):
        if not mentions:
            continue
        verdict = _resolve([mentions], names)  # a hedged last conclusion leaves the verdict open
        value = "<pos>" if verdict == names[0] else "<neg>"
        if any(p > place and m.value is not None and m.value != value for p, m in read.later):
            raise ParseError(f"the reply concludes '{verdict}', then says the opposite")
        return verdict
    return None


@cache
def _vocabulary(polar: Polar) -> dict[str, str]:
    out = {w: "<subject>" for w in polar.subjects}
    out.update({w: "<pos>" for w in polar.positive})
    out.update({w: "<neg>" for w in polar.negative})
    return out


def _read(text: str, polar: Polar, concessions: bool = False) -> _Read:
    said = lx.sentences(tokens(text, _vocabulary(polar)))
    out = _Read([], [], [], [])
    main, subordinate = out.main, out.subordinate
    carry = False
    place = 0
    for k, sent in enumerate(said):
        if sent.question:
            answered = _answered_question(said, k) if _VERDICTS.intersection(sent.tokens) else None
            if answered is not None:
                main.append(answered)
                out.later.append((place, answered))
            carry = False
            continue
        if not _VERDICTS.intersection(sent.tokens):  # nothing to read; it may still head a conclusion ("Verdict:")
            carry = len(sent.tokens) <= 4 and lx.concludes(sent.tokens)
            continue
        clauses = _clauses(sent.tokens)
        doubted = lx.doubted([c.tokens for c in clauses])
        for i, clause in enumerate(clauses):
            place += 1
            mentions = [m for m in _clause_mentions(clause.tokens, concessions) if m.about != "other"]
            if doubted:
                mentions = [_Mention(None, m.about) for m in mentions]
            if clause.role == "hypothetical":
                subordinate.extend(_Mention(None, m.about) for m in mentions)
                continue
            if clause.role == "subordinate":
                subordinate.extend(mentions)
                continue
            if clause.role == "contrast" and mentions:
                main.clear()  # "..., but it is incorrect": the contrast is what the reply concludes
            main.extend(mentions)
            out.later.extend((place, m) for m in mentions)
            if clause.conclusion or (carry and i == 0):
                out.conclusions.append((place, mentions))
        last = clauses[-1].tokens if clauses else []
        carry = len(sent.tokens) <= 4 and lx.concludes(sent.tokens) and not any(w in _VERDICTS for w in last)
    return out


def _vetoed(text: str, polar: Polar, verdict: str) -> None:
    """``ParseError`` when the reply says the opposite of ``verdict`` in words that give no verdict ("the claim is
    false", "which is accurate"); a word opening a sentence before a comma ("True, one answer was vague") is a
    concession, not a judgement."""
    positive, negative = polar.vetoes
    if not positive and not negative:
        return
    read = _read(text, _veto_polar(polar), concessions=True)
    opposite = "<neg>" if verdict == polar.names[0] else "<pos>"
    said = [m for m in (*read.main, *read.subordinate) if m.value is not None and m.about in ("claim", "bare")]
    if any(m.value == opposite for m in said):
        raise ParseError(f"the reply says '{verdict}' but its justification says the opposite")


@cache
def _veto_polar(polar: Polar) -> Polar:
    return Polar(polar.vetoes[0] or ("<none>",), polar.vetoes[1] or ("<none>",), polar.subjects)


def read_polar(text: str, polar: Polar) -> str:
    """The verdict of ``polar`` the reply gives (see the module's docstring); ``ParseError`` when it says both or
    neither, or contradicts its verdict in words that give none (``Polar.vetoes``)."""
    read = _read(text, polar)
    verdict = _last_conclusion(read, polar.names) or _resolve([read.main, read.subordinate], polar.names)
    _vetoed(text, polar, verdict)
    return verdict
