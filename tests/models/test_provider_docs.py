"""Every command of docs/providers.md runs as written, as the README test runs the README's (``tests/core/
test_readme.py``, whose machinery this uses): ``anthropic:`` specs answer from a fake Messages API
(``ANTHROPIC_BASE_URL``), ``ollama:`` from a fake Ollama (``OLLAMA_HOST``, and any ``ollama:...@URL``), ``azure:``
endpoints from a fake chat-completions server, ``openai-compatible:`` URLs from the README test's fake server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.core import test_readme
from tests.core.test_readme import fake_models, folder, responder, run_document  # noqa: F401  (fixtures)
from tests.models.fake_providers import FakeAnthropic, FakeChatCompletions, FakeOllama

KEY = "sk-ant-docs-test-0123456789"


@pytest.fixture
def providers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeAnthropic, FakeOllama, FakeChatCompletions]]:
    with FakeAnthropic(responder) as claude, FakeOllama(responder) as ollama, FakeChatCompletions(responder) as azure:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        monkeypatch.setenv("OLLAMA_HOST", ollama.url)
        for var in ("GEMINI_API_KEY", "GROQ_API_KEY", "TOGETHER_API_KEY"):
            monkeypatch.setenv(var, f"{var.lower()}-docs-test-0123456789")
        original = test_readme.on_fake_server

        def on_fakes(text: str, url: str) -> str:
            text = re.sub(r"(ollama:[^@\s\"']+)@[^\s\"']+", rf"\1@{ollama.url}", original(text, url))
            return re.sub(r"(azure:[^@\s\"']+)@[^\s\"']+", rf"\1@{azure.url}", text)

        monkeypatch.setattr(test_readme, "on_fake_server", on_fakes)
        monkeypatch.setattr(test_readme, "SKIPS", (*test_readme.SKIPS, (r"^export\b", "sets the reader's own key")))
        yield claude, ollama, azure


@pytest.mark.filterwarnings("ignore:examiner and examinee are both served")
def test_every_command_of_the_providers_page_runs(
    folder: Path,  # noqa: F811
    fake_models: str,  # noqa: F811
    providers: tuple[FakeAnthropic, FakeOllama, FakeChatCompletions],
    capsys: pytest.CaptureFixture[str],
) -> None:
    claude, ollama, azure = providers
    run_document("docs/providers.md", fake_models, capsys)
    assert claude.requests and ollama.requests and azure.requests  # every provider of the page was used
    assert any("tools" in r.body for r in claude.requests) and any("format" in r.body for r in ollama.requests)
    assert {r.path.partition("?")[2] for r in azure.requests} == {"api-version=2024-10-21"}
    assert KEY not in "".join(p.read_text(errors="replace") for p in folder.rglob("*.jsonl"))
