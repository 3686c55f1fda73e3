"""Model specs: parsing, printing without secrets, labels, errors, and the provider table."""

from __future__ import annotations

from typing import get_args

import pytest

from voirdire.base.errors import VoirdireError
from voirdire.models import PROVIDERS, ModelSpecError, parse_spec, spec_label
from voirdire.models.spec import Kind


def test_specs_parse_and_print_without_secrets() -> None:
    assert parse_spec("local").kind == "local" and parse_spec("local:/m/x.gguf").path == "/m/x.gguf"
    assert parse_spec("openai:gpt-4o-mini").model == "gpt-4o-mini"
    s = parse_spec("openai-compatible:meta/llama-3@http://10.0.0.1:8000/v1?key=1")
    assert (s.model, s.base_url) == ("meta/llama-3", "http://10.0.0.1:8000/v1?key=1")
    assert s.text == "openai-compatible:meta/llama-3@http://10.0.0.1:8000/v1"
    assert parse_spec("scripted:a.yaml").path == "a.yaml" and parse_spec("human").kind == "human"
    for bad in ("gpt-4", "openai:", "openai-compatible:model", "openai-compatible:m@ftp://x"):
        with pytest.raises(ModelSpecError):
            parse_spec(bad)


@pytest.mark.parametrize(
    "text",
    ["local", "local:/m/x.gguf", "openai:gpt-4o", "openai-compatible:m@http://h:8000/v1", "scripted:a.yaml", "human"],
)
def test_a_spec_prints_as_written(text: str) -> None:
    assert parse_spec(f"  {text} ").text == text
    assert parse_spec(parse_spec(text).text) == parse_spec(text)


def test_spec_errors_say_what_was_expected_without_secrets() -> None:
    with pytest.raises(ModelSpecError) as unknown:
        parse_spec("gpt-4?key=s3cret")
    assert str(unknown.value) == (
        "unknown model spec 'gpt-4?key=***': use local, local:<file.gguf>, openai:<model>, "
        "openai-compatible:<model>@<url>, anthropic:<model>, ollama:<model>[@<url>], "
        "azure:<deployment>@<endpoint>, scripted:<file> or human"
    )
    for bad in ("human:x", "scripted:", "openai", ""):
        with pytest.raises(ModelSpecError, match=r"^unknown model spec"):
            parse_spec(bad)
    with pytest.raises(ModelSpecError) as compatible:
        parse_spec("openai-compatible:llama3")
    assert str(compatible.value) == (
        "model spec 'openai-compatible:llama3': expected openai-compatible:<model>@<base_url>, "
        "e.g. openai-compatible:llama3@http://127.0.0.1:8080/v1"
    )


def test_spec_error_is_a_voirdire_error_and_a_value_error() -> None:
    assert issubclass(ModelSpecError, VoirdireError) and issubclass(ModelSpecError, ValueError)


def test_every_kind_has_a_provider() -> None:
    assert set(PROVIDERS) == set(get_args(Kind))


def test_openai_label_names_the_endpoint_really_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert spec_label("openai:gpt-4o") == "openai:gpt-4o"
    monkeypatch.setenv("OPENAI_BASE_URL", "https://u:pw@proxy.example/v1?token=x")
    assert spec_label("openai:gpt-4o") == "openai:gpt-4o@https://proxy.example/v1"
    assert spec_label("openai-compatible:m@http://h/v1?key=pw") == "openai-compatible:m@http://h/v1"
    assert spec_label(" local ") == "local"


@pytest.mark.parametrize("url", ["http://u:pw-s3cret@h/v1", "http://:pw-s3cret@h/v1", "https://pw-s3cret@h:8443/v1"])
def test_url_credentials_are_refused_without_echoing_them(url: str) -> None:
    with pytest.raises(ModelSpecError) as refused:
        parse_spec(f"openai-compatible:m@{url}")
    message = str(refused.value)
    assert "carries credentials" in message and "api_key_env" in message and "pw-s3cret" not in message


@pytest.mark.parametrize(
    ("url", "problem"),
    [("http://h:99999/v1", "not valid"), ("http://h:0/v1", "port 0"), ("http:///v1", "names no host")],
)
def test_a_malformed_url_is_a_spec_error(url: str, problem: str) -> None:
    with pytest.raises(ModelSpecError, match=problem):
        parse_spec(f"openai-compatible:m@{url}")


@pytest.mark.parametrize(
    ("url", "hosts", "allowed"),
    [
        ("https://api.openai.com/v1", {"api.openai.com"}, True),
        ("https://api.openai.com:443/v1", {"api.openai.com"}, True),
        ("http://api.openai.com/v1", {"api.openai.com"}, False),  # scheme checked, not only the host
        ("http://api.openai.com:8080/v1", {"api.openai.com"}, False),
        ("https://api.openai.com:8443/v1", {"api.openai.com"}, False),
        ("https://api.openai.com.evil.example/v1", {"api.openai.com"}, False),
        ("https://inference.example.com/v1", (), True),  # a key the role named, over https
        ("http://inference.example.com/v1", (), False),  # ... never over plain http to another machine
        ("http://127.0.0.1:8080/v1", (), True),  # loopback: the key never leaves this machine
        ("http://[::1]:8080/v1", (), True),
        ("http://localhost:11434", (), True),
        ("ftp://example.com/v1", (), False),
    ],
)
def test_key_problem_is_the_one_rule_for_where_a_key_goes(url: str, hosts: set[str], allowed: bool) -> None:
    from voirdire.models.spec import key_problem

    assert (key_problem(url, hosts) is None) is allowed


def test_the_openai_key_is_not_sent_to_a_look_alike_url(monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.models.spec import resolve_api_key

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    assert resolve_api_key(parse_spec("openai-compatible:m@http://api.openai.com:8080/v1")) is None
    assert resolve_api_key(parse_spec("openai-compatible:m@http://api.openai.com/v1")) is None
    assert resolve_api_key(parse_spec("openai-compatible:m@https://api.openai.com/v1")) == "sk-test-0123456789abcdef"


def test_a_named_key_is_refused_over_plain_http_to_another_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.models.spec import resolve_api_key

    monkeypatch.setenv("MY_KEY", "sk-test-0123456789abcdef")
    with pytest.raises(ModelSpecError, match=r"MY_KEY is not sent: .*plain http://.*use https://") as caught:
        resolve_api_key(parse_spec("openai-compatible:m@http://inference.example.com/v1"), "MY_KEY")
    assert "sk-test" not in str(caught.value)
    assert resolve_api_key(parse_spec("openai-compatible:m@http://127.0.0.1:8080/v1"), "MY_KEY") is not None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway.example.com/v1")
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY is not sent"):
        resolve_api_key(parse_spec("openai:gpt-4o-mini"))
