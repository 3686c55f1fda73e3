"""The certificate as a section of ``voirdire report`` (text and ``--json``), as the viewer's page
``/run/<file>/certificate`` (linked from the report page) and in a whole-run ``export-html`` page: agreement with
gold or with the labels sidecar's human labels (and PPI from a review queue's sample), AUROC and the reliability
diagram of a score, stability over repeats, the verdicts' guarantees, and the charts drawn for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.certificate.test_calibrate import ITEMS, make_data
from tests.certificate.test_guarantee_display import examine
from voirdire.certificate import certificate_of, draw_sample
from voirdire.cli.main import main
from voirdire.transcript import HumanLabel, LabelSample, append_label, load
from voirdire.web.app import create_app
from voirdire.web.catalog import Library
from voirdire.web.export import export_file


def qa_run(tmp_path: Path, protocol: str = "qa_lexical", *extra: str) -> tuple[Path, dict[str, tuple[bool, bool]]]:
    truth = make_data(tmp_path / "qa.jsonl")
    out = tmp_path / "t.jsonl"
    args = ["run", protocol, "--data", str(tmp_path / "qa.jsonl"), "--out", str(out), "--no-progress", *extra]
    assert main(args) == 0
    return out, truth


def report_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["report", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_report_has_the_certificate_section(tmp_path: Path, capsys) -> None:
    transcript, truth = qa_run(tmp_path)
    tp = sum(v and h for v, h in truth.values())
    tn = sum(not v and not h for v, h in truth.values())
    capsys.readouterr()
    assert main(["report", str(transcript)]) == 0
    out = capsys.readouterr().out
    section = out[out.index("certificate (95%):"):]
    for text in ("against the dataset's human judgments:", "Cohen's κ", "Krippendorff's α", "disagreements (",
                 "stability: not measured", "guarantees: none recorded"):  # fmt: skip
        assert text in section, text
    cert = report_json(capsys, str(transcript))["certificate"]
    a = cert["calibration"]["agreement"]
    assert a["confusion"]["tp"] == tp and a["confusion"]["tn"] == tn
    assert a["accuracy"]["estimate"] == pytest.approx((tp + tn) / ITEMS)
    names = {i["name"] for i in cert["intervals"]}
    assert "system · F1" in names and cert["level"] == 0.95
    # --ci 0: the same section, no interval anywhere
    off = report_json(capsys, str(transcript), "--ci", "0")["certificate"]
    assert off["level"] is None and off["intervals"] == []
    assert off["calibration"]["agreement"]["kappa"]["low"] is None


def test_a_run_without_gold_says_how_to_get_labels(tmp_path: Path, capsys) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text(json.dumps({"id": "a", "question": "q?", "gold_answers": ["x"], "system_answer": "x"}) + "\n")
    out = tmp_path / "t.jsonl"
    assert main(["run", "qa_lexical", "--data", str(data), "--out", str(out), "--no-progress"]) == 0
    cert = report_json(capsys, str(out))["certificate"]
    assert cert["calibration"] is None and "--sample 200 --seed 1 -o to_label.jsonl" in cert["no_calibration"]


def test_the_labels_sidecar_of_a_review_queue_gives_ppi(tmp_path: Path, capsys) -> None:
    transcript, truth = qa_run(tmp_path)
    sessions = load(transcript).sessions
    drawn = draw_sample(sorted(truth), 20, 5)
    for item in drawn[:18]:
        (sid,) = [s for s, r in sessions.items() if r.item_id == item]
        append_label(transcript, HumanLabel(item_id=item, session_id=sid, reading="agree", annotator="ann",
                                            label="correct" if truth[item][1] else "incorrect",
                                            sample=LabelSample(size=20, seed=5)))  # fmt: skip
    cert = report_json(capsys, str(transcript))["certificate"]
    c = cert["calibration"]
    assert c["labels"].startswith(f"{transcript}.labels.jsonl (18 labels of 18 items)")
    assert c["estimate"]["labelled"] == 18 and c["estimate"]["unlabelled"] == ITEMS - 18
    assert c["estimate"]["ppi"]["low"] is not None
    assert "drawn by --sample 20 --seed 5" in c["assumptions"][0]
    assert "18 of the 20 drawn items labelled" in c["assumptions"][1] and "n = 18 < 30" in c["small"]
    # the labels join the gold's section, they never replace it
    assert [(x["kind"], x["name"]) for x in cert["sources"]] == [
        ("gold", "the dataset's human judgments"), ("people", "people's labels")]
    assert cert["sources"][0]["calibration"]["agreement"]["items"] == ITEMS
    # a label outside the queue's sample: the sidecar is not used, and the certificate says why
    extra = next(i for i in truth if i not in drawn)
    (sid,) = [s for s, r in sessions.items() if r.item_id == extra]
    label = HumanLabel(item_id=extra, session_id=sid, reading="agree", annotator="bob", label="correct")
    append_label(transcript, label)
    cert = report_json(capsys, str(transcript))["certificate"]
    assert cert["calibration"]["labels"].startswith("the dataset's human judgments")
    assert [x["kind"] for x in cert["sources"]] == ["gold"]
    assert "the labels sidecar was not used" in cert["notes"][0]


def test_a_score_gets_auroc_and_a_reliability_diagram(tmp_path: Path, capsys) -> None:
    transcript, _ = qa_run(tmp_path, "qa_token_f1")
    cert = certificate_of(transcript)
    assert cert.calibration is not None and cert.calibration.scores is not None
    names = [c.name for c in cert.charts()]
    assert names == ["certificate-confusion", "certificate-intervals", "certificate-reliability"]
    reliability = cert.charts()[2]
    assert reliability.lines[0].y == tuple(b.accepted for b in cert.calibration.scores.bins)  # type: ignore[union-attr]
    pytest.importorskip("matplotlib")
    assert main(["report", str(transcript), "--plot", str(tmp_path / "charts")]) == 0  # beside the report's charts
    drawn = {p.name for p in (tmp_path / "charts").iterdir()}
    assert {"qa-grading-per-system.svg", "certificate-confusion.svg", "certificate-reliability.svg"} <= drawn


def test_repeats_give_the_stability_section_and_its_chart(tmp_path: Path, capsys) -> None:
    transcript, _ = qa_run(tmp_path, "qa_lexical", "--repeats", "2")
    cert = report_json(capsys, str(transcript))["certificate"]
    assert cert["stability"]["repeats"] == 2 and cert["stability"]["flip_rate"] == 0.0
    assert cert["calibration"]["agreement"]["items"] == ITEMS  # an item's repeats count once
    assert "certificate-stability" in [c.name for c in certificate_of(transcript, _report(transcript)).charts()]


def _report(path: Path) -> Any:
    from voirdire.registry import registrations
    from voirdire.reports import report_file

    return report_file(path, registrations()["qa_lexical"].fold)[0]


def test_the_guarantees_are_counted(tmp_path: Path, capsys) -> None:
    out = tmp_path / "majority.jsonl"
    assert main(examine(tmp_path, "--out", str(out))) == 0
    cert = report_json(capsys, str(out))["certificate"]
    (g,) = cert["guarantees"]
    assert g["verdicts"] == 1 == cert["verdicts"] and g["kind"] == "vote_margin" and "2–1" in g["statement"]


def test_the_viewer_page_and_export(tmp_path: Path) -> None:
    transcript, truth = qa_run(tmp_path)
    client = TestClient(create_app(Library([tmp_path], persist=False)), base_url="http://127.0.0.1")
    report = client.get("/run/t.jsonl/report")
    assert report.status_code == 200 and 'href="/run/t.jsonl/certificate"' in report.text
    page = client.get("/run/t.jsonl/certificate")
    assert page.status_code == 200
    judgments = "the dataset&#39;s human judgments"
    for text in (f"Agreement with {judgments}", "Krippendorff", "Intervals on the report", "Stability", "Guarantees",
                 'src="data:image/svg+xml;base64,', f'alt="Verdicts against {judgments} (60 sessions)"'):  # fmt: skip
        assert text in page.text, text
    wrong = next(i for i, (v, h) in truth.items() if v != h)
    assert f'href="/run/t.jsonl/session/{wrong}"' in page.text
    assert client.get(f"/run/t.jsonl/session/{wrong}").status_code == 200
    html = export_file(transcript, tmp_path / "page.html").read_text()
    assert 'id="certificate-section"' in html and "Krippendorff" in html and 'href="#s' in html


def test_an_interval_that_does_not_contain_its_estimate_is_drawn() -> None:
    """A bootstrap interval (BCa, percentile) need not contain its estimate; the interval plot draws it as it is."""
    pytest.importorskip("matplotlib")
    from voirdire.analysis import render
    from voirdire.reports import IntervalChart

    chart = IntervalChart("x", "Intervals", "estimate", ("F1", "κ"), (0.0, 0.5), (0.1, 0.2), (0.4, 0.7))
    svg = render(chart, "svg").decode()
    assert "Intervals" in svg and "F1" in svg and "0 [0.1, 0.4]" in svg


def test_report_json_with_the_certificate_is_strict_json(capsys) -> None:
    """An undefined number is null, as the report's own JSON writes it, never a bare NaN."""
    fixtures = Path(__file__).resolve().parent.parent / "core" / "report_fixtures"

    def refuse(constant: str) -> None:
        raise AssertionError(f"bare {constant} in the JSON")

    for name in ("dcr-correlation", "qa_entailment-aurocs-error", "ays"):
        capsys.readouterr()
        assert main(["report", str(fixtures / f"{name}.jsonl"), "--json"]) == 0
        assert "certificate" in json.loads(capsys.readouterr().out, parse_constant=refuse)
