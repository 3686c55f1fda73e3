"""The sentence segmenter DCR divides with, and where each DCE reason is in the candidate (coverage.py)."""

from __future__ import annotations

import itertools
import random

import pytest

from voirdire.protocols.dcr.coverage import Candidate, disjoint
from voirdire.protocols.dcr.sentences import BLOCK_CHARS, segmenter, sentence_spans, split_sentences

BRIDGE = "The bridge opened in 1932. It carries eight lanes. Anna Berg designed it."


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("The U.S. Army used it in 1944.", ["The U.S. Army used it in 1944."]),
        (
            "Mr. Smith went to St. Louis with Dr. Jones Jr. on Jan. 5. He paid for e.g. apples, i.e. fruit. It rained.",
            [
                "Mr. Smith went to St. Louis with Dr. Jones Jr. on Jan. 5.",
                "He paid for e.g. apples, i.e. fruit.",
                "It rained.",
            ],
        ),
        (  # the benchmarks' tokenized, lower-cased summaries
            "usain bolt will compete on may 2 and 3 . bolt is the jaaa general secretary . the u.s. team won .",
            ["usain bolt will compete on may 2 and 3 .", "bolt is the jaaa general secretary .", "the u.s. team won ."],
        ),
        (
            "she took a shuttle to washington , d.c. on the way , to catch a flight . she flew on tuesday .",
            ["she took a shuttle to washington , d.c. on the way , to catch a flight .", "she flew on tuesday ."],
        ),
        ("Several cars were tagged, said Sgt. Tom Wright.", ["Several cars were tagged, said Sgt. Tom Wright."]),
        ("He works for the U.S. He lives there.", ["He works for the U.S.", "He lives there."]),
        ("  One.\n\nTwo!  ", ["One.", "Two!"]),
        ("", []),
        (" \n ", []),
    ],
)
def test_abbreviations_do_not_end_a_sentence(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_one_loader_for_the_process() -> None:
    assert segmenter() is segmenter()
    assert "parser" in segmenter().pipe_names and "ner" not in segmenter().pipe_names


def test_long_texts_are_cut_in_blocks() -> None:
    """A text of more than two blocks is segmented whole, in order, without overlaps (its cost: bench/)."""
    rng = random.Random(7)
    words = ["the", "U.S.", "army", "St.", "e.g.", "bridge", ".", "?", "\n", "Jr.", "x" * 40, "1944", "'", '"']
    text = " ".join(rng.choice(words) for _ in range(3 * BLOCK_CHARS // 5))
    assert len(text) > 2 * BLOCK_CHARS
    sentence_spans.cache_clear()
    spans = sentence_spans(text)
    assert spans and all(0 <= s < e <= len(text) for s, e in spans)
    assert all(e1 <= s2 for (_, e1), (s2, _) in itertools.pairwise(spans))
    assert all(text[s:e].strip() == text[s:e] for s, e in spans)


def test_reasons_located_in_the_candidate() -> None:
    cut = Candidate(BRIDGE)
    assert cut.sentences == ["The bridge opened in 1932.", "It carries eight lanes.", "Anna Berg designed it."]
    located = cut.locate(
        [
            "the bridge opened in 1932",  # case and punctuation aside
            "It carries eigth lanes.",  # re-typed with a slip
            "The bridge was built by the U.S. Army.",  # not in the candidate
            "",
            "The bridge opened in 1932.",  # already taken
            BRIDGE,  # the whole paragraph
            "eight lanes",  # part of a sentence
        ]
    )
    assert [loc.status for loc in located] == [
        "scored", "scored", "not_in_candidate", "not_in_candidate", "repeated", "paragraph", "scored",
    ]  # fmt: skip
    assert [loc.sentences for loc in located] == [[0], [1], [], [], [], [0, 1, 2], [1]]
    assert cut.not_evaluated(located, [True] * 2 + [False] * 5) == [2]
    assert cut.not_evaluated(located, [False] * 5 + [True, False]) == []
    assert cut.not_evaluated(located, [False] * 6 + [True]) == [0, 1, 2]  # a part is not the sentence
    # a paragraph-level reason over sentences that have their own is not rewritten over them
    assert disjoint(located, [0, 1, 5]) == [0, 1]
    assert disjoint(located, [5]) == [5]


def test_rebuild_replaces_only_the_located_text() -> None:
    cut = Candidate(BRIDGE)
    (first, second) = cut.locate(["It carries eight lanes.", "the bridge opened in 1932"])
    assert first.span is not None and second.span is not None
    text, originals = cut.rebuild([first.span, second.span], ["It carries six lanes.", "The bridge opened in 1932."])
    assert text == "The bridge opened in 1932. It carries six lanes. Anna Berg designed it."
    assert originals == ["It carries eight lanes.", "The bridge opened in 1932."]
    (part,) = cut.locate(["eight lanes"])
    assert part.span is not None
    six = "The bridge opened in 1932. It carries six lanes. Anna Berg designed it."
    assert cut.rebuild([part.span], ["six lanes."])[0] == six  # the clause keeps its sentence going


PIECES = (
    "The U.S. Army used it in 1944.", "It carries eight lanes.", "Anna Berg designed it.", "St. Louis is near.",
    "e.g. bridges, i.e. roads .", "\" I love it , \" he said .", "Why?", "Wow!", "Jr. left.", "the game .",
)  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_rebuild_keeps_every_sentence_no_given_reason_touches(seed: int) -> None:
    rng = random.Random(seed)
    candidate = " ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6)))
    cut = Candidate(candidate)
    sentences = cut.sentences
    reasons = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        if kind < 0.5:
            reasons.append(rng.choice(sentences))
        elif kind < 0.7:  # a piece of the candidate, maybe across sentences
            a = rng.randrange(len(candidate))
            reasons.append(candidate[a : a + rng.randint(1, 60)])
        else:
            reasons.append(rng.choice(["The sky is blue.", "", "Paris is in France.", "x" * 30]))
    located = cut.locate(reasons)
    for loc in located:
        assert (loc.span is None) == (loc.status in ("not_in_candidate", "repeated"))
        assert loc.status != "scored" or len(loc.sentences) == 1
    counted = [loc.status in ("scored", "paragraph") for loc in located]
    given = disjoint(located, [i for i, c in enumerate(counted) if c])
    spans = [span for i in given if (span := located[i].span) is not None]
    text, originals = cut.rebuild(spans, [f"<{i}>" for i in range(len(spans))])
    assert all(o.strip() for o in originals)
    touched = {j for i in given for j in located[i].sentences}
    kept = [s for j, s in enumerate(sentences) if j not in touched]
    position = 0
    for sentence in kept:  # verbatim and in order
        found = text.find(sentence, position)
        assert found >= 0, (candidate, reasons, text, sentence)
        position = found + len(sentence)
    not_evaluated = cut.not_evaluated(located, counted)
    for j, (s, e) in enumerate(cut.norm_spans):
        covering = [loc.span for loc, c in zip(located, counted, strict=True) if c and loc.span is not None]
        assert (j in not_evaluated) == (s != e and not _pieced(covering, s, e))


def _pieced(spans: list[tuple[int, int]], s: int, e: int) -> bool:
    """Whether the spans together cover s..e (several reasons about parts of one sentence)."""
    return all(any(a <= i < b for a, b in spans) for i in range(s, e))
