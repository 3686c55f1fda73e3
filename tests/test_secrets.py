"""Credentials are masked in free text and dropped from URLs."""

from __future__ import annotations

import pytest

from voirdire.secrets import mask_secrets, redact_url


def test_mask_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    assert mask_secrets("examiner=openai-compatible:m@http://bob:s3cret@h:8000/v1?api_key=abc") == (
        "examiner=openai-compatible:m@http://h:8000/v1"
    )
    for url in ("http://:s3cret@h/v1", "http://s3cret@h/v1", "https://h/v1?key=s3cret", "https://h/v1?x=1&auth=s3cret"):
        assert "s3cret" not in mask_secrets(f"--model evaluator=openai-compatible:m@{url}")
    assert mask_secrets("token=s3cret and monkey=business") == "token=*** and monkey=business"
    assert mask_secrets("--model examiner=openai:gpt-4o") == "--model examiner=openai:gpt-4o"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-verysecretvalue")
    assert mask_secrets("Error: bad key sk-verysecretvalue") == "Error: bad key ***"


def test_redact_url_keeps_scheme_host_port_and_path() -> None:
    assert redact_url("https://u:pw@api.example.com:8443/v1?key=1#frag") == "https://api.example.com:8443/v1"
    assert redact_url("http://h:99999/v1") == "http://h/v1"  # a malformed port: the host only
    assert redact_url("") == ""
