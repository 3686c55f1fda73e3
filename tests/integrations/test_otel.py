"""OpenTelemetry export: an in-process OTLP/HTTP receiver (traces and logs) on 127.0.0.1 gets one trace per
session after the GenAI conventions (``invoke_agent``, ``step``, ``chat {model}`` spans, the provider and model,
token totals equal to the transcript's), the messages only when asked and masked, an error status for a failed
session, one ``gen_ai.evaluation.result`` log record per verdict parented to its session's span; ids derived from
the run and session, so exporting again (or a live run, then its transcript) is refused, and a resend repeats the
same ids; a receiver that is down costs one warning line and never fails the run."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
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
FAILING = """\
rules:
  - match: "Your goal is to try to verify"
    reply: "1. Is Asmara the capital of Eritrea?"
  - match: "regarding your claim"
    replies: []
default: "I do not know."
"""
CLAIMS = ["The capital of Eritrea is Asmara.", "Asmara is the largest city of Eritrea.", "Eritrea borders Sudan."]


class Receiver:
    """An OTLP/HTTP receiver of traces (``/v1/traces``) and logs (``/v1/logs``, or a 404 there when it takes
    none, as a traces-only backend answers): every request body kept by path, every other one answered 200."""

    def __init__(self, takes_logs: bool = True) -> None:
        self.bodies: dict[str, list[bytes]] = {"/v1/traces": [], "/v1/logs": []}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                refused = self.path == "/v1/logs" and not takes_logs
                if not refused:
                    outer.bodies.setdefault(self.path, []).append(body)
                self.send_response(404 if refused else 200)
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
        for body in self.bodies["/v1/traces"]:
            for resource in ExportTraceServiceRequest.FromString(body).resource_spans:
                for scope in resource.scope_spans:
                    found.extend(scope.spans)
        return found

    def records(self) -> list[Any]:
        found = []
        for body in self.bodies["/v1/logs"]:
            for resource in ExportLogsServiceRequest.FromString(body).resource_logs:
                for scope in resource.scope_logs:
                    found.extend(scope.log_records)
        return found

    def raw(self) -> bytes:
        return b"".join(b for bodies in self.bodies.values() for b in bodies)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def _attrs(item: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in item.attributes}


def _roots(spans: list[Any]) -> list[Any]:
    return [s for s in spans if not s.parent_span_id]


def _examine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str, script: str = SCRIPT,
             claims: list[str] | None = None, code: int = 0) -> Path:  # fmt: skip
    monkeypatch.setenv("VOIRDIRE_TEST_API_KEY", SECRET)  # a credential-named variable: masked everywhere
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    path = tmp_path / "script.yaml"
    path.write_text(script, encoding="utf-8")
    out = tmp_path / "t.jsonl"
    if claims:
        data = tmp_path / "claims.jsonl"
        data.write_text("".join(json.dumps({"id": f"c{i}", "claim": c}) + "\n" for i, c in enumerate(claims)))
        what = ["--questions", str(data), "--no-progress"]
    else:
        what = [CLAIMS[0]]
    got = main(["examine", *what, "--model", f"scripted:{path}", "--out", str(out), "--max-followups", "1", *extra])
    assert got == code
    return out


def test_a_run_sends_one_trace_per_session_named_after_the_genai_conventions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: Receiver
) -> None:
    out = _examine(tmp_path, monkeypatch, "--otel", receiver.url)
    spans = receiver.spans()
    calls = [e for s in load(out).sessions.values() for e in s.of_kind(ModelCall)]
    roots = _roots(spans)
    assert len(roots) == 1 and len({s.trace_id for s in spans}) == 1
    assert roots[0].name == "invoke_agent cross_examination"
    root = _attrs(roots[0])
    assert root["gen_ai.operation.name"] == "invoke_agent" and root["gen_ai.agent.name"] == "cross_examination"
    assert root["openinference.span.kind"] == "AGENT"
    chats = [s for s in spans if _attrs(s).get("gen_ai.operation.name") == "chat"]
    assert len(chats) == len(calls) and {s.name for s in chats} == {"chat script.yaml"}  # not the spec and its path
    for span in chats:
        a = _attrs(span)
        assert a["gen_ai.provider.name"] == "voirdire.scripted"
        assert a["gen_ai.request.model"] == a["gen_ai.response.model"] == a["llm.model_name"] == "script.yaml"
        assert a["gen_ai.response.finish_reasons"] == ["stop"] and a["openinference.span.kind"] == "LLM"
        assert a["llm.token_count.total"] == a["gen_ai.usage.input_tokens"] + a["gen_ai.usage.output_tokens"]
        assert "gen_ai.input.messages" not in a and "input.value" not in a  # contents only with --otel-content
    assert {_attrs(s)["gen_ai.agent.name"] for s in chats} == {"examiner", "examinee"}
    assert sum(_attrs(s)["gen_ai.usage.input_tokens"] for s in chats) == sum(c.usage.prompt_tokens for c in calls)
    assert sum(_attrs(s)["gen_ai.usage.output_tokens"] for s in chats) == sum(c.usage.completion_tokens for c in calls)
    steps = [s for s in spans if s.name.startswith("step ")]
    assert steps and all(s.parent_span_id == roots[0].span_id for s in steps)
    assert all(s.parent_span_id in {p.span_id for p in steps} for s in chats)
    assert roots[0].status.code == 0  # unset: the session reached its verdict
    assert not roots[0].events  # the verdict is a log record, not a span event
    assert SECRET.encode() not in receiver.raw()


def test_each_verdict_is_one_evaluation_log_record_parented_to_its_session_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: Receiver
) -> None:
    out = _examine(tmp_path, monkeypatch, "--otel", receiver.url, claims=CLAIMS)
    sessions = load(out).sessions
    roots = _roots(receiver.spans())
    assert len(roots) == len(sessions) == 3 and len({r.trace_id for r in roots}) == 3
    records = receiver.records()
    assert len(records) == 3 and {r.event_name for r in records} == {"gen_ai.evaluation.result"}
    by_session = {_attrs(r)["voirdire.session.id"]: r for r in roots}
    for record in records:
        a = _attrs(record)
        root = by_session[a["voirdire.session.id"]]
        assert (record.trace_id, record.span_id) == (root.trace_id, root.span_id)
        verdict = sessions[a["voirdire.session.id"]].verdict
        assert verdict is not None
        assert a["gen_ai.evaluation.name"] == "cross_examination"
        assert a["gen_ai.evaluation.score.label"] == verdict.decision == "correct"
        assert a["gen_ai.evaluation.explanation"] == " ".join(verdict.evidence)


def test_contents_are_sent_only_when_asked_as_genai_messages_and_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: Receiver
) -> None:
    _examine(tmp_path, monkeypatch, "--otel", receiver.url, "--otel-content")
    chats = {_attrs(s)["gen_ai.agent.name"] + " " + _attrs(s)["input.value"][:20]: _attrs(s) for s in
             receiver.spans() if _attrs(s).get("gen_ai.operation.name") == "chat"}  # fmt: skip
    answer = next(a for a in chats.values() if a["gen_ai.agent.name"] == "examinee")
    sent = json.loads(answer["gen_ai.input.messages"])
    assert [m["role"] for m in sent] == ["user"] and sent[0]["parts"][0]["type"] == "text"
    assert "Is Asmara the capital of Eritrea?" in sent[0]["parts"][0]["content"]
    replied = json.loads(answer["gen_ai.output.messages"])
    assert replied[0]["role"] == "assistant" and replied[0]["finish_reason"] == "stop"
    assert replied[0]["parts"][0]["content"].startswith("Yes, Asmara is the capital of Eritrea (token ***")
    assert answer["output.value"] == replied[0]["parts"][0]["content"]
    assert answer["llm.input_messages.0.message.role"] == "user"
    assert answer["llm.output_messages.0.message.content"] == answer["output.value"]
    root = _attrs(_roots(receiver.spans())[0])
    assert root["input.value"] == f"claim: {CLAIMS[0]}"  # the item's shown fields (the question is empty)
    assert root["output.value"] == "correct: The claim is correct."
    assert SECRET.encode() not in receiver.raw()


def test_a_failed_session_ends_in_an_error_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: Receiver
) -> None:
    _examine(tmp_path, monkeypatch, "--otel", receiver.url, script=FAILING, code=3)
    root = _roots(receiver.spans())[0]
    assert root.status.code == 2 and "ScriptExhausted" in root.status.message  # STATUS_CODE_ERROR
    assert _attrs(root)["error.type"] == "ModelCallError"
    assert not receiver.records()  # no verdict, no evaluation


def _ids(spans: list[Any]) -> set[tuple[bytes, bytes]]:
    return {(s.trace_id, s.span_id) for s in spans}


def test_exporting_again_is_refused_and_a_resend_repeats_the_same_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _examine(tmp_path, monkeypatch, claims=CLAIMS[:2])
    assert not receiver.spans()
    assert main(["export", "otel", str(out), "--endpoint", receiver.url]) == 0
    assert "2 sessions exported as traces" in capsys.readouterr().out
    first = receiver.spans()
    assert len(_roots(first)) == 2 and len({s.trace_id for s in first}) == 2
    assert main(["export", "otel", str(out), "--endpoint", receiver.url]) == 2
    err = capsys.readouterr().err
    assert "the 2 sessions of t.jsonl were sent to" in err and "--resend" in err and len(err.splitlines()) == 1
    assert receiver.spans() == first  # nothing sent twice: one trace per session
    assert main(["export", "otel", str(out), "--endpoint", receiver.url, "--resend"]) == 0
    again = receiver.spans()[len(first) :]
    assert _ids(again) == _ids(first) and len({s.trace_id for s in receiver.spans()}) == 2
    assert len(receiver.records()) == 4  # each verdict once per send


def test_a_live_run_then_its_transcript_makes_no_second_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _examine(tmp_path, monkeypatch, "--otel", receiver.url, claims=CLAIMS[:2])
    live = receiver.spans()
    assert len(_roots(live)) == 2
    capsys.readouterr()
    assert main(["export", "otel", str(out), "--endpoint", receiver.url]) == 2
    assert "were sent to" in capsys.readouterr().err and receiver.spans() == live
    assert main(["export", "otel", str(out), "--endpoint", receiver.url, "--resend"]) == 0
    assert _ids(receiver.spans()[len(live) :]) == _ids(live)  # the transcript's spans are the live run's, id for id
    other = Receiver()  # the ledger is per receiver: another one gets everything
    try:
        assert main(["export", "otel", str(out), "--endpoint", other.url]) == 0
        assert _ids(other.spans()) == _ids(live)
    finally:
        other.server.shutdown()


def test_only_the_sessions_a_receiver_has_not_had_are_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _examine(tmp_path, monkeypatch, "--otel", receiver.url)  # the first claim, sent live
    script = tmp_path / "script.yaml"
    assert main(["examine", CLAIMS[1], "--model", f"scripted:{script}", "--out", str(out), "--max-followups",
                 "1"]) == 0  # fmt: skip
    live = receiver.spans()
    capsys.readouterr()
    assert main(["export", "otel", str(out), "--endpoint", receiver.url]) == 0
    captured = capsys.readouterr()
    assert "1 session exported as traces" in captured.out
    assert "1 session sent to" in captured.err and "were not sent again (--resend sends them)" in captured.err
    added = receiver.spans()[len(live) :]
    assert len(_roots(added)) == 1 and not _ids(added) & _ids(live)
    assert _attrs(_roots(added)[0])["voirdire.item.id"] != _attrs(_roots(live)[0])["voirdire.item.id"]


def test_span_events_carry_the_verdict_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: Receiver
) -> None:
    _examine(tmp_path, monkeypatch, "--otel", receiver.url, "--otel-span-events")
    root = _roots(receiver.spans())[0]
    events = [e for e in root.events if e.name == "gen_ai.evaluation.result"]
    assert len(events) == 1 and _attrs(events[0])["gen_ai.evaluation.score.label"] == "correct"
    assert not receiver.records()


def test_a_receiver_that_takes_no_logs_is_said_once_with_the_option_that_helps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    traces_only = Receiver(takes_logs=False)
    try:
        _examine(tmp_path, monkeypatch, "--otel", traces_only.url)
        assert len(_roots(traces_only.spans())) == 1
    finally:
        traces_only.server.shutdown()
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning: otel:")]
    assert len(warnings) == 1 and "takes no OTLP logs (HTTP 404)" in warnings[0]
    assert "1 verdict not sent" in warnings[0] and "--otel-span-events" in warnings[0]


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
    assert not (tmp_path / "t.jsonl.otel-sent").exists()  # nothing was accepted: nothing noted


def test_an_endpoint_that_is_not_a_url_is_an_error_naming_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "t.jsonl"
    code = main(["examine", "A claim.", "--model", f"scripted:{script}", "--out", str(out), "--otel", "collector:4318"])
    assert code == 2 and "--otel: 'collector:4318' is not an http(s) URL" in capsys.readouterr().err
    assert not out.exists()  # refused before the run
    code = main(["examine", "A claim.", "--model", f"scripted:{script}", "--out", str(out), "--phoenix", "phoenix"])
    assert code == 2 and "--phoenix: 'phoenix' is not an http(s) URL" in capsys.readouterr().err
    assert not out.exists()
