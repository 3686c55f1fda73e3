"""``--model ROLE=human``: the person sees what the role has seen, an empty answer is refused, the end of input
records nothing, and the transcript marks every reply a person gave."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from autogen_core.models import AssistantMessage, SystemMessage, UserMessage

from voirdire.chat.terminal import render
from voirdire.cli import main
from voirdire.models import HumanClient
from voirdire.models.human import HumanInputEnded, read_reply
from voirdire.transcript import Message, ModelCall, load

EXAMINER = """\
rules:
  - match: verify the correctness of the following claim
    reply: "1. Where is it?\\n2. When was it built?"
  - match: Do you have any follow-up questions
    reply: "No"
  - match: correct or incorrect\\?
    reply: "The claim is correct."
"""


def test_read_reply_stops_at_an_empty_line_or_the_end() -> None:
    stream = io.StringIO("two\nlines\n\n\nlast")
    assert read_reply(stream) == ("two\nlines", False)
    assert read_reply(stream) == ("", False)  # an empty line alone: nothing typed
    assert read_reply(stream) == ("last", True)
    assert read_reply(stream) == ("", True)


async def test_the_person_sees_the_conversation_and_empty_answers_are_refused() -> None:
    out = io.StringIO()
    client = HumanClient(stdin=io.StringIO("\n\nIt is in Paris.\n\nIn 1889.\n"), stdout=out)
    question = "Please answer the following questions regarding your claim.\nWhere is it?"
    history = [
        SystemMessage(content="Earlier in this conversation you made the following claim: The tower is in Paris."),
        UserMessage(content=question, source="examiner"),
    ]
    first = await client.create(history)
    assert first.content == "It is in Paris." and first.usage.completion_tokens == 0
    shown = out.getvalue()
    assert "what this role has seen so far:" in shown and "The tower is in Paris." in shown
    assert "[examiner · answer this]\n  " + question.replace("\n", "\n  ") in shown
    assert shown.count("an empty answer is not recorded") == 2
    history += [AssistantMessage(content="It is in Paris.", source="examinee")]
    history += [UserMessage(content="When?", source="examiner")]
    out.truncate(0)
    assert (await client.create(history)).content == "In 1889."  # the input ends after it: the answer still counts
    second = out.getvalue()
    assert "your turn as examinee" in second and "(the 2 earlier messages of this conversation are above)" in second
    assert "[you]\n  It is in Paris." in second and "The tower is in Paris." not in second  # only what is new
    with pytest.raises(HumanInputEnded, match="end of input before an answer"):
        await client.create([*history, AssistantMessage(content="In 1889.", source="examinee"),
                             UserMessage(content="Anything else?", source="examiner")])  # fmt: skip
    with pytest.raises(HumanInputEnded, match="the input has ended"):
        await client.create(history)  # asked again after the end: refused at once


@pytest.fixture
def examiner(tmp_path: Path) -> Path:
    path = tmp_path / "examiner.yaml"
    path.write_text(EXAMINER, encoding="utf-8")
    return path


def examine(examiner: Path, out: Path, stdin: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    return main(
        ["examine", "--question", "Where is the Eiffel Tower?", "--answer", "Paris", "--max-followups", "0",
         "--model", f"examiner=scripted:{examiner}", "--model", "examinee=human", "--out", str(out)]
    )  # fmt: skip


def test_a_person_examined_through_stdin(examiner: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "t.jsonl"
    assert examine(examiner, out, "The Eiffel Tower is in Paris.\n\nIn Paris.\n\n\nSince 1889.\n\n", monkeypatch) == 0
    err = capsys.readouterr().err
    assert "What this role has seen so far:".lower() in err and "Where is the Eiffel Tower?" in err
    assert "[examiner · answer this]\n  Please answer the following questions regarding your claim." in err
    assert "[you]\n  The Eiffel Tower is in Paris." in err  # the claim it defends, in its own words
    t = load(out)
    assert t.header is not None and t.header.roles["examinee"].spec == "human"
    (session,) = t.sessions.values()
    calls = [e for e in session.events if isinstance(e, ModelCall) and e.role == "examinee"]
    assert [c.model for c in calls] == ["human"] * 3 and [c.response for c in calls][1:] == ["In Paris.", "Since 1889."]
    assert session.verdict is not None and session.verdict.decision == "correct"
    chat = render(t, color=False)
    assert "Examinee (human):  typed in " in chat and "examinee (human) 3 calls" in chat


def test_the_end_of_input_records_no_answer(examiner: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    out = tmp_path / "t.jsonl"
    assert examine(examiner, out, "The Eiffel Tower is in Paris.\n\n", monkeypatch) != 0  # the only session failed
    assert "HumanInputEnded: end of input before an answer" in capsys.readouterr().err
    (session,) = load(out).sessions.values()
    replies = [e.content for e in session.events if isinstance(e, Message) and e.sender == "examinee"]
    assert replies == ["The Eiffel Tower is in Paris."] and session.verdict is None
    assert "HumanInputEnded" in session.errors[0].message
