"""``repeats=N`` in the runner: N sessions per item (``ITEM@r1`` ...), each repeat's roles with seeds of their own
recorded in its first step, greedy requests sent by every repeat (no reply cache read or written), resume by
session id, worker processes and Ray, and the repeats in the default transcript name. The protocol is the chaos
suite's small one (witness answers, confirms; judge rules), its models scripted."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.chaos.protocol import Chaos
from tests.core.examination_scripts import scripted_models
from tests.core.test_workers import items, script, verdicts_per_session
from voirdire.executors import repeat_seed
from voirdire.models import RoleSettings, ScriptedChatCompletionClient
from voirdire.models.scripted import Script, ScriptRule
from voirdire.runner import RunSetupError, default_out, run_identity, run_protocol
from voirdire.transcript import ModelCall, load

needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (voirdire[ray])")


def judge_in_turns(*rulings: str) -> ScriptedChatCompletionClient:
    """A witness and judge in one client: the judge's rulings given in order, one per session."""
    return ScriptedChatCompletionClient(
        Script(
            rules=[
                ScriptRule(match="^Answer:", reply="Paris."),
                ScriptRule(match="Are you sure", reply="Yes."),
                ScriptRule(match="Is the answer right", replies=list(rulings)),
            ]
        )
    )


def repeat_steps(out: Path) -> dict[str, dict[str, object]]:
    sessions = load(out).sessions.items()
    return {sid: next(e.data for e in s.events if e.kind == "step" and e.name == "repeat") for sid, s in sessions}


async def test_each_item_runs_as_n_sessions_with_seeds_of_their_own(tmp_path: Path) -> None:
    roles = {"*": RoleSettings(model=script(tmp_path)["*"].model, seed=7)}
    out = tmp_path / "t.jsonl"
    result = await run_protocol(Chaos(), items(2), out=out, roles=roles, repeats=3)
    assert result.session_ids == ["q000@r1", "q000@r2", "q000@r3", "q001@r1", "q001@r2", "q001@r3"]
    assert not result.errors and set(result.verdicts) == set(result.session_ids)
    t = load(out)
    # The item and the repeat are fields of the session's start (schema 3), not read out of its id.
    starts = {sid: s.events[0] for sid, s in t.sessions.items()}
    assert {sid: (e.item_id, e.repeat) for sid, e in starts.items()} == {
        f"q00{i}@r{r}": (f"q00{i}", r) for i in (0, 1) for r in (1, 2, 3)
    }
    assert all(s.repeat == starts[sid].repeat for sid, s in t.sessions.items())
    steps = repeat_steps(out)
    for sid, data in steps.items():
        r = starts[sid].repeat
        assert data == {"repeats": 3, "seeds": {"witness": repeat_seed(7, r), "judge": repeat_seed(7, r)}}
    assert len({repeat_seed(7, r) for r in (1, 2, 3)}) == 3
    # The same prompt in three repeats is three requests with three digests (each repeat's seed in its arguments).
    first = {sid: s.of_kind(ModelCall)[0].request_digest for sid, s in t.sessions.items() if sid.startswith("q000")}
    assert len(set(first.values())) == 3


async def test_greedy_requests_are_sent_by_every_repeat_never_answered_by_the_cache(tmp_path: Path) -> None:
    cache, out = tmp_path / "replies.jsonl", tmp_path / "t.jsonl"
    client = judge_in_turns("correct", "incorrect", "correct")
    with pytest.warns(UserWarning, match=r"not read or written by a run with repeats"):
        result = await run_protocol(
            Chaos(), items(1), out=out, clients={"witness": client, "judge": client}, repeats=3, cache=cache
        )
    assert len(client.seen) == 9  # three calls a session, each repeat its own
    assert not cache.exists() or cache.read_text() == ""
    calls = [e for s in load(out).sessions.values() for e in s.of_kind(ModelCall)]
    assert len(calls) == 9 and not any(e.cached or e.coalesced for e in calls)
    assert [result.verdicts[f"q000@r{r}"].decision for r in (1, 2, 3)] == ["correct", "incorrect", "correct"]
    assert any("not read or written" in w for w in result.warnings)


async def test_a_resumed_run_skips_the_repeats_already_finished(tmp_path: Path) -> None:
    roles, out = script(tmp_path), tmp_path / "t.jsonl"
    first = await run_protocol(Chaos(), items(3), out=out, roles=roles, repeats=2)
    again = await run_protocol(Chaos(), items(3), out=out, roles=roles, repeats=2)
    assert first.skipped == 0 and again.skipped == 6 and not again.errors
    more = await run_protocol(Chaos(), items(3), out=out, roles=roles, repeats=3)  # a third repeat each: 3 to run
    assert more.skipped == 6 and len(more.verdicts) == 9
    assert set(verdicts_per_session(out).values()) == {1} and len(verdicts_per_session(out)) == 9


async def test_repeats_in_worker_processes(tmp_path: Path) -> None:
    roles = script(tmp_path)
    one = await run_protocol(Chaos(), items(4), out=tmp_path / "one.jsonl", roles=roles, repeats=3)
    two = await run_protocol(
        Chaos(), items(4), out=tmp_path / "two.jsonl", roles=roles, repeats=3, workers=2, concurrency=2
    )
    assert two.session_ids == one.session_ids and not two.errors
    assert {k: v.decision for k, v in two.verdicts.items()} == {k: v.decision for k, v in one.verdicts.items()}
    assert repeat_steps(tmp_path / "two.jsonl") == repeat_steps(tmp_path / "one.jsonl")
    assert set(verdicts_per_session(tmp_path / "two.jsonl").values()) == {1}


@needs_ray
async def test_repeats_on_ray(ray_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    roles, out = script(tmp_path), tmp_path / "ray.jsonl"
    result = await run_protocol(Chaos(), items(3), out=out, roles=roles, repeats=2, executor="ray", workers=1)
    assert not result.errors and len(result.verdicts) == 6
    assert sorted(repeat_steps(out)) == sorted(f"q00{i}@r{r}" for i in range(3) for r in (1, 2))


async def test_repeats_below_one_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with pytest.raises(RunSetupError, match=r"^repeats must be at least 1 \(sessions per item\), got 0$"):
        await run_protocol(Chaos(), items(1), out=out, roles=script(tmp_path), repeats=0)
    assert not out.exists()


def test_repeats_make_a_run_distinct_in_the_default_transcript_name(tmp_path: Path) -> None:
    roles = script(tmp_path)
    plain, five = run_identity(Chaos(), roles), run_identity(Chaos(), roles, repeats=5)
    assert "repeats" not in plain and five == {**plain, "repeats": 5}  # a run without repeats keeps its name
    data = tmp_path / "qs.jsonl"
    names = {default_out("chaos", data, run_identity(Chaos(), roles, repeats=n)) for n in (1, 2, 5)}
    assert len(names) == 3 and default_out("chaos", data, plain) in names


def test_the_python_api_names_a_repeated_run_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import voirdire

    monkeypatch.chdir(tmp_path)
    data = tmp_path / "claims.jsonl"
    data.write_text("".join(json.dumps({"id": f"c{i}", "claim": f"Paris is in France {i}."}) + "\n" for i in range(2)))
    models = scripted_models(tmp_path)
    once, _ = voirdire.run_dataset("cross_examination", data, models=models)
    twice, report = voirdire.run_dataset("cross_examination", data, models=models, repeats=2)
    assert once.out != twice.out and len(twice.session_ids) == 4
    assert report.stability is not None and report.stability.repeats == 2 and report.stability.flip_rate == 0.0


def test_a_large_repeat_count_makes_no_id_up_front() -> None:
    import pickle

    from voirdire.base import IdList
    from voirdire.executors.repeats import RepeatIds, repeat_ids

    items = IdList(f"q{i}" for i in range(1000))
    ids = repeat_ids(items, 1000)  # a million sessions: made as they are read, none stored
    assert isinstance(ids, RepeatIds) and len(ids) == 1_000_000 and not ids._data and not ids._ends
    assert ids[0] == "q0@r1" and ids[999_999] == "q999@r1000" and ids[-1001] == "q998@r1000"
    assert ids.prefix(3) == ["q0@r1", "q0@r2", "q0@r3"] and type(ids.prefix(3)) is IdList
    again = pickle.loads(pickle.dumps(ids))
    assert isinstance(again, RepeatIds) and not again._data and again == ids
    small = repeat_ids(["a", "b"], 2)
    assert small == IdList(["a@r1", "a@r2", "b@r1", "b@r2"]) == list(small)
    with pytest.raises(TypeError, match="append the item id"):
        small.append("c")
    grown = IdList(["a"])
    later = repeat_ids(grown, 2)
    grown.append("b")  # a dataset read as it runs: the repeats follow their item ids
    assert list(later) == ["a@r1", "a@r2", "b@r1", "b@r2"]
    assert [(s.item_id, s.repeat) for s in later] == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert (again[5].item_id, again[5].repeat) == ("q0", 6)
