"""Benchmark loaders, correlations, baselines and ``voirdire correlate`` on small cuts of the benchmarks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voirdire.protocols.dcr.baselines import embedding, rouge
from voirdire.protocols.dcr.correlate import compare, main
from voirdire.protocols.dcr.data import DATA_ENV, DataError, load_benchmark
from voirdire.protocols.dcr.human_correlation import binary, sample_level, summary_level

from .helpers import GOOD, agents, amc, dce, run

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def _data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV, str(FIXTURES))


def test_loaders() -> None:
    summeval = load_benchmark("summeval")
    assert len(summeval) == 18 and len(summeval[0].references) == 3
    first = summeval[0].item
    assert (
        first.task == "summarization" and first.dataset == "summeval" and first.id == f"{first.doc_id}/{first.system}"
    )
    assert 1 <= first.human <= 5  # type: ignore[operator]
    xsum = load_benchmark("qags-xsum")
    assert len(xsum) == 8 and xsum[0].references == [xsum[0].item.reference] and xsum[0].item.id == "qags-xsum/0"
    paws = load_benchmark("paws")
    assert paws[0].item.task == "semantic" and paws[0].item.human == 0.0 and paws[1].item.human == 1.0
    msrp = load_benchmark("msrp")
    assert len(msrp) == 6 and msrp[0].item.id == "msrp/1089874-1089925" and msrp[0].item.human == 1.0


def test_a_broken_row_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "paws.tsv"
    bad.write_text("1\tonly two\n")
    with pytest.raises(DataError, match=r"paws.tsv:1: expected 4 tab-separated fields"):
        load_benchmark("paws", path=bad)
    with pytest.raises(DataError, match="unknown benchmark"):
        load_benchmark("qqp")


def test_summary_level_averages_documents_and_skips_constant_ones() -> None:
    docs = ["a", "a", "a", "b", "b", "c", "c"]
    metric = [0.1, 0.2, 0.3, 0.5, 0.4, 0.7, 0.7]
    human = [1.0, 2.0, 3.0, 4.0, 4.0, 1.0, 5.0]
    c = summary_level(docs, metric, human)
    assert c.spearman == 1.0 and c.kendall == 1.0 and c.documents == 1
    assert (c.skipped_constant_human, c.skipped_constant_metric) == (1, 1)


def test_sample_level_and_auroc() -> None:
    c = sample_level([0.1, 0.4, 0.3, 0.9], [0.0, 0.5, 0.4, 1.0])
    assert c.spearman == 1.0 and c.pearson is not None and c.pearson > 0.9
    assert binary([0.9, 0.2, 0.8, 0.1], [1, 0, 1, 0]).auroc == 1.0
    assert sample_level([0.5, 0.5], [0.0, 1.0]).spearman is None


def test_rouge_is_the_mean_over_references_with_summary_level_l() -> None:
    (ex, *_) = load_benchmark("summeval")
    one = ex.model_copy(update={"references": [ex.item.candidate]})
    assert rouge([one], "rouge-l") == [pytest.approx(1.0)]
    assert 0 < rouge([ex], "rouge-2")[0] < 1


def test_comparison_with_the_printed_value() -> None:
    from voirdire.protocols.dcr.human_correlation import Correlation

    r = compare(
        "qags-cnn", "rouge-2", Correlation(kind="sample", n=235, pearson=0.4591, spearman=0.4181, kendall=0.3327)
    )
    assert r.within_tolerance and r.difference == {"pearson": 0.0001, "spearman": 0.0001, "kendall": -0.0003}
    r = compare(
        "qags-xsum", "rouge-l", Correlation(kind="sample", n=239, pearson=0.0141, spearman=-0.024, kendall=-0.0196)
    )
    assert r.within_tolerance is False


def test_correlate_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data", "qags-cnn", "--metric", "rouge-2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["correlation"]["kind"] == "sample" and out["correlation"]["n"] == 8
    assert out["printed"] == {"pearson": 0.459, "spearman": 0.418, "kendall": 0.333}
    assert main(["--data", "summeval", "--metric", "dcr"]) == 2
    assert "--transcript" in capsys.readouterr().err


async def test_correlate_reads_a_dcr_transcript(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = [e.item for e in load_benchmark("paws")[:4]]  # labels 0, 1, 1, 1
    clients = agents(evaluator=[dce((i.candidate, GOOD)) for i in items], converter=[amc(-1), amc(1), amc(1), amc(-1)])
    t = await run(tmp_path, clients, items=items, rounds=0)
    assert t.path is not None
    assert main(["--data", "paws", "--metric", "dcr", "--transcript", t.path]) == 0
    text = capsys.readouterr().out
    assert text.startswith("paws dcr: auroc 0.8333  (n=4)") and "paper: auroc 0.792" in text


@pytest.mark.slow
def test_embedding_baseline_with_minilm() -> None:
    examples = load_benchmark("paws")[:4]
    scores = embedding(examples)
    assert len(scores) == 4 and all(0.5 < s <= 1.0001 for s in scores)  # near-paraphrases by construction
