"""Replay files are as durable as transcripts: a torn last line is skipped and cut by the next writer, each bad
field is a ``file:line`` error, and a failing run's error carries no unrelated "no running event loop"."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest
from autogen_core.models import UserMessage

from voirdire.models.replay import FILE_NAME, Recordings, ReplayClient, ReplayError, request_key

ASK = [UserMessage(content="Is X Y?", source="u")]
REPLY = {"texts": ["Yes."], "prompt_tokens": 3, "completion_tokens": 1, "finish_reason": "stop",
         "enforcement": None, "requests": 1}  # fmt: skip


def line(key: str, **changes: object) -> str:
    return json.dumps({"key": key, "model": "m", "reply": {**REPLY, **changes}}) + "\n"


async def test_a_torn_last_line_is_skipped_and_cut_by_the_next_writer(tmp_path: Path) -> None:
    key = request_key("m", ASK, {}, 1)
    file = tmp_path / FILE_NAME
    file.write_text(line(key) + line("other")[:30])  # a recording killed mid-write
    store = Recordings(tmp_path)
    assert (await ReplayClient("m", store).complete(ASK, {})).texts == ["Yes."]
    store.add("third", "m", REPLY)
    lines = file.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["key"] == "third"  # the torn line cut, the new one whole
    assert len(Recordings(tmp_path)._replies) == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (line("k", prompt_tokens="lots"), r":2: reply\.prompt_tokens: expected a whole number of tokens, got 'lots'"),
        (json.dumps({"key": "k", "model": "m", "reply": {"text": ["x"]}}) + "\n", r":2: reply\.texts: expected"),
        (json.dumps({"key": "k", "model": "m"}) + "\n", r":2: not a recording line \(no 'reply' field\)"),
        (json.dumps({"key": 5, "reply": REPLY}) + "\n", r":2: key: expected a string"),
        (line("k", requests=0), r":2: reply\.requests: expected a whole number of at least 1"),
        ("[1, 2]\n", r":2: not a recording line \(a JSON list"),
        ("{oops\n", r":2: not a recording line \(not JSON\)"),
    ],
)
def test_every_bad_field_is_an_error_naming_the_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / FILE_NAME).write_text(line("good") + text + line("after"))
    with pytest.raises(ReplayError, match=f"{FILE_NAME}{message}"):
        Recordings(tmp_path)


def test_bytes_that_are_not_utf8_name_their_line(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_bytes(line("good").encode() + b'{"key": "caf\xe9"}\n')
    with pytest.raises(ReplayError, match=f"{FILE_NAME}:2: not UTF-8 text"):
        Recordings(tmp_path)


def _record(folder: str, who: int) -> None:
    store = Recordings(Path(folder))
    for k in range(200):
        store.add(f"{who}-{k}", "m", {**REPLY, "texts": ["x" * 5000]})  # lines longer than a pipe's atomic write


def test_two_recording_processes_never_interleave_within_a_line(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    procs = [context.Process(target=_record, args=(str(tmp_path), who)) for who in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    store = Recordings(tmp_path)
    assert sum(len(v) for v in store._replies.values()) == 400


def test_a_failing_run_has_no_unrelated_event_loop_error_in_its_context() -> None:
    from voirdire.api import run_sync

    async def fails() -> None:
        raise ValueError("the gate failed")

    with pytest.raises(ValueError, match="the gate failed") as raised:
        run_sync(fails(), "examine")
    assert raised.value.__context__ is None
