"""DCR never scores a sentence it did not check, and never refuses a reply for a reason that is not the model's.

Each case is driven by scripted agents: a quote that differs from the candidate's sentence in a number word, a
direction or an antonym is not that sentence (the sentence is not evaluated, the verdict is never consistent); a
consistent candidate of 20 sentences is scored 1.0 (the reason schema is sized to the candidate); a reference of
300 characters given inline is read as text; a flagged sentence the candidate holds twice, rewritten the same way
twice, is kept twice.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from voirdire.cli import main
from voirdire.protocols.dcr import DCRItem
from voirdire.protocols.dcr.cli import text_or_file
from voirdire.protocols.dcr.coverage import Candidate, differences, same_facts
from voirdire.protocols.dcr.dce import max_reasons, reply_schema
from voirdire.transcript import ParseFailure, Transition, load

from .helpers import AMC, DCE, GOOD, RAI, agents as scripted, amc, dce, rai, run

REFERENCE = (
    "The company hired eight engineers in March. The storm moved north over the coast. Sales increased in May. "
    "Three teams reached the final."
)
MISQUOTES = [  # (the candidate's sentence, the evaluator's quote of it)
    ("The company hired eight engineers in march .", "The company hired six engineers in march ."),  # number word
    ("The storm moved north over the coast .", "The storm moved south over the coast ."),  # direction
    ("Sales increased in may .", "Sales decreased in may ."),  # antonym
    ("Three teams reached the final .", "Two teams reached the final ."),  # number word, capitalized
    ("the storm did move north .", "the storm did not move north ."),  # negation
    ("three teams reached the final .", "two teams reached the final ."),  # number word, lower case
]
OTHER = "The final was played on a Sunday ."


@pytest.mark.parametrize(("sentence", "quote"), MISQUOTES)
def test_a_misquoted_fact_word_is_another_sentence(sentence: str, quote: str) -> None:
    assert not same_facts(quote, sentence) and differences(quote, sentence)
    (loc,) = Candidate(f"{sentence} {OTHER}").locate([quote])
    assert loc.status == "not_in_candidate" and loc.near == 0 and loc.differs


@pytest.mark.parametrize(
    ("quote", "sentence"),
    [
        ("The six-time olympic gold medalist will compete .", "The six-time Olympic gold medallist will compete ."),
        ("It carries eigth lanes .", "It carries eight lanes ."),
        ("Ben Findon is a co-writer of the song .", "Ben Findon is a cowriter of the song ."),
        ("The colour of the centre court is green .", "The color of the center court is green ."),
    ],
)
def test_a_slip_that_changes_no_fact_still_matches(quote: str, sentence: str) -> None:
    assert differences(quote, sentence) == []


def test_a_word_the_quote_adds_or_drops_is_a_difference() -> None:
    assert differences("The storm moved over the coast .", "The storm moved north over the coast .") == ["-/north"]
    assert differences("Sales increased sharply in May .", "Sales increased in May .") == ["sharply/-"]


@pytest.mark.parametrize(("sentence", "quote"), MISQUOTES[:4])
async def test_a_misquoted_sentence_is_never_scored_for_it(tmp_path: Path, sentence: str, quote: str) -> None:
    t = await run(
        tmp_path,
        scripted(evaluator=dce((quote, GOOD), (OTHER, GOOD)), converter=amc(1)),
        items=[DCRItem(id="misquote", reference=REFERENCE, candidate=f"{sentence} {OTHER}")],
        rounds=0,
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.decision == "inconsistent" and v.accepted is False
    assert v.statistics["score"] == 0.5 and v.statistics["not_evaluated"] == [sentence]
    (f,) = [e for e in s.events if isinstance(e, ParseFailure)]
    assert "does not have" in f.error and "nearest: sentence 1, which differs in" in f.error
    assert v.guarantee is not None and v.guarantee.values["not_evaluated"] == 1


async def test_a_consistent_candidate_of_twenty_sentences_scores_one(tmp_path: Path) -> None:
    sentences = [f"Fact number {k} is stated in the report ." for k in range(1, 21)]
    candidate = " ".join(sentences)
    assert max_reasons(20) >= 20 and reply_schema("sentence", 20).model_json_schema()["properties"]["reason"][
        "maxItems"
    ] == max_reasons(20)
    t = await run(
        tmp_path,
        scripted(evaluator=dce(*[(x, GOOD) for x in sentences]), converter=amc(*[1] * 20)),
        items=[DCRItem(id="twenty", reference=" ".join(sentences), candidate=candidate)],
        rounds=0,
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.decision == "consistent" and v.statistics["score"] == 1.0
    assert not [e for e in s.events if isinstance(e, ParseFailure)]
    assert v.guarantee is not None and v.guarantee.values["scored"] == 20


def _scripts(tmp_path: Path, evaluator: str, converter: str) -> list[str]:
    args = []
    for role, match, reply in (("evaluator", DCE, evaluator), ("converter", AMC, converter), ("improver", RAI, "[]")):
        path = tmp_path / f"{role}.yaml"
        path.write_text(yaml.safe_dump({"rules": [{"match": match, "reply": reply}]}))
        args += ["--model", f"{role}=scripted:{path}"]
    return args


@pytest.mark.parametrize("length", [300, 4_000, 20_000])
def test_an_inline_reference_of_any_length_is_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], length: int
) -> None:
    reference = ("The storm moved north over the coast. " * (length // 38 + 1))[:length]
    assert len(reference) == length and text_or_file(reference) == reference
    sentence = "The storm moved north over the coast ."
    out = tmp_path / "t.jsonl"
    args = ["dcr", "--reference", reference, "--candidate", sentence, "--rounds", "0", "--out", str(out)]
    rc = main([*args, *_scripts(tmp_path, dce((sentence, GOOD)), amc(1))])
    assert rc == 0, capsys.readouterr().err
    (s,) = load(out).sessions.values()
    assert s.item["reference"] == reference and s.verdict is not None and s.verdict.decision == "consistent"


def test_a_value_is_a_file_only_when_it_names_an_existing_file(tmp_path: Path) -> None:
    article = tmp_path / "article.txt"
    article.write_text("The storm moved north.\n", encoding="utf-8")
    assert text_or_file(str(article)) == "The storm moved north."
    assert text_or_file(str(tmp_path)) == str(tmp_path)  # a folder is not a file: the value is text
    assert text_or_file(str(tmp_path / "missing.txt")) == str(tmp_path / "missing.txt")
    assert text_or_file("a\x00b") == "a\x00b"  # no path holds a NUL: text, not an error
    assert text_or_file("x" * 300) == "x" * 300  # longer than a file name may be: text


async def test_a_flagged_sentence_held_twice_and_fixed_twice_is_kept_twice(tmp_path: Path) -> None:
    bad, good = "Bolt is the general secretary .", "Bolt will run for Jamaica ."
    fixed = "Garth Gayle is the general secretary ."
    wrong = "This sentence is not consistent with the article: Gayle is the secretary."
    t = await run(
        tmp_path,
        scripted(
            evaluator=[dce((bad, wrong), (good, GOOD), (bad, wrong)), dce((fixed, GOOD), (good, GOOD), (fixed, GOOD))],
            converter=[amc(-1, 1, -1), amc(1, 1, 1)],
            improver=rai((bad, fixed), (good, good), (bad, fixed)),
        ),
        items=[
            DCRItem(
                id="twice",
                reference="Bolt will run for Jamaica. Garth Gayle is the general secretary.",
                candidate=f"{bad} {good} {bad}",
            )
        ],
        rounds=1,
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert [e.to_state for e in s.events if isinstance(e, Transition)] == ["dce", "amc", "rai", "dce", "amc", "done"]
    assert v is not None and v.decision == "consistent" and v.statistics["score"] == 1.0
    assert v.statistics["candidate"] == f"{fixed} {good} {fixed}"
    assert v.statistics["removed"] == [] and v.statistics["lost"] == []
    assert json.dumps(v.statistics["history"][0]["reason_status"]) == '["scored", "scored", "scored"]'
