"""Intervals on a report's numbers (issue 29, item 1): each number its interval at the level ``--ci`` (0: none),
from the seed the report records; the point numbers unchanged; a number whose interval cannot be computed says
why; an item with several sessions is resampled as one item."""

from __future__ import annotations

import html
import importlib
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import f1_score, roc_auc_score
from statsmodels.stats.proportion import proportion_confint

from voirdire.certificate import DEFAULT_SEED
from voirdire.cli import main
from voirdire.protocols.cross_examination import scoring
from voirdire.registry.plugins import report_folds
from voirdire.reports import Context, ReportFold, report_file
from voirdire.reports.metrics import f1_of_pairs
from voirdire.transcript import RunHeader

qa = importlib.import_module("voirdire.protocols.qa_entailment.report")  # the package's ``report`` is the fold
FIXTURES = Path(__file__).parents[1] / "core" / "report_fixtures"
SHARED = {"sessions": 0, "verdicts": 0, "errors": 0, "parse_failures": {}, "replies": {}}
INTERVAL_FIELDS = {"ci", "ci_seed", "intervals"}


def fold_for(header: RunHeader | None) -> ReportFold[Any, Any]:
    return report_folds()(header)


def claims(n: int, *, seed: int = 3, sessions: int = 1, correct: float = 0.6) -> list[scoring.Scored]:
    """``n`` claims against gold, each examined ``sessions`` times: gold-correct with probability ``correct``,
    the examiner right 80% of the time on a seeded schedule."""
    rng = random.Random(seed)
    values = []
    for i in range(n):
        gold = rng.random() < correct
        for _ in range(sessions):
            accepted = gold if rng.random() < 0.8 else not gold
            row = {"id": f"c{i}", "claim": "x", "decision": "correct" if accepted else "incorrect",
                   "accepted": accepted, "gold": gold}  # fmt: skip
            values.append(scoring.Scored(row, ()))
    return values


@pytest.mark.parametrize(
    "name", ["ays", "cross_examination-parse_failures", "qa_lexical", "qa_entailment-aurocs-error"]
)
def test_intervals_leave_every_point_number_as_it_was(name: str) -> None:
    path = FIXTURES / f"{name}.jsonl"
    with_ci, _ = report_file(path, fold_for)
    without, _ = report_file(path, fold_for, ci=0)
    assert with_ci.model_dump(exclude=INTERVAL_FIELDS) == without.model_dump(exclude=INTERVAL_FIELDS)
    assert with_ci.ci == 0.95 and with_ci.ci_seed == DEFAULT_SEED and with_ci.intervals
    assert without.ci is None and without.ci_seed is None and not without.intervals
    assert without.interval_lines() == [] and "intervals (" not in without.text()
    lines = with_ci.interval_lines()
    assert lines[0] == f"intervals (95%, bootstrap seed {DEFAULT_SEED}):" and len(lines) == 1 + len(with_ci.intervals)
    assert with_ci.text().replace("\n" + "\n".join(lines), "") == without.text()
    assert "nan" not in with_ci.text()


def test_each_interval_is_of_the_number_printed_and_wilson_is_statsmodels() -> None:
    r = scoring._finish(claims(200), "cross_examination", SHARED, 0.95)
    iv = r.intervals
    assert r.reject_incorrect is not None and r.accept_correct is not None and r.claims_correct_pct is not None
    assert iv["claims correct"].estimate == pytest.approx(r.claims_correct_pct / 100, abs=1e-12)
    for label, prf in (("reject incorrect", r.reject_incorrect), ("accept correct", r.accept_correct)):
        for metric in ("precision", "recall", "F1"):
            assert iv[f"{label} · {metric}"].estimate == pytest.approx(getattr(prf, metric.lower()), abs=1e-12)
        precision = iv[f"{label} · precision"]
        low, high = proportion_confint(prf.tp, prf.predicted, alpha=0.05, method="wilson")
        assert (precision.method, precision.n) == ("Wilson", prf.predicted)
        assert (precision.low, precision.high) == pytest.approx((low, high), abs=1e-12)
        f1 = iv[f"{label} · F1"]
        assert f1.method == "bootstrap BCa over items" and f1.seed == DEFAULT_SEED and f1.n == 200
        assert f1.low is not None and f1.high is not None and f1.low < f1.estimate < f1.high  # type: ignore[operator]


def test_the_level_sets_the_width_and_the_seed_makes_it_reproducible() -> None:
    values = claims(150)
    wide = scoring._finish(values, "cross_examination", SHARED, 0.99).intervals
    narrow = scoring._finish(values, "cross_examination", SHARED, 0.8).intervals
    again = scoring._finish(values, "cross_examination", SHARED, 0.8).intervals
    assert again == narrow
    for key, interval in narrow.items():
        assert interval.level == 0.8 and wide[key].level == 0.99
        assert interval.width is not None and wide[key].width is not None and interval.width < wide[key].width, key


def test_sessions_of_one_item_are_resampled_as_one_item() -> None:
    """Three sessions of each of 100 claims: the intervals rest on 100 items, not on 300 sessions."""
    values = claims(100, sessions=3)
    r = scoring._finish(values, "cross_examination", SHARED, 0.95)
    for key in ("claims correct", "reject incorrect · F1", "accept correct · F1"):
        assert r.intervals[key].method == "bootstrap BCa over items" and r.intervals[key].n == 100, key
    accepting = len({v.row["id"] for v in values if v.row["accepted"]})  # precision: items with an acceptance
    assert r.intervals["accept correct · precision"].n == accepting < 100
    # The same 300 sessions taken as 300 items: Wilson over 300, narrower than the interval over 100 items.
    apart = [scoring.Scored({**v.row, "id": f"s{k}"}, ()) for k, v in enumerate(values)]
    independent = scoring._finish(apart, "cross_examination", SHARED, 0.95).intervals["claims correct"]
    assert (independent.method, independent.n) == ("Wilson", 300)
    assert independent.width is not None and r.intervals["claims correct"].width is not None
    assert independent.width < r.intervals["claims correct"].width


def test_what_cannot_be_computed_says_why_instead_of_nan() -> None:
    everything_correct = scoring._finish(claims(40, correct=1.0), "cross_examination", SHARED, 0.95)
    recall = everything_correct.intervals["reject incorrect · recall"]
    assert recall.low is None and recall.reason == "no gold positive: an empty denominator"
    one = scoring._finish(claims(1), "cross_examination", SHARED, 0.95).intervals
    assert one["accept correct · F1"].reason == "fewer than 2 items to resample"
    for r in (everything_correct, scoring._finish(claims(1), "cross_examination", SHARED, 0.95)):
        assert "nan" not in r.text() and "no interval: " in r.text()


def graded(i: int, system: str, human: bool, judged: bool, score: float | None) -> qa.Graded:
    judgment = qa.Judged(judgment=judged, cell=None, variants=(judged, judged), decision_variant=None,
                         ranking_scores={"C": score} if score is not None else {}, token_f1=0.5,
                         model_calls=1, failure_steps=())  # fmt: skip
    return qa.Graded(f"q{i}", system, human, judgment)


def test_qa_rows_and_aurocs_have_their_intervals() -> None:
    rng = random.Random(11)
    items = []
    for i in range(120):
        human = rng.random() < 0.5
        items.append(graded(i, "chatgpt" if i % 2 else "gpt4", human, human if rng.random() < 0.85 else not human,
                            round(rng.random() + 0.5 * human, 1)))  # ties: scores on a 0.1 grid
    r = qa._finish(items, "qa_entailment", SHARED, 0.95)
    rows = [*r.systems.values(), r.overall]
    assert {key.split(" · ", 1)[0] for key in r.intervals} == {*(row.name for row in rows), "AUROC"}
    for row in rows:
        assert row.scores is not None
        for metric in ("precision", "recall", "F1", "accuracy"):
            assert r.intervals[f"{row.name} · {metric}"].estimate == pytest.approx(
                getattr(row.scores, metric.lower()), abs=1e-12
            )
        for variant, scores in (row.by_decision or {}).items():  # Table 11
            assert scores is not None
            for metric in ("F1", "accuracy"):
                interval = r.intervals[f"{row.name} · {variant} · {metric}"]
                assert interval.estimate == pytest.approx(getattr(scores, metric.lower()), abs=1e-12)
    assert {f"{r.overall.name} · union · F1", f"{r.overall.name} · minus · accuracy"} <= set(r.intervals)
    assert r.aurocs is not None and r.aurocs["C"].auroc is not None
    auc = r.intervals["AUROC · C"]
    assert auc.estimate == pytest.approx(r.aurocs["C"].auroc, abs=1e-12) and auc.low is not None
    assert r.intervals["AUROC · token_f1"].reason is not None  # a constant score: no ranking, says why
    assert "AUROC · C" in r.text() and "nan" not in r.text()


def test_the_fast_statistics_are_scikit_learns() -> None:
    """F1 and AUROC are recomputed on every resample from counts and ranks; they are scikit-learn's numbers."""
    rng = random.Random(5)
    for _ in range(30):
        pairs = [(rng.random() < 0.4, rng.random() < 0.5) for _ in range(rng.randint(1, 40))]
        gold, predicted = [g for g, _ in pairs], [p for _, p in pairs]
        expected = f1_score(gold, predicted, zero_division=0)
        assert f1_of_pairs(pairs) == pytest.approx(expected, abs=1e-12)
        ranked = [(rng.random() < 0.5, float(rng.randint(0, 4))) for _ in range(rng.randint(2, 40))]
        if len({y for y, _ in ranked}) == 2:
            labels, scores = [y for y, _ in ranked], [x for _, x in ranked]
            assert qa._auroc(ranked) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


def test_report_ci_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "qa_lexical.jsonl")
    assert main(["report", path]) == 0
    assert f"intervals (95%, bootstrap seed {DEFAULT_SEED}):" in capsys.readouterr().out
    assert main(["report", path, "--ci", "0.9", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ci"] == 0.9 and data["ci_seed"] == DEFAULT_SEED
    accuracy = data["intervals"]["all · accuracy"]
    assert accuracy["level"] == 0.9 and accuracy["method"] == "Wilson" and accuracy["low"] < accuracy["high"]
    assert main(["report", path, "--ci", "0"]) == 0
    assert "intervals (" not in capsys.readouterr().out
    for bad in ("1.5", "-0.1", "1", "high"):
        with pytest.raises(SystemExit) as exit_:
            main(["report", path, "--ci", bad])
        assert exit_.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()[0]
        assert err.startswith("voirdire report: error: --ci: ") and bad in err


def ctx(level: float = 0.95) -> Context:
    return Context(headers=[], counts=SHARED, ci=level)


def test_oracle_checker_acceptances_means_and_spearman() -> None:
    oracle = importlib.import_module("voirdire.protocols.oracle_checker.report")
    rng = random.Random(2)
    values = []
    for i in range(60):
        n = rng.randint(1, 6)
        a_test = rng.random()
        row = {"id": f"s{i}", "accepted": a_test > 0.4, "a_test": a_test, "a_rate": min(1.0, a_test + rng.random() / 3),
               "con_o": rng.randint(1, 5), "con_rs": rng.randint(1, 5), "n_entities": n, "tested": []}  # fmt: skip
        values.append(oracle.Sentence(3, 3, "accepted" if row["accepted"] else "rejected", row, None))
    r = oracle._finish(values, ctx())
    iv = r.intervals
    assert iv["sentence acceptance"].estimate == pytest.approx(r.sentence_acceptance, abs=1e-12)
    assert iv["sentence acceptance"].method == "Wilson" and iv["sentence acceptance"].n == 60
    assert iv["entity acceptance"].estimate == pytest.approx(r.entity_acceptance, abs=1e-12)
    for key, value in r.means.items():
        assert iv[f"mean {oracle.LABELS[key]}"].estimate == pytest.approx(value, abs=1e-12)
    for name, rho in r.correlations.items():
        assert rho is not None and iv[f"Spearman {name}"].estimate == pytest.approx(rho, abs=1e-12)
        assert iv[f"Spearman {name}"].low is not None, name
    assert "entity acceptance" in r.text() and "%" in r.text().split("entity acceptance")[-1].splitlines()[0]
    assert oracle._finish(values, ctx(0)).intervals == {}


def test_oracle_paraphrase_shares() -> None:
    para = importlib.import_module("voirdire.protocols.oracle_checker.paraphrase_report")
    rows = [{"id": f"p{i}", "label": "yes" if i % 3 else "no", "decision": "x", "accepted": i % 4 != 0,
             "answer": "yes" if i % 2 else "no", "category": "AI"} for i in range(40)]  # fmt: skip
    r = para._finish(rows, ctx())
    assert r.agreement is not None and r.intervals["agreement with the labels"].estimate == pytest.approx(r.agreement)
    accepted, n = map(int, r.yes_accepted["oracle yes"].split("/"))
    yes = r.intervals["Yes-prover accepted · oracle yes"]
    assert (yes.estimate, yes.n, yes.method) == (pytest.approx(accepted / n), n, "Wilson")
    assert "No-checker accepted · AI" in r.intervals and not para._finish(rows, ctx(0)).intervals


def test_no_data_each_seed_is_resampled_over_its_datapoints() -> None:
    nd = importlib.import_module("voirdire.protocols.no_data.report")
    rng = random.Random(4)
    values = []
    for seed in (0, 1):
        for i in range(50):
            y = rng.randint(0, 1)
            label = y if rng.random() < 0.7 else 1 - y
            outcome = nd.Outcome(reference=y, label=label, revealed=y if rng.random() < 0.9 else 1 - y,
                                 success=rng.random() < 0.5, flipped=rng.random() < 0.2, known=None)  # fmt: skip
            values.append(nd.Datapoint(index=i, seed=seed, labelled=True, outcome=outcome))
    r = nd._finish(values, ctx())
    assert [run.seed for run in r.runs] == [0, 1]
    for run in r.runs:
        for metric, field in (("accuracy", "accuracy"), ("F1", "f1"), ("success rate", "success_rate"),
                              ("flip rate", "flip_rate"), ("revealed accuracy", "revealed_accuracy")):  # fmt: skip
            interval = r.intervals[f"seed {run.seed} · {metric}"]
            assert interval.estimate == pytest.approx(getattr(run, field), abs=1e-12) and interval.n == 50
    assert "seed 1 · flip rate" in r.text() and not nd._finish(values, ctx(0)).intervals


def dcr_values(summary: bool) -> list[Any]:
    dcr = importlib.import_module("voirdire.protocols.dcr.report")
    rng = random.Random(8)
    values = []
    for i in range(48):
        human = rng.randint(1, 5) / 5
        initial = min(1.0, max(0.0, human + rng.gauss(0, 0.2)))
        final = 1.0 if initial < 1 and rng.random() < 0.5 else initial
        doc = f"d{i // 6}" if summary else None
        judged = dcr.Judged(dataset="x", human=human, doc_id=doc, item_id=f"c{i}", verdict=True, metric=initial)
        values.append(dcr.Scored(row={"id": f"c{i}"}, verdict=True, initial=initial, scores=[initial, final],
                                 final=final, stopped="max_rounds", judged=judged))  # fmt: skip
    return values


@pytest.mark.parametrize("summary", [False, True])
def test_dcr_scores_and_correlations(summary: bool) -> None:
    dcr = importlib.import_module("voirdire.protocols.dcr.report")
    r = dcr._finish(dcr_values(summary), SHARED, ci=0.95)
    iv = r.intervals
    assert iv["mean original score"].estimate == pytest.approx(r.mean_initial_score, abs=1e-12)
    assert iv["mean final score"].estimate == pytest.approx(r.mean_final_score, abs=1e-12)
    assert r.all_rounds is not None and r.all_rounds.rate is not None
    rate = iv["Table 5 after all rounds · improvement rate"]
    assert (rate.estimate, rate.n) == (pytest.approx(r.all_rounds.rate), r.all_rounds.inconsistent)
    assert r.correlation is not None and r.correlation.kind == ("summary" if summary else "sample")
    suffix = " (mean over documents)" if summary else ""
    for name, value in r.correlation.values().items():
        interval = iv[f"correlation · {name}{suffix}"]
        assert interval.estimate == pytest.approx(value, abs=1e-12) and interval.low is not None, name
        assert interval.n == (r.correlation.documents if summary else 48)
    assert not dcr._finish(dcr_values(summary), SHARED).intervals  # score() and callers without a level: none


def test_the_viewer_report_page_and_export_html_show_the_intervals(tmp_path: Path) -> None:
    """Both render the report's text: its interval lines come with it, HTML-escaped as any text."""
    from starlette.testclient import TestClient

    from voirdire.reports.prices import Prices
    from voirdire.web.app import create_app
    from voirdire.web.catalog import Library
    from voirdire.web.export import export_file

    run = tmp_path / "runs" / "qa.jsonl"
    run.parent.mkdir()
    run.write_bytes((FIXTURES / "qa_lexical.jsonl").read_bytes())
    expected, _ = report_file(run, fold_for)
    line = next(x for x in expected.interval_lines() if "all · accuracy" in x).strip()
    client = TestClient(create_app(Library([run.parent]), prices=Prices({})), base_url="http://127.0.0.1")
    page = client.get("/run/qa.jsonl/report")
    assert page.status_code == 200
    shown = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.text)).split())
    assert f"intervals (95%, bootstrap seed {DEFAULT_SEED}):" in shown and " ".join(line.split()) in shown
    exported = export_file(run, tmp_path / "out" / "qa.html", prices=Prices({})).read_text(encoding="utf-8")
    shown = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", exported)).split())
    assert f"intervals (95%, bootstrap seed {DEFAULT_SEED}):" in shown and " ".join(line.split()) in shown


def test_a_run_commands_summary_takes_ci(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = Path(__file__).parents[1] / "protocols" / "qa_entailment" / "fixtures" / "NQ.json"
    run = ["run", "qa_lexical", "--data", str(data), "--system", "gpt4", "--skip-empty-gold", "--no-progress"]
    assert main([*run, "--out", str(tmp_path / "a.jsonl"), "--ci", "0.9"]) == 0
    shown = capsys.readouterr().out
    assert f"intervals (90%, bootstrap seed {DEFAULT_SEED}):" in shown and "GPT-4 · accuracy" in shown
    assert main([*run, "--out", str(tmp_path / "b.jsonl"), "--ci", "0"]) == 0
    assert "intervals (" not in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main([*run, "--out", str(tmp_path / "c.jsonl"), "--ci", "95"])
    assert exit_.value.code == 2 and "--ci: 95 is not a level" in capsys.readouterr().err
    assert not (tmp_path / "c.jsonl").exists()


def test_the_qa_commands_json_summary_carries_the_intervals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = Path(__file__).parents[1] / "protocols" / "qa_entailment" / "fixtures" / "NQ.json"
    args = ["--data", str(data), "--system", "gpt4", "--skip-empty-gold", "--no-progress", "--json"]
    assert main(["run", "qa_lexical", *args, "--out", str(tmp_path / "a.jsonl"), "--ci", "0.8"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["ci"] == 0.8 and payload["ci_seed"] == DEFAULT_SEED
    assert payload["intervals"]["GPT-4 · accuracy"]["level"] == 0.8


def test_table_8_means_and_inconclusive_share_resample_claims() -> None:
    """Under Majority a claim has several examinations: they are resampled together, as one claim."""
    rng = random.Random(6)
    values = []
    for value in claims(80):
        exams = []
        for _ in range(3):
            per_iteration = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 3)))
            exams.append((sum(per_iteration), per_iteration, len(per_iteration) - 1, rng.random() < 0.15))
        values.append(scoring.Scored(value.row, tuple(exams)))
    r = scoring._finish(values, "cross_examination", SHARED, 0.95)
    e = r.examination
    assert e is not None and e.examinations == 240
    for key, stat in (("# of questions", e.questions), ("# of follow-up questions per iteration",
                      e.followup_questions_per_iteration), ("# of follow-up iterations", e.followup_iterations),
                      ("# of questions per iteration", e.questions_per_iteration)):  # fmt: skip
        interval = r.intervals[f"Table 8 · {key}"]
        assert interval.estimate == pytest.approx(stat.mean, abs=1e-12) and interval.n == 80 and interval.low
    inconclusive = r.intervals["Table 8 · inconclusive"]
    assert inconclusive.estimate == pytest.approx(e.inconclusive_pct / 100, abs=1e-12)
    assert inconclusive.method == "bootstrap BCa over items" and inconclusive.n == 80
    none = [scoring.Scored(v.row, ((2, (2,), 0, False),)) for v in claims(5)]
    followups = scoring._finish(none, "cross_examination", SHARED, 0.95).intervals[
        "Table 8 · # of follow-up questions per iteration"
    ]
    assert followups.reason == "no follow-up iteration in any examination" and followups.estimate == 0.0


def test_the_nodata_commands_summary_has_the_intervals(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = shared_data / "no_data_algorithm"
    monkeypatch.setenv("VOIRDIRE_NO_DATA_DIR", str(root))
    small = tmp_path / "other_small.json"
    small.write_text(json.dumps(json.loads((root / "other_data_test_with_xor.json").read_text())[:25]))
    run = ["nodata", "--data", str(small), "--rubric", "oop", "--seeds", "2", "--no-progress"]
    assert main([*run, "--out", str(tmp_path / "a.jsonl"), "--ci", "0.9"]) == 0
    text = capsys.readouterr().out
    assert "intervals (90%" in text and "seed 1 · flip rate" in text
    assert main([*run, "--out", str(tmp_path / "a.jsonl"), "--ci", "0.9", "--json"]) == 0
    fields = json.loads(capsys.readouterr().out)
    accuracy = fields["intervals"]["seed 0 · accuracy"]
    assert fields["ci"] == 0.9 and accuracy["n"] == 25 and accuracy["estimate"] == fields["runs"][0]["accuracy"]
