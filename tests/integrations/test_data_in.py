"""Datasets in: a Parquet file, a ``save_to_disk`` folder, a DataFrame and a ``datasets.Dataset``, mapped to the
item's fields (``--field claim=col``); a missing column names the columns there are; ``hf://`` offline says it
needs the network."""

from __future__ import annotations

from pathlib import Path

import datasets
import pandas as pd
import pytest

import voirdire
from tests.integrations.helpers import CLAIMS, models
from voirdire.api import protocol
from voirdire.cli import main
from voirdire.registry import DatasetError, load_items, read_records, source_name
from voirdire.transcript import load

FRAME = pd.DataFrame({"key": ["a", "b"], "statement": CLAIMS[:2], "score": [1.5, float("nan")]})


def _examine(data: Path, folder: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    m = models(folder)
    argv = ["examine", "--questions", str(data), "--model", f"examiner={m['examiner']}",
            "--model", f"examinee={m['examinee']}", "--out", str(folder / "out.jsonl"), *extra]  # fmt: skip
    code = main(argv)
    return code, capsys.readouterr().err


def test_parquet_and_save_to_disk_folders_run_through_examine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    FRAME.to_parquet(tmp_path / "claims.parquet")
    saved = tmp_path / "claims_ds"
    datasets.Dataset.from_pandas(FRAME).save_to_disk(str(saved))
    for data in (tmp_path / "claims.parquet", saved):
        (tmp_path / "out.jsonl").unlink(missing_ok=True)
        code, err = _examine(data, tmp_path, capsys, "--field", "claim=statement", "--field", "id=key")
        assert code == 0, err
        t = load(tmp_path / "out.jsonl")
        assert sorted(t.sessions) == ["a", "b"] and t.sessions["a"].item["claim"] == CLAIMS[0]
        assert t.header is not None and t.header.dataset == str(data)


def test_a_missing_column_names_the_columns_there_are(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    FRAME.to_parquet(tmp_path / "claims.parquet")
    code, err = _examine(tmp_path / "claims.parquet", tmp_path, capsys, "--field", "claim=statment")
    assert code == 2
    assert "no column 'statment' (--field claim=statment); its columns are: key, statement, score" in err
    code, err = _examine(tmp_path / "claims.parquet", tmp_path, capsys)  # no mapping: the item's own check
    assert code == 2 and "claims.parquet[0]" in err
    assert not (tmp_path / "out.jsonl").exists()


def test_dataset_folders_and_files_that_are_not_datasets(tmp_path: Path) -> None:
    splits = tmp_path / "dd"
    datasets.DatasetDict({"test": datasets.Dataset.from_pandas(FRAME)}).save_to_disk(str(splits))
    with pytest.raises(DatasetError, match=r"a dataset with splits test: give one, e\.g\. .*dd/test"):
        list(read_records(splits))
    (tmp_path / "plain").mkdir()
    with pytest.raises(DatasetError, match="is a folder, not a dataset file"):
        list(read_records(tmp_path / "plain"))
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(DatasetError, match=r"bad\.parquet: not a readable Parquet file"):
        list(read_records(tmp_path / "bad.parquet"))


def test_records_are_plain_python(tmp_path: Path) -> None:
    """NaN is None and numpy values are Python's, as a JSON record would hold them."""
    rows = [r for _, r in read_records(FRAME)]
    assert rows[1] == {"key": "b", "statement": CLAIMS[1], "score": None} and type(rows[0]["score"]) is float
    ds = datasets.Dataset.from_dict({"claim": ["x"], "answers": [["a", "b"]]})
    assert list(read_records(ds, {"text": "claim"})) == [("<Dataset>[0]", {"text": "x", "answers": ["a", "b"]})]


def test_the_api_takes_dataframes_and_datasets(tmp_path: Path) -> None:
    m = models(tmp_path)
    result = voirdire.run("cross_examination", FRAME, fields={"claim": "statement", "id": "key"}, models=m,
                          out=tmp_path / "df.jsonl")  # fmt: skip
    assert sorted(result.verdicts) == ["a", "b"]
    ds = datasets.Dataset.from_pandas(FRAME)
    result, report = voirdire.examine_dataset(ds, fields={"claim": "statement", "id": "key"}, models=m,
                                              out=tmp_path / "ds.jsonl")  # fmt: skip
    assert sorted(result.verdicts) == ["a", "b"] and report.sessions == 2
    with pytest.raises(DatasetError, match="its columns are: key, statement, score"):
        voirdire.run_dataset("cross_examination", FRAME, fields={"claim": "text"}, models=m, out=tmp_path / "x")
    items = load_items(FRAME, protocol("cross_examination").item_from_record, fields={"claim": "statement"}, limit=1)
    assert items[0].claim == CLAIMS[0]  # type: ignore[attr-defined]


def test_hf_names_need_the_network_and_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache: nothing to find offline
    code, err = _examine(Path("hf://someone/claims"), tmp_path, capsys)  # type: ignore[arg-type]
    assert code == 2
    assert err.startswith("voirdire: error: hf://someone/claims: loading a dataset from the Hugging Face Hub needs "
                          "the network (HF_HUB_OFFLINE is set)")  # fmt: skip
    assert "save_to_disk" in err and err.count("\n") == 1
    assert source_name(Path("hf://someone/claims")) == "hf://someone/claims"  # as a run header records it


QA = pd.DataFrame(
    {
        "id": ["q1", "q2"],
        "question": ["Who wrote Hamlet?", "What is the capital of Eritrea?"],
        "gold_answers": [["William Shakespeare", "Shakespeare"], ["Asmara"]],
        "system_answer": ["Shakespeare", "Massawa"],
        "human_judgment": [True, False],
        "meta": [None, None],
    }
)


def test_parquet_and_save_to_disk_run_through_qa_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    QA.to_parquet(tmp_path / "qa.parquet")
    datasets.Dataset.from_pandas(QA).save_to_disk(str(tmp_path / "qa_ds"))
    for data in (tmp_path / "qa.parquet", tmp_path / "qa_ds"):
        out = tmp_path / f"{data.name}.jsonl"
        code = main(["qa-eval", "--data", str(data), "--evaluator", "lexical", "--out", str(out), "--json",
                     "--no-progress"])  # fmt: skip
        assert code == 0, capsys.readouterr().err
        decisions = {sid: s.verdict.decision for sid, s in load(out).sessions.items() if s.verdict}
        assert decisions == {"q1": "correct", "q2": "incorrect"}
        capsys.readouterr()
    bad = QA.drop(columns=["system_answer"])
    bad.to_parquet(tmp_path / "bad.parquet")
    code = main(["qa-eval", "--data", str(tmp_path / "bad.parquet"), "--evaluator", "lexical", "--out",
                 str(tmp_path / "bad.jsonl")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "bad.parquet[0]: " in err and "system_answer" in err
