"""``read_run`` and ``guarantee_counts`` (the certificate's reads of a run) stream a transcript (``report_file``)
instead of loading it: the same sessions and verdicts as the loaded transcript gives, the attempt that counts
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
    import voirdire.reports.stream as fold_module
    from voirdire.certificate import CertificateReading, certificate_of, gold_of_rows
    from voirdire.cli import main
    from voirdire.registry import report_folds
    from voirdire.reports import report_file

    parsed: list[object] = []
    iter_records = fold_module.iter_records
    monkeypatch.setattr(fold_module, "iter_records", lambda p: parsed.append(p) or iter_records(p))
    fold_for = report_folds()

    for kind in VARIANTS:
        (tmp_path / kind).mkdir()
        path = variant_file(tmp_path / kind, name, kind)
        reading = CertificateReading(path)
        parsed.clear()
        report, _ = report_file(path, fold_for, alongside=reading.folds())
        if kind != "twice":  # a file appended to itself is read whole, and its model calls once more
            assert len(parsed) == 1, kind
        alone, _ = report_file(path, fold_for)
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


@pytest.mark.parametrize("name", ["ays", *VARIED, "no_data named gold"])
def test_the_report_rows_gold_is_read_in_read_runs_own_pass(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the run header names no gold statistic, ``read_run`` folds the protocol's report rows beside its own
    fold: each line parsed once (and the first one or two again, to see the header), and the same run as the
    report rows' gold read in a pass of its own gives (``report_gold``). Where it names one, the rows are not
    folded."""
    import json

    import voirdire.certificate.calibration as calibration
    import voirdire.transcript.io as io
    from voirdire.certificate import certificate_of

    parse = io._parse_line
    parsed: list[int] = []
    monkeypatch.setattr(io, "_parse_line", lambda *a, **k: parsed.append(1) or parse(*a, **k))
    folded: list[object] = []
    gold_rows = calibration._GoldRows.__call__
    monkeypatch.setattr(calibration._GoldRows, "__call__", lambda *a: folded.append(1) or gold_rows(*a))
    for kind in ("rerun", "resume", "crash"):
        (tmp_path / kind).mkdir()
        path = variant_file(tmp_path / kind, name.split()[0], kind)
        if name.endswith("named gold"):  # a header as the protocol writes it now: its verdicts state gold
            text = path.read_text()
            lines_of = text.splitlines()
            for i, line in enumerate(lines_of):
                if line.startswith('{"kind": "header"'):
                    r = json.loads(line)
                    r.setdefault("display", {}).setdefault("views", {}).setdefault("verdict", {})["gold"] = "correct"
                    lines_of[i] = json.dumps(r)
            path.write_text("\n".join(lines_of) + ("\n" if text.endswith("\n") else ""))
        lines = sum(1 for line in path.read_bytes().splitlines() if line.strip())
        parsed.clear()
        folded.clear()
        run = read_run(path)
        assert lines <= len(parsed) <= lines + 2, kind
        assert bool(folded) == (not name.endswith("named gold")), kind
        separate = calibration.RunReading(path)
        calibration.fold_sessions(path, calibration._part, separate.take, spooled=True)
        assert run == separate.run(), kind
        rows = calibration.report_gold(path)
        assert (run.gold_statistic == "the report's gold column") == bool(rows), kind
        parsed.clear()
        assert certificate_of(path).protocol == run.protocol
        assert lines <= len(parsed) <= lines + 2, kind
