"""Which sentences of the candidate each DCE reason is about, which sentences no reason covers, and the candidate
rebuilt from RAI's rewrites with every other sentence kept verbatim, in place.

A reason's ``sentence`` (the quote) is found in the candidate by its letters and digits (case, spacing and
punctuation aside). A quote that is not there letter for letter is the sentence it re-types only when the two
align word for word and every word they differ in is a slip (``differences``):

- a word the quote has and the sentence has not, or the reverse, is a difference;
- a word replaced by another is a slip only when neither is a number or a capitalized word (a name, a month, a
  title), they are not two different words of the fact lists (number words, negations, directions and the words
  of antonym pairs), and they are one word spelled two ways ("medallist"/"medalist", "opend"/"opened",
  "eigth"/"eight", "co-writer"/"cowriter").

So "six" for "eight", "north" for "south", "increased" for "decreased", "Berg" for "Borg" or "did" for "did not"
is another sentence, however close the characters. An exact match starts and ends at word edges ("5 percent" is
not in "15 percent"). A reason is then

- ``scored``: about text of the candidate within one sentence;
- ``paragraph``: about text that spans several sentences (App. A.4's paragraph-level reason; left out of Eq. 3 only
  with the A.4 heuristic on, ``--alpha-beta sentence-level``);
- ``not_in_candidate``: about a sentence the candidate does not have, or none (an empty ``sentence``): an unmatched
  quote, recorded with the nearest sentence and the words they differ in, never a score and never given to RAI;
- ``repeated``: about a sentence an earlier reason already took (as often as the candidate has it).

A sentence of the candidate is *evaluated* when the reasons counted in Eq. 3 cover all its letters and digits; the
sentence an unmatched quote was near is not, unless another reason covers it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Literal

from pydantic import BaseModel, Field

from .sentences import normalize, sentence_spans

Status = Literal["scored", "paragraph", "not_in_candidate", "repeated"]
# A word as the alignment reads it: letters and digits with inner apostrophes, points and commas ("didn't",
# "3.5", "1,200").
WORD = re.compile(r"[^\W_]+(?:['’.,][^\W_]+)*")
NEGATIONS = frozenset(("not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot"))


def _listed(text: str) -> frozenset[str]:
    return frozenset(text.split())


NUMBER_WORDS = _listed(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred hundreds thousand thousands "
    "million millions billion billions trillion dozen dozens first second third fourth fifth sixth seventh eighth "
    "ninth tenth eleventh twelfth twentieth hundredth once twice thrice half halves quarter quarters double triple "
    "single both"
)
# Directions and the words of antonym pairs: a quote that swaps one for another says the opposite.
DIRECTIONS = _listed(
    "north south east west northern southern eastern western northeast northwest southeast southwest up down left "
    "right above below over under upper lower inside outside before after earlier later early late last top bottom "
    "front back forward backward ahead behind higher lower high low more less most least fewer greater smaller larger "
    "bigger longer shorter older younger best worst better worse increase increased increases increasing decrease "
    "decreased decreases decreasing rise rose risen rises rising fall fell fallen falls falling gain gained gains loss "
    "losses lose lost win won wins defeated accepted rejected always all some many few majority minority maximum "
    "minimum positive negative true false success failure succeeded failed profit deficit surplus"
)


def _key(word: str) -> str:
    return (
        word.casefold().replace("’", "'").replace(",", "")
        if any(c.isdigit() for c in word)
        else (word.casefold().replace("’", "'"))
    )


def _spelled(word: str) -> str:
    """One spelling of a word written the British or the American way ("colour", "organise", "centre")."""
    for old, new in (("isation", "ization"), ("ising", "izing"), ("ised", "ized"), ("ise", "ize"), ("yse", "yze")):
        if word.endswith(old) and len(word) > len(old) + 2:
            return word[: -len(old)] + new
    if word.endswith("our") and len(word) >= 6:
        return word[:-3] + "or"
    if word.endswith("tre") and len(word) >= 5:
        return word[:-3] + "ter"
    return word.replace("ll", "l")


def _respelled(a: str, b: str) -> bool:
    """Two words that are one word typed two ways: the same spelling once British forms are American, or a slip of
    a letter or two in a word of five letters or more, the first letter kept."""
    if _spelled(a) == _spelled(b):
        return True
    if min(len(a), len(b)) < 5 or a[0] != b[0]:
        return False
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.8


def _listed_fact(word: str) -> bool:
    return word in NEGATIONS or word.endswith("n't") or word in NUMBER_WORDS or word in DIRECTIONS


def _slip(x: str, y: str, wx: str, wy: str) -> bool:
    """Whether the word ``wx`` of the quote, where the sentence has ``wy``, is a slip: never for numbers and
    capitalized words, nor for two different words of the fact lists ("six"/"eight", "north"/"south"); a fact word
    mistyped ("eigth" for "eight") or another word respelled is."""
    if any(c.isdigit() for c in wx + wy) or wx[:1].isupper() or wy[:1].isupper():
        return False
    if _listed_fact(x) and _listed_fact(y):
        return False
    return _respelled(x, y)


def differences(quote: str, sentence: str) -> list[str]:
    """The words in which ``quote`` and ``sentence`` differ, aligned word by word, that are not slips (see the
    module's docstring); empty when the quote re-types the sentence."""
    qa, sa = WORD.findall(quote), WORD.findall(sentence)
    a, b = [_key(w) for w in qa], [_key(w) for w in sa]
    out: list[str] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if op == "replace" and i2 - i1 == j2 - j1:
            out += [f"{wx}/{wy}" for x, y, wx, wy in zip(a[i1:i2], b[j1:j2], qa[i1:i2], sa[j1:j2], strict=True)
                    if not _slip(x, y, wx, wy)]  # fmt: skip
            continue
        if op == "replace" and "".join(a[i1:i2]) == "".join(b[j1:j2]):
            continue  # "co-writer" / "cowriter", "well known" / "well-known": spacing
        out.append(f"{' '.join(qa[i1:i2]) or '-'}/{' '.join(sa[j1:j2]) or '-'}")
    return out


def _numbers(text: str) -> Counter[str]:
    return Counter(_key(w) for w in WORD.findall(text) if any(c.isdigit() for c in w))


def same_facts(quote: str, sentence: str) -> bool:
    """Whether ``quote`` re-types ``sentence``: they align word for word and differ in slips only."""
    return not differences(quote, sentence)


class Located(BaseModel):
    """One reason in the candidate: its status, the sentences it overlaps and its span of the normalized text."""

    status: Status
    sentences: list[int] = Field(default_factory=list)
    span: tuple[int, int] | None = None
    near: int | None = None  # an unmatched quote: the sentence it comes closest to
    differs: list[str] = Field(default_factory=list)  # ... and the words they differ in ("six/eight")


class Candidate:
    """A candidate cut into sentences, with the map from its normalized text back to its characters."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans = list(sentence_spans(text))
        self.raw: list[int] = []  # raw index of each character of the normalized text
        pieces = []
        for i, ch in enumerate(text):
            kept = normalize(ch)
            pieces.append(kept)
            self.raw.extend([i] * len(kept))
        self.norm = "".join(pieces)
        # each sentence's span in the normalized text
        before = [0] * (len(text) + 1)
        for i, piece in enumerate(pieces):
            before[i + 1] = before[i] + len(piece)
        self.norm_spans = [(before[s], before[e]) for s, e in self.spans]

    @property
    def sentences(self) -> list[str]:
        return [self.text[s:e] for s, e in self.spans]

    def overlapping(self, span: tuple[int, int]) -> list[int]:
        a, b = span
        return [j for j, (s, e) in enumerate(self.norm_spans) if s < b and a < e and s < e]

    def _facts(self, j: int) -> Counter[str]:
        s, e = self.spans[j]
        return _numbers(self.text[s:e])

    def _retyped(self, quote: str, taken: set[int]) -> int | None:
        """The untaken sentence ``quote`` re-types (``same_facts``); sentences whose numbers or length differ from
        the quote's are not aligned at all."""
        facts = _numbers(quote)
        n = len(WORD.findall(quote))
        for j, (s, e) in enumerate(self.spans):
            if j in taken or s == e or abs(len(WORD.findall(self.text[s:e])) - n) > 3 or self._facts(j) != facts:
                continue
            if same_facts(quote, self.text[s:e]):
                return j
        return None

    def _nearest(self, quote: str) -> tuple[int | None, list[str]]:
        """The sentence an unmatched quote shares most words with, and the words they differ in."""
        words = Counter(_key(w) for w in WORD.findall(quote))
        best, shared = None, 0
        for j, text in enumerate(self.sentences):
            common = sum((words & Counter(_key(w) for w in WORD.findall(text))).values())
            if common > shared:
                best, shared = j, common
        return (best, differences(quote, self.sentences[best])) if best is not None else (None, [])

    def locate(self, sentences: Sequence[str]) -> list[Located]:
        """Each reason's ``sentence`` in the candidate; the k-th reason with the same text takes its k-th
        occurrence."""
        out: list[Located] = []
        seen: Counter[str] = Counter()
        fuzzy_taken: set[int] = set()
        for sentence in sentences:
            key = normalize(sentence)
            if not key:
                out.append(Located(status="not_in_candidate"))
                continue
            starts = [a for a in _occurrences(self.norm, key) if self._at_word_edges(a, a + len(key))]
            if starts:
                seen[key] += 1
                if seen[key] > len(starts):
                    out.append(Located(status="repeated"))
                    continue
                span = (starts[seen[key] - 1], starts[seen[key] - 1] + len(key))
            else:
                j = self._retyped(sentence, fuzzy_taken)
                if j is None:
                    near, differs = self._nearest(sentence)
                    out.append(Located(status="not_in_candidate", near=near, differs=differs))
                    continue
                fuzzy_taken.add(j)
                span = self.norm_spans[j]
            covered = self.overlapping(span)
            out.append(Located(status="scored" if len(covered) == 1 else "paragraph", sentences=covered, span=span))
        return out

    def _at_word_edges(self, a: int, b: int) -> bool:
        """Whether the normalized span [a, b) starts and ends at word edges of the text: no letter or digit
        touches it from outside."""
        start, end = self.raw[a], self.raw[b - 1] + 1
        before = self.text[start - 1] if start > 0 else " "
        after = self.text[end] if end < len(self.text) else " "
        return not normalize(before) and not normalize(after)

    def not_evaluated(self, located: Sequence[Located], counted: Sequence[bool]) -> list[int]:
        """The sentences whose letters and digits the counted reasons do not all cover."""
        covered = [False] * len(self.norm)
        for loc, count in zip(located, counted, strict=True):
            if count and loc.span is not None:
                a, b = loc.span
                covered[a:b] = [True] * (b - a)
        return [j for j, (s, e) in enumerate(self.norm_spans) if not all(covered[s:e])]

    def raw_span(self, span: tuple[int, int]) -> tuple[int, int, bool]:
        """The characters of a normalized span, widened to whole sentences at the ends where it meets a sentence's
        edge; the flag says whether it ends where a sentence ends."""
        a, b = span
        start, end = self.raw[a], self.raw[b - 1] + 1
        at_end = False
        for (s, e), (ns, ne) in zip(self.spans, self.norm_spans, strict=True):
            if ns == ne:  # a "sentence" of punctuation only belongs to no reason
                continue
            if ns == a:
                start = min(start, s)
            if ne == b:
                end, at_end = max(end, e), True
        return start, end, at_end

    def rebuild(self, spans: Sequence[tuple[int, int]], improved: Sequence[str]) -> tuple[str, list[str]]:
        """The candidate with each normalized span replaced by its improved text (spans do not overlap; an empty
        text deletes the span) and the original text of each span; everything else is kept character for
        character."""
        parts = sorted(
            ((*self.raw_span(span), new, i) for i, (span, new) in enumerate(zip(spans, improved, strict=True))),
            key=lambda p: p[0],
        )
        out, pos = [], 0
        originals = [""] * len(spans)
        for start, end, at_end, new, i in parts:
            originals[i] = self.text[start:end]
            new = new.strip()
            if not at_end and new.endswith(".") and not self.text[start:end].endswith("."):
                new = new[:-1]  # a clause rewritten inside its sentence keeps the sentence going
            if not new:  # a deleted sentence takes the white space after it along
                while end < len(self.text) and self.text[end].isspace():
                    end += 1
            out += [self.text[pos:start], new]
            pos = end
        out.append(self.text[pos:])
        text = "".join(out)
        return (text.rstrip() if any(not n.strip() for n in improved) else text), originals


def _occurrences(text: str, key: str) -> list[int]:
    out, i = [], text.find(key)
    while i >= 0:
        out.append(i)
        i = text.find(key, i + len(key))
    return out


def disjoint(located: Sequence[Located], chosen: Sequence[int]) -> list[int]:
    """Of the ``chosen`` reasons, those RAI rewrites: spans that do not overlap, one-sentence reasons first (a
    paragraph-level reason over sentences that have their own reasons is not rewritten over them); in the order
    given."""
    taken: list[tuple[int, int]] = []
    keep: list[int] = []
    for i in sorted(chosen, key=lambda i: (len(located[i].sentences), i)):
        span = located[i].span
        if span is None or any(span[0] < b and a < span[1] for a, b in taken):
            continue
        taken.append(span)
        keep.append(i)
    return sorted(keep)
