"""azure: deployments, the OpenAI-compatible hosted and local servers the provider docs name (each against a fake
server on 127.0.0.1 at the path the real one serves), and ``voirdire models``."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from autogen_core.models import UserMessage

from tests.models.fake_providers import FakeChatCompletions
from voirdire.cli import main
from voirdire.models import ModelSpecError, RoleSettings, build_client, parse_spec, resolve_api_key
from voirdire.models.azure import DEFAULT_API_VERSION
from voirdire.models.spec import PROVIDERS

KEY = "azure-test-key-0123456789"
ASK = [UserMessage(content="Is the answer right?", source="u")]
SCHEMA = {"name": "R", "schema": {"type": "object", "properties": {"answer": {"enum": ["correct", "incorrect"]}}}}

# (what, spec as the provider docs write it, the key's variable): each URL is the server's real base URL.
GEMINI = "https://generativelanguage.googleapis.com/v1beta/openai"
COMPATIBLE = [
    ("Gemini", f"openai-compatible:gemini-2.5-flash@{GEMINI}", "GEMINI_API_KEY"),
    ("Groq", "openai-compatible:llama-3.3-70b-versatile@https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    ("Together", "openai-compatible:Qwen/Qwen2.5-7B-Instruct-Turbo@https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    ("vLLM", "openai-compatible:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1", None),
    ("LM Studio", "openai-compatible:qwen2.5-7b-instruct@http://127.0.0.1:1234/v1", None),
    ("llama.cpp server", "openai-compatible:local@http://127.0.0.1:8080/v1", None),
]


async def test_an_azure_deployment_gets_its_path_version_and_api_key_header(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_AZURE_KEY", KEY)
    with FakeChatCompletions(lambda m: "The claim is correct.") as server:
        spec = parse_spec(f"azure:gpt-4o-mini@{server.url}")
        client = build_client(spec, "MY_AZURE_KEY")
        plain = await client.complete(ASK, RoleSettings(max_tokens=8).create_args())  # type: ignore[attr-defined]
        pinned = RoleSettings(max_tokens=8, api_version="2025-01-01-preview").create_args()
        shaped = await client.complete(ASK, {**pinned, "response_format": SCHEMA}, n=2)  # type: ignore[attr-defined]
        await client.close()
    assert plain.texts == ["The claim is correct."] and shaped.texts == ['{"answer": "correct"}'] * 2
    first, second = server.requests
    assert first.path == f"/openai/deployments/gpt-4o-mini/chat/completions?api-version={DEFAULT_API_VERSION}"
    assert second.path.endswith("?api-version=2025-01-01-preview") and second.body["n"] == 2
    assert all(r.headers["api-key"] == KEY and "authorization" not in r.headers for r in server.requests)
    assert "api_version" not in second.body  # voirdire's own setting, never a generation setting


def test_azure_s_own_key_goes_to_azure_hosts_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    assert resolve_api_key(parse_spec("azure:gpt-4o@https://contoso.openai.azure.com")) == KEY
    assert resolve_api_key(parse_spec("azure:gpt-4o@https://contoso.openai.azure.com.evil.example")) is None
    assert resolve_api_key(parse_spec("azure:gpt-4o@http://contoso.openai.azure.com")) is None  # not https
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://contoso.cognitiveservices.azure.com/")
    assert resolve_api_key(parse_spec("azure:gpt-4o")) == KEY
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT")
    with pytest.raises(ModelSpecError, match="no endpoint; write azure:DEPLOYMENT@"):
        build_client(parse_spec("azure:gpt-4o"))


@pytest.mark.parametrize(("what", "spec", "env"), COMPATIBLE, ids=[c[0] for c in COMPATIBLE])
async def test_the_documented_openai_compatible_servers(
    what: str, spec: str, env: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spec as documented, its host swapped for the fake's: the request reaches the server's own path."""
    model, _, url = spec.removeprefix("openai-compatible:").partition("@")
    path = urlsplit(url).path.rstrip("/")
    if env:
        monkeypatch.setenv(env, f"{what.lower()}-key-0123456789")
    with FakeChatCompletions(lambda m: "Paris.") as server:
        client = build_client(parse_spec(f"openai-compatible:{model}@{server.url}{path}"), env)
        done = await client.complete(ASK, {"max_tokens": 8})  # type: ignore[attr-defined]
        await client.close()
    (seen,) = server.requests
    assert done.texts == ["Paris."] and seen.path == f"{path}/chat/completions" and seen.body["model"] == model
    if env:
        assert seen.headers["authorization"] == f"Bearer {what.lower()}-key-0123456789"
    else:
        assert seen.headers["authorization"] == "Bearer not-needed"  # a placeholder, never another key


def test_the_provider_docs_give_these_specs() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "providers.md").read_text(encoding="utf-8")
    for what, spec, env in COMPATIBLE:
        assert spec in page, what
        assert env is None or env in page


def test_voirdire_models_lists_every_spec_and_its_features(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json"]) == 0
    rows = {row["kind"]: row for row in json.loads(capsys.readouterr().out)}
    assert set(rows) == set(PROVIDERS)
    assert rows["anthropic"]["structured"].startswith("tool use") and rows["anthropic"]["key"] == "ANTHROPIC_API_KEY"
    assert rows["ollama"]["structured"].startswith("format") and rows["ollama"]["samples"].startswith("n requests")
    assert rows["openai"]["samples"] == "n in one request"
    assert main(["models"]) == 0
    assert "ollama:<model>[@<url>]" in capsys.readouterr().out
