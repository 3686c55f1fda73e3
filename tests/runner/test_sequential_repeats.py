"""Sequential repeats (``stop_when_decided``): an item's repeats stop once its decided or undecided status at
``decided_at`` can no longer change; every status is that of the full repeats, the report states the rule and the
repeats each item used, and a resumed run does not run the repeats that were not needed."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from autogen_core.models import AssistantMessage, CreateResult, LLMMessage, RequestUsage

from tests.chaos.protocol import Chaos
from tests.core.test_workers import items
from voirdire.executors.sequential import additional, settled
from voirdire.models import ScriptedChatCompletionClient
from voirdire.models.base import text_of
from voirdire.reports import stability
from voirdire.reports.stability import item_stability
from voirdire.runner import RunSetupError, run_protocol
from voirdire.transcript import load


def _draw(*parts: object) -> float:
    return hashlib.sha256("|".join(map(str, parts)).encode()).digest()[0] / 256


class SeededJudge(ScriptedChatCompletionClient):
    """Witness and judge: the ruling of an item is steady for half the items, else drawn from the repeat's seed."""

    def __init__(self) -> None:
        super().__init__([], name="judge")

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        self.seen.append(list(messages))
        last = text_of(next(m for m in reversed(messages) if not isinstance(m, AssistantMessage)))
        if last.startswith("Answer:"):
            text = "Paris."
        elif last.startswith("Are you sure"):
            text = "Yes."
        else:
            steady = _draw(last, "steady") < 0.5
            text = "correct" if steady or _draw(last, args.get("seed")) < 0.6 else "incorrect"
        return CreateResult(
            finish_reason="stop", content=text, usage=RequestUsage(prompt_tokens=5, completion_tokens=1), cached=False
        )


def _status(out: Path, decided_at: float) -> dict[str, bool]:
    t = load(out)
    rows = [(sid, s.item_id, s.verdict.decision if s.verdict else None) for sid, s in t.sessions.items()]
    found = stability(rows, decided_at=decided_at, level=None)
    assert found is not None
    return {i.item_id: i.decided for i in found.items}


@pytest.mark.parametrize(("repeats", "decided_at", "concurrency"), [(5, 0.8, 1), (5, 0.8, 4), (6, 0.6, 3)])
async def test_statuses_are_the_full_repeats_with_fewer_sessions(
    tmp_path: Path, repeats: int, decided_at: float, concurrency: int
) -> None:
    judge = SeededJudge()
    clients = {"witness": judge, "judge": judge}
    full = await run_protocol(
        Chaos(), items(30), out=tmp_path / "full.jsonl", clients=clients, repeats=repeats, concurrency=concurrency
    )
    seq = await run_protocol(
        Chaos(), items(30), out=tmp_path / "seq.jsonl", clients=clients, repeats=repeats, concurrency=concurrency,
        stop_when_decided=True, decided_at=decided_at,
    )  # fmt: skip
    assert not full.errors and not seq.errors
    assert _status(tmp_path / "seq.jsonl", decided_at) == _status(tmp_path / "full.jsonl", decided_at)
    ran = len(load(tmp_path / "seq.jsonl").sessions)
    assert ran < len(full.verdicts) and seq.not_needed == len(full.verdicts) - ran
    # Each repeat that ran is the full run's repeat of the same index: same seeds, same verdict.
    for sid, v in seq.verdicts.items():
        assert v.decision == full.verdicts[sid].decision
    # The report states the rule and the repeats used; its flip rate is over the repeats that ran.
    from voirdire.registry import report_folds
    from voirdire.reports import report_file

    rep, _ = report_file(tmp_path / "seq.jsonl", report_folds(), decided_at=decided_at)
    assert rep.stability is not None and rep.stability.planned == repeats and rep.stability.stopped_at == decided_at
    text = "\n".join(rep.stability.lines())
    assert "sequential repeats (--stop-when-decided)" in text and f"repeats used {ran:,} of {30 * repeats:,}" in text


async def test_a_resumed_sequential_run_does_not_run_what_was_not_needed(tmp_path: Path) -> None:
    judge = SeededJudge()
    clients = {"witness": judge, "judge": judge}
    kw: dict[str, Any] = {"clients": clients, "repeats": 5, "stop_when_decided": True, "out": tmp_path / "t.jsonl"}
    first = await run_protocol(Chaos(), items(12), **kw)
    calls = len(judge.seen)
    again = await run_protocol(Chaos(), items(12), keep_verdicts=False, **kw)
    assert len(judge.seen) == calls and again.skipped == len(first.verdicts)
    assert again.not_needed == first.not_needed > 0


def test_sequential_repeats_need_repeats_and_one_process(tmp_path: Path) -> None:
    from voirdire.runner import RunOptions

    with pytest.raises(RunSetupError, match="only with repeats"):
        RunOptions(stop_when_decided=True).check()
    with pytest.raises(RunSetupError, match="one process"):
        RunOptions(stop_when_decided=True, repeats=3, workers=2).check()


@pytest.mark.parametrize("repeats", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("decided_at", [0.6, 0.8, 1.0])
def test_settled_means_every_way_the_rest_could_go_gives_one_status(repeats: int, decided_at: float) -> None:
    labels = ("a", "b", "c", None)  # None: a repeat that fails
    for done in range(repeats + 1):
        for seen in itertools.product(labels, repeat=done):
            counts: dict[str, int] = {}
            for d in seen:
                if d is not None:
                    counts[d] = counts.get(d, 0) + 1
            failed, left = seen.count(None), repeats - done
            finals, steady = set(), set()  # every final status; those where no later repeat fails
            for rest in itertools.product(labels, repeat=left):
                whole = [(f"s{i}", d) for i, d in enumerate((*seen, *rest))]
                one = item_stability("i", whole, decided_at)
                finals.add(one.decided)
                if None not in rest:
                    steady.add(one.decided)
            now = settled(counts, failed, left, repeats, decided_at)
            if now:  # settled: however the rest goes, failures included, the status is one
                assert len(finals) == 1, (seen, repeats, decided_at)
            if not failed:  # and it settles as soon as the rest, giving verdicts, cannot change it
                assert now is (len(steady) == 1), (seen, repeats, decided_at)
            assert 0 <= additional(counts, failed, left, repeats, decided_at) <= left
