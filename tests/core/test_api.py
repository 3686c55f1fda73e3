"""The Python API: async forms for code inside an event loop, synchronous ones that say so when called there,
transcripts resumed rather than replaced, and the roles of ``models`` checked like the command line's."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import voirdire
from voirdire.api import RoleError
from voirdire.runner import ResumeError, default_out
from voirdire.transcript import load

from .examination_scripts import scripted_models


@pytest.fixture(autouse=True)
def _in_a_temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Default transcripts (``transcripts/...``) land in the test's folder, never in the checkout."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def models(tmp_path: Path) -> dict[str, str]:
    return scripted_models(tmp_path)


def questions(path: Path, *names: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps({"id": n, "question": f"Where is {n}?", "answers": ["Paris"]}) + "\n" for n in names)
    )
    return path


async def test_sync_calls_in_a_running_loop_wait_in_a_worker_thread(tmp_path: Path, models: dict[str, str]) -> None:
    """As a Jupyter cell calls them: the run goes on a private loop in another thread, the caller's loop waits."""
    data = questions(tmp_path / "qs.jsonl", "a")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine never awaited would warn
        verdict = voirdire.examine("Paris is in Italy.", models=models, out=tmp_path / "e.jsonl")
        run = voirdire.run("cross_examination", [{"id": "x", "claim": "X."}], models=models, out=tmp_path / "r.jsonl")
        result, report = voirdire.examine_dataset(data, models=models, out=tmp_path / "d.jsonl")
        again, _ = voirdire.run_dataset("cross_examination", data, models=models, out=tmp_path / "d2.jsonl")
    assert verdict.decision == "incorrect" and (tmp_path / "e.jsonl").exists()
    assert list(run.verdicts) == ["x"] and list(result.verdicts) == ["a"] == list(again.verdicts)
    assert report.sessions == 1


async def test_async_forms_run_inside_a_loop(tmp_path: Path, models: dict[str, str]) -> None:
    verdict = await voirdire.aexamine("Paris is in Italy.", models=models, out=tmp_path / "one.jsonl")
    assert verdict.decision == "incorrect" and verdict.accepted is False
    data = questions(tmp_path / "qs.jsonl", "a", "b")
    result, report = await voirdire.aexamine_dataset(data, models=models, out=tmp_path / "qs.jsonl.out")
    assert set(result.verdicts) == {"a", "b"} and report.sessions == 2
    ays = tmp_path / "ays.jsonl"
    result, report = await voirdire.arun_dataset("ays", data, models={"examinee": models["examinee"]}, limit=1, out=ays)
    assert list(result.verdicts) == ["a"] and report.sessions == 1
    result = await voirdire.arun("cross_examination", [{"id": "c", "claim": "X."}], models=models, out=tmp_path / "c")
    assert list(result.verdicts) == ["c"]


def test_sync_forms_outside_a_loop(tmp_path: Path, models: dict[str, str]) -> None:
    verdict = voirdire.examine("Paris is in Italy.", models=models, out=tmp_path / "one.jsonl")
    assert verdict.decision == "incorrect"
    result, report = voirdire.examine_dataset(questions(tmp_path / "qs.jsonl", "a"), models=models, out=tmp_path / "o")
    assert set(result.verdicts) == {"a"} and report.sessions == 1


def test_an_existing_transcript_is_resumed_never_replaced_unless_fresh(tmp_path: Path, models: dict[str, str]) -> None:
    out = tmp_path / "t.jsonl"
    data = questions(tmp_path / "qs.jsonl", "a", "b", "c")
    voirdire.examine_dataset(data, models=models, out=out)
    assert len(load(out).sessions) == 3
    voirdire.examine("Paris is in Italy.", models=models, out=out)  # once replaced the 3 sessions with 1
    assert len(load(out).sessions) == 4
    again, _ = voirdire.examine_dataset(data, models=models, out=out)
    assert again.skipped == 3
    voirdire.examine("Paris is in Italy.", models=models, out=out, fresh=True)
    assert len(load(out).sessions) == 1


def test_resume_refuses_another_dataset_and_default_names_differ(tmp_path: Path, models: dict[str, str]) -> None:
    first, second = questions(tmp_path / "a" / "qs.jsonl", "x"), questions(tmp_path / "b" / "qs.jsonl", "x")
    assert default_out("cross_examination", first) != default_out("cross_examination", second)
    assert default_out("cross_examination", "a/qs.jsonl") == default_out("cross_examination", first)  # stable
    one, _ = voirdire.examine_dataset(first, models=models)
    two, _ = voirdire.examine_dataset(second, models=models)
    assert one.out != two.out and one.out.parent == two.out.parent == Path("transcripts")
    with pytest.raises(ResumeError, match=r"holds a run on another dataset .*fresh=True"):
        voirdire.examine_dataset(second, models=models, out=one.out)


def test_models_name_roles_the_protocol_has(tmp_path: Path, models: dict[str, str]) -> None:
    with pytest.raises(RoleError, match="qa_lexical has no role 'examiner'"):
        voirdire.run("qa_lexical", [], models={"examiner": models["examiner"]}, out=tmp_path / "x.jsonl")
    with pytest.raises(RoleError, match="the verifier is a rule agent"):
        voirdire.run("no_data", [], models={"verifier": "local"}, out=tmp_path / "y.jsonl")
    assert not list(tmp_path.glob("*.jsonl"))


def test_examine_is_the_cross_examination_packages_own_call_found_through_its_registration() -> None:
    from voirdire.protocols.cross_examination import api

    assert voirdire.examine is api.examine and voirdire.aexamine_dataset is api.aexamine_dataset
    with pytest.raises(AttributeError, match="no attribute 'examine_everything'"):
        _ = voirdire.examine_everything
