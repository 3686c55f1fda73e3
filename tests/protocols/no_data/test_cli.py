"""``voirdire nodata`` end to end: JSON output, seeds, resume, agreement with the in-memory batch runs, the
transcript viewer, ``voirdire run no_data`` as the same command, and clear errors for bad data and bad options."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from voirdire.cli import main
from voirdire.protocols.no_data.data import resolve_dataset
from voirdire.protocols.no_data.experiments import ExperimentConfig, run_experiment
from voirdire.protocols.no_data.theory import theorem1_accuracy_bound
from voirdire.transcript import load


@pytest.fixture
def root(shared_data: Path, monkeypatch) -> Path:
    path = shared_data / "no_data_algorithm"
    monkeypatch.setenv("VOIRDIRE_NO_DATA_DIR", str(path))
    return path


@pytest.fixture
def small(root: Path, tmp_path: Path) -> Path:
    """The first 25 rows of the OOP test split as a PATH (its rubric must be given: ``--rubric oop``)."""
    rows = json.loads((root / "other_data_test_with_xor.json").read_text())[:25]
    path = tmp_path / "other_small.json"
    path.write_text(json.dumps(rows))
    return path


def nodata(capsys, *args: str) -> tuple[int, dict]:
    code = main(["nodata", *args, "--json"])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 else {"stderr": captured.err})


def test_cli_json_seeds_and_resume(small: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "run.jsonl"
    args = [
        "--data",
        str(small),
        "--rubric",
        "oop",
        "--generator",
        "lie-p",
        "--rounds",
        "3",
        "--phi",
        "0.6",
        "--seed",
        "2",
    ]
    code, first = nodata(capsys, *args, "--seeds", "2", "--out", str(out))
    assert code == 0 and first["rubric"] == "oop" and first["datapoints"] == 25 and first["seeds"] == [2, 3]
    assert first["sessions"] == 50 and first["skipped"] == 0 and not first["errors"]
    runs = first["runs"]
    assert [r["seed"] for r in runs] == [2, 3] and all(r["n"] == 25 for r in runs)
    for r in runs:
        assert {"accuracy", "f1", "success_rate", "flip_rate", "known_accuracy", "theory"} <= r.keys()
        assert r["theory"]["lemma1_undetected"] == pytest.approx(1 / 64)
        alpha = r["theory"]["alpha"]
        assert alpha == r["revealed_accuracy"]
        assert r["theory"]["theorem1_bound"] == pytest.approx(theorem1_accuracy_bound(alpha, 0.6, 3))
    agg = first["aggregate"]
    assert agg["accuracy"]["n"] == 2
    assert agg["accuracy"]["mean"] == pytest.approx((runs[0]["accuracy"] + runs[1]["accuracy"]) / 2)
    assert runs[0]["accuracy"] != runs[1]["accuracy"] or runs[0]["flip_rate"] != runs[1]["flip_rate"]
    # Same command: every session is resumed from the transcript, the numbers are the same.
    code, again = nodata(capsys, *args, "--seeds", "2", "--out", str(out))
    assert code == 0 and again["skipped"] == 50 and again["runs"] == runs
    # A third seed on the same transcript runs only the new sessions.
    code, more = nodata(capsys, *args, "--seeds", "3", "--out", str(out))
    assert code == 0 and more["skipped"] == 50 and more["runs"][:2] == runs and more["aggregate"]["f1"]["n"] == 3
    t = load(out)
    assert len(t.sessions) == 75 and all(s.verdict is not None for s in t.sessions.values())
    assert t.header is not None and t.header.seed == 2 and "seed" not in t.header.parameters
    assert {s.item["seed"] for s in t.sessions.values()} == {2, 3, 4}
    # Other parameters on the same transcript are refused, not mixed.
    code, refused = nodata(capsys, *args[:-2], "--seed", "2", "--phi", "0.5", "--out", str(out))
    assert code == 2 and "--phi: 0.6 in " in refused["stderr"] and "0.5 now; use --out or --fresh" in refused["stderr"]


@pytest.mark.parametrize(("data", "generator"), [("oop", "oracle"), ("ip", "lie-sigma")])
def test_cli_agrees_with_the_direct_path(root: Path, tmp_path: Path, capsys, data, generator) -> None:
    args = ["--data", data, "--generator", generator, "--label-noise", "0.1", "--phi", "0.6", "--seed", "5"]
    code, payload = nodata(capsys, *args, "--limit", "90", "--out", str(tmp_path / "c.jsonl"))
    assert code == 0
    (ours,) = payload["runs"]
    full = resolve_dataset(data, root=root)
    subset = full.model_copy(update={"rows": full.rows[:90]})
    config = ExperimentConfig(data=data, generator=generator, label_noise=0.1, phi=0.6, seed=5)
    direct = asyncio.run(run_experiment(config, dataset=subset, root=root))
    for metric in ("accuracy", "f1", "success_rate", "flip_rate", "revealed_accuracy", "known_accuracy", "known_f1"):
        assert ours[metric] == getattr(direct, metric), metric
    assert ours["success_rate"] < 1.0 and ours["flip_rate"] > 0.0


def test_text_output_and_show(small: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "t.jsonl"
    assert (
        main(["nodata", "--data", str(small), "--rubric", "oop", "--seeds", "2", "--out", str(out), "--no-progress"])
        == 0
    )
    text = capsys.readouterr().out
    assert "other_small (25 datapoints, verifier rubric oop)" in text
    assert "mean ± sd over 2 seeds: accuracy" in text and "Lemma 1: a lie survives r = 3 rounds" in text
    assert "1.56%" in text and "lower bound on accuracy" in text
    assert main(["show", str(out), "--session", "seed0-03"]) == 0
    chat = capsys.readouterr().out
    assert "Evaluator → Verifier:" in chat and "Verifier:" in chat and "· Algorithm 1 decision · EV protocol" in chat
    assert "── challenge · round 1 ──" in chat


def test_default_out_depends_on_the_parameters(small: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, a = nodata(capsys, "--data", str(small), "--rubric", "oop", "--limit", "3")
    code_b, b = nodata(capsys, "--data", str(small), "--rubric", "oop", "--limit", "3", "--phi", "0.1")
    assert code == code_b == 0 and a["transcript"] != b["transcript"]
    assert a["transcript"].startswith("transcripts/no_data-other_small-decision-tree-oracle-")
    code, again = nodata(capsys, "--data", str(small), "--rubric", "oop", "--limit", "3")
    assert code == 0 and again["transcript"] == a["transcript"] and again["skipped"] == 3


def test_malformed_data_file_names_file_and_row(root: Path, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([["010101010101", "1"], ["010101010101", "0"], ["0101x1010101", "1"]]))
    assert main(["nodata", "--data", str(bad), "--rubric", "ip", "--out", str(tmp_path / "b.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}[2]: x must be a non-empty string of 0s and 1s" in err
    bad.write_text('[["0101", "1"],\n ["01", ')
    assert main(["nodata", "--data", str(bad), "--rubric", "ip", "--out", str(tmp_path / "b.jsonl")]) == 2
    assert f"{bad}:2: invalid JSON" in capsys.readouterr().err
    assert main(["nodata", "--data", str(tmp_path / "missing.json"), "--rubric", "ip"]) == 2
    assert "missing.json: data file not found" in capsys.readouterr().err
    assert not (tmp_path / "b.jsonl").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--generator", "llm"], "--generator: generator 'llm' needs evaluator 'llm'"),
        (["--retry-temperature", "0.5"], "--retry-temperature: only with evaluator 'llm'"),
        (["--label-once"], "--label-once: only with evaluator 'llm'"),
        (["--retry-temperature", "-1"], "--retry-temperature: Input should be greater than or equal to 0"),
        (["--phi", "1.5"], "phi"),
        (["--epsilon", "0.9"], "epsilon"),
        (["--seed", "-1"], "--seed must be >= 0"),
        (["--seeds", "0"], "--seeds must be >= 1"),
        (["--offset", "1000"], "--offset: 1000 skips every datapoint of"),
        (["--model", "evaluator=local"], "the evaluator is a rule agent"),
        (["--model", "verifier=local"], "the verifier is a rule agent"),
    ],
)
def test_bad_options_exit_2(small: Path, tmp_path: Path, capsys, extra: list[str], message: str) -> None:
    assert main(["nodata", "--data", str(small), "--rubric", "oop", "--out", str(tmp_path / "x.jsonl"), *extra]) == 2
    assert message in capsys.readouterr().err


def test_a_data_file_needs_its_rubric(small: Path, tmp_path: Path, capsys) -> None:
    """The verifier's rubric is not guessed from the file name ("other" in it used to mean OOP)."""
    out = tmp_path / "r.jsonl"
    assert main(["nodata", "--data", str(small), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--data: {small} is a data file: give its verifier rubric ('ip' or 'oop')" in err and "not guessed" in err
    assert not out.exists()
    code, payload = nodata(capsys, "--data", str(small), "--rubric", "ip", "--limit", "3", "--out", str(out))
    assert code == 0 and payload["rubric"] == "ip"  # the name says "other", the flag decides


def test_lie_sigma_mode_paper_by_default_notebook_on_request(root: Path, tmp_path: Path, capsys) -> None:
    """§8.1.1's Lie 1 outputs C(x) (so C(x') = C(x) every round); the notebook's permutes it."""
    from voirdire.protocols.no_data.rubric import IP_RUBRIC
    from voirdire.transcript import Step

    runs = {}
    for mode in (None, "permutation"):
        out = tmp_path / f"{mode}.jsonl"
        extra = [] if mode is None else ["--lie-sigma-mode", mode]
        args = ["--data", "ip", "--generator", "lie-sigma", "--limit", "120", "--seed", "1", "--out", str(out)]
        code, payload = nodata(capsys, *args, *extra)
        assert code == 0
        (run,) = payload["runs"]
        runs[mode] = run
        assert payload["parameters"]["lie_sigma_mode"] == (mode or "encoding")
        rounds = [e.data for s in load(out).sessions.values() for e in s.of_kind(Step) if e.name == "nodata.round"]
        same = [IP_RUBRIC.evaluate(r["x_prime"]) == IP_RUBRIC.evaluate(r["x"]) for r in rounds]
        permuted = [sorted(IP_RUBRIC.evaluate(r["x_prime"])) == sorted(IP_RUBRIC.evaluate(r["x"])) for r in rounds]
        assert all(permuted)
        assert all(same) if mode is None else not all(same)
        full = resolve_dataset("ip", root=root)
        config = ExperimentConfig(data="ip", generator="lie-sigma", seed=1, lie_sigma_mode=mode or "encoding")
        direct = asyncio.run(run_experiment(config, dataset=full.model_copy(update={"rows": full.rows[:120]})))
        assert run["success_rate"] == direct.success_rate and run["accuracy"] == direct.accuracy
    # Exact IP rates (r = 3): 65% for the paper's Lie 1, 17% for the notebook's.
    assert runs[None]["success_rate"] > 0.45 > 0.3 > runs["permutation"]["success_rate"]


def test_run_no_data_is_the_nodata_command(small: Path, tmp_path: Path, capsys) -> None:
    """``voirdire run no_data`` has the same options and gives the same output as ``voirdire nodata``."""
    args = ["--data", str(small), "--rubric", "oop", "--generator", "lie-p", "--seed", "4", "--seeds", "2", "--json"]
    assert main(["nodata", *args, "--out", str(tmp_path / "a.jsonl")]) == 0
    friendly = json.loads(capsys.readouterr().out)
    assert main(["run", "no_data", *args, "--out", str(tmp_path / "b.jsonl")]) == 0
    generic = json.loads(capsys.readouterr().out)
    for key in ("runs", "aggregate", "parameters", "seeds", "datapoints", "rubric", "dataset", "sessions"):
        assert friendly[key] == generic[key], key
    assert generic["seeds"] == [4, 5] and len(generic["runs"]) == 2
    assert load(tmp_path / "b.jsonl").header.seed == 4  # type: ignore[union-attr]
