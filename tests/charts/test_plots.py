"""``voirdire report T --plot DIR`` on a transcript of every protocol: valid SVG files with the titles and axis
labels each protocol's charts declare; PNG on request; a one-line error without matplotlib."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from voirdire.analysis.drawing import render, transcript_charts
from voirdire.cli import main
from voirdire.reports.charts import BarChart, LineChart, ScatterChart, Series

SVG = "{http://www.w3.org/2000/svg}"


def texts(path: Path) -> list[str]:
    """Every piece of text an SVG file draws (matplotlib writes text as <text> with svg.fonttype none)."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def plot(transcript: Path, folder: Path, *extra: str) -> dict[str, Path]:
    assert main(["report", str(transcript), "--plot", str(folder), *extra]) == 0
    return {p.name: p for p in folder.iterdir()}


# protocol -> (chart file, a title fragment, x label, y label) that its report must draw
EXPECTED = {
    "cross_examination": [("lmvlm-precision-recall.svg", "LMvLM: precision, recall and F1", "decision", "%"),
                          ("verdicts.svg", "agree with gold", "decision", "sessions"),
                          ("parse-failures.svg", "Parse failures", "role · prompt", "replies unreadable (%)"),
                          ("tokens.svg", "Tokens per role", "role", "tokens")],
    "no_data": [("no-data-success-per-round.svg", "EV success after k rounds", "rounds k",
                 "sessions passing the first k rounds (%)"),
                ("no-data-theorem1.svg", "accuracy against Theorem 1", "rounds r", "accuracy (%)"),
                ("verdicts.svg", "agree with gold", "decision", "sessions")],
    "qa_lexical": [("qa-grading-per-system.svg", "QA grading (lexical)", "system", "%")],
    "qa_entailment": [("qa-grading-per-system.svg", "QA grading (entailment)", "system", "%"),
                      ("latency.svg", "Model latency per role", "role", "seconds per call")],
    "dcr": [("dcr-scores-per-round.svg", "DCR: Ẑ after each round", "round (0 = the original candidate)",
             "Ẑ (share of sentences consistent)"),
            ("dcr-consistent-per-round.svg", "Fig. 4", "round (0 = the original candidate)", "consistent (%)"),
            ("dcr-score-distribution.svg", "Fig. 4 right", "Ẑ bin", "candidates"),
            ("dcr-correlation.svg", "DCR Ẑ vs human", "Ẑ of the original candidate (DCE-AMC)", "human judgment")],
    "oracle_entities": [("oracle-acceptance-vs-epsilon.svg", "acceptance vs ε (n = 3 tests",
                         "ε: distance of the extractor to the nearest homomorphism", "acceptance (%)")],
    "oracle_paraphrase": [("verdicts.svg", "Verdicts of 1 session", "decision", "sessions")],
}  # fmt: skip


@pytest.mark.parametrize("protocol", list(EXPECTED))
def test_report_plot_writes_each_protocols_charts_as_valid_svg(
    protocol: str, transcripts: dict[str, Path], tmp_path: Path
) -> None:
    files = plot(transcripts[protocol], tmp_path / "charts")
    for name, title, xlabel, ylabel in EXPECTED[protocol]:
        assert name in files, f"{protocol}: no {name} among {sorted(files)}"
        drawn = texts(files[name])
        assert any(title in t for t in drawn), f"{name}: no title with {title!r} in {drawn}"
        assert xlabel in drawn and ylabel in drawn, f"{name}: axes {xlabel!r}/{ylabel!r} not in {drawn}"
        assert title.split(" (")[0] in files[name].read_text(encoding="utf-8").split("<dc:title>")[1]


def test_charts_carry_the_numbers_of_the_report(transcripts: dict[str, Path]) -> None:
    """Not only files: the DCR chart's mean line and the LMvLM bars are the report's values."""
    report, charts = transcript_charts(transcripts["dcr"])
    by = {c.name: c for c in charts}
    per_round = by["dcr-consistent-per-round"]
    assert isinstance(per_round, LineChart)
    assert per_round.lines[0].y == tuple(100 * s for s in report.consistent_after_round)  # type: ignore[attr-defined]
    scatter = by["dcr-correlation"]
    assert isinstance(scatter, ScatterChart) and "AUROC" in scatter.title and len(scatter.x) == 2
    report, charts = transcript_charts(transcripts["cross_examination"])
    verdicts = next(c for c in charts if c.name == "verdicts")
    assert isinstance(verdicts, BarChart)
    assert sum(sum(s.values) for s in verdicts.series) == report.verdicts


def test_png_on_request_and_the_same_svg_twice(transcripts: dict[str, Path], tmp_path: Path) -> None:
    files = plot(transcripts["qa_lexical"], tmp_path / "a", "--plot-format", "png", "--plot-format", "svg")
    assert files["qa-grading-per-system.png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = plot(transcripts["qa_lexical"], tmp_path / "b")
    assert again["qa-grading-per-system.svg"].read_bytes() == files["qa-grading-per-system.svg"].read_bytes()


def test_without_matplotlib_plot_is_a_one_line_error(
    transcripts: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import builtins

    real = builtins.__import__

    def no_matplotlib(name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("No module named 'matplotlib'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    assert main(["report", str(transcripts["qa_lexical"]), "--plot", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pip install 'voirdire[plots]'" in err
    assert not (tmp_path / "c").exists()


def test_a_title_from_a_transcript_is_text_not_markup() -> None:
    chart = BarChart("x", "<script>alert(1)</script> & $1 or $2", "a", "b", ("c",), (Series("s", (1.0,)),))
    svg = render(chart).decode()
    assert "<script>" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; $1 or $2" in svg


def test_export_html_of_a_run_embeds_its_charts_as_images(transcripts: dict[str, Path], tmp_path: Path) -> None:
    import base64
    import re

    out = tmp_path / "dcr.html"
    assert main(["export-html", str(transcripts["dcr"]), "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    uris = re.findall(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)"', html)
    titles = [title for _, title in uris]
    assert any(t.startswith("DCR (Fig. 4): share of candidates consistent") for t in titles), titles
    svg = base64.b64decode(uris[0][0]).decode()
    assert svg.startswith("<?xml") and "<svg" in svg and "<script" not in svg
    assert "img-src data:" in html and "<script" not in html
    one = tmp_path / "one.html"
    assert main(["export-html", str(transcripts["dcr"]), "--session", "p0", "-o", str(one)]) == 0
    assert "data:image/svg+xml" not in one.read_text(encoding="utf-8")  # one session: its chat, not the run's charts


def test_correlate_plot_draws_metric_against_human_with_the_correlation_in_the_title(
    transcripts: dict[str, Path], tmp_path: Path
) -> None:
    import json

    from tests.protocols.dcr.helpers import ARTICLE, S1, S2, S2_FIXED

    data = tmp_path / "pairs.jsonl"
    summaries = [S1, f"{S1} {S2}", S2_FIXED, S2]
    data.write_text("\n".join(json.dumps({"id": f"p{i}", "article": ARTICLE, "summary": s, "score": float(i)})
                              for i, s in enumerate(summaries)))  # fmt: skip
    assert main(["correlate", "--data", str(data), "--metric", "rouge-1", "--plot", str(tmp_path / "a")]) == 0
    drawn = texts(tmp_path / "a" / "correlate-pairs-rouge-1.svg")
    title = next(t for t in drawn if t.startswith("pairs: rouge-1 vs human: "))
    assert "ρ = " in title and "τ = " in title and "(n = 4)" in title
    assert "rouge-1" in drawn and "human judgment" in drawn
    args = ["correlate", "--data", "x", "--metric", "dcr", "--transcript", str(transcripts["dcr"])]
    assert main([*args, "--plot", str(tmp_path / "b")]) == 0
    (svg,) = (tmp_path / "b").glob("correlate-*-dcr.svg")
    assert any("AUROC = 1.000 (n = 2)" in t for t in texts(svg))


def test_a_bad_plot_folder_is_a_one_line_error_before_the_report(
    transcripts: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "a-file"
    afile.write_text("x")
    assert main(["report", str(transcripts["qa_lexical"]), "--plot", str(afile)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == f"voirdire: error: --plot {afile}: not a folder"
    header_only = tmp_path / "empty.jsonl"
    header_only.write_text(transcripts["qa_lexical"].read_text(encoding="utf-8").splitlines()[0] + "\n")
    assert main(["report", str(header_only), "--plot", str(tmp_path / "none")]) == 0
    assert "no chart to draw" in capsys.readouterr().err and not list((tmp_path / "none").iterdir())
