"""``voirdire calibrate``: a qa_lexical run against its gold, a labels file, the sample it draws, and bad labels."""

from __future__ import annotations

import json
import random
import shlex
from pathlib import Path
from typing import Any

import pytest

from voirdire.certificate import draw_sample, ppi_mean
from voirdire.cli.main import main

ITEMS = 60
CALIBRATE = ["calibrate", "--resamples", "400"]  # fewer than the default 2,000: the tests check behaviour


def make_data(path: Path) -> dict[str, tuple[bool, bool]]:
    """60 QA items whose lexical verdict and human judgment are known: item id -> (verdict, human)."""
    rng = random.Random(0)
    truth = {}
    with path.open("w") as f:
        for i in range(ITEMS):
            human = rng.random() < 0.6
            hit = rng.random() < (0.85 if human else 0.1)
            answer = f"it is answer{i}" if hit else f"maybe thing{i}"
            row = {"id": f"q{i}", "question": f"question {i}?", "gold_answers": [f"answer{i}"],
                   "system_answer": answer, "human_judgment": human}  # fmt: skip
            f.write(json.dumps(row) + "\n")
            truth[f"q{i}"] = (hit, human)
    return truth


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, dict[str, tuple[bool, bool]]]:
    truth = make_data(tmp_path / "qa.jsonl")
    out = tmp_path / "t.jsonl"
    assert main(["run", "qa_lexical", "--data", str(tmp_path / "qa.jsonl"), "--out", str(out), "--no-progress"]) == 0
    return out, truth


def calibrate_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main([*CALIBRATE, *args, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_calibrate_against_the_protocols_gold(run, capsys) -> None:
    transcript, truth = run
    tp = sum(v and h for v, h in truth.values())
    fp = sum(v and not h for v, h in truth.values())
    fn = sum(h and not v for v, h in truth.values())
    tn = ITEMS - tp - fp - fn
    c = calibrate_json(capsys, str(transcript))
    a = c["agreement"]
    assert a["confusion"] == {"tp": tp, "fp": fp, "fn": fn, "tn": tn}
    assert a["accuracy"]["estimate"] == pytest.approx((tp + tn) / ITEMS)
    assert a["tpr"]["estimate"] == pytest.approx(tp / (tp + fn))
    assert a["tnr"]["estimate"] == pytest.approx(tn / (tn + fp))
    for name in ("accuracy", "tpr", "tnr", "kappa", "alpha"):
        assert a[name]["low"] < a[name]["estimate"] < a[name]["high"], name
    assert a["kappa"]["seed"] == c["seed"] and a["kappa"]["resamples"] == 400
    assert {d["item_id"] for d in c["disagreements"]} == {i for i, (v, h) in truth.items() if v != h}
    assert c["people"] is None  # one source of labels: no human–human agreement

    assert main([*CALIBRATE, str(transcript)]) == 0
    out = capsys.readouterr().out
    for word in ("accuracy", "TPR", "TNR", "Cohen's κ", "Krippendorff's α", "Wilson", "bootstrap BCa"):
        assert word in out
    assert "nan" not in out
    # the first disagreement opens with the command printed under it
    command = next(line.strip() for line in out.splitlines() if line.strip().startswith("voirdire show"))
    first = c["disagreements"][0]
    assert command == f"voirdire show {shlex.quote(str(transcript))} --session {first['session_id']}"
    assert main(shlex.split(command)[1:]) == 0
    shown = capsys.readouterr().out
    assert f"question {first['item_id'][1:]}?" in shown


def test_sample_with_gold_hides_the_rest_and_gives_ppi(run, capsys) -> None:
    transcript, truth = run
    c = calibrate_json(capsys, str(transcript), "--sample", "20", "--seed", "3")
    drawn = draw_sample(list(truth), 20, 3)
    assert c["agreement"]["items"] == 20
    est = c["estimate"]
    assert est["labelled"] == 20 and est["unlabelled"] == ITEMS - 20
    rest = [float(truth[i][0]) for i in truth if i not in drawn]
    expected = ppi_mean([float(truth[i][1]) for i in drawn], [float(truth[i][0]) for i in drawn], rest)
    assert est["ppi"]["estimate"] == pytest.approx(expected.ppi.estimate)
    assert est["ppi"]["low"] == pytest.approx(expected.ppi.low)
    assert est["naive"] == pytest.approx(sum(v for v, _ in truth.values()) / ITEMS)
    assert "drawn by --sample 20 --seed 3" in c["assumptions"][0]


def write_labels(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sample_written_labelled_and_read_back(run, tmp_path: Path, capsys) -> None:
    transcript, truth = run
    to_label = tmp_path / "to_label.jsonl"
    assert main([*CALIBRATE, str(transcript), "--sample", "25", "--seed", "7", "-o", str(to_label)]) == 0
    assert "--labels" in capsys.readouterr().out
    lines = [json.loads(x) for x in to_label.read_text().splitlines()]
    assert [x["item_id"] for x in lines] == draw_sample(list(truth), 25, 7)
    assert all(x["label"] is None and "human_judgment" not in x["item"] for x in lines)
    assert set(lines[0]["item"]) == {"question", "system", "system_answer"}
    # a person labels all but 2 of them (the protocol's own words, or true/false)
    for x in lines[:-2]:
        x["label"] = "correct" if truth[x["item_id"]][1] else False
    write_labels(to_label, lines)
    c = calibrate_json(capsys, str(transcript), "--labels", str(to_label), "--sample", "25", "--seed", "7")
    assert c["agreement"]["items"] == 23 and c["estimate"]["labelled"] == 23
    assert "2 of the 25 drawn items have no label" in c["assumptions"][0]
    # the same labels under another seed were not drawn that way
    code = main([*CALIBRATE, str(transcript), "--labels", str(to_label), "--sample", "25", "--seed", "8"])
    err = capsys.readouterr().err
    assert code == 2 and f"{to_label}:" in err and "is not in the sample drawn by --sample 25 --seed 8" in err


def test_labels_not_drawn_by_voirdire_are_refused_unless_declared_random(run, tmp_path: Path, capsys) -> None:
    transcript, truth = run
    first_30 = list(truth.items())[:30]
    chosen = write_labels(tmp_path / "chosen.jsonl", [{"item_id": i, "label": h} for i, (_, h) in first_30])
    code = main([*CALIBRATE, str(transcript), "--labels", str(chosen)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "30 of the run's 60 items are labelled" in err and "--labels-are-random" in err
    c = calibrate_json(capsys, str(transcript), "--labels", str(chosen), "--labels-are-random")
    assert c["estimate"]["labelled"] == 30 and "declared by --labels-are-random" in c["assumptions"][0]
    # every item labelled (a census) needs no sample
    everything = tmp_path / "all.csv"
    rows = "".join(f"{i},{str(h).lower()}\n" for i, (_, h) in truth.items())
    everything.write_text("\ufeffitem_id,label\n" + rows, encoding="utf-8")  # as a spreadsheet saves it, with a BOM
    c = calibrate_json(capsys, str(transcript), "--labels", str(everything))
    assert c["agreement"]["items"] == ITEMS and c["assumptions"] == []


def test_two_annotators_give_human_agreement(run, tmp_path: Path, capsys) -> None:
    transcript, truth = run
    rows = []
    for n, (i, (_, h)) in enumerate(truth.items()):
        rows.append({"item_id": i, "label": h, "annotator": "ann"})
        rows.append({"item_id": i, "label": h if n % 6 else not h, "annotator": "bob"})
    labels = write_labels(tmp_path / "two.jsonl", rows)
    c = calibrate_json(capsys, str(transcript), "--labels", str(labels))
    people = c["people"]
    assert people["annotators"] == ["ann", "bob"] and people["items"] == ITEMS
    assert 0.4 < people["alpha"]["estimate"] < 0.9
    assert people["kappas"][0][:2] == ["ann", "bob"]
    assert len(c["ties"]) == 10 and not any("tie" in x for x in c["left_out"])  # counted, listed, not dropped
    assert c["agreement"]["items"] == ITEMS - 10 and c["small"] is None
    assert main([*CALIBRATE, str(transcript), "--labels", str(labels)]) == 0
    assert "people against each other: 2 annotators" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("rows", "line", "message"),
    [
        ([{"item_id": "q1", "label": True}, {"item_id": "nope", "label": True}], 2, "unknown item id 'nope'"),
        ([{"item_id": "q1", "label": "maybe"}], 1, "label 'maybe' is not one of this run's verdicts"),
        ([{"item_id": "q1", "label": 1, "annotator": "ann"}, {"item_id": "q2", "label": 0},
          {"item_id": "q1", "label": 0, "annotator": "ann"}], 3,
         "item 'q1' labelled again by annotator 'ann' (first on line 1)"),
        ([{"item_id": "q1", "label": True, "confidence": 3}], 1, "unknown field 'confidence'"),
        ([{"label": True}], 1, "no item_id"),
    ],
)  # fmt: skip
def test_bad_labels_are_one_line_errors_and_nothing_is_written(
    run, tmp_path: Path, capsys, rows: list[dict[str, Any]], line: int, message: str
) -> None:
    transcript, _ = run
    labels = write_labels(tmp_path / "bad.jsonl", rows)
    before = sorted(tmp_path.iterdir())
    code = main([*CALIBRATE, str(transcript), "--labels", str(labels), "--labels-are-random", "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.startswith(f"voirdire: error: {labels}:{line}: {message}")
    assert len(captured.err.strip().splitlines()) == 1
    assert sorted(tmp_path.iterdir()) == before


def test_bad_csv_and_options(run, tmp_path: Path, capsys) -> None:
    transcript, _ = run
    bad = tmp_path / "bad.csv"
    bad.write_text("item,verdict\nq1,true\n")
    assert main([*CALIBRATE, str(transcript), "--labels", str(bad)]) == 2
    assert f"{bad}:1: the header needs item_id and label" in capsys.readouterr().err
    assert main([*CALIBRATE, str(transcript), "--sample", "5"]) == 2
    assert "--sample and --seed go together" in capsys.readouterr().err
    assert main([*CALIBRATE, str(transcript), "-o", str(tmp_path / "x.jsonl")]) == 2
    assert not (tmp_path / "x.jsonl").exists()
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main([*CALIBRATE, str(transcript), "--ci", "1.5"])
    assert exc.value.code == 2 and "--ci: 1.5 is not a level" in capsys.readouterr().err
    assert main([*CALIBRATE, str(tmp_path / "missing.jsonl")]) == 2
    assert "no such transcript" in capsys.readouterr().err


def test_run_without_gold_asks_for_labels(tmp_path: Path, capsys) -> None:
    data = tmp_path / "qa.jsonl"
    rows = [{"id": "a", "question": "q?", "gold_answers": ["x"], "system_answer": "x"},
            {"id": "b", "question": "r?", "gold_answers": ["y"], "system_answer": "z"}]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "t.jsonl"
    assert main(["run", "qa_lexical", "--data", str(data), "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert main([*CALIBRATE, str(out)]) == 2
    assert "record no gold label" in capsys.readouterr().err


def test_gold_from_the_reports_rows(capsys) -> None:
    """A protocol whose verdicts do not state gold agreement (ays) gives it in its report's rows."""
    fixture = Path(__file__).resolve().parent.parent / "core" / "report_fixtures" / "ays.jsonl"
    c = calibrate_json(capsys, str(fixture))
    assert c["labels"] == "the protocol's gold (the report's gold column)"
    assert c["agreement"]["confusion"] == {"tp": 2, "fp": 1, "fn": 0, "tn": 0}
    assert [d["item_id"] for d in c["disagreements"]] == ["b"]
    census = c["estimate"]["classical"]
    assert census["high"] == 1.0 and census["method"].endswith("cut to [0.0, 1.0]")


def test_sessions_without_a_verdict_are_left_out_and_counted(tmp_path: Path, capsys) -> None:
    fixture = Path(__file__).resolve().parent.parent / "core" / "report_fixtures" / "cross_examination-errors.jsonl"
    rows = [{"item_id": "c1", "label": "correct"}, {"item_id": "c2", "label": True}]
    labels = write_labels(tmp_path / "l.jsonl", rows)
    c = calibrate_json(capsys, str(fixture), "--labels", str(labels))
    assert c["left_out"] == ["1 session without an accept/reject verdict"]
    assert c["agreement"]["confusion"] == {"tp": 1, "fp": 0, "fn": 1, "tn": 0}
    # the errored item has no verdict to compare, yet it is an item of the run: labelling it is not an error
    both = write_labels(tmp_path / "m.jsonl", [{"item_id": "c3", "label": False}, {"item_id": "c1", "label": True}])
    assert main([*CALIBRATE, str(fixture), "--labels", str(both), "--labels-are-random"]) == 0


def test_a_page_lists_the_first_disagreements_and_counts_the_rest(run) -> None:
    from voirdire.certificate import calibrate, read_run

    transcript, truth = run
    every = sorted(i for i, (v, h) in truth.items() if v != h)
    judged = read_run(transcript)
    gold = judged.gold_labels()
    whole = calibrate(judged, gold, source="gold", random_labels=None, resamples=50)
    page = calibrate(judged, gold, source="gold", random_labels=None, resamples=50, listed=3)
    assert sorted(d.item_id for d in whole.disagreements) == every and whole.more_disagreements == 0
    assert page.disagreements == whole.disagreements[:3]  # the same first ones, in the same order
    assert page.more_disagreements == len(every) - 3 and page.disagreement_count == len(every)
    assert page.agreement == whole.agreement  # the numbers are the whole run's either way
    lines = page.disagreement_lines(limit=2)
    assert lines[0] == f"disagreements ({len(every)}):" and lines[-1] == f"  … {len(every) - 2} more (--json for all)"
