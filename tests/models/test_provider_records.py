"""What a provider's role leaves on record and on the wire: the ``ollama:`` server the transcript names (as
anthropic's base URL), an Azure key withheld from a host that is not Azure's (said once, no empty ``api-key``
header), and the price of a role played through Inspect by its model's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.test_readme import responder
from tests.models.fake_providers import FakeChatCompletions, FakeOllama
from voirdire.cli import main
from voirdire.reports.prices import Price, Prices, load_prices, model_name, run_cost
from voirdire.transcript import load

CLAIM = "The Greek god of marriage is Hymenaios."


def test_the_ollama_server_is_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    with FakeOllama(responder) as ollama:
        monkeypatch.setenv("OLLAMA_HOST", ollama.url)
        out = tmp_path / "o.jsonl"
        assert main(["examine", CLAIM, "--model", "ollama:llama3.2", "--out", str(out), "--json"]) == 0
        assert ollama.requests
    header = load(out).header
    assert header is not None
    assert {b.spec for b in header.roles.values()} == {f"ollama:llama3.2@{ollama.url}"}
    monkeypatch.delenv("OLLAMA_HOST")
    from voirdire.models import spec_label

    assert spec_label("ollama:llama3.2") == "ollama:llama3.2"  # the default server, as before
    assert spec_label("ollama:llama3.2@http://gpu1:11434") == "ollama:llama3.2@http://gpu1:11434"


def test_an_azure_key_withheld_from_another_host_is_said_once_and_no_empty_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-0123456789abcdef")
    with FakeChatCompletions(responder) as gateway:
        spec = f"azure:gpt-4o-mini@{gateway.url}"
        code = main(["examine", CLAIM, "--model", spec, "--out", str(tmp_path / "a.jsonl"), "--json"])
        err = capsys.readouterr().err
        assert code == 0 and gateway.requests
    assert all("api-key" not in r.headers for r in gateway.requests)
    assert err.count("AZURE_OPENAI_API_KEY is not sent") == 1
    assert 'api_key_env = "AZURE_OPENAI_API_KEY"' in err and "--api-key-env ROLE=AZURE_OPENAI_API_KEY" in err
    assert "azure-key-0123456789abcdef" not in err


def test_a_role_played_through_inspect_is_priced_by_its_model_name() -> None:
    label = "client:InspectModelClient:inspect/openai/gpt-4o-mini"
    assert model_name(label) == ("gpt-4o-mini", None)
    assert model_name("client:InspectModelClient:inspect/openai/azure/my-deployment") == ("my-deployment", None)
    assert model_name("client:InspectModelClient:inspect/mockllm/model")[1] == "mockllm"  # free
    packaged = load_prices(env={})
    assert packaged.pricing(label).price == packaged.pricing("openai:gpt-4o-mini").price is not None
    prices = Prices({"gpt-4o-mini": Price(input=1.0, output=2.0)})
    cost = run_cost({label: (1_000_000, 500_000, 3)}, prices)
    assert cost.usd == pytest.approx(2.0) and not cost.partial
