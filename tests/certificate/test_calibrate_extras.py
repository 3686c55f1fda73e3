"""``voirdire calibrate`` beyond agreement: --ci 0, AUROC and the reliability bins of a score-carrying verdict,
the per-configuration breakdown and paired comparison of several runs, and each disagreement's viewer URL."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import roc_auc_score

from tests.certificate.test_calibrate import CALIBRATE, ITEMS, make_data
from voirdire.cli import calibrate as calibrate_cli
from voirdire.cli.main import main
from voirdire.web import Viewer


def run_of(tmp_path: Path, protocol: str, *extra: str, name: str = "t.jsonl") -> tuple[Path, dict[str, Any]]:
    truth = make_data(tmp_path / "qa.jsonl")
    out = tmp_path / name
    args = ["run", protocol, "--data", str(tmp_path / "qa.jsonl"), "--out", str(out), "--no-progress", *extra]
    assert main(args) == 0
    return out, truth


def calibrate_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main([*CALIBRATE, *args, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_ci_0_prints_every_figure_without_an_interval(tmp_path: Path, capsys) -> None:
    transcript, _ = run_of(tmp_path, "qa_lexical")
    c = calibrate_json(capsys, str(transcript), "--ci", "0", "--sample", "20", "--seed", "1")
    a = c["agreement"]
    for name in ("accuracy", "tpr", "tnr", "kappa", "alpha"):
        assert a[name]["low"] is None and a[name]["reason"] == "intervals off (--ci 0)", name
        assert a[name]["estimate"] is not None
    assert c["estimate"]["ppi"]["estimate"] is not None and c["estimate"]["ppi"]["low"] is None
    assert main([*CALIBRATE, str(transcript), "--ci", "0"]) == 0
    out = capsys.readouterr().out
    assert "accuracy" in out and "[" not in out.split("disagreements")[0] and "Wilson" not in out


def test_auroc_and_reliability_of_the_token_f1_score(tmp_path: Path, capsys) -> None:
    transcript, truth = run_of(tmp_path, "qa_token_f1")
    c = calibrate_json(capsys, str(transcript))
    scores = c["scores"]
    assert scores["statistic"] == "f1" and scores["sessions"] == ITEMS
    rows = [json.loads(x) for x in transcript.read_text().splitlines()]
    f1 = {r["session_id"]: r["statistics"]["f1"] for r in rows if r.get("kind") == "verdict"}
    ids = sorted(f1)
    expected = roc_auc_score([truth[i][1] for i in ids], [f1[i] for i in ids])
    assert scores["auroc"]["estimate"] == pytest.approx(expected)
    assert scores["auroc"]["low"] < expected < scores["auroc"]["high"]
    assert sum(b["sessions"] for b in scores["bins"]) == ITEMS
    assert all(b["low"] <= b["mean_score"] <= b["high"] for b in scores["bins"])
    assert main([*CALIBRATE, str(transcript)]) == 0
    assert "AUROC of the score (f1)" in capsys.readouterr().out
    # a verdict without a score: no AUROC
    lexical, _ = run_of(tmp_path, "qa_lexical", name="lex.jsonl")
    assert calibrate_json(capsys, str(lexical))["scores"] is None


def test_runs_whose_configuration_differs_are_broken_down_and_compared(tmp_path: Path, capsys) -> None:
    strict, _ = run_of(tmp_path, "qa_token_f1", "--threshold", "0.9", name="strict.jsonl")
    loose, _ = run_of(tmp_path, "qa_token_f1", "--threshold", "0.1", name="loose.jsonl")
    c = calibrate_json(capsys, str(strict), str(loose))
    names = [x["configuration"] for x in c["configurations"]]
    assert names == ["rules only · threshold=0.9", "rules only · threshold=0.1"]
    assert [x["transcripts"] for x in c["configurations"]] == [[str(strict)], [str(loose)]]
    assert all(x["agreement"]["items"] == ITEMS for x in c["configurations"])
    (paired,) = c["paired"]
    assert paired["shared"] == ITEMS and paired["mcnemar"] is not None
    assert c["agreement"]["sessions"] == 2 * ITEMS and c["agreement"]["items"] == ITEMS
    commands = {d["command"].split()[2] for d in c["disagreements"]}
    assert commands <= {str(strict), str(loose)}
    capsys.readouterr()
    assert main([*CALIBRATE, str(strict), str(loose)]) == 0
    out = capsys.readouterr().out
    assert "per role configuration (2):" in out and "paired comparison, A = [1] rules only · threshold=0.9" in out


def test_calibrating_runs_of_two_protocols_is_refused(tmp_path: Path, capsys) -> None:
    a, _ = run_of(tmp_path, "qa_token_f1", name="a.jsonl")
    b, _ = run_of(tmp_path, "qa_lexical", name="b.jsonl")
    capsys.readouterr()
    assert main([*CALIBRATE, str(a), str(b)]) == 2
    assert "calibrate the runs of one protocol together" in capsys.readouterr().err


def test_each_disagreement_has_its_viewer_url(tmp_path: Path, capsys, monkeypatch) -> None:
    transcript, _ = run_of(tmp_path, "qa_lexical")
    pattern = calibrate_json(capsys, str(transcript), "--viewer-url", "http://h:1/x/{key}/{session}")
    first = pattern["disagreements"][0]
    assert first["url"] == f"http://h:1/x/t.jsonl/{first['session_id']}"
    assert calibrate_json(capsys, str(transcript))["disagreements"][0]["url"] is None  # no viewer running
    viewer = Viewer([tmp_path], port=0).start()
    try:
        monkeypatch.setattr(calibrate_cli, "VIEWER_PORT", viewer.address[1])
        found = calibrate_json(capsys, str(transcript))["disagreements"][0]
        assert found["url"] == f"{viewer.url}run/t.jsonl/session/{found['session_id']}"
        with urllib.request.urlopen(found["url"], timeout=30) as page:
            assert page.status == 200 and found["item_id"] in page.read().decode()
        capsys.readouterr()
        assert main([*CALIBRATE, str(transcript)]) == 0
        assert found["url"] in capsys.readouterr().out
    finally:
        viewer.stop()


def test_a_configuration_names_each_roles_model_and_settings() -> None:
    from voirdire.certificate import configuration_of
    from voirdire.transcript import RoleBinding, RunHeader

    header = RunHeader(run_id="r", protocol="p", roles={
        "examinee": RoleBinding(spec="openai:gpt-4o-mini"),
        "examiner": RoleBinding(spec="openai:gpt-4o", temperature=0.7, seed=3, structured=True),
    })  # fmt: skip
    assert configuration_of(header) == "examinee=openai:gpt-4o-mini; examiner=openai:gpt-4o t=0.7 seed=3 structured"
    assert configuration_of(RunHeader(run_id="r", protocol="p")) == "rules only"


def test_the_score_is_the_one_the_display_hints_name(tmp_path: Path, capsys) -> None:
    from voirdire.registry import registrations
    from voirdire.transcript import load

    transcript, _ = run_of(tmp_path, "qa_token_f1")
    header = load(transcript).header
    assert header is not None and header.display.views.verdict.score == "f1"
    assert registrations()["dcr"].protocol.display.views.verdict.score == "score"
    assert registrations()["qa_lexical"].protocol.display.views.verdict.score == ""
    # --score names another statistic: a boolean one is no score, so there is no AUROC
    assert calibrate_json(capsys, str(transcript), "--score", "judgment")["scores"] is None


def test_a_parameter_one_run_lacks_differs_and_one_all_share_does_not() -> None:
    from voirdire.certificate.calibration import Judged, _by_parameters

    def judged(sid: str, **params: str) -> Judged:
        return Judged(sid, sid, "accept", True, None, parameters=tuple(sorted(params.items())))

    same = [judged("a", seed="1", k="2"), judged("b", seed="1", k="3")]
    assert [s.configuration for s in _by_parameters(same)] == [" · k=2", " · k=3"]
    lacking = [judged("a", seed="1", extra="true"), judged("b", seed="1")]
    assert [s.configuration for s in _by_parameters(lacking)] == [" · extra=true", " · extra=default"]
    shared = [judged("a", seed="1"), judged("b", seed="1")]
    assert _by_parameters(shared) == shared


def test_a_score_named_by_the_caller_is_read_though_the_hints_name_another(tmp_path: Path) -> None:
    from voirdire.certificate import read_run

    transcript, _ = run_of(tmp_path, "qa_token_f1")
    text, f1 = transcript.read_text(), re.compile(r'"f1":(?=[-0-9])')  # the verdicts' f1, not the hints' name
    assert len(f1.findall(text)) == 120  # each session: its note and its verdict
    transcript.write_text(f1.sub('"sharpness":', text))  # a statistic the display hints do not name
    assert {s.score for s in read_run(transcript).sessions} == {None}
    named = read_run(transcript, score="sharpness").sessions
    assert len(named) == 60 and all(isinstance(s.score, float) for s in named)
