"""Adaptive LMvLM (Majority): the examinations stop once the majority is decided, with the full procedure's
verdicts (§4.1), driven by an examiner whose decision follows its own sampled follow-up question."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from autogen_core.models import AssistantMessage, CreateResult, LLMMessage, RequestUsage

from voirdire.models import RoleSettings, ScriptedChatCompletionClient
from voirdire.models.base import text_of
from voirdire.protocols.cross_examination import ClaimItem, CrossExamination, CrossExaminationParams, score
from voirdire.runner import run_protocol
from voirdire.transcript import ModelCall, load

from .test_protocol import examinee


class SeededExaminer(ScriptedChatCompletionClient):
    """Asks one sampled follow-up question whose number is its seed's, and finds the claim correct when that
    number is even: each examination's decision is a function of its own seed, whatever ran beside it."""

    def __init__(self) -> None:
        super().__init__([], name="examiner")

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        self.seen.append(list(messages))
        prompt = text_of(next(m for m in reversed(messages) if not isinstance(m, AssistantMessage)))
        asked = [text_of(m) for m in messages if isinstance(m, AssistantMessage)]
        if re.search(r"verify the correctness|Imagine trying to prove", prompt):
            text = "1. Who built it?"
        elif "Do you have any follow-up questions" in prompt:
            text = "No" if any("Is the code" in a for a in asked) else "Yes"
        elif "What are the follow-up questions" in prompt:
            # a digest of the seed (crc32 seeds of e1, e2, e3 differ in a pattern their parity would follow)
            text = f"1. Is the code {hashlib.sha256(str(args['seed']).encode()).digest()[0] % 10}?"
        else:
            code = next(int(m.group(1)) for a in asked if (m := re.search(r"Is the code (\d)", a)))
            text = "The claim is correct." if code % 2 == 0 else "The claim is incorrect."
        return CreateResult(
            finish_reason="stop", content=text, usage=RequestUsage(prompt_tokens=10, completion_tokens=5), cached=False
        )


ITEMS = [ClaimItem(id=f"c{i}", claim=f"Claim number {i} holds.", answers=["x"]) for i in range(24)]


async def _run(tmp_path: Path, name: str, *, items: list[ClaimItem] = ITEMS, **params: Any) -> Any:
    out = tmp_path / f"{name}.jsonl"
    result = await run_protocol(
        CrossExamination(CrossExaminationParams(**params)),
        items,
        out=out,
        clients={"examiner": SeededExaminer(), "examinee": examinee()},
        roles={"examiner": RoleSettings(temperature=0.7)},
    )
    assert not result.errors, result.errors
    return result, load(out)


@pytest.mark.parametrize(("n", "concurrent"), [(3, True), (3, False), (5, True)])
async def test_adaptive_majority_gives_the_full_procedures_verdicts(tmp_path: Path, n: int, concurrent: bool) -> None:
    full, full_t = await _run(tmp_path, "full", examinations=n, concurrent_examinations=concurrent)
    adaptive, adaptive_t = await _run(
        tmp_path, "adaptive", examinations=n, concurrent_examinations=concurrent, adaptive=True
    )
    need = n // 2 + 1
    stopped = 0
    for item in ITEMS:
        f, a = full.verdicts[item.id], adaptive.verdicts[item.id]
        assert (a.decision, a.accepted) == (f.decision, f.accepted), item.id
        ran = [e["decision"] for e in a.statistics["examinations"]]
        # Examination k is the same examination in both runs: the adaptive run's are the full run's first ones.
        assert ran == [e["decision"] for e in f.statistics["examinations"]][: len(ran)]
        assert need <= len(ran) <= n and a.statistics["examinations_planned"] == n
        votes = max(sum(d != "correct" for d in ran), sum(d == "correct" for d in ran))
        assert votes == need  # it stopped the moment one side had its majority, not later
        assert a.guarantee is not None
        if len(ran) < n:
            assert a.guarantee.values["examinations_planned"] == n
            stopped += 1
            assert "not needed (adaptive)" in a.guarantee.statement
            if n == 3:
                assert a.guarantee.statement.startswith("2–0 majority of 3 examinations, third not needed")
        assert len(f.statistics["examinations"]) == n and "examinations_planned" not in f.statistics
    assert 0 < stopped < len(ITEMS)  # the seeds split the claims: some stop early, some need every examination
    full_calls = sum(len(s.of_kind(ModelCall)) for s in full_t.sessions.values())
    adaptive_calls = sum(len(s.of_kind(ModelCall)) for s in adaptive_t.sessions.values())
    assert adaptive_calls < full_calls
    # The report's Table 8 counts the examinations that ran, and says how many were not needed.
    report = score(adaptive_t.sessions.values(), protocol="cross_examination")
    ran_total = sum(len(v.statistics["examinations"]) for v in adaptive.verdicts.values())
    assert report.examination is not None and report.examination.examinations == ran_total
    assert f"{ran_total} of {n * len(ITEMS)} planned" in report.text()


async def test_adaptive_with_a_generated_claim_keeps_the_first_examinations_conversation(tmp_path: Path) -> None:
    items = [ClaimItem(id=f"q{i}", question=f"Where is tower {i}?", answers=["Paris"]) for i in range(6)]
    full, _ = await _run(tmp_path, "full", items=items, examinations=3)
    adaptive, _ = await _run(tmp_path, "adaptive", items=items, examinations=3, adaptive=True)
    assert {k: v.accepted for k, v in adaptive.verdicts.items()} == {k: v.accepted for k, v in full.verdicts.items()}


def test_adaptive_leaves_a_full_runs_parameters_as_they_were() -> None:
    # Off, the parameters dump as before the option existed: earlier transcripts resume under the same names.
    assert "adaptive" not in CrossExaminationParams(examinations=3).model_dump()
    assert CrossExaminationParams(examinations=3, adaptive=True).model_dump()["adaptive"] is True
    with pytest.raises(ValueError, match="adaptive stops a majority vote early"):
        CrossExaminationParams(adaptive=True)  # one examination: nothing to stop early


async def test_the_estimate_of_an_adaptive_run_expects_what_an_earlier_one_ran(tmp_path: Path) -> None:
    from voirdire.certificate import estimate_run
    from voirdire.registry import registrations
    from voirdire.reports import load_prices

    reg = registrations()["cross_examination"]
    protocol = CrossExamination(CrossExaminationParams(examinations=3, adaptive=True, max_questions=1))
    roles = {"examiner": RoleSettings(model="scripted:x.yaml"), "examinee": RoleSettings(model="scripted:y.yaml")}
    out = tmp_path / "next.jsonl"
    bound = estimate_run(reg.budget, protocol, ITEMS, roles, load_prices(), out=out)
    examiner = next(r for r in bound.roles if r.role == "examiner")
    assert examiner.bounded and examiner.calls == len(ITEMS) * 3 * (2 + 2 * 5)  # no earlier run: the full procedure
    assert "no earlier adaptive run" in examiner.why
    # An earlier adaptive run: its examinations per claim are observed, and expected, and the line is an estimate.
    from voirdire.certificate.estimate import read_earlier

    result, _ = await _run(tmp_path, "earlier", examinations=3, adaptive=True, max_questions=1)
    ran = sum(len(v.statistics["examinations"]) for v in result.verdicts.values()) / len(ITEMS)
    figures = {**reg.budget.defaults(), **read_earlier(tmp_path / "earlier.jsonl", reg.budget).figures(reg.budget)}
    assert figures["examinations_per_claim"].value == pytest.approx(ran) and ran < 3
    calls = reg.budget.of(protocol, ITEMS[0], figures).roles["examiner"]
    assert not calls.bounded and f"adaptive: {ran:.2f} of 3 examinations per claim expected" in calls.why
    assert calls.calls == round(ran * (2 + 2 * 5))
    # A full Majority run says nothing of where adaptive stops: not observed.
    await _run(tmp_path, "full", examinations=3, max_questions=1)
    assert "examinations_per_claim" not in read_earlier(tmp_path / "full.jsonl", reg.budget).figures(reg.budget)
