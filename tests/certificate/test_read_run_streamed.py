"""``read_run`` and ``guarantee_counts`` (the certificate's reads of a run) stream a transcript (``report_file``)
instead of loading it: the same sessions, verdicts and items as the loaded transcript gives, the attempt that counts
picked as ``load`` picks it, and the file read whole only where ``report_file`` would (a file appended to itself)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.core.test_report import VARIANTS, VARIED, spy_on_load, variant_file
from voirdire.certificate import read_run
from voirdire.certificate.section import guarantee_counts
from voirdire.transcript import load


@pytest.mark.parametrize("name", VARIED)
def test_a_run_is_read_as_its_loaded_transcript_without_loading_it(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads = spy_on_load(monkeypatch)
    for kind in VARIANTS:  # a rerun, a resume, a crash, a file appended to itself
        (tmp_path / kind).mkdir()
        path = variant_file(tmp_path / kind, name, kind)
        loads.clear()
        run = read_run(path)
        assert bool(loads) == (kind == "twice"), kind  # only a file the runner cannot write is read whole
        t = load(path)
        expected = []
        for sid, s in t.sessions.items():
            v = s.verdict
            expected.append((sid, s.item_id or sid, v.decision if v else None, v.accepted if v else None))
        assert [(s.session_id, s.item_id, s.decision, s.accepted) for s in run.sessions] == expected, kind
        assert list(run.items) == list(dict.fromkeys(item_id for _, item_id, _, _ in expected)), kind
        assert run.protocol == (t.header.protocol if t.header else ""), kind
        loads.clear()
        rows, verdicts = guarantee_counts(path)
        assert bool(loads) == (kind == "twice"), kind
        with_verdict = [s.verdict for s in t.sessions.values() if s.verdict is not None]
        assert verdicts == len(with_verdict), kind
        carried = Counter((g.kind, g.statement, g.source) for v in with_verdict if (g := v.guarantee) is not None)
        assert [(r.kind, r.statement, r.source, r.verdicts) for r in rows] == [
            (*k, n) for k, n in carried.most_common()
        ], kind


@pytest.mark.parametrize("name", VARIED)
def test_voirdire_report_parses_its_transcript_once(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report and the certificate's reads (verdicts, guarantees, the report rows' gold) come from one pass
    over the file (``report_file``'s ``alongside``), and read as the separate passes read them."""
    import voirdire.reports.fold as fold_module
    from voirdire.certificate import CertificateReading, certificate_of, gold_of_rows
    from voirdire.cli import main
    from voirdire.registry import registrations
    from voirdire.reports import generic_report, report_file

    parsed: list[object] = []
    iter_records = fold_module.iter_records
    monkeypatch.setattr(fold_module, "iter_records", lambda p: parsed.append(p) or iter_records(p))
    regs = registrations()

    def fold_for(header: object) -> object:
        return regs[header.protocol].fold if header is not None and header.protocol in regs else generic_report  # type: ignore[attr-defined]

    for kind in VARIANTS:
        (tmp_path / kind).mkdir()
        path = variant_file(tmp_path / kind, name, kind)
        reading = CertificateReading(path)
        parsed.clear()
        report, _ = report_file(path, fold_for, alongside=reading.folds())  # type: ignore[arg-type]
        if kind != "twice":  # a file appended to itself is read whole, and its model calls once more
            assert len(parsed) == 1, kind
        alone, _ = report_file(path, fold_for)  # type: ignore[arg-type]
        assert report == alone, kind  # the folds alongside change nothing of the report
        run, separate = reading.run.run(), read_run(path)
        assert run == separate, kind  # a dataclass: sessions, items, gold and score statistics, path
        assert reading.guarantees.rows() == guarantee_counts(path), kind
        # the gold of the report's rows, as voirdire report hands them over, is the gold report_gold reads again
        one = reading.certificate(report, gold_rows=gold_of_rows(report)).model_dump()
        assert one == certificate_of(path, report).model_dump(), kind
        parsed.clear()
        capsys.readouterr()
        assert main(["report", str(path), "--json"]) == 0
        if kind != "twice":
            assert len(parsed) == 1, kind
