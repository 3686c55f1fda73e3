"""``provider/model`` (LiteLLM's and Inspect AI's form) beside ``provider:model``: the same spec, the same run
header, and a model name with a slash of its own is never taken for a provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.test_openai_integration import examiner_replies
from tests.fake_openai import FakeOpenAIServer
from voirdire.cli import main
from voirdire.models import ModelSpecError, parse_spec
from voirdire.transcript import ModelCall, load


@pytest.mark.parametrize(
    ("slash", "colon"),
    [
        ("openai/gpt-4o-mini", "openai:gpt-4o-mini"),
        ("anthropic/claude-haiku-4-5", "anthropic:claude-haiku-4-5"),
        ("ollama/llama3", "ollama:llama3"),
        ("ollama/llama3.2:3b", "ollama:llama3.2:3b"),  # an Ollama tag keeps its colon
        ("ollama/llama3@http://127.0.0.1:11434", "ollama:llama3@http://127.0.0.1:11434"),
        ("azure/gpt-4o-mini@https://r.openai.azure.com", "azure:gpt-4o-mini@https://r.openai.azure.com"),
        ("openai/meta-llama/Llama-3-8B", "openai:meta-llama/Llama-3-8B"),
    ],
)
def test_the_slash_form_is_the_colon_form(slash: str, colon: str) -> None:
    assert parse_spec(slash) == parse_spec(colon)
    assert parse_spec(slash).text == colon


def test_a_model_name_with_a_slash_stays_a_model_name() -> None:
    # A Hugging Face id served on an OpenAI-compatible endpoint: the colon form names the provider, and the slash
    # inside the model name is the model's.
    spec = parse_spec("openai-compatible:meta-llama/Llama-3-8B@http://127.0.0.1:8080/v1")
    assert (spec.kind, spec.model) == ("openai-compatible", "meta-llama/Llama-3-8B")
    assert parse_spec("openai:meta-llama/Llama-3-8B").model == "meta-llama/Llama-3-8B"
    # Specs that take no slash form are not guessed at.
    for text in ("scripted/replies.yaml", "local/model.gguf", "openai/", "human/x"):
        with pytest.raises(ModelSpecError, match=r"^unknown model spec"):
            parse_spec(text)


@pytest.mark.parametrize("name", ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-7B-Instruct"])
def test_a_hub_name_alone_is_one_line_showing_how_to_serve_it(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Alone, an owner that is no provider is not guessed at: the error shows the forms that serve such a model.
    with pytest.raises(ModelSpecError) as found:
        parse_spec(name)
    message = str(found.value)
    assert "\n" not in message and message.startswith(f"model spec {name!r} names no provider")
    assert f"openai-compatible:{name}@http://HOST:PORT/v1" in message and "ollama:NAME" in message
    # the form it shows is a spec, once the server's address is filled in
    served = parse_spec(f"openai-compatible:{name}@http://127.0.0.1:8000/v1")
    assert (served.kind, served.model, served.base_url) == ("openai-compatible", name, "http://127.0.0.1:8000/v1")
    out = tmp_path / "never.jsonl"
    assert main(["examine", "A claim.", "--model", name, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "names no provider" in err and not out.exists()


def _examine(spec: str, script: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(
        ["examine", "The capital of Eritrea is Asmara.", "--answer", "Asmara", "--model", f"examiner={spec}",
         "--model", f"examinee=scripted:{script}", "--out", str(out), "--json"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    ((verdict,),) = [json.loads(capsys.readouterr().out)["verdicts"].values()]
    return str(verdict["decision"])


def test_both_forms_give_the_same_run_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "examinee.yaml"
    script.write_text("rules:\n  - match: regarding your claim\n    reply: Asmara is the capital of Eritrea.\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with FakeOpenAIServer(examiner_replies) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        slash, colon = tmp_path / "slash.jsonl", tmp_path / "colon.jsonl"
        assert _examine("openai/gpt-4o-mini", script, slash, capsys) == "correct"
        assert _examine("openai:gpt-4o-mini", script, colon, capsys) == "correct"
    assert {r["model"] for r in server.requests} == {"gpt-4o-mini"}
    headers = [load(p).header for p in (slash, colon)]
    assert headers[0] is not None and headers[1] is not None
    kept = {"run_id", "created", "command"}  # what differs between any two runs
    assert headers[0].model_dump(exclude=kept) == headers[1].model_dump(exclude=kept)
    assert headers[0].roles["examiner"].spec == f"openai:gpt-4o-mini@{server.url}"
    labels = [{c.model for s in load(p).sessions.values() for c in s.of_kind(ModelCall) if c.role == "examiner"}
              for p in (slash, colon)]  # fmt: skip
    assert labels[0] == labels[1] == {f"openai:gpt-4o-mini@{server.url}"}


def test_voirdire_models_lists_both_forms(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json"]) == 0
    rows = {row["kind"]: row["forms"] for row in json.loads(capsys.readouterr().out)}
    assert rows["openai"] == ["openai:<model>", "openai/<model>"]
    assert rows["ollama"] == ["ollama:<model>[@<url>]", "ollama/<model>[@<url>]"]
    assert rows["scripted"] == ["scripted:<file>"]


def test_both_forms_get_one_default_transcript_name() -> None:
    """A dataset run with no --out is named by a digest of its models: the two spellings of one model are one run
    (and resume each other); other specs keep the names runs already have."""
    from voirdire.models import RoleSettings
    from voirdire.registry import get
    from voirdire.runner import default_out, run_identity

    protocol = get("cross_examination").protocol()

    def name(model: str) -> str:
        identity = run_identity(protocol, {"*": RoleSettings(model=model)})
        return str(default_out(protocol.name, Path("popqa.jsonl"), identity))

    assert name("openai/gpt-4o-mini") == name("openai:gpt-4o-mini")
    assert name("openai/gpt-4o-mini") != name("openai:gpt-4o")
    assert run_identity(protocol, {"*": RoleSettings(model="local")})["roles"]["*"]["model"] == "local"
