"""A real OpenTelemetry receiver: Arize Phoenix's local server (SQLite, 127.0.0.1) takes scripted runs' traces,
and its own REST API and client give them back: one trace per session, every span, the transcript's token totals,
the input and output Phoenix shows, each verdict as an annotation of its session's span; a session sent again is
stored once (Phoenix keeps the first copy of a span id) and its annotation updated, not added."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
pytest.importorskip("phoenix.server.main", reason="the phoenix test extra is not installed")
pytest.importorskip("phoenix.client", reason="Phoenix's client (the otel extra) is not installed")

from tests.integrations.test_otel import CLAIMS, SCRIPT
from voirdire.cli import main
from voirdire.transcript import ModelCall, Transition, load

pytestmark = pytest.mark.phoenix
START_S = 300  # Phoenix migrates its database and builds its app first: about a minute on two busy cores
WAIT_S = 60  # Phoenix stores what it is sent in the background: how long a test waits for it


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


def _until(found: Callable[[], Any], done: Callable[[Any], bool]) -> Any:
    """``found()`` once ``done`` holds of it (Phoenix ingests in the background), or its last value."""
    deadline = time.monotonic() + WAIT_S
    while True:
        got = found()
        if done(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.5)


def _spans(url: str, project: str, want: int) -> list[dict[str, Any]]:
    """The project's spans, once Phoenix has stored ``want`` of them."""

    def read() -> list[dict[str, Any]]:
        try:
            return list(_get(f"{url}/v1/projects/{project}/spans?limit=1000")["data"])
        except OSError:  # the project is made with its first span
            return []

    return list(_until(read, lambda spans: len(spans) >= want))


def _annotations(url: str, project: str, span_ids: list[str], want: int) -> list[dict[str, Any]]:
    from phoenix.client import Client

    spans = Client(base_url=url).spans
    return list(_until(lambda: spans.get_span_annotations(span_ids=span_ids, project_identifier=project),
                       lambda found: len(found) >= want))  # fmt: skip


def _examine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: str, *extra: str) -> Path:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={project}")  # a project per test
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "t.jsonl"
    for claim in CLAIMS[:2]:
        assert main(["examine", claim, "--model", f"scripted:{script}", "--out", str(out), "--max-followups", "1",
                     *extra]) == 0  # fmt: skip
    return out


def test_phoenix_stores_one_trace_per_session_with_the_transcripts_tokens(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _examine(tmp_path, monkeypatch, "tokens", "--otel", phoenix)
    sessions = load(out).sessions.values()
    calls = [e for s in sessions for e in s.of_kind(ModelCall)]
    steps = [e for s in sessions for e in s.of_kind(Transition)]
    want = len(sessions) + len(calls) + len(steps)
    spans = _spans(phoenix, "tokens", want)
    assert len(spans) == want
    traces = {s["context"]["trace_id"] for s in spans}
    roots = [s for s in spans if not s.get("parent_id")]
    assert len(traces) == len(sessions) == 2 and len(roots) == 2
    assert {r["name"] for r in roots} == {"invoke_agent cross_examination"}
    assert {r["attributes"]["voirdire.session.id"] for r in roots} == {s.session_id for s in sessions}
    chats = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    assert {s["name"] for s in chats} == {"chat script.yaml"}
    assert sum(s["attributes"]["gen_ai.usage.input_tokens"] for s in chats) == sum(c.usage.prompt_tokens for c in calls)
    assert sum(s["attributes"]["gen_ai.usage.output_tokens"] for s in chats) == sum(
        c.usage.completion_tokens for c in calls
    )
    assert all("input.value" not in s["attributes"] for s in spans)  # contents only with --otel-content


def test_each_verdict_is_an_annotation_of_its_session_span_with_the_input_and_output(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _examine(tmp_path, monkeypatch, "annotated", "--phoenix", phoenix, "--otel-content")
    sessions = load(out).sessions
    spans = _spans(phoenix, "annotated", 2 * 10)
    roots = {s["attributes"]["voirdire.session.id"]: s for s in spans if not s.get("parent_id")}
    assert set(roots) == set(sessions)
    annotations = _annotations(phoenix, "annotated", [r["context"]["span_id"] for r in roots.values()], 2)
    assert len(annotations) == 2
    for note in annotations:
        sid = note["metadata"]["session_id"]
        verdict = sessions[sid].verdict
        assert verdict is not None and note["span_id"] == roots[sid]["context"]["span_id"]
        assert note["name"] == "cross_examination" and note["annotator_kind"] == "LLM"
        assert note["result"]["label"] == verdict.decision == "correct"
        assert note["result"]["explanation"] == " ".join(verdict.evidence)
        assert roots[sid]["attributes"]["input.value"] == f"claim: {sessions[sid].item['claim']}"
        assert roots[sid]["attributes"]["output.value"] == "correct: The claim is correct."
    answers = [s for s in spans if s["attributes"].get("gen_ai.agent.name") == "examinee"]
    assert answers and all("Is Asmara the capital" in s["attributes"]["input.value"] for s in answers)
    assert all(s["attributes"]["output.value"].startswith("Yes, Asmara") for s in answers)
    sent = json.loads(answers[0]["attributes"]["gen_ai.input.messages"])
    assert sent[0]["role"] == "user" and sent[0]["parts"][0]["type"] == "text"


def test_a_session_sent_again_is_stored_once_and_its_annotation_updated(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _examine(tmp_path, monkeypatch, "again", "--otel", phoenix)  # Phoenix found at the endpoint
    first = _spans(phoenix, "again", 20)
    roots = [s["context"]["span_id"] for s in first if not s.get("parent_id")]
    assert len(first) == 20 and len(_annotations(phoenix, "again", roots, 2)) == 2
    capsys.readouterr()
    assert main(["export", "otel", str(out), "--endpoint", phoenix]) == 2  # refused: sent by the live run
    assert "--resend" in capsys.readouterr().err
    assert main(["export", "otel", str(out), "--endpoint", phoenix, "--resend"]) == 0
    # a third session after the resend: once it is stored, so is what was sent before it
    script = tmp_path / "script.yaml"
    later = tmp_path / "later.jsonl"
    assert main(["examine", CLAIMS[2], "--model", f"scripted:{script}", "--out", str(later), "--max-followups",
                 "1", "--otel", phoenix]) == 0  # fmt: skip
    spans = _spans(phoenix, "again", 30)
    assert len(spans) == 30 and len({s["context"]["trace_id"] for s in spans}) == 3
    assert {s["context"]["span_id"] for s in first} <= {s["context"]["span_id"] for s in spans}
    third = [s["context"]["span_id"] for s in spans if not s.get("parent_id") and s["context"]["span_id"] not in roots]
    assert len(_annotations(phoenix, "again", third, 1)) == 1  # annotated after the resent ones were
    assert len(_annotations(phoenix, "again", roots, 2)) == 2  # updated in place, not added
