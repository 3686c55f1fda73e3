"""Credentials are masked in free text and dropped from URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from voirdire.base.secrets import mask_secrets, redact_url


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


def test_known_secrets_are_masked_in_base64_and_percent_encoded_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    import base64
    from urllib.parse import quote

    key = "k3y/with+odd=chars-0123456789"
    monkeypatch.setenv("SERVICE_TOKEN", key)  # a credential-named variable: masked without being registered
    for prefix in ("", "u:", "ab:", "Bearer "):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode((prefix + key + "!").encode()).decode()
            masked = mask_secrets(f"auth {text} end")
            assert "***" in masked and text not in masked, (prefix, text)
    assert mask_secrets(f"q={quote(key, safe='')}") == "q=***"
    assert mask_secrets("short") == "short"  # fewer than 8 characters are never treated as secrets


def test_registered_secrets_and_bearer_values(monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.base.secrets import register_secret

    register_secret("plain-value-registered-77")
    register_secret("tiny")  # ignored: too short to mask safely
    assert mask_secrets("echo plain-value-registered-77 tiny") == "echo *** tiny"
    assert mask_secrets("Authorization: Bearer eyJhbGciOi.J9x-y_z") == "Authorization: Bearer ***"
    assert mask_secrets("Basic information is free") == "Basic information is free"
    assert mask_secrets("x-api-key=abc&access_token=def&monkey=ok") == "x-api-key=***&access_token=***&monkey=ok"


def test_urls_in_free_text_keep_everything_but_credentials() -> None:
    assert mask_secrets("see https://u:p@h.example/a/b?page=2&token=zz#top.") == "see https://h.example/a/b?page=2#top."
    assert mask_secrets("http://[::1/broken") == "http://***"


def test_mask_tree_masks_every_string_and_the_transcript_stays_valid_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from voirdire.base.secrets import mask_tree
    from voirdire.runner import MaskingWriter
    from voirdire.transcript import Message, read_lines

    monkeypatch.setenv("OPENAI_API_KEY", "sk-tree-secret-000111")
    assert mask_tree({"a": ["x sk-tree-secret-000111", 3, None], "sk-tree-secret-000111": True}) == {
        "a": ["x ***", 3, None],
        "***": True,
    }
    tricky = 'quote: "http://h/p?key=abc\\"" and \n key=v\nsk-tree-secret-000111 {"json": 1}'
    with MaskingWriter(tmp_path / "t.jsonl") as writer:
        writer.write(Message(run_id="r", session_id="s", seq=1, sender="a", receiver="b", content=tricky))
        writer.write(Message(run_id="r", session_id="s", seq=2, sender="a", receiver="b", content="nothing secret"))
    first, second = read_lines(tmp_path / "t.jsonl")
    assert isinstance(first, Message) and isinstance(second, Message)
    assert first.content == 'quote: "http://h/p"" and \n key=***\n*** {"json": 1}'
    assert second.content == "nothing secret"


def test_known_secrets_are_masked_in_hex_of_either_case(monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-proj-hexTEST0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    for text in (key, f"Bearer {key}", f"user:{key}!"):
        for shown in (text.encode().hex(), text.encode().hex().upper()):
            masked = mask_secrets(f"echoed {shown} end")
            assert key.encode().hex() not in masked.lower() and "***" in masked, shown
    assert mask_secrets("deadbeef0123") == "deadbeef0123"  # hex that is no key stays


@pytest.mark.parametrize("gap", ["\n", "\t", "\r\n", " \n "])
def test_a_bearer_value_after_a_line_break_is_masked_in_the_written_line(tmp_path: Path, gap: str) -> None:
    """The writer looks for something to mask in the record's JSON line, where a line break is the two characters
    backslash and n: an authorization value after one must still be found, and masked string by string."""
    from voirdire.runner import MaskingWriter
    from voirdire.transcript import Message, read_lines

    token = "abcdefghijklmnop1234"
    with MaskingWriter(tmp_path / "t.jsonl") as writer:
        content = f"Bearer{gap}{token}"
        writer.write(Message(run_id="r", session_id="s", seq=1, sender="a", receiver="b", content=content))
    assert token not in (tmp_path / "t.jsonl").read_text()
    (message,) = read_lines(tmp_path / "t.jsonl")
    assert isinstance(message, Message) and message.content == f"Bearer{gap}***"


def test_the_writer_writes_each_record_as_model_dump_json_gives_it(tmp_path: Path) -> None:
    """The masking writer serialises a record by its model's serializer, not by ``model_dump_json``: the same bytes,
    for every kind of record, non-ASCII text and None fields included."""
    from voirdire.runner import MaskingWriter
    from voirdire.transcript import Message, ModelCall, RunHeader, Transition, Verdict

    records = [
        RunHeader(run_id="r", protocol="cross_examination"),
        Message(run_id="r", session_id="s", seq=1, sender="a", receiver="b", content="Ünïcode — “quoted” 😀 \x00"),
        ModelCall(run_id="r", session_id="s", seq=2, role="examiner", model="m", request_digest="sha256:0",
                  response="ok", usage={"prompt_tokens": 3, "completion_tokens": 4}, latency_s=0.1),
        Transition(run_id="r", session_id="s", seq=3, from_state=None, to_state="done"),
        Verdict(run_id="r", session_id="s", seq=4, decision="correct", accepted=True, evidence=["e"]),
    ]  # fmt: skip
    with MaskingWriter(tmp_path / "t.jsonl") as writer:
        for record in records:
            writer.write(record)
    lines = (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines == [record.model_dump_json() for record in records]
