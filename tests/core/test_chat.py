"""The chat model: a session's events become bubbles, dividers, failures, notes, errors and the verdict, with each
reply's model call and the prompts it answers, lanes from dotted stages, and totals per role."""

from __future__ import annotations

from typing import Any

from voirdire.chat.turns import Bubble, Divider, Failure, Note, Outcome, Problem, chat_of, lane_of
from voirdire.transcript import (
    DisplayHints,
    ErrorEvent,
    Message,
    ModelCall,
    ParseFailure,
    RoleBinding,
    RunHeader,
    SessionRecord,
    SessionStart,
    Step,
    TokenUsage,
    Transition,
    Verdict,
)
from voirdire.transcript.step_views import Column, VerdictView, Views

HEADER = RunHeader(
    run_id="r",
    protocol="toy",
    roles={"examiner": RoleBinding(spec="openai:gpt-4o-mini"), "examinee": RoleBinding(spec="human")},
    transitions={"[*]": ["ask"], "ask": ["ask", "decide"], "decide": []},
    display=DisplayHints(
        colors={"examiner": "36"},
        item_fields=("question",),
        gold_fields=("answers",),
        quiet_states=("decide",),
        views=Views(verdict=VerdictView(subject=Column(key="claim", label="claim examined"))),
    ),
)


def session(*events: Any) -> SessionRecord:
    numbered = []
    for seq, (kind, fields) in enumerate(events, 1):
        numbered.append(kind(run_id="r", session_id="s", seq=seq, **fields))
    item = {"question": "Q?", "answers": ["A"]}
    return SessionRecord(session_id="s", run_id="r", item_id="s", item=item, events=numbered)


def call(role: str, model: str, p: int = 10, c: int = 2, retries: int = 0) -> tuple[type, dict[str, Any]]:
    return ModelCall, {
        "role": role,
        "model": model,
        "request_digest": "d",
        "response": "",
        "usage": TokenUsage(prompt_tokens=p, completion_tokens=c),
        "latency_s": 0.5,
        "retries": retries,
    }


def msg(sender: str, receiver: str, content: str, **kw: Any) -> tuple[type, dict[str, Any]]:
    return Message, {"sender": sender, "receiver": receiver, "content": content, **kw}


def test_replies_carry_their_call_and_the_prompts_they_answer() -> None:
    s = session(
        (SessionStart, {"item_id": "s", "item": {"question": "Q?"}}),
        (Transition, {"from_state": None, "to_state": "ask", "stage": "ask", "turn": 1}),
        msg("system", "examiner", "You examine.", prompt="toy/setup"),
        msg("moderator", "examiner", "Ask about Q?", prompt="toy/setup"),
        call("examiner", "openai:gpt-4o-mini", retries=2),
        msg("examiner", "moderator", "Is it A?", prompt="toy/setup"),
        msg("examiner", "examinee", "Please answer: Is it A?", quote="Is it A?", prompt="toy/answer"),
        call("examinee", "human", p=0, c=0),
        msg("examinee", "moderator", "Yes."),
        msg("examinee", "examinee", "my claim"),
    )
    chat = chat_of(s, HEADER)
    bubbles = [t for t in chat.turns if isinstance(t, Bubble)]
    assert [b.kind for b in bubbles] == ["prompt", "prompt", "reply", "relay", "reply", "memory"]
    question = bubbles[2]
    assert question.call is not None and question.call.retries == 2 and question.call.model == "openai:gpt-4o-mini"
    assert [m.content for m in question.asked] == ["You examine.", "Ask about Q?"]
    assert "[moderator → examiner] Ask about Q?" in question.rendered_prompt
    relay, answer = bubbles[3], bubbles[4]
    assert relay.text == "Is it A?" and relay.rendered_prompt == "Please answer: Is it A?"
    assert answer.asked == [relay] and answer.human and not question.human
    assert chat.humans == ["examinee"] and chat.totals["examiner"].retries == 2
    assert chat.totals["examiner"].prompt_tokens == 10 and chat.calls == 2
    assert chat.fields == [("question", "Q?")] and chat.gold == ["A"]
    assert chat.models == {"examiner": "openai:gpt-4o-mini", "examinee": "human"} and chat.colors == {"examiner": "36"}


def test_dividers_failures_notes_errors_and_the_verdict() -> None:
    s = session(
        (Transition, {"from_state": None, "to_state": "ask", "turn": 2}),
        (Transition, {"from_state": "ask", "to_state": "nowhere"}),
        (ParseFailure, dict(role="examiner", prompt="toy/p", expected="Yes or No", raw="Hm", error="no", outcome="No")),
        (Step, {"name": "round", "data": {"passed": True}}),
        (ErrorEvent, {"error_type": "Boom", "message": "it broke"}),
        (Transition, {"from_state": "ask", "to_state": "decide"}),
        (Verdict, {"decision": "correct", "accepted": True, "evidence": ["because"], "statistics": {"claim": "C."}}),
    )
    chat = chat_of(s, HEADER)
    kinds = [type(t) for t in chat.turns]
    assert kinds == [Divider, Divider, Failure, Note, Problem, Divider, Outcome]
    first, undeclared, quiet = (t for t in chat.turns if isinstance(t, Divider))
    assert first.label == "ask · round 2" and first.declared and not first.quiet
    assert not undeclared.declared and quiet.quiet
    assert chat.verdict is not None and chat.verdict.subject == ("claim examined", "C.")
    assert chat.verdict.trust == "accepted"
    assert chat.status == "finished"


def test_status_without_a_verdict() -> None:
    assert chat_of(session((ErrorEvent, {"error_type": "E", "message": "m"}))).status == "error"
    assert chat_of(session((Transition, {"from_state": None, "to_state": "ask"}))).status == "running"


def test_dotted_stages_are_lanes_and_sections_group_them() -> None:
    assert lane_of("e2.followup") == "e2" and lane_of("setup") is None and lane_of(None) is None
    s = session(
        (Transition, {"from_state": None, "to_state": "ask", "stage": "claim"}),
        (Transition, {"from_state": "ask", "to_state": "ask", "stage": "e1.setup"}),
        msg("examiner", "moderator", "q1", stage="e1.setup"),
        (Transition, {"from_state": "ask", "to_state": "ask", "stage": "e2.setup"}),
        msg("examiner", "moderator", "q2", stage="e2.setup"),
        (Verdict, {"decision": "x", "accepted": None, "stage": "e2.setup"}),
    )
    chat = chat_of(s, HEADER)
    assert [lane for lane, _ in chat.sections()] == [None, "e1", "e2", None]
    e1_divider = chat.sections()[1][1][0]
    assert isinstance(e1_divider, Divider) and e1_divider.stage_name == "setup"


def test_without_a_header_every_short_item_field_is_shown() -> None:
    s = SessionRecord(session_id="s", run_id="r", item={"id": "s", "text": "hello", "n": 3, "long": "x" * 400})
    chat = chat_of(s)
    assert chat.fields == [("text", "hello"), ("n", "3")] and chat.protocol == "" and chat.models == {}


def test_a_lane_is_one_word_before_a_dot() -> None:
    assert lane_of("e2.followup") == "e2" and lane_of("e1/q2.setup") is None
    assert lane_of("coin toss 1/1 (Fig. 4)") is None and lane_of("setup") is None and lane_of(None) is None
