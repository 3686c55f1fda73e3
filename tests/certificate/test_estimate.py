"""``--estimate``: every protocol's declared call budget against what a scripted run of it actually sent (the
transcript's call tally), a labelled estimate where the parameters do not bound the calls, the earlier transcript's
figures, and no request and no file from the estimate itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from voirdire.certificate import estimate_run
from voirdire.cli import main
from voirdire.models import RoleSettings
from voirdire.registry import registrations
from voirdire.reports import load_prices
from voirdire.transcript import CallTally, ModelCall, Step, iter_records, load

# The examiner always has more to ask: four setup questions, three follow-up questions, "Yes" to every follow-up
# round until the cap; the examinee answers anything.
EXAMINER = {
    "rules": [
        {"match": r"correct or incorrect\?", "reply": "The claim is correct."},
        {"match": r"follow-up questions\? Please answer with Yes or No", "reply": "Yes."},
        {"match": r"What are the follow-up questions", "reply": "1. Is it so?\n2. Since when?\n3. Who says so?"},
    ],
    "default": "1. Who wrote it?\n2. When?\n3. Where?\n4. Why?",
}
EXAMINEE = {"default": "Shakespeare wrote it, around 1600, in London."}
CLAIMS = [
    {"id": "a", "question": "Who wrote Hamlet?", "answers": ["Shakespeare"]},
    {"id": "b", "question": "Who wrote Hamlet?", "claim": "Shakespeare wrote Hamlet."},
]


def write(path: Path, data: Any) -> Path:
    path.write_text(yaml.safe_dump(data) if path.suffix == ".yaml" else "\n".join(json.dumps(r) for r in data))
    return path


def requests_in(out: Path) -> int:
    """The requests the run sent, from the transcript's call tally."""
    tally = CallTally()
    for record in iter_records(out):
        if isinstance(record, ModelCall):
            tally.count_call(record)
    return tally.requests


def estimated(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main([*argv, "--estimate", "--json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def ran(capsys: pytest.CaptureFixture[str], *argv: str) -> None:
    assert main([*argv, "--no-progress"]) == 0, capsys.readouterr().err
    capsys.readouterr()


def examine_args(tmp_path: Path, *extra: str) -> list[str]:
    data = write(tmp_path / "claims.jsonl", CLAIMS)
    examiner = write(tmp_path / "examiner.yaml", EXAMINER)
    examinee = write(tmp_path / "examinee.yaml", EXAMINEE)
    models = ["--model", f"examiner=scripted:{examiner}", "--model", f"examinee=scripted:{examinee}"]
    return ["examine", "--questions", str(data), *models, "--out", str(tmp_path / "t.jsonl"), *extra]


def test_every_registered_protocol_declares_its_budget() -> None:
    assert all(reg.budget is not None for reg in registrations().values())


def test_lmvlm_with_the_question_cap_is_bounded_and_the_run_stays_within_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = examine_args(tmp_path, "--max-followups", "2", "--max-questions", "2")
    bound = estimated(capsys, *args)
    # examiner: 2 + 2 × 2 calls per claim; examinee: the claim made for "a", then 3 turns × 2 questions per claim.
    assert bound["kind"] == "bound" and bound["roles"]["examiner"]["requests"] == 2 * 6
    assert bound["roles"]["examinee"]["requests"] == 1 + 2 * 3 * 2 and bound["requests"] == 25
    assert not (tmp_path / "t.jsonl").exists()
    ran(capsys, *args)
    out = tmp_path / "t.jsonl"
    assert requests_in(out) <= bound["requests"]
    assert requests_in(out) == 25  # this examiner asks past the cap and always follows up: the bound is reached
    dropped = [e for s in load(out).sessions.values() for e in s.of_kind(Step) if e.name == "questions_dropped"]
    assert dropped and all(e.data["cap"] == 2 and len(e.data["dropped"]) == e.data["asked"] - 2 for e in dropped)
    assert {"Why?", "Where?", "Who says so?"} <= {q for e in dropped for q in e.data["dropped"]}


def test_lmvlm_majority_with_repeats_stays_within_its_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = examine_args(tmp_path, "--majority", "--max-followups", "1", "--max-questions", "3", "--repeats", "2")
    bound = estimated(capsys, *args)
    # Per claim and repeat: 3 examinations × (2 + 2) examiner calls, 3 × 2 turns × 3 questions, the claim of "a".
    assert bound["kind"] == "bound" and bound["repeats"] == 2
    assert bound["requests"] == 2 * (2 * 3 * 4 + 2 * 3 * 2 * 3 + 1)
    ran(capsys, *args)
    assert requests_in(tmp_path / "t.jsonl") <= bound["requests"]


def test_lmvlm_without_the_cap_is_a_labelled_estimate_then_learns_from_its_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = examine_args(tmp_path, "--max-followups", "1")
    first = estimated(capsys, *args)
    assert first["kind"] == "estimate" and first["roles"]["examiner"]["bounded"]
    assert not first["roles"]["examinee"]["bounded"]
    assert first["assumed"]["questions_per_turn"]["value"] == 3.1
    assert "Table 8" in first["assumed"]["questions_per_turn"]["source"]
    assert first["earlier_transcript"] is None and first["expected_requests"] is None
    capsys.readouterr()
    assert main([*args, "--estimate"]) == 0
    text = capsys.readouterr().out
    assert "ESTIMATE (not a bound)" in text and "questions_per_turn = 3.1" in text and "--max-questions" in text
    ran(capsys, *args)
    actual = requests_in(tmp_path / "t.jsonl")
    again = estimated(capsys, *args)
    # The same command's transcript: 4 and 3 questions a turn were asked, so 3.5 is assumed now.
    assert again["assumed"]["questions_per_turn"]["value"] == 3.5
    assert "t.jsonl" in again["assumed"]["questions_per_turn"]["source"]
    assert again["earlier_transcript"] == str(tmp_path / "t.jsonl") and again["expected_requests"] == actual
    assert again["requests"] >= actual


def test_the_baselines_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write(tmp_path / "claims.jsonl", CLAIMS)
    examinee = write(tmp_path / "examinee.yaml", {"default": "Yes."})
    out = tmp_path / "t.jsonl"
    args = ["examine", "--questions", str(data), "--baseline", "ays", "--model", f"examinee=scripted:{examinee}"]
    bound = estimated(capsys, *args, "--out", str(out))
    assert bound["kind"] == "bound" and bound["requests"] == 3  # the claim of "a", then one question each
    ran(capsys, *args, "--out", str(out))
    assert requests_in(out) == 3


def test_dcr_is_bounded_by_its_rounds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.protocols.dcr.helpers import AMC, ARTICLE, BAD, DCE, GOOD, RAI, S1, S2, S2_FIXED, SUMMARY, amc, dce, rai

    scripts = {
        "evaluator": {
            "rules": [{"match": DCE, "replies": [dce((S1, GOOD), (S2, BAD)), dce((S1, GOOD), (S2_FIXED, GOOD))]}]
        },
        "converter": {"rules": [{"match": AMC, "replies": [amc(1, -1), amc(1, 1)]}]},
        "improver": {"rules": [{"match": RAI, "reply": rai((S1, S1), (S2, S2_FIXED))}]},
    }
    models = [
        a for role, s in scripts.items() for a in ("--model", f"{role}=scripted:{write(tmp_path / f'{role}.yaml', s)}")
    ]
    article = tmp_path / "article.txt"
    article.write_text(ARTICLE)
    out = tmp_path / "t.jsonl"
    args = ["dcr", "--reference", str(article), "--candidate", SUMMARY, *models, "--out", str(out)]
    bound = estimated(capsys, *args)
    assert bound["kind"] == "bound"
    assert {r: v["requests"] for r, v in bound["roles"].items()} == {"evaluator": 4, "converter": 4, "improver": 3}
    ran(capsys, *args)
    assert requests_in(out) == 5 <= bound["requests"]  # consistent after one improvement: 2 + 2 + 1


def test_qa_entailment_is_bounded_by_its_gold_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.protocols.qa_entailment.helpers import CELLS, all_entails, cell_rows, evaluator_script, write_script

    data = write(tmp_path / "cells.jsonl", cell_rows())
    script = write_script(tmp_path / "ev.yaml", evaluator_script([a for a, _ in CELLS.values()], all_entails()))
    out = tmp_path / "t.jsonl"
    args = ["qa-eval", "--data", str(data), "--evaluator", "entailment", "--model", f"evaluator=scripted:{script}"]
    args += ["--partial-marks", "--out", str(out)]
    bound = estimated(capsys, *args)
    assert bound["kind"] == "bound" and bound["items"] == 4
    ran(capsys, *args)
    assert 0 < requests_in(out) <= bound["requests"]
    lexical = estimated(capsys, "qa-eval", "--data", str(data), "--evaluator", "lexical", "--out", str(out))
    assert lexical["kind"] == "bound" and lexical["requests"] == 0


async def test_no_data_llm_evaluator_is_bounded_by_rounds_and_attempts(shared_data: Path, tmp_path: Path) -> None:
    from voirdire.models.scripted import Script, ScriptedChatCompletionClient, ScriptRule
    from voirdire.protocols.no_data.data import load_split
    from voirdire.protocols.no_data.protocol import NoDataProtocol, NoDataProtocolParams, make_items
    from voirdire.runner import run_protocol

    root = shared_data / "no_data_algorithm"
    # Labels are read at once; every proposal is unreadable, so each takes all its attempts.
    script = Script(rules=[ScriptRule(match=r"Label: [01]\s*$", reply="I would pick the second one."),
                           ScriptRule(match=r"Datapoint: [01]+\s*$", reply="Label: 1")])  # fmt: skip
    params = NoDataProtocolParams(data="ip", evaluator="llm", generator="llm", phi=1.0, exemplars=2, attempts=2)
    proto = NoDataProtocol(params, root=root)
    items = make_items(load_split("ip", "test", root), [0], limit=3)
    reg = registrations()["no_data"]
    roles = {"evaluator": RoleSettings(model="scripted:x")}
    bound = estimate_run(reg.budget, proto, items, roles, load_prices(), out=tmp_path / "t.jsonl")
    assert bound.bounded and bound.requests == 3 * (3 + 3) * 2  # 3 datapoints × (3 labels + 3 proposals) × 2
    out = tmp_path / "t.jsonl"
    await run_protocol(proto, items, out=out, clients={"evaluator": ScriptedChatCompletionClient(script)})
    assert 0 < requests_in(out) <= bound.requests
    rules = NoDataProtocol(NoDataProtocolParams(data="ip"), root=root)
    assert estimate_run(reg.budget, rules, items, {}, load_prices(), out=out).requests == 0


async def test_oracle_entities_is_a_labelled_estimate(tmp_path: Path) -> None:
    from tests.protocols.oracle_checker.oracles import SENTENCE, linear, oracle
    from voirdire.protocols.oracle_checker import LinearityChecker, SentenceItem
    from voirdire.runner import run_protocol

    items = [SentenceItem(id="s1", text=SENTENCE)]
    reg = registrations()["oracle_entities"]
    roles = {"oracle": RoleSettings(model="scripted:x")}
    guess = estimate_run(reg.budget, LinearityChecker(), items, roles, load_prices(), out=tmp_path / "t.jsonl")
    assert not guess.bounded and "entities_per_sentence" in guess.figures
    assert "ESTIMATE (not a bound)" in guess.text() and "3 entities per sentence assumed" in guess.text()
    out = tmp_path / "t.jsonl"
    await run_protocol(LinearityChecker(), items, out=out, clients={"oracle": oracle(linear)})
    assert requests_in(out) <= guess.requests  # the sentence has the three entities the estimate assumes


def test_oracle_paraphrase_is_a_labelled_estimate(tmp_path: Path) -> None:
    from voirdire.protocols.oracle_checker import PairItem, ParaphraseChecker

    items = [PairItem(id="p", sentence1="The cat sat on the mat.", sentence2="A cat was sitting on the mat.")]
    reg = registrations()["oracle_paraphrase"]
    roles = {"oracle": RoleSettings(model="openai:gpt-4o-mini")}
    guess = estimate_run(reg.budget, ParaphraseChecker(), items, roles, load_prices(), out=tmp_path / "t.jsonl")
    assert not guess.bounded and guess.figures["paraphrases_per_sentence"].value == 5
    assert guess.cost.usd is not None and guess.cost.usd > 0 and not guess.cost.unpriced


def test_estimate_sends_no_request_and_writes_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fake_openai import FakeOpenAIServer

    monkeypatch.chdir(tmp_path)  # a default transcript path would land here
    data = write(tmp_path / "claims.jsonl", CLAIMS)
    before = sorted(p.name for p in tmp_path.iterdir())
    with FakeOpenAIServer(lambda messages: "Yes.") as server:
        spec = f"openai-compatible:tiny@{server.url}"
        for argv in (["--out", str(tmp_path / "t.jsonl")], []):
            capsys.readouterr()
            assert main(["examine", "--questions", str(data), "--model", spec, "--estimate", *argv]) == 0
            text = capsys.readouterr().out
            assert "requests: about" in text and "no price for tiny" in text
        assert server.requests == []
    assert sorted(p.name for p in tmp_path.iterdir()) == before
