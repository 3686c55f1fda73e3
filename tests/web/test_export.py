"""``voirdire export-html``: one self-contained page, no script, a CSP that admits only its own stylesheet, and
one-line errors for bad paths and sessions."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from pathlib import Path

from voirdire.cli import main
from voirdire.web.render import asset


def test_a_whole_transcript_as_one_page(transcripts: dict[str, Path], tmp_path: Path, capsys) -> None:
    out = tmp_path / "share" / "run.html"
    assert main(["export-html", str(transcripts["cross_examination"]), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    page = out.read_text(encoding="utf-8")
    assert "<script" not in page and "/static/" not in page and "http://" not in page and "https://" not in page
    css = asset("viewer.css")
    digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page)
    assert csp is not None
    assert html.unescape(csp.group(1)).startswith(f"default-src 'none'; style-src 'sha256-{digest}'")
    assert f"<style>{css}</style>" in page  # exactly the hashed text
    assert page.count('<article class="exported"') == 2 and 'href="#s1"' in page and 'href="#s2"' in page
    assert "What is the capital of Italy?" in page and "Verdict: <span" in page


def test_one_session(transcripts: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "one.html"
    argv = ["export-html", str(transcripts["majority"]), "--session", first_session(transcripts), "-o", str(out)]
    assert main(argv) == 0
    page = out.read_text(encoding="utf-8")
    assert page.count('<article class="exported"') == 1 and page.count('class="lane"') == 3


def first_session(transcripts: dict[str, Path]) -> str:
    from voirdire.transcript import load

    return next(iter(load(transcripts["majority"]).sessions))


def test_errors_are_one_line(transcripts: dict[str, Path], tmp_path: Path, capsys) -> None:
    cases = [
        (["export-html", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "x.html")], "no such transcript"),
        (["export-html", str(transcripts["no_data"]), "--session", "nope", "-o", str(tmp_path / "x.html")],
         "no session 'nope' (sessions: seed0-000"),
        (["export-html", str(transcripts["no_data"]), "-o", str(tmp_path)], "is a folder"),
    ]  # fmt: skip
    dataset = tmp_path / "data.jsonl"
    dataset.write_text('{"question": "q"}\n')
    cases.append((["export-html", str(dataset), "-o", str(tmp_path / "x.html")], "not a voirdire transcript"))
    for argv, message in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("voirdire: error: ") and message in err, err
    assert not (tmp_path / "x.html").exists()


def test_the_report_charts_and_certificate_come_from_one_pass(
    transcripts: dict[str, Path], tmp_path: Path, monkeypatch
) -> None:
    """After the index, the whole-run page reads the file once: the certificate's folds ride along the report's."""
    import voirdire.reports.stream as stream
    from voirdire.certificate import certificate_of
    from voirdire.registry import registrations
    from voirdire.reports import report_file

    path = tmp_path / "lmvlm.jsonl"  # a file of its own: no page made earlier of it is reused
    path.write_bytes(transcripts["cross_examination"].read_bytes())
    report = report_file(path, registrations()["cross_examination"].fold)[0]
    alone = certificate_of(path, report)
    passes: list[str] = []
    real = stream.iter_records

    def counted(p: object) -> object:
        passes.append(str(p))
        return real(p)

    monkeypatch.setattr(stream, "iter_records", counted)
    out = tmp_path / "run.html"
    assert main(["export-html", str(path), "-o", str(out)]) == 0
    assert passes == [str(path)]
    page = out.read_text(encoding="utf-8")
    assert '<section class="certificate" id="certificate">' in page and "No certificate." not in page
    for source in alone.sources:  # the certificate the file's own pass makes, section by section
        assert f"<h2>Agreement with {html.escape(source.name)}</h2>" in page
