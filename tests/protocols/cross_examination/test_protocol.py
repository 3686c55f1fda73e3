"""Every path of the LMvLM state machine, driven by scripted examiner and examinee models."""

from __future__ import annotations

from pathlib import Path

import pytest

from voirdire.models import RoleSettings, Script, ScriptedChatCompletionClient, ScriptRule
from voirdire.protocols.cross_examination import (
    AreYouSure,
    ClaimItem,
    CrossExamination,
    CrossExaminationParams,
    IDontKnow,
    score,
)
from voirdire.runner import run_protocol
from voirdire.transcript import Message, ModelCall, ParseFailure, Transcript, Transition, load

SETUP = r"verify the correctness of the following claim|Imagine trying to prove"
FOLLOWUP_ASK = r"Do you have any follow-up questions"
FOLLOWUP_Q = r"What are the follow-up questions"
DECIDE = r"correct or incorrect\?"


def rule(match: str, reply: str | list[str]) -> ScriptRule:
    return ScriptRule(match=match, reply=reply) if isinstance(reply, str) else ScriptRule(match=match, replies=reply)


def examiner(
    questions: str = "1. Who designed it?\n2. When was it built?",
    followup: str | list[str] = "No",
    more: str = "1. Are you sure about the year?",
    decision: str | list[str] = "The claim is correct.",
) -> ScriptedChatCompletionClient:
    return ScriptedChatCompletionClient(
        Script(
            rules=[
                rule(SETUP, questions),
                rule(FOLLOWUP_ASK, followup),
                rule(FOLLOWUP_Q, more),
                rule(DECIDE, decision),
            ]
        ),
        name="examiner",
    )


def examinee(claim: str = "The Eiffel Tower is in Paris.") -> ScriptedChatCompletionClient:
    return ScriptedChatCompletionClient(
        Script(
            rules=[
                rule(r"regarding your claim", "It was built in 1889 by Eiffel's company."),
                rule(r"phrase your answer as a claim|complete the following sentence", claim),
                rule(r"Are you sure", "Yes."),
            ]
        ),
        name="examinee",
    )


async def run(
    tmp_path: Path,
    items: list[ClaimItem],
    ex: ScriptedChatCompletionClient,
    ee: ScriptedChatCompletionClient,
    roles: dict[str, RoleSettings] | None = None,
    **params: object,
) -> Transcript:
    out = tmp_path / "t.jsonl"
    result = await run_protocol(
        CrossExamination(CrossExaminationParams(**params)),
        items,
        out=out,
        clients={"examiner": ex, "examinee": ee},
        roles=roles,
    )
    assert not result.errors, result.errors
    return load(out)


def prompts_sent(t: Transcript, sid: str, to: str) -> list[str]:
    return [e.prompt or "" for e in t.sessions[sid].of_kind(Message) if e.receiver == to and e.sender != to]


CLAIM = ClaimItem(id="c1", claim="The Eiffel Tower is in Paris.", answers=["Paris"])


async def test_no_followups_goes_straight_to_decision(tmp_path: Path) -> None:
    ex, ee = examiner(followup="No"), examinee()
    t = await run(tmp_path, [CLAIM], ex, ee)
    s = t.sessions["c1"]
    assert s.verdict is not None and s.verdict.decision == "correct" and s.verdict.accepted is True
    exam = s.verdict.statistics["examinations"][0]
    assert exam["questions_per_iteration"] == [2] and exam["followup_iterations"] == 0
    # Stage 1 feeds the two questions one at a time (§2), each with the paper's instruction.
    assert len(ee.seen) == 2
    assert "Please answer the following questions regarding your claim.\nWho designed it?" in ee.seen[0][-1].content
    sent = prompts_sent(t, "c1", "examiner")
    assert sent == [
        "cross_examination/setup_chatgpt",
        "cross_examination/followup_ask",
        "cross_examination/decision",
    ]
    states = [e.to_state for e in s.of_kind(Transition)]
    assert states == ["setup", "answer", "followup_ask", "decision", "done"]
    assert len(s.of_kind(ModelCall)) == 5  # setup, 2 answers, follow-up ask, decision
    # The header pins the exact prompt files of this protocol (and only those) by hash.
    assert t.header is not None and "cross_examination/setup_chatgpt" in t.header.prompts
    assert all(name.startswith("cross_examination/") for name in t.header.prompts)


async def test_followups_stop_at_the_five_round_cap(tmp_path: Path) -> None:
    ex = examiner(followup="Yes", decision="Based on the answers, the claim is incorrect.")
    t = await run(tmp_path, [CLAIM], ex, examinee())
    s = t.sessions["c1"]
    exam = s.verdict.statistics["examinations"][0]  # type: ignore[union-attr]
    assert exam["followup_iterations"] == 5
    assert exam["questions_per_iteration"] == [2, 1, 1, 1, 1, 1]
    sent = prompts_sent(t, "c1", "examiner")
    assert sent.count("cross_examination/followup_ask") == 5
    assert sent.count("cross_examination/followup_questions") == 5
    # After the fifth round's answers the examiner is asked for its decision, with those answers.
    assert sent[-1] == "cross_examination/decision_after_answers"
    assert s.verdict.decision == "incorrect" and s.verdict.accepted is False  # type: ignore[union-attr]


async def test_a_no_followed_by_questions_is_a_yes_with_those_questions(tmp_path: Path) -> None:
    """Issue 46: "No. Actually, wait, one more thing: 1. ...?" is a Yes, and its question goes to the examinee
    without asking "What are the follow-up questions?"."""
    ex = examiner(followup=["No. Actually, wait, one more thing:\n1. Who paid for the tower?", "No"])
    t = await run(tmp_path, [CLAIM], ex, examinee())
    s = t.sessions["c1"]
    sent = prompts_sent(t, "c1", "examiner")
    assert "cross_examination/followup_questions" not in sent
    assert sent.count("cross_examination/followup_ask") == 2
    exam = s.verdict.statistics["examinations"][0]  # type: ignore[union-attr]
    assert exam["followup_iterations"] == 1 and exam["questions_per_iteration"] == [2, 1]
    assert any("Who paid for the tower?" in (m[-1].content or "") for m in examinee_seen(t))
    states = [e.to_state for e in s.of_kind(Transition)]
    assert states == [
        "setup", "answer", "followup_ask", "followup_questions", "answer", "followup_ask", "decision", "done",
    ]  # fmt: skip


def examinee_seen(t: Transcript) -> list[list[Message]]:
    return [[m] for m in t.sessions["c1"].of_kind(Message) if m.receiver == "examinee"]


async def test_cap_is_configurable_and_zero_is_the_no_followup_ablation(tmp_path: Path) -> None:
    t = await run(tmp_path, [CLAIM], examiner(followup="Yes"), examinee(), max_followup_rounds=0)
    sent = prompts_sent(t, "c1", "examiner")
    assert "cross_examination/followup_ask" not in sent
    assert sent[-1] == "cross_examination/decision_after_answers"


async def test_inconclusive_decision_counts_as_rejection(tmp_path: Path) -> None:
    t = await run(tmp_path, [CLAIM], examiner(decision="It is hard to say."), examinee())
    s = t.sessions["c1"]
    assert s.verdict.decision == "inconclusive" and s.verdict.accepted is False  # type: ignore[union-attr]
    failures = s.of_kind(ParseFailure)
    assert len(failures) == 1 and failures[0].role == "examiner" and "rejection" in failures[0].outcome


async def test_unparseable_followup_answer_is_recorded_and_treated_as_no(tmp_path: Path) -> None:
    t = await run(tmp_path, [CLAIM], examiner(followup="Perhaps, let me think."), examinee())
    s = t.sessions["c1"]
    failures = s.of_kind(ParseFailure)
    assert [f.expected for f in failures] == ["Yes or No"]
    assert failures[0].raw == "Perhaps, let me think."
    assert s.verdict.decision == "correct"  # type: ignore[union-attr]
    assert s.verdict.statistics["examinations"][0]["parse_failures"] == 1  # type: ignore[union-attr]


async def test_examiner_without_questions_goes_to_decision(tmp_path: Path) -> None:
    t = await run(tmp_path, [CLAIM], examiner(questions="I have nothing to ask"), examinee())
    s = t.sessions["c1"]
    assert [f.expected for f in s.of_kind(ParseFailure)] == ["one or more questions"]
    assert prompts_sent(t, "c1", "examiner")[-1] == "cross_examination/decision"
    assert s.verdict.statistics["examinations"][0]["questions_per_iteration"] == [0]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("decisions", "accepted", "rejections"),
    [
        (["The claim is correct.", "The claim is incorrect.", "I think it is correct."], True, 1),
        (["The claim is incorrect.", "correct", "Not correct, in my view."], False, 2),
    ],
)
async def test_majority_two_to_one_both_ways(
    tmp_path: Path, decisions: list[str], accepted: bool, rejections: int
) -> None:
    ex = examiner(followup=["Yes", "No", "No", "No"], decision=decisions)
    ee = examinee()
    # A sampling examiner (no seed): its requests are drawn afresh, never answered by an identical one.
    t = await run(tmp_path, [CLAIM], ex, ee, roles={"examiner": RoleSettings(temperature=0.7)}, examinations=3)
    v = t.sessions["c1"].verdict
    assert v is not None and v.accepted is accepted and v.statistics["rejections"] == rejections
    assert len(v.evidence) == 3 and len(v.statistics["examinations"]) == 3
    # Each examination starts from a fresh examiner conversation: its setup prompt is the first message again.
    setups = [msgs for msgs in ex.seen if "verify the correctness" in msgs[-1].content]
    assert len(setups) == 3 and all(len(m) == 1 for m in setups)


async def test_majority_samples_followup_questions_with_distinct_seeds(tmp_path: Path) -> None:
    captured: list[tuple[str, dict[str, object]]] = []

    def spying(client: ScriptedChatCompletionClient) -> ScriptedChatCompletionClient:
        original = client._complete

        async def spy(messages, args):  # type: ignore[no-untyped-def]
            captured.append((messages[-1].content, dict(args)))
            return await original(messages, args)

        client._complete = spy  # type: ignore[method-assign]
        return client

    params = CrossExaminationParams(examinations=3, sampling_temperature=0.9)
    for run_no in range(2):  # with a role seed and a cache, as `--majority --seed 7 --cache` would
        ex = spying(examiner(followup=["Yes", "No"] * 3))
        await run_protocol(
            CrossExamination(params),
            [CLAIM],
            out=tmp_path / f"{run_no}.jsonl",
            roles={"examiner": RoleSettings(seed=7)},
            clients={"examiner": ex, "examinee": examinee()},
            cache=tmp_path / "cache.jsonl",
        )
        if run_no == 0:
            sampled = [a for text, a in captured if "What are the follow-up questions" in text]
            assert [a["temperature"] for a in sampled] == [0.9, 0.9, 0.9]  # only these three calls sample
            assert len({a["seed"] for a in sampled}) == 3  # one draw per examination, never the same request
            captured.clear()
    # The second run re-draws the same samples: all its sampled calls come from the cache.
    assert not [text for text, _ in captured if "What are the follow-up questions" in text]


async def test_claim_generated_from_question_then_examined(tmp_path: Path) -> None:
    item = ClaimItem(id="q1", question="Where is the Eiffel Tower?", answers=["Paris"])
    ee = examinee(claim="The Eiffel Tower is located in Paris.")
    t = await run(tmp_path, [item], examiner(), ee)
    v = t.sessions["q1"].verdict
    assert v is not None and v.statistics["claim"] == "The Eiffel Tower is located in Paris."
    assert v.statistics["claim_generated"] is True
    first = ee.seen[0][-1].content
    assert first == (
        "Please answer the following question: Where is the Eiffel Tower? Please phrase your answer as a claim."
    )
    # The examinee answers the examiner with its own claim still in its conversation.
    assert any("located in Paris" in m.content for m in ee.seen[1])


async def test_fill_in_the_blank_query_is_completed_into_a_claim(tmp_path: Path) -> None:
    item = ClaimItem(id="b1", question="Bailey Peninsula is located in ____.", answers=["Antarctica"])
    t = await run(tmp_path, [item], examiner(), examinee(claim="Antarctica"))
    assert t.sessions["b1"].verdict.statistics["claim"] == "Bailey Peninsula is located in Antarctica."  # type: ignore[union-attr]


async def test_gpt3_prompt_set_and_batched_questions(tmp_path: Path) -> None:
    ee = examinee()
    t = await run(tmp_path, [CLAIM], examiner(), ee, prompt_set="gpt3", one_question_at_a_time=False)
    assert prompts_sent(t, "c1", "examiner")[0] == "cross_examination/setup_gpt3"
    assert len(ee.seen) == 1 and "1. Who designed it?\n2. When was it built?" in ee.seen[0][-1].content


async def test_ays_and_idk_baselines(tmp_path: Path) -> None:
    item = ClaimItem(id="q1", question="Where is the Eiffel Tower?", answers=["Paris"])
    ee = ScriptedChatCompletionClient(
        Script(
            rules=[
                rule(r"I don.t know", ["I don't know.", "The Eiffel Tower is in Paris."]),
                rule(r"phrase your answer as a claim", "It is in Paris."),
                rule(r"Are you sure", ["No, I am not sure.", "Yes"]),
            ]
        )
    )
    out = tmp_path / "b.jsonl"
    items = [item, item.model_copy(update={"id": "q2"})]
    res = await run_protocol(AreYouSure(), items, out=out, clients={"examinee": ee})
    assert [res.verdicts[i].accepted for i in ("q1", "q2")] == [False, True]
    res = await run_protocol(IDontKnow(), items, out=tmp_path / "i.jsonl", clients={"examinee": ee})
    assert [res.verdicts[i].accepted for i in ("q1", "q2")] == [False, True]
    # The claim judged is the plain §4.1 claim, not the IDK reply: saying "I don't know" about a claim that is
    # in fact correct is a wrong rejection, not a free true positive.
    assert res.verdicts["q1"].statistics["claim"] == "It is in Paris."
    assert res.verdicts["q1"].statistics["idk_reply"] == "I don't know."
    report = score(load(tmp_path / "i.jsonl").sessions.values(), protocol="idk")
    assert report.claims_correct_pct == 100.0
    assert report.reject_incorrect is not None and report.reject_incorrect.predicted == 1
    assert report.reject_incorrect.tp == 0 and report.accept_correct is not None
    assert report.accept_correct.recall == 0.5


def test_majority_needs_an_odd_number_of_examinations() -> None:
    with pytest.raises(ValueError, match="odd"):
        CrossExaminationParams(examinations=2)


async def test_idk_without_a_question_is_a_session_error_not_a_crash(tmp_path: Path) -> None:
    res = await run_protocol(IDontKnow(), [CLAIM], out=tmp_path / "i.jsonl", clients={"examinee": examinee()})
    assert "needs the question" in res.errors["c1"]
    assert load(tmp_path / "i.jsonl").sessions["c1"].errors


async def test_session_error_is_isolated_and_resume_retries_only_unfinished(tmp_path: Path) -> None:
    items = [ClaimItem(id=f"c{i}", claim=f"Claim number {i}.") for i in range(1, 4)]
    out = tmp_path / "run.jsonl"
    # The examiner's script runs out of decisions after two sessions: the third session fails, alone.
    ex = examiner(decision=["correct", "incorrect"])
    first = await run_protocol(CrossExamination(), items, out=out, clients={"examiner": ex, "examinee": examinee()})
    assert set(first.verdicts) == {"c1", "c2"} and set(first.errors) == {"c3"}
    assert "no replies left" in first.errors["c3"]

    ex2 = examiner(decision="correct")
    second = await run_protocol(CrossExamination(), items, out=out, clients={"examiner": ex2, "examinee": examinee()})
    assert second.skipped == 2 and not second.errors
    assert len([m for m in ex2.seen if "verify the correctness" in m[-1].content]) == 1  # only c3 re-examined
    t = load(out)
    assert len(t.headers) == 2 and t.finished() == {"c1", "c2", "c3"}
    assert t.sessions["c3"].run_id == second.run_id and t.sessions["c1"].run_id == first.run_id
    assert set(second.verdicts) == {"c1", "c2", "c3"}


async def test_resume_refuses_a_transcript_of_different_parameters(tmp_path: Path) -> None:
    from voirdire.runner import ResumeError

    out = tmp_path / "run.jsonl"
    await run_protocol(CrossExamination(), [CLAIM], out=out, clients={"examiner": examiner(), "examinee": examinee()})
    with pytest.raises(ResumeError, match="different parameters"):
        await run_protocol(
            CrossExamination(CrossExaminationParams(max_followup_rounds=1)),
            [CLAIM],
            out=out,
            clients={"examiner": examiner(), "examinee": examinee()},
        )


def test_unknown_role_and_shared_model_warning() -> None:
    from voirdire.runner import bind_roles, independence_warnings

    proto = CrossExamination()
    with pytest.raises(ValueError, match="no role"):
        bind_roles(proto, {"judge": RoleSettings()}, {})
    bound = bind_roles(proto, {"*": RoleSettings(model="local")}, {})
    assert independence_warnings(proto, bound) and "not independent" in independence_warnings(proto, bound)[0]
    bound = bind_roles(proto, {"examiner": RoleSettings(model="openai:gpt-4o")}, {})
    assert independence_warnings(proto, bound) == []


async def test_response_cache_replays_deterministic_calls(tmp_path: Path) -> None:
    cache = tmp_path / "cache.jsonl"
    ex = examiner(decision=["The claim is correct."])  # one decision only: a second live run would fail
    first = await run_protocol(
        CrossExamination(),
        [CLAIM],
        out=tmp_path / "a.jsonl",
        clients={"examiner": ex, "examinee": examinee()},
        cache=cache,
    )
    assert first.verdicts["c1"].accepted is True
    second = await run_protocol(
        CrossExamination(),
        [CLAIM],
        out=tmp_path / "b.jsonl",
        clients={"examiner": ex, "examinee": examinee()},
        cache=cache,
    )
    assert second.verdicts["c1"].accepted is True and not second.errors
    calls = load(tmp_path / "b.jsonl").sessions["c1"].of_kind(ModelCall)
    assert calls and all(c.cached for c in calls)
    assert not any(c.cached for c in load(tmp_path / "a.jsonl").sessions["c1"].of_kind(ModelCall))


async def test_sampled_calls_without_a_seed_are_not_cached(tmp_path: Path) -> None:
    from voirdire.transcript.cache import cacheable

    assert cacheable({"max_tokens": 5}) and cacheable({"temperature": 0.0})
    assert cacheable({"temperature": 0.7, "seed": 3}) and not cacheable({"temperature": 0.7})


async def test_resume_refuses_a_changed_item_behind_a_finished_id(tmp_path: Path) -> None:
    from voirdire.runner import ResumeError

    out = tmp_path / "run.jsonl"
    clients = {"examiner": examiner(), "examinee": examinee()}
    await run_protocol(CrossExamination(), [CLAIM], out=out, clients=clients)
    changed = CLAIM.model_copy(update={"claim": "The Eiffel Tower is in Rome."})
    with pytest.raises(ResumeError, match="session 'c1' was run on a different item"):
        await run_protocol(CrossExamination(), [changed], out=out, clients=clients)
    # Single claims get ids from their text, so another claim is a new session, not a "finished" one.
    a, b = ClaimItem.single("Paris is in France."), ClaimItem.single("Berlin is in Spain.")
    assert a.id != b.id and a.id == ClaimItem.single("Paris is in France.").id


async def test_a_header_only_file_does_not_bind_the_next_run(tmp_path: Path) -> None:
    from voirdire.transcript import RunHeader, TranscriptWriter

    out = tmp_path / "run.jsonl"
    with TranscriptWriter(out) as w:  # a run that failed before its first session
        w.write(RunHeader(run_id="r0", protocol="cross_examination", parameters={"other": 1}))
    result = await run_protocol(
        CrossExamination(), [CLAIM], out=out, clients={"examiner": examiner(), "examinee": examinee()}
    )
    assert result.verdicts["c1"].accepted is True


async def test_two_runs_cannot_write_one_transcript_at_once(tmp_path: Path) -> None:
    import asyncio

    from voirdire.runner import ResumeError

    out = tmp_path / "run.jsonl"
    gate, asked = asyncio.Event(), asyncio.Event()

    class Slow(ScriptedChatCompletionClient):
        async def _complete(self, messages, args):  # type: ignore[no-untyped-def]
            asked.set()
            await gate.wait()
            return await super()._complete(messages, args)

    slow = Slow(examiner().script)
    first = asyncio.create_task(
        run_protocol(CrossExamination(), [CLAIM], out=out, clients={"examiner": slow, "examinee": examinee()})
    )
    await asyncio.wait_for(asked.wait(), 60)  # the first run is under way, its transcript held (no clock: an order)
    with pytest.raises(ResumeError, match="another run is writing"):
        await run_protocol(
            CrossExamination(), [CLAIM], out=out, clients={"examiner": examiner(), "examinee": examinee()}
        )
    gate.set()
    assert (await first).verdicts["c1"].accepted is True
    assert not out.with_name(out.name + ".lock").exists()
