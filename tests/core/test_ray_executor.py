"""--executor ray: sessions on Ray actors, their records written by the driver into the same transcript a local run
writes. The Ray test starts a local instance (2 CPUs, no dashboard, no usage report, its files and its auth token
under a temporary folder); it is skipped only where Ray is not installed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.chaos.conftest import chaos_cli, questions  # noqa: F401  (chaos_cli: a fixture of the CLI test)
from tests.chaos.protocol import Chaos
from tests.core.test_workers import decisions, items, script, verdicts_per_session
from voirdire.cli import main
from voirdire.runner import RunSetupError, run_protocol
from voirdire.transcript import ModelCall, load

needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (voirdire[ray])")


@needs_ray
async def test_fifty_sessions_on_ray_write_a_local_run_s_transcript(
    ray_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here_dir = tmp_path / "cwd"  # the current folder, whatever pytest was started in: Ray must leave it empty
    here_dir.mkdir()
    monkeypatch.chdir(here_dir)
    roles, qs, out = script(tmp_path), items(50), tmp_path / "ray.jsonl"
    local = await run_protocol(Chaos(), qs, out=tmp_path / "local.jsonl", roles=roles, concurrency=4)
    # Ten sessions are already in the transcript (a local run): the Ray run resumes it and runs the other 40.
    await run_protocol(Chaos(), qs[:10], out=out, roles=roles)
    cache = tmp_path / "cache.jsonl"
    ray_run = await run_protocol(
        Chaos(), qs, out=out, roles=roles, concurrency=4, workers=2, executor="ray", cache=cache, progress=True
    )
    assert ray_run.skipped == 10 and not ray_run.errors and decisions(ray_run) == decisions(local)
    assert verdicts_per_session(out) == verdicts_per_session(tmp_path / "local.jsonl")  # one each
    here, there = load(tmp_path / "local.jsonl"), load(out)
    assert len(there.headers) == 2 and there.headers[-1].roles == here.headers[-1].roles
    for sid, session in here.sessions.items():  # the same records, session by session
        mine = [(e.kind, e.seq, getattr(e, "content", None)) for e in session.events]
        assert [(e.kind, e.seq, getattr(e, "content", None)) for e in there.sessions[sid].events] == mine
    # The actors' cache replies came back to the driver's file: 3 calls for each of the 40 sessions.
    assert len(cache.read_text().splitlines()) == 120
    assert all(not e.cached for s in there.sessions.values() for e in s.of_kind(ModelCall))
    assert not list(here_dir.iterdir())


async def test_without_ray_installed_the_ray_executor_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if it were not installed
    out = tmp_path / "t.jsonl"
    with pytest.raises(RunSetupError, match=r"^--executor ray: Ray is not installed here; install it with pip insta"):
        await run_protocol(Chaos(), items(2), out=out, roles=script(tmp_path), executor="ray")
    assert not out.exists()


def test_the_command_line_names_what_to_install(
    chaos_cli: None,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    data, out = questions(tmp_path / "qs.jsonl", 3), tmp_path / "t.jsonl"
    model = script(tmp_path)["*"].model
    code = main(["run", "chaos", "--data", str(data), "--model", model, "--out", str(out), "--executor", "ray"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines()[-1] == (
        "voirdire: error: --executor ray: Ray is not installed here; install it with pip install 'voirdire[ray]'"
    )
    assert not out.exists()


@needs_ray
@pytest.mark.parametrize(
    ("address", "message"),
    [("127.0.0.1:1", "nothing answers there"), ("nowhere", "expected auto, HOST:PORT or ray://HOST:PORT")],
)
async def test_a_cluster_address_where_nothing_answers_fails_at_once(
    address: str, message: str, ray_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "t.jsonl"
    with pytest.raises(RunSetupError, match=rf"^--ray-address {address}: {message}"):
        await run_protocol(Chaos(), items(2), out=out, roles=script(tmp_path), executor="ray", ray_address=address)
    assert not out.exists()
