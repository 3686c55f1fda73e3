"""``voirdire reproduce paper-examples``: every worked example the papers print, replayed through its protocol.

The examples are the papers' own dialogues (LMvLM Appendix C Tables 13-20; DCR App. A.1 Table 6 and App. A.3
Tables 13-17; the oracle-checker's App. B Tables 9-11 and 14; QA entailment App. A.1 and App. D), one YAML file
each, driving the real protocols through scripted models. The test runs them all offline, checks each followed the
paper's stages, and holds the one disagreement to what it is: Table 19's "is false", which the strict reader does
not take for "incorrect".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from voirdire.analysis import examples, examples_table, find, run_examples
from voirdire.cli import main
from voirdire.reports import ExampleError, load_examples
from voirdire.transcript import load

REPO = Path(__file__).resolve().parents[2]
PAPERS = REPO.parent / "shared" / "papers"
EXPECTED = (
    [f"lmvlm-table-{t}" for t in range(13, 21)]
    + ["dcr-table-6", "dcr-table-13-row-1", "dcr-table-13-row-2", "dcr-table-13-row-3", "dcr-table-14-row-1",
       "dcr-table-14-row-2", "dcr-table-15", "dcr-table-16", "dcr-table-17"]
    + [f"oracle-table-9-row-{k}" for k in (1, 2, 3)] + [f"oracle-table-10-row-{k}" for k in (1, 2, 3)]
    + ["oracle-table-11-row-1"] + [f"oracle-table-14-row-{k}" for k in range(1, 6)]
    + ["qa-appendix-a1", "qa-appendix-d"]
)  # fmt: skip
PAPER_FILES = {
    "cross_examination": "lm-vs-lm-cross-examination.txt",
    "dcr": "dcr-consistency.txt",
    "oracle_paraphrase": "oracle-checker.txt",
    "qa_entailment": "entailment-qa-eval.txt",
}


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("examples")
    return {o.example.name: o for o in run_examples(list(examples().values()), folder)}


def test_every_example_is_there() -> None:
    assert sorted(examples()) == sorted(EXPECTED)


def test_every_example_follows_the_papers_stages_and_agrees_but_table_19(replayed: dict) -> None:  # type: ignore[type-arg]
    assert not [n for n, o in replayed.items() if o.error or not o.followed]
    assert sorted(n for n, o in replayed.items() if not o.agrees) == ["lmvlm-table-19"]
    t19 = replayed["lmvlm-table-19"]
    # "is false" is not one of §2's two answers: the strict reader refuses it, and §2 counts that as a rejection
    assert t19.decision == "inconclusive" and t19.got == {"decision": "inconclusive"}
    assert any("no 'correct' or 'incorrect'" in r for r in t19.refusals)
    (session,) = load(t19.transcript).sessions.values()
    assert session.verdict is not None and session.verdict.accepted is False
    assert replayed["lmvlm-table-15"].decision == "correct"  # the paper's own miss: the claim is incorrect


def test_the_table_says_each_examples_conclusions_and_explains_the_disagreement(replayed: dict) -> None:  # type: ignore[type-arg]
    text = examples_table(list(replayed.values()))
    assert f"30 of {len(EXPECTED)} agree with the paper's conclusion" in text
    assert f"{len(EXPECTED)} of {len(EXPECTED)} followed the paper's stages" in text
    row = next(line for line in text.splitlines() if line.startswith("lmvlm-table-19 "))
    assert re.search(r"incorrect\s+inconclusive\s+no\s+followed", row)
    assert 'strict reader does not read "false"' in text


def test_the_dcr_improvement_example_keeps_the_round_scores(replayed: dict) -> None:  # type: ignore[type-arg]
    o = replayed["dcr-table-6"]
    assert o.got["statistics.scores"] == pytest.approx([2 / 3, 2 / 3]) and o.stages[-2:] == ["dce", "done"]


def _strings(text: str) -> list[str]:
    try:
        data = json.loads(text)
    except ValueError:
        return [text]
    found: list[str] = []

    def walk(x: object) -> None:
        if isinstance(x, str):
            found.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(data)
    return found


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.skipif(not PAPERS.is_dir(), reason="the papers are not beside this checkout")
def test_every_printed_reply_is_the_papers_text() -> None:
    """A reply marked printed is the paper's words: each of its texts (a JSON reply's strings; placeholders in
    parentheses and Table 10's "ALREADY CONSISTENT" aside) is in the paper."""
    papers = {p: _squeezed((PAPERS / f).read_text(encoding="utf-8")) for p, f in PAPER_FILES.items()}
    missing = []
    for ex in examples().values():
        paper = papers[ex.protocol]
        for role, replies in ex.replies.items():
            for k, reply in enumerate(replies, 1):
                if not reply.printed:
                    continue
                for piece in _strings(reply.text):
                    if piece.startswith("(") or piece in ("ALREADY CONSISTENT", "yes", "no", "Yes", "No"):
                        continue
                    if _squeezed(piece) not in paper:
                        missing.append((ex.name, role, k, piece[:80]))
    assert missing == []


def test_one_example_by_name_prints_its_dialogue_as_a_chat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "paper-examples", "--example", "table-13", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "lmvlm-table-13: Cohen et al. 2023" in out and "Examiner" in out and "Examinee" in out
    assert "Verdict: INCORRECT" in out and "not printed by the paper, supplied by the example file:" in out
    assert "1 of 1 agree with the paper's conclusion" in out
    assert (tmp_path / "paper-examples" / "lmvlm-table-13.jsonl").is_file()
    data = json.loads((tmp_path / "paper-examples-lmvlm-table-13.json").read_text(encoding="utf-8"))
    assert data["agree"] == 1 and data["examples"][0]["stages_followed"] is True


def test_a_name_that_is_not_one_examples_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ExampleError, match="no single example 'table-99'"):
        find("table-99")
    assert main(["reproduce", "paper-examples", "--example", "table-1"]) == 2  # several: lmvlm's 13-19, ...
    assert "--example: no single example 'table-1'" in capsys.readouterr().err


def test_a_broken_example_file_names_itself(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("name: x\nprotocol: [\n", encoding="utf-8")
    with pytest.raises(ExampleError, match=r"bad\.yaml:\d+: not YAML"):
        load_examples(tmp_path)
    (tmp_path / "bad.yaml").write_text("name: Not A Name\n", encoding="utf-8")
    with pytest.raises(ExampleError, match=r"bad\.yaml: name: String should match pattern"):
        load_examples(tmp_path)
