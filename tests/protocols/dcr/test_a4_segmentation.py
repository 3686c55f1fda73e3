"""App. A.4's sentences: what ``--alpha-beta sentence-level`` counts as one sentence. The cases are the paper's own:
A.4's evaluator output (a paragraph-level reason before sentence-level ones, Eq. 5) and the summaries of Tables
15 and 17 "divided into bullet points", written as a user pastes them (bullets or numbers, final punctuation or
not), and one of their sentences quoting speech with full stops inside."""

from __future__ import annotations

from pathlib import Path

import pytest

from voirdire.protocols.dcr import DCRItem
from voirdire.protocols.dcr.coverage import Candidate
from voirdire.protocols.dcr.sentences import rouge_sentences, split_sentences
from voirdire.transcript import Step

from .helpers import agents, amc, dce, run

# Table 17 (QAGS-CNN), the three bullet points, final punctuation as printed and left out.
T17 = [
    "A chiropractor in iowa has surrendered his license to practice and admitted to swapping services for sex and "
    "performing exorcisms on some patients",
    "Manuel also recommended that patients stop taking medication no longer exist before he can resume practicing "
    "chiropractic in the state",
    "The disgraced chiropractor received a perfect five out of five stars in patient satisfaction",
]
# Table 15 (SummEval), its first three bullet points without their final full stops.
T15 = [
    "Paul merson was brought on with only seven minutes remaining in his team 's 0-0 draw with burnley",
    "Andros townsend scored the tottenham midfielder in the 89th minute",
    "Paul merson had another dig at andros townsend after his appearance",
]
QUOTED = 'Paul merson said "Townsend was poor. He should not play. Not yet." after the draw with burnley .'
ARTICLE = "Charles Manuel, a chiropractor in Iowa, surrendered his license. He received five out of five stars."


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("\n".join(f"• {s}" for s in T17), T17),
        ("\n".join(f"- {s}" for s in T17), T17),
        ("\n".join(f"* {s} ." for s in T17), [f"{s} ." for s in T17]),
        ("\n".join(f"{i}. {s}" for i, s in enumerate(T15, 1)), T15),
        ("\n".join(f"{i}) {s}" for i, s in enumerate(T15, 1)), T15),
        ("Summary:\n" + "\n".join(f"• {s}" for s in T15), ["Summary:", *T15]),
        (f"• {T17[0]}. It was his second case.\n• {T17[2]}", [f"{T17[0]}.", "It was his second case.", T17[2]]),
        (QUOTED, [QUOTED]),
        (f"{QUOTED} {T15[1]} .", [QUOTED, f"{T15[1]} ."]),
        ("He wrote: “It is over. Go home.” Then he left.", ["He wrote: “It is over. Go home.”", "Then he left."]),
        ('An open quote " never closes. Two sentences.', ['An open quote " never closes.', "Two sentences."]),
    ],
)
def test_bullets_numbers_and_quotations_are_sentences_as_a4_counts_them(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_a_quote_mark_closed_only_many_sentences_later_is_a_stray_one() -> None:
    text = 'A stray " mark here. ' + " ".join(f"Sentence {i} ends." for i in range(10)) + ' A late " one.'
    assert len(split_sentences(text)) == 12


def test_rouge_lsum_keeps_the_parsers_cut_its_rows_were_measured_with() -> None:
    assert len(rouge_sentences(QUOTED)) > 1 and len(split_sentences(QUOTED)) == 1


def test_a_reason_about_one_bullet_is_sentence_level_one_about_two_is_not() -> None:
    cut = Candidate("\n".join(f"• {s}" for s in T17))
    one, two, quoted = cut.locate([T17[1], f"{T17[0]} {T17[1]}", T17[2].lower()])
    assert (one.status, one.sentences) == ("scored", [1])
    assert (two.status, two.sentences) == ("paragraph", [0, 1])
    assert (quoted.status, quoted.sentences) == ("scored", [2])
    assert cut.not_evaluated([one, quoted], [True, True]) == [0]


def test_a_reason_about_a_sentence_with_a_quotation_is_sentence_level() -> None:
    (loc,) = Candidate(f"{QUOTED} {T15[1]} .").locate([QUOTED])
    assert (loc.status, loc.sentences) == ("scored", [0])


async def test_eq5_on_table_17s_bullets_without_final_punctuation(tmp_path: Path) -> None:
    """A.4: the first reason is paragraph level and negative, so α = 1, β = −1 (Eq. 5) over the three bullets."""
    candidate = "\n".join(f"• {s}" for s in T17)
    reasons = dce(
        (candidate, "The two paragraphs are not consistent."),
        (T17[0], "This sentence is consistent."),
        (T17[1], "This sentence is not consistent."),
        (T17[2], "This sentence is consistent."),
        consistent=False,
    )
    t = await run(
        tmp_path,
        agents(evaluator=reasons, converter=amc(-1, 1, -1, 1)),
        items=[DCRItem(id="t17", reference=ARTICLE, candidate=candidate)],
        rounds=0,
        alpha_beta="sentence-level",
    )
    (s,) = t.sessions.values()
    (score,) = [e.data for e in s.events if isinstance(e, Step) and e.name == "score"]
    # Z = (Σ z_i + 1) / (k − 1) = (−1 + 1 − 1 + 1 + 1) / 3, Ẑ = (Z + 1) / 2
    assert (score["alpha"], score["beta"], score["not_evaluated"]) == (1, -1, 0)
    assert score["score"] == pytest.approx((1 / 3 + 1) / 2)
    assert s.verdict is not None and s.verdict.statistics["sentences_start"] == 3
