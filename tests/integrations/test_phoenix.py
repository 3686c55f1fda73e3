"""A real OpenTelemetry receiver: Arize Phoenix's local server (SQLite, 127.0.0.1) takes a scripted run's traces,
and its own REST API gives them back: one trace per session, every span, the transcript's token totals."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
pytest.importorskip("phoenix.server.main", reason="the phoenix test extra is not installed")

from tests.integrations.test_otel import SCRIPT
from voirdire.cli import main
from voirdire.transcript import ModelCall, Transition, load

START_S = 300  # Phoenix migrates its database and builds its app first: about a minute on two busy cores


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc),
           "PHOENIX_HOST": "127.0.0.1", "PHOENIX_TELEMETRY_ENABLED": "false"}  # fmt: skip
    exe = shutil.which("phoenix", path=str(Path(sys.executable).parent)) or "phoenix"
    log = (work / "server.log").open("wb")
    server = subprocess.Popen([exe, "serve", "--no-internet"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_S  # waiting for a server to start is not a timing assertion
    while True:
        try:
            urllib.request.urlopen(f"{url}/healthz", timeout=2).close()
            break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"Phoenix did not start: {(work / 'server.log').read_text(errors='replace')[-2000:]}")
            time.sleep(1)
    yield url
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
    log.close()


def _spans(url: str, want: int) -> list[dict[str, Any]]:
    """The project's spans, once Phoenix has stored ``want`` of them (it ingests in the background)."""
    for _ in range(120):
        spans = _get(f"{url}/v1/projects/default/spans?limit=1000")["data"]
        if len(spans) >= want:
            return list(spans)
        time.sleep(0.5)
    return list(spans)


def test_phoenix_stores_one_trace_per_session_with_the_transcripts_tokens(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "t.jsonl"
    for claim in ("The capital of Eritrea is Asmara.", "Asmara is the largest city of Eritrea."):
        assert main(["examine", claim, "--model", f"scripted:{script}", "--out", str(out), "--max-followups", "1",
                     "--otel", phoenix]) == 0  # fmt: skip
    sessions = load(out).sessions.values()
    calls = [e for s in sessions for e in s.of_kind(ModelCall)]
    steps = [e for s in sessions for e in s.of_kind(Transition)]
    want = len(sessions) + len(calls) + len(steps)
    spans = _spans(phoenix, want)
    assert len(spans) == want
    traces = {s["context"]["trace_id"] for s in spans}
    roots = [s for s in spans if not s.get("parent_id")]
    assert len(traces) == len(sessions) == 2 and len(roots) == 2
    assert {r["attributes"]["voirdire.session.id"] for r in roots} == {s.session_id for s in sessions}
    chats = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    assert sum(s["attributes"]["gen_ai.usage.input_tokens"] for s in chats) == sum(c.usage.prompt_tokens for c in calls)
    assert sum(s["attributes"]["gen_ai.usage.output_tokens"] for s in chats) == sum(
        c.usage.completion_tokens for c in calls
    )
    labels = [e for r in roots for e in r.get("events", []) if e["name"] == "gen_ai.evaluation.result"]
    assert [e["attributes"]["gen_ai.evaluation.score.label"] for e in labels] == ["correct", "correct"]
