"""Where the OpenAI key goes, seen from the wire: a logging HTTP proxy on 127.0.0.1 (the chaos server, which
answers an absolute-form proxy request itself) stands in for the network, so a request to
``http://api.openai.com:8080`` reaches it and its headers can be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos.conftest import questions
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer
from voirdire.cli import main

KEY = "sk-proj-H19wireTEST0123456789abcdefXYZ"


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> ChaosServer:
    server = ChaosServer(replies)
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy_url = server.url.removesuffix("/v1")
    monkeypatch.setenv("HTTP_PROXY", proxy_url)
    monkeypatch.setenv("http_proxy", proxy_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return server


def test_the_openai_key_never_goes_over_plain_http_to_openais_host(
    chaos_cli: None, proxy: ChaosServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = questions(tmp_path / "qs.jsonl", 2), tmp_path / "t.jsonl"
    with proxy:
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(out), "--json", "--no-progress",
             "--model", "openai-compatible:m@http://api.openai.com:8080/v1"]
        )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert proxy.log and all(e.path.startswith("http://api.openai.com:8080/v1/") for e in proxy.log)  # via the proxy
    for entry in proxy.log:
        assert KEY not in repr(entry.headers)
        assert entry.headers.get("authorization") == "Bearer not-needed"


def test_naming_the_key_for_a_plain_http_host_is_refused_before_anything_is_sent(
    chaos_cli: None, proxy: ChaosServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = questions(tmp_path / "qs.jsonl", 2), tmp_path / "t.jsonl"
    with proxy:
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(out), "--no-progress",
             "--model", "openai-compatible:m@http://api.openai.com:8080/v1", "--api-key-env", "OPENAI_API_KEY"]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and not proxy.log
    assert "OPENAI_API_KEY is not sent" in err and "use https://" in err and KEY not in err
