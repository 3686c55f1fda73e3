"""OpenTelemetry export: a fake OTLP/HTTP collector on 127.0.0.1 receives one trace per session (GenAI attribute
names, token totals equal to the transcript's, the verdict as an evaluation event), message contents only when
asked, no secret in any payload; a collector that is down costs one warning line and never fails the run."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from voirdire.cli import main
from voirdire.transcript import ModelCall, load

SECRET = "zq9-otel-secret-7Hk2mP4vX8"
SCRIPT = f"""\
rules:
  - match: "Your goal is to try to verify"
    reply: "1. Is Asmara the capital of Eritrea?"
  - match: "regarding your claim"
    reply: "Yes, Asmara is the capital of Eritrea (token {SECRET})."
  - match: "follow-up questions\\\\?"
    reply: "No"
  - match: "correct or incorrect"
    reply: "The claim is correct."
default: "I do not know."
"""


class Collector:
    """An OTLP/HTTP traces receiver: every request body kept, every one answered 200."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                outer.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> list[Any]:
        found = []
        for body in self.bodies:
            request = ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    found.extend(scope.spans)
        return found


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    yield c
    c.server.shutdown()


def _attrs(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in span.attributes:
        v = kv.value
        out[kv.key] = v.string_value or v.int_value or v.bool_value or v.double_value
    return out


def _examine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> Path:
    monkeypatch.setenv("VOIRDIRE_TEST_API_KEY", SECRET)  # a credential-named variable: masked everywhere
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "t.jsonl"
    code = main(["examine", "The capital of Eritrea is Asmara.", "--model", f"scripted:{script}", "--out", str(out),
                 "--max-followups", "1", *extra])  # fmt: skip
    assert code == 0
    return out


def test_a_run_sends_one_trace_per_session_with_genai_attributes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector: Collector
) -> None:
    out = _examine(tmp_path, monkeypatch, "--otel", collector.url)
    spans = collector.spans()
    session = load(out).sessions
    calls = [e for s in session.values() for e in s.of_kind(ModelCall)]
    roots = [s for s in spans if not s.parent_span_id]
    assert len(roots) == 1 and len({s.trace_id for s in spans}) == 1
    chats = [s for s in spans if _attrs(s).get("gen_ai.operation.name") == "chat"]
    assert len(chats) == len(calls)
    assert {_attrs(s)["gen_ai.agent.name"] for s in chats} == {"examiner", "examinee"}
    assert sum(_attrs(s).get("gen_ai.usage.input_tokens", 0) for s in chats) == sum(
        c.usage.prompt_tokens for c in calls
    )
    assert sum(_attrs(s).get("gen_ai.usage.output_tokens", 0) for s in chats) == sum(
        c.usage.completion_tokens for c in calls
    )
    steps = [s for s in spans if s.name.startswith("step ")]
    assert steps and all(s.parent_span_id == roots[0].span_id for s in steps)
    evaluation = [e for e in roots[0].events if e.name == "gen_ai.evaluation.result"]
    assert len(evaluation) == 1
    assert {kv.key: kv.value.string_value for kv in evaluation[0].attributes}["gen_ai.evaluation.score.label"] == (
        "correct"
    )
    assert not [e for e in roots[0].events if e.name == "gen_ai.message"]  # contents only with --otel-content
    raw = b"".join(collector.bodies)
    assert SECRET.encode() not in raw


def test_contents_are_sent_only_when_asked_and_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector: Collector
) -> None:
    _examine(tmp_path, monkeypatch, "--otel", collector.url, "--otel-content")
    root = next(s for s in collector.spans() if not s.parent_span_id)
    messages = [e for e in root.events if e.name == "gen_ai.message"]
    assert messages and any("Asmara" in kv.value.string_value for e in messages for kv in e.attributes)
    assert SECRET.encode() not in b"".join(collector.bodies)


def test_a_finished_run_is_exported_by_the_export_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector: Collector, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _examine(tmp_path, monkeypatch)
    assert not collector.bodies
    assert main(["export", "otel", str(out), "--endpoint", collector.url]) == 0
    assert "1 sessions exported as traces" in capsys.readouterr().out
    assert len([s for s in collector.spans() if not s.parent_span_id]) == 1


def test_a_collector_that_is_down_costs_one_warning_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    down = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = down.server_address[1]
    down.server_close()  # a port nothing listens on
    out = _examine(tmp_path, monkeypatch, "--otel", f"http://127.0.0.1:{port}")
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("warning: otel:")]
    assert len(warnings) == 1 and "spans not sent" in warnings[0] and "Traceback" not in err
    assert load(out).sessions and all(s.verdict is not None for s in load(out).sessions.values())


def test_an_endpoint_that_is_not_a_url_is_an_error_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "t.jsonl"
    code = main(["examine", "A claim.", "--model", f"scripted:{script}", "--out", str(out), "--otel", "collector:4318"])
    assert code == 2 and "--otel: 'collector:4318' is not an http(s) URL" in capsys.readouterr().err
    assert not out.exists()  # refused before the run
