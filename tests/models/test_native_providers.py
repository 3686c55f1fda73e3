"""anthropic: and ollama: roles against fake Messages API and Ollama servers on 127.0.0.1: a whole examination, the
key's path, reply schemas, retry headers, samples and the clients' reading of bad replies."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path

import pytest
from autogen_core.models import AssistantMessage, SystemMessage, UserMessage

from tests.core.test_readme import responder
from tests.models.fake_providers import FakeAnthropic, FakeOllama
from voirdire.agents.model_agent import is_transient, retry_after
from voirdire.cli import main
from voirdire.models import ModelSpecError, parse_spec, resolve_api_key, spec_label
from voirdire.models.anthropic import AnthropicClient, turns
from voirdire.models.base import InvalidReply, ModelHTTPError, ReplyTimeout
from voirdire.models.ollama import OllamaClient, server_url
from voirdire.transcript import ModelCall, load

KEY = "sk-ant-test-0123456789abcdef"
SCHEMA = {
    "name": "Decision",
    "schema": {"type": "object", "properties": {"answer": {"enum": ["correct", "incorrect"]}}, "required": ["answer"]},
}


@pytest.fixture
def anthropic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("OLLAMA_HOST", raising=False)


def examine(anthropic_url: str, ollama_url: str, out: Path, *extra: str) -> int:
    return main(
        [
            "examine",
            "The Greek god of marriage is Hymenaios.",
            "--model",
            "examiner=anthropic:claude-haiku-4-5",
            "--model",
            f"examinee=ollama:llama3.2@{ollama_url}",
            "--out",
            str(out),
            "--json",
            *extra,
        ]
    )


@pytest.mark.parametrize("structured", [False, True])
def test_an_examination_with_an_anthropic_examiner_and_an_ollama_examinee(
    structured: bool,
    anthropic_env: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "t.jsonl"
    with FakeAnthropic(responder) as claude, FakeOllama(responder) as ollama:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        code = examine(claude.url, ollama.url, out, *(["--structured"] if structured else []))
    printed = capsys.readouterr()
    assert code == 0, printed.err
    ((verdict,),) = [json.loads(printed.out)["verdicts"].values()]
    assert verdict["decision"] == "correct"
    # The key went to the Anthropic server only, as its x-api-key, and nowhere else.
    assert claude.requests and all(r.headers["x-api-key"] == KEY for r in claude.requests)
    assert all(r.headers["anthropic-version"] == "2023-06-01" for r in claude.requests)
    assert ollama.requests and not any(KEY in json.dumps(r.headers) + json.dumps(r.body) for r in ollama.requests)
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    assert KEY not in written + printed.out + printed.err
    # The setup prompt travels as the first user turn; the examinee's claim context as Ollama's system message.
    assert claude.requests[0].body["messages"][0]["content"].startswith("Your goal is to try to verify")
    assert all(r.body["stream"] is False and r.body["keep_alive"] for r in ollama.requests)
    assert ollama.requests[0].body["messages"][0]["role"] == "system"
    calls = [e for s in load(out).sessions.values() for e in s.of_kind(ModelCall)]
    assert {c.model for c in calls if c.role == "examiner"} == {f"anthropic:claude-haiku-4-5@{claude.url}"}
    assert {c.model for c in calls if c.role == "examinee"} == {f"ollama:llama3.2@{ollama.url}"}
    assert all(c.usage.prompt_tokens > 0 for c in calls)
    forced = [r.body for r in claude.requests if "tools" in r.body]
    if structured:  # the closed answers (follow-up Yes/No, the decision) asked through a forced tool
        assert forced and all(b["tool_choice"] == {"type": "tool", "name": b["tools"][0]["name"]} for b in forced)
        assert {c.enforcement for c in calls if c.role == "examiner"} >= {"tool_use"}
    else:
        assert not forced and not any("format" in r.body for r in ollama.requests)
        assert {c.enforcement for c in calls} == {None}


@pytest.mark.parametrize(
    ("status", "headers", "wait"),
    [(429, {"retry-after": "0.05"}, 0.05), (529, {"retry-after-ms": "20"}, 0.02), (429, {"retry-after-ms": "0"}, 0.0)],
)
async def test_rate_limits_and_overload_are_transient_with_the_servers_wait(
    status: int, headers: dict[str, str], wait: float
) -> None:
    with FakeAnthropic(responder, fail=[(status, headers)]) as claude:
        client = AnthropicClient("claude-haiku-4-5", api_key=KEY, base=claude.url)
        with pytest.raises(ModelHTTPError) as failed:
            await client.complete([UserMessage(content="Are you sure?", source="u")], {"max_tokens": 8})
        assert is_transient(failed.value) and failed.value.status_code == status
        assert retry_after(failed.value) == pytest.approx(wait)
        done = await client.complete([UserMessage(content="Are you sure?", source="u")], {"max_tokens": 8})
        await client.close()
    assert done.texts == ["Yes"]


def test_a_run_waits_out_a_429_and_a_529_and_records_the_retries(
    anthropic_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.jsonl"
    fail = [(429, {"retry-after": "0"}), (529, {"retry-after-ms": "1"})]
    with FakeAnthropic(responder, fail=fail) as claude, FakeOllama(responder) as ollama:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        assert examine(claude.url, ollama.url, out) == 0, capsys.readouterr().err
    calls = [e for s in load(out).sessions.values() for e in s.of_kind(ModelCall)]
    assert sum(c.retries for c in calls if c.role == "examiner") == 2


async def test_a_schema_is_a_forced_tool_and_the_reply_its_input() -> None:
    with FakeAnthropic(lambda m: "The claim is incorrect.") as claude:
        client = AnthropicClient("claude-haiku-4-5", api_key=KEY, base=claude.url)
        done = await client.complete(
            [SystemMessage(content="Judge."), UserMessage(content="correct or incorrect?", source="u")],
            {"max_tokens": 16, "temperature": 0.0, "seed": 7, "stop": "\n", "response_format": SCHEMA},
            n=3,
        )
        await client.close()
    assert done.texts == ['{"answer": "incorrect"}'] * 3 and done.enforcement == "tool_use" and done.requests == 3
    body = claude.requests[0].body
    assert body["system"] == "Judge." and body["stop_sequences"] == ["\n"] and "seed" not in body
    assert body["tools"][0]["input_schema"] == SCHEMA["schema"]
    assert done.usage.prompt_tokens == 36  # three requests of 12


async def test_ollama_asks_with_format_and_draws_samples_with_differing_seeds() -> None:
    with FakeOllama(lambda m: "The claim is correct.") as server:
        client = OllamaClient("llama3.2", url=server.url)
        done = await client.complete(
            [UserMessage(content="correct or incorrect?", source="u")],
            {"max_tokens": 16, "temperature": 0.7, "seed": 5, "response_format": SCHEMA},
            n=2,
        )
        await client.close()
    assert done.texts == ['{"answer": "correct"}'] * 2 and done.enforcement == "format"
    bodies = [r.body for r in server.requests]
    assert sorted(b["options"]["seed"] for b in bodies) == [5, 6]
    assert all(b["format"] == SCHEMA["schema"] and b["options"]["num_predict"] == 16 for b in bodies)
    assert all("authorization" not in r.headers for r in server.requests)


def test_anthropic_turns_alternate_from_the_user() -> None:
    system, out = turns(
        [
            SystemMessage(content="S1"),
            SystemMessage(content="S2"),
            UserMessage(content="a", source="u"),
            SystemMessage(content="later"),
            AssistantMessage(content="b", source="x"),
            AssistantMessage(content="", source="x"),
        ]
    )
    assert system == "S1\n\nS2"
    assert out == [{"role": "user", "content": "a\n\nlater"}, {"role": "assistant", "content": "b\n\n"}]
    assert turns([AssistantMessage(content="hi", source="x")])[1][0]["role"] == "user"


@pytest.mark.parametrize(
    "body",
    [
        {"content": "text"},
        {"content": [{"type": "text", "text": 3}]},
        {"content": [{"type": "tool_use", "input": "x"}]},
        {"content": [], "usage": {"input_tokens": -1}},
        {"content": [], "usage": {"output_tokens": 10**400}},
    ],
)
def test_a_200_that_is_not_a_message_is_an_invalid_reply(body: dict[str, object]) -> None:
    client = AnthropicClient("m", api_key=KEY, base="http://127.0.0.1:9")
    with pytest.raises(InvalidReply):
        client._read(body)


def test_specs_labels_and_where_keys_go(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OLLAMA_HOST", "gpu1:11434")
    assert spec_label("anthropic:claude-haiku-4-5") == "anthropic:claude-haiku-4-5"
    assert parse_spec("ollama:llama3.2:3b@http://127.0.0.1:1/").model == "llama3.2:3b"
    assert server_url(None) == "http://gpu1:11434"
    assert resolve_api_key(parse_spec("anthropic:claude-haiku-4-5")) == KEY
    assert resolve_api_key(parse_spec("ollama:llama3.2")) is None  # Ollama is sent no key unless a role names one
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://proxy.example:8080")  # plain http off this machine
    with pytest.raises(ModelSpecError, match="ANTHROPIC_API_KEY is not sent"):
        resolve_api_key(parse_spec("anthropic:claude-haiku-4-5"))
    monkeypatch.setenv("MY_KEY", KEY)
    with pytest.raises(ModelSpecError, match="MY_KEY is not sent"):  # OLLAMA_HOST is plain http to another host
        resolve_api_key(parse_spec("ollama:llama3.2"), "MY_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    with pytest.raises(ModelSpecError, match="needs ANTHROPIC_API_KEY"):
        resolve_api_key(parse_spec("anthropic:claude-haiku-4-5"))
    with pytest.raises(ModelSpecError, match="carries credentials"):
        parse_spec("ollama:m@http://u:p@h/")


def test_a_refused_connection_is_named(anthropic_env: None) -> None:
    async def go() -> None:
        client = OllamaClient("llama3.2", url="http://127.0.0.1:9")
        try:
            await client.complete([UserMessage(content="x", source="u")], {})
        finally:
            await client.close()

    with pytest.raises(Exception, match=r"127\.0\.0\.1:9") as failed:
        asyncio.run(go())
    assert is_transient(failed.value)


def test_a_role_s_own_key_a_cached_rerun_and_the_cost_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("TEAM_CLAUDE_KEY", KEY)  # the role names its key's variable
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    cache = tmp_path / "cache.jsonl"
    with FakeAnthropic(responder) as claude, FakeOllama(responder) as ollama:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        for k in range(2):
            out = tmp_path / f"t{k}.jsonl"
            extra = ("--api-key-env", "examiner=TEAM_CLAUDE_KEY", "--cache", str(cache))
            assert examine(claude.url, ollama.url, out, *extra) == 0, capsys.readouterr().err
            if k == 0:
                sent = len(claude.requests), len(ollama.requests)
        assert (len(claude.requests), len(ollama.requests)) == sent  # the second run: every call from the cache
    assert all(r.headers["x-api-key"] == KEY for r in claude.requests)
    calls = [e for s in load(tmp_path / "t1.jsonl").sessions.values() for e in s.of_kind(ModelCall)]
    assert calls and all(c.cached for c in calls)
    # The first run's examiner is priced from the packaged table (claude-haiku-4-5: $1 / $5 per million tokens).
    capsys.readouterr()
    assert main(["report", str(tmp_path / "t0.jsonl"), "--json"]) == 0
    printed = capsys.readouterr().out
    assert KEY not in printed
    usage = json.loads(printed)["usage"]
    examiner = usage["examiner"]
    price = (examiner["prompt_tokens"] * 1.00 + examiner["completion_tokens"] * 5.00) / 1e6
    assert examiner["prompt_tokens"] > 0 and examiner["cost_usd"] == pytest.approx(price, abs=1e-6)
    assert usage["examinee"]["cost_usd"] is None  # Ollama's model has no price unless the user gives one


async def test_a_reply_past_the_role_s_deadline_is_a_transient_timeout() -> None:
    release = threading.Event()

    def slow(messages: list[dict[str, object]]) -> str:
        release.wait(5)  # the fake holds its reply until the client has given up
        return "late"

    with FakeOllama(slow) as server:
        client = OllamaClient("llama3.2", url=server.url)
        try:
            with pytest.raises(ReplyTimeout, match=r"within 0\.2 s") as failed:
                await client.complete([UserMessage(content="x", source="u")], {"timeout": 0.2})
        finally:
            release.set()
            await client.close()
    assert is_transient(failed.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("anthropic:", "expected anthropic:<model>"),
        ("ollama:", "expected ollama:<model>[@<url>]"),
        ("ollama:m@ftp://x", "expected ollama:<model>[@<url>]"),
        ("azure:", "expected azure:<deployment>@<endpoint>"),
    ],
)
def test_a_spec_that_does_not_fit_says_what_was_expected(text: str, expected: str) -> None:
    with pytest.raises(ModelSpecError, match=re.escape(f"model spec {text!r}: {expected}")):
        parse_spec(text)
