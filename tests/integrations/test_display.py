"""``_repr_html_`` of what a notebook shows, drawn without a kernel: a certificate, a comparison, a report, a
run's result, each as escaped text in the viewer's markup with no script."""

from __future__ import annotations

from pathlib import Path

import voirdire
from tests.integrations.helpers import scripted_run
from voirdire.analysis import compare
from voirdire.certificate import certificate_of
from voirdire.registry import get


def test_certificate_comparison_report_and_result_display_as_html(tmp_path: Path) -> None:
    run = scripted_run(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    second = scripted_run(other)
    report = get("cross_examination").report(voirdire.load(run))
    shown = {
        "certificate": certificate_of(run, report),
        "comparison": compare([run, second]),
        "report": report,
    }
    for name, obj in shown.items():
        html = obj._repr_html_()
        assert html is not None and html.startswith('<div class="voirdire-nb">'), name
        assert "<script" not in html.lower() and '<pre class="report">' in html, name
    assert "Paris is the capital of Germany." in voirdire.load(run)._repr_html_()


def test_transcript_text_is_escaped(tmp_path: Path) -> None:
    from tests.integrations.helpers import models

    claim = "<script>alert(1)</script> <b>Paris</b> is in Italy."
    out = tmp_path / "x.jsonl"
    voirdire.run("cross_examination", [{"id": "x", "claim": claim}], models=models(tmp_path), out=out)
    for html in (voirdire.load(out)._repr_html_(), voirdire.load(out).sessions["x"]._repr_html_()):
        assert html is not None and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "<script" not in html.lower() and "<b>Paris" not in html
