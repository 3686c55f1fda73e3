"""One rule counts model calls: the report's usage per role and model, and the viewer's per-attempt counts per
model (read from the bytes by patterns, or parsed), agree on every kind of call: answered, cached, coalesced."""

from __future__ import annotations

from pathlib import Path

from voirdire.reports import report_file
from voirdire.transcript import CallTally, ModelCall, RunHeader, SessionStart, TokenUsage, TranscriptWriter
from voirdire.web.index import TranscriptIndex


def call(seq: int, model: str, p: int, c: int, **more: object) -> ModelCall:
    return ModelCall(run_id="r", session_id="s1", seq=seq, role="examiner", model=model, request_digest="d",
                     response="ok", usage=TokenUsage(prompt_tokens=p, completion_tokens=c), latency_s=0.5,
                     **more)  # type: ignore[arg-type]  # fmt: skip


def write(path: Path) -> None:
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r", protocol="no_such_protocol"))
        w.write(SessionStart(run_id="r", session_id="s1", seq=0, item_id="i1", item={"q": "x"}))
        w.write(call(1, "openai:a", 10, 2, requests=3, retries=2))
        w.write(call(2, "openai:a", 7, 1, cached=True, requests=0))
        w.write(call(3, "openai:a", 0, 0, coalesced=True, requests=0))
        w.write(call(4, 'openai:b"q', 5, 5, finish_reason='"cached":true'))  # a reason cannot fake a flag


def test_the_report_and_the_viewer_count_the_same_calls(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path)
    report, _ = report_file(path)
    index = TranscriptIndex(path, persist=False)
    index.refresh()
    attempt = index.attempts["s1"]["r"]
    a, b = attempt.models["openai:a"], attempt.models['openai:b"q']
    assert (a.calls, a.requests, a.prompt_tokens, a.completion_tokens) == (3, 3, 10, 2)
    assert (a.cached_calls, a.cached_prompt_tokens, a.cached_completion_tokens, a.coalesced_calls) == (1, 7, 1, 1)
    assert a.latency_s == 1.5 and a.billed == (10, 2, 3) and (a.all_prompt_tokens, a.all_completion_tokens) == (17, 3)
    assert b.billed == (5, 5, 1) and b.cached_calls == 0
    usage = report.usage["examiner"]
    both = CallTally()
    both.add(a)
    both.add(b)
    assert (usage.calls, usage.requests, usage.prompt_tokens, usage.completion_tokens) == (
        both.calls, both.requests, both.prompt_tokens, both.completion_tokens
    )
    assert (usage.cached_calls, usage.cached_prompt_tokens, usage.coalesced_calls) == (1, 7, 1)


def test_an_index_file_keeps_each_model_s_tally(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path)
    indexes = TranscriptIndex(path, store=tmp_path / "idx"), TranscriptIndex(path, store=tmp_path / "idx")
    indexes[0].refresh()
    indexes[1].refresh()  # read back from the index file the first one wrote
    first, again = (index.attempts["s1"]["r"].models for index in indexes)
    assert (tmp_path / "idx").exists() and not indexes[1]._rebuilt
    assert again == first and again["openai:a"].coalesced_calls == 1


def test_a_tally_row_of_the_wrong_length_is_refused() -> None:
    assert CallTally.from_row(CallTally(calls=2, latency_s=0.25).row()) == CallTally(calls=2, latency_s=0.25)
    try:
        CallTally.from_row([1, 2])
    except ValueError as exc:
        assert "11 numbers, not 2" in str(exc)
    else:
        raise AssertionError("a short row was read")
    # A row of an index written before the provider's cache was counted (nine numbers) reads with none of it.
    old = CallTally(calls=2, prompt_tokens=7, latency_s=0.25).row()[:9]
    assert CallTally.from_row(old) == CallTally(calls=2, prompt_tokens=7, latency_s=0.25)
