"""Which sentences of the candidate each DCE reason is about, which sentences no reason covers, and the candidate
rebuilt from RAI's rewrites with every other sentence kept verbatim, in place.

A reason's ``sentence`` is found in the candidate by its letters and digits (case, spacing and punctuation aside);
an evaluator that re-typed a sentence with a slip still matches it when the two agree on at least
``FUZZY_RATIO`` of their characters and on every fact: a quote whose numbers, capitalized words (names, months)
or negations differ from the sentence's ("1932" for "1937", "Berg" for "Borg", "did" for "did not") is not that
sentence, however close the characters. An exact match starts and ends at word edges ("5 percent" is not in
"15 percent"). A reason is then

- ``scored``: about text of the candidate within one sentence;
- ``paragraph``: about text that spans several sentences (App. A.4's paragraph-level reason; left out of Eq. 3 only
  with the A.4 heuristic on, ``--alpha-beta sentence-level``);
- ``not_in_candidate``: about a sentence the candidate does not have, or none (an empty ``sentence``): a recorded
  mismatch, never a score and never given to RAI;
- ``repeated``: about a sentence an earlier reason already took (as often as the candidate has it).

A sentence of the candidate is *evaluated* when the reasons counted in Eq. 3 cover all its letters and digits.
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
FUZZY_RATIO = 0.9
# A word as the fact check reads it: letters and digits with inner apostrophes, points and commas ("didn't",
# "3.5", "1,200").
WORD = re.compile(r"[^\W_]+(?:['’.,][^\W_]+)*")
NEGATIONS = frozenset(("not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot"))


def _words(text: str) -> Counter[str]:
    return Counter(w.casefold().replace("’", "'") for w in WORD.findall(text))


def _is_fact(word: str) -> bool:
    """A word that carries a fact a slip may not change: a number, a capitalized word (a name, a month, a title;
    the first word of a sentence too, which errs towards "not that sentence") or a negation."""
    low = word.casefold().replace("’", "'")
    return any(c.isdigit() for c in word) or word[:1].isupper() or low in NEGATIONS or low.endswith("n't")


def same_facts(quote: str, sentence: str) -> bool:
    """Whether the words in which ``quote`` and ``sentence`` differ include no fact: a quote that differs from a
    sentence in a number, a name or a negation is another sentence, not a slip."""
    a, b = _words(quote), _words(sentence)
    differ = set((a - b) + (b - a))
    fact_words = {w.casefold().replace("’", "'") for w in WORD.findall(f"{quote} {sentence}") if _is_fact(w)}
    return not any(w in fact_words or _is_fact(w) for w in differ)


class Located(BaseModel):
    """One reason in the candidate: its status, the sentences it overlaps and its span of the normalized text."""

    status: Status
    sentences: list[int] = Field(default_factory=list)
    span: tuple[int, int] | None = None


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

    def _fuzzy(self, quote: str, key: str, taken: set[int]) -> int | None:
        """The untaken sentence ``quote`` re-types with a slip: the closest at ``FUZZY_RATIO`` or more with the
        same facts."""
        best, best_ratio = None, FUZZY_RATIO
        for j, (s, e) in enumerate(self.norm_spans):
            if j in taken or s == e or min(len(key), e - s) < FUZZY_RATIO / (2 - FUZZY_RATIO) * max(len(key), e - s):
                continue  # lengths this far apart cannot reach the ratio (2M / (a + b) with M <= the shorter)
            matcher = SequenceMatcher(None, key, self.norm[s:e], autojunk=False)
            if matcher.real_quick_ratio() < best_ratio or matcher.quick_ratio() < best_ratio:
                continue
            ratio = matcher.ratio()
            if ratio >= best_ratio and same_facts(quote, self.text[self.spans[j][0] : self.spans[j][1]]):
                best, best_ratio = j, ratio
        return best

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
                j = self._fuzzy(sentence, key, fuzzy_taken)
                if j is None:
                    out.append(Located(status="not_in_candidate"))
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
