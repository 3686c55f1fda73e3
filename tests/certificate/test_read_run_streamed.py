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
