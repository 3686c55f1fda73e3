"""Numbers and structures read from outside are checked where they enter: token counts from a server, the nesting of
a transcript line. Each is one error naming the file and line (or the reply), never an OverflowError or a
RecursionError downstream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voirdire.base.limits import MAX_JSON_DEPTH, TOKEN_COUNT_MAX, token_count, too_deep
from voirdire.models.base import InvalidReply
from voirdire.models.openai import _read_completion
from voirdire.transcript import TranscriptError, load


def test_token_counts_are_bounded_non_negative_whole_numbers() -> None:
    assert token_count(0) == 0 and token_count(TOKEN_COUNT_MAX) == TOKEN_COUNT_MAX
    for bad in (-1, TOKEN_COUNT_MAX + 1, 10**400, 1.5, "12", True, None):
        assert token_count(bad) is None, bad


def test_nesting_is_measured_outside_strings_in_linear_time() -> None:
    assert too_deep(b'{"a":' * 5000)
    assert not too_deep(b'{"a": "' + b"{[" * 5000 + b'"}')  # brackets in a string do not nest
    assert not too_deep(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH)
    assert too_deep(b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1))
    assert not too_deep(b'{"x": "\\"{{{{"}', 2)  # an escaped quote does not end the string


@pytest.mark.parametrize("usage", [{"prompt_tokens": 10**400}, {"completion_tokens": -1800}, {"prompt_tokens": "lots"}])
def test_a_reply_with_absurd_usage_is_an_invalid_reply(usage: dict[str, object]) -> None:
    data = {"choices": [{"message": {"content": "Paris."}, "finish_reason": "stop"}], "usage": usage}
    with pytest.raises(InvalidReply, match="usage counts that are not whole numbers from 0 to 1,000,000,000"):
        _read_completion(json.loads(json.dumps(data)))


def _transcript(tmp_path: Path, bad_line: str) -> Path:
    header = {"kind": "header", "run_id": "r1", "protocol": "p"}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(header) + "\n" + bad_line + "\n" + json.dumps(header) + "\n")
    return path


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"a":' * 5000, f"JSON nested more than {MAX_JSON_DEPTH} levels deep"),
        (
            '{"kind": "model_call", "seq": 1, "session_id": "s", "run_id": "r1", "role": "r", "model": "m", '
            '"request_digest": "d", "response": "x", "latency_s": 0.1, "usage": {"prompt_tokens": -1800}}',
            "usage.prompt_tokens: Input should be greater than or equal to 0",
        ),
        ('{"question": "Who wrote Hamlet?"}', "no 'kind' field"),
    ],
)
def test_a_bad_transcript_line_is_named_by_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = _transcript(tmp_path, line)
    with pytest.raises(TranscriptError) as caught:
        load(path)
    assert str(caught.value).startswith(f"{path}:2: not a transcript record (") and problem in str(caught.value)
    assert "discriminator" not in str(caught.value)


def test_a_reply_past_the_cap_is_cut_with_the_cut_noted() -> None:
    from voirdire.base.limits import cut_reply, shortened

    assert cut_reply("short", 1000) == ("short", 0)
    kept, cut = cut_reply("x" * 5000, 1000)
    assert cut == 4000 and kept.startswith("x" * 1000) and "4,000 more characters" in kept
    assert len(shortened("y" * 10_000)) < 2100 and shortened("ok") == "ok"


def test_a_megabyte_reply_is_kept_once_and_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.cli import main
    from voirdire.transcript import Message, ModelCall, ParseFailure, read_lines

    monkeypatch.setenv("VOIRDIRE_MAX_REPLY_CHARS", "20000")
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"rules": [{"match": ".", "reply": "z" * 1_000_000}]}))
    out = tmp_path / "t.jsonl"
    main(["examine", "The sky is green.", "--model", f"scripted:{script}", "--out", str(out), "--no-progress"])
    records = list(read_lines(out))
    calls = [r for r in records if isinstance(r, ModelCall)]
    assert calls and all(len(c.response) < 20_200 and c.finish_reason == "cut" for c in calls)
    assert all("980,000 more characters after the first 20,000" in c.response for c in calls)
    assert all(len(r.raw) < 2100 for r in records if isinstance(r, ParseFailure))
    assert all(len(r.content) < 20_200 for r in records if isinstance(r, Message))
    assert out.stat().st_size < 20_200 * (len(calls) * 3 + 10)  # was 8 MB for a 1 MB reply


@pytest.mark.parametrize("bad", ["0", "12", "lots", "1e9"])
def test_the_reply_cap_must_be_a_whole_number(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.base.limits import LimitError, max_reply_chars

    monkeypatch.setenv("VOIRDIRE_MAX_REPLY_CHARS", bad)
    with pytest.raises(LimitError, match="VOIRDIRE_MAX_REPLY_CHARS"):
        max_reply_chars()


def test_a_forged_cache_line_costs_a_call_never_a_crash(tmp_path: Path) -> None:
    from voirdire.transcript.cache import ResponseCache

    path = tmp_path / "c.jsonl"
    good = {"digest": "sha256:ok", "reply": {"text": "Paris.", "prompt_tokens": 3, "completion_tokens": 1}}
    lines = [
        good,
        {"digest": "sha256:neg", "reply": {"text": "x", "prompt_tokens": -1800}},
        {"digest": "sha256:big", "reply": {"text": "x", "completion_tokens": 10**400}},
        [1, 2],
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"a":' * 5000 + "\n")
    cache = ResponseCache(path)
    assert len(cache) == 1 and cache.get("sha256:ok") is not None
