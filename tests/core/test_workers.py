"""--workers N: sessions in N worker processes, one transcript, the same result as one process; a killed worker
costs only its sessions in flight (re-run on resume); the error budget holds across workers; Ctrl-C stops them.

Models are scripted files (``scripted:FILE``), which each worker reads for itself, with rules only (no replies in
order), so every process gives a session the same replies. The protocol is the chaos suite's small one."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.conftest import chaos_cli, questions  # noqa: F401  (chaos_cli: a fixture of the CLI test)
from tests.chaos.protocol import Chaos, ChaosParams, Question, replies
from tests.chaos.server import ChaosServer, at_rates
from voirdire.api import arun
from voirdire.cli import main
from voirdire.executors.base import Tally, limits_text, merge_limits
from voirdire.models import ModelSpecError, RoleSettings, ScriptedChatCompletionClient
from voirdire.runner import RunResult, RunSetupError, run_protocol
from voirdire.transcript import ModelCall, Verdict, iter_records, load, read_lines

SCRIPT = """\
rules:
  - match: "^Answer: (Capital|Slow) \\\\d*[02468]\\\\?"
    reply: "Paris."
  - match: "^Answer: (Capital|Slow)"
    reply: "Rome."
  - match: "Are you sure"
    reply: "Yes."
  - match: "Answer: Paris"
    reply: "correct"
  - match: "Answer: Rome"
    reply: "incorrect"
"""


def script(folder: Path, extra: str = "") -> dict[str, RoleSettings]:
    path = folder / "script.yaml"
    path.write_text(SCRIPT + extra)
    return {"*": RoleSettings(model=f"scripted:{path}")}


def items(n: int, broken: tuple[int, ...] = ()) -> list[Question]:
    """``Capital i?``; the ``broken`` ones ask what no rule of the script answers, so their session fails."""
    return [Question(id=f"q{i:03d}", question=f"{'Broken' if i in broken else 'Capital'} {i}?") for i in range(n)]


def decisions(result: RunResult) -> dict[str, tuple[Any, ...]]:
    return {
        sid: (v.decision, v.accepted, tuple(v.evidence), json.dumps(v.statistics, sort_keys=True))
        for sid, v in result.verdicts.items()
    }


def verdicts_per_session(out: Path) -> Counter[str]:
    return Counter(r.session_id for r in read_lines(out) if isinstance(r, Verdict))


async def test_two_workers_give_one_process_s_verdicts_in_one_transcript(tmp_path: Path) -> None:
    roles, qs = script(tmp_path), items(40)
    one = await run_protocol(Chaos(), qs, out=tmp_path / "one.jsonl", roles=roles, concurrency=3)
    two = await run_protocol(Chaos(), qs, out=tmp_path / "two.jsonl", roles=roles, concurrency=3, workers=2)
    assert decisions(two) == decisions(one) and len(two.verdicts) == 40
    assert two.session_ids == one.session_ids and not two.errors and two.stopped is None and two.not_started == 0
    assert set(verdicts_per_session(tmp_path / "two.jsonl").values()) == {1}  # every session, exactly one verdict
    t = load(tmp_path / "two.jsonl")
    assert len(t.headers) == 1 and len(t.finished()) == 40
    # Both workers ran sessions: each one's events carry its own session's seq from 1, none interleaved mid-line.
    assert all([e.seq for e in s.events] == list(range(1, len(s.events) + 1)) for s in t.sessions.values())
    lines = (tmp_path / "two.jsonl").read_text().splitlines()
    assert len(lines) == 1 + sum(len(s.events) for s in t.sessions.values())
    # Resuming the finished transcript with workers runs nothing and keeps the verdicts.
    again = await run_protocol(Chaos(), qs, out=tmp_path / "two.jsonl", roles=roles, workers=2)
    assert again.skipped == 40 and decisions(again) == decisions(one)


async def test_keep_verdicts_false_keeps_them_in_the_transcript_only(tmp_path: Path) -> None:
    roles, qs = script(tmp_path), items(6)
    result = await run_protocol(Chaos(), qs, out=tmp_path / "t1.jsonl", roles=roles, keep_verdicts=False)
    assert result.verdicts == {} and not result.errors and len(load(tmp_path / "t1.jsonl").finished()) == 6
    # The Python API passes the executor options on.
    out = tmp_path / "t2.jsonl"
    result = await arun(Chaos(), qs, out=out, models={"*": roles["*"]}, workers=2, keep_verdicts=False)
    assert result.verdicts == {} and not result.errors and len(load(out).finished()) == 6


class DyingParams(ChaosParams):
    die_from: str = ""  # the first session from this id on that a worker (not the run's own process) runs
    marker: str = ""  # the worker dies the first time only: when this file does not exist yet
    parent: int = 0  # never the test's own process


def _first(marker: str) -> bool:
    """True for the one process that creates ``marker`` (atomically: two workers may reach it at once)."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


class Dying(Chaos):
    """The chaos protocol, whose worker is killed (SIGKILL) in the middle of one session, once. The run's own process
    runs sessions too, so which session dies is the first one from ``die_from`` on that a worker gets."""

    name = "chaos"
    Params = DyingParams
    params: DyingParams

    async def run(self, item: Question, session: Any) -> Verdict:
        p = self.params
        if item.id >= p.die_from and os.getpid() == p.parent:
            # On a busy machine the run's own process could take every session before a worker has started: it
            # waits (for a worker to die, not for a time) so that a worker gets one of them.
            for _ in range(1200):
                if os.path.exists(p.marker):
                    break
                await asyncio.sleep(0.1)
        if item.id >= p.die_from and os.getpid() != p.parent and _first(p.marker):
            session.enter("answer", stage="answer")
            await session.ask("witness", "answer", question=item.question)  # some events written, no verdict
            os.kill(os.getpid(), signal.SIGKILL)
        return await super().run(item, session)


async def test_a_killed_worker_s_session_runs_again_in_the_run_and_is_written_once(tmp_path: Path) -> None:
    roles, qs, out = script(tmp_path), items(16), tmp_path / "t.jsonl"
    protocol = Dying(DyingParams(die_from="q005", marker=str(tmp_path / "died"), parent=os.getpid()))
    with pytest.warns(RuntimeWarning, match=r"worker process \d \(pid \d+\) died \(killed by SIGKILL\); the 1 session"):
        result = await run_protocol(protocol, qs, out=out, roles=roles, workers=3)
    assert Path(tmp_path / "died").exists()  # a worker did die mid-session
    assert not result.errors and len(result.verdicts) == 16 and result.stopped is None  # 0 lost
    assert verdicts_per_session(out) == Counter({q.id: 1 for q in qs})  # 0 duplicated
    t = load(out)  # nothing of the dead worker's attempt: one session start per session
    assert all(len([e for e in s.events if e.kind == "session_start"]) == 1 for s in t.sessions.values())
    assert len(t.finished()) == 16 and len(result.warnings) == 1


async def test_the_error_budget_holds_across_workers_and_a_rerun_resumes(tmp_path: Path) -> None:
    qs, out = items(24, broken=(1, 2, 3, 4, 5, 6)), tmp_path / "t.jsonl"
    roles = script(tmp_path)
    result = await run_protocol(Chaos(), qs, out=out, roles=roles, workers=2, max_errors=2)
    assert result.stopped and "more than max_errors=2 allows" in result.stopped
    assert 3 <= len(result.errors) <= 4  # the third failure stops it; the other worker's session in flight ends
    assert result.not_started == 24 - len(result.errors) - len(result.verdicts) > 0
    t = load(out)  # consistent: sessions not started have no events at all
    assert set(t.sessions) == set(result.errors) | set(result.verdicts)
    script(tmp_path, '  - match: "^Answer: Broken"\n    reply: "Lyon."\n  - match: "Answer: Lyon"\n    reply: "x"\n')
    resumed = await run_protocol(Chaos(), qs, out=out, roles=roles, workers=2, max_errors=2)
    assert resumed.stopped is None and not resumed.errors and len(load(out).finished()) == 24


async def test_retries_and_endpoint_limits_in_workers_reach_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    roles = {"*": RoleSettings(model="openai-compatible:m@URL", max_retries=5, timeout=60)}  # only 500s are retried
    with ChaosServer(replies, at_rates({"500": 0.2}, seed=3), retry_after="0") as server:
        roles = {"*": roles["*"].model_copy(update={"model": f"openai-compatible:m@{server.url}"})}
        result = await run_protocol(Chaos(), items(12), out=tmp_path / "t.jsonl", roles=roles, workers=2, progress=True)
    recorded = sum(e.retries for s in load(tmp_path / "t.jsonl").sessions.values() for e in s.of_kind(ModelCall))
    assert not result.errors and recorded > 0 and result.retries == recorded == server.faults()["500"]
    # The progress line's last state: every retry, and the endpoint's limit as the workers last reported it.
    last = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert re.search(rf"retries {recorded}, errors 0 \(0%\), limit 0/\d+\]", last), last


async def test_cancelling_the_run_stops_its_workers_and_frees_the_transcript(tmp_path: Path) -> None:
    roles, out = script(tmp_path), tmp_path / "t.jsonl"
    slow = [Question(id=f"s{i:03d}", question=f"Slow {i}?") for i in range(400)]
    run = asyncio.create_task(
        run_protocol(Slow(), slow, out=out, roles=roles, workers=3, concurrency=2)  # 0.2 s a session
    )
    while not out.exists() or verdicts_per_session(out).total() < 4:
        await asyncio.sleep(0.1)
    children = worker_pids()
    assert len(children) == 2  # the run's own process is the third
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert not worker_pids() and all(not Path(f"/proc/{pid}").exists() for pid in children)
    assert not out.with_name("t.jsonl.lock").exists()
    done = load(out).finished()
    assert 4 <= len(done) < 400  # a consistent transcript of the sessions that ended ...
    resumed = await run_protocol(Slow(), slow[:30], out=out, roles=roles, workers=2, concurrency=4)
    assert resumed.skipped == len(done & {q.id for q in slow[:30]}) and not resumed.errors  # ... which resumes


class Slow(Chaos):
    """The chaos protocol, 0.2 s a session: time to interrupt a run."""

    async def run(self, item: Question, session: Any) -> Verdict:
        await asyncio.sleep(0.2)
        return await super().run(item, session)


def worker_pids() -> list[int]:
    """This process's worker processes: live children, each in a process group of its own (forks of this process
    or new interpreters running ``voirdire.executors.local``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            state, parent, group = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[:3]
        except OSError:
            continue
        if int(parent) == os.getpid() and int(group) == int(entry) and state != "Z":
            found.append(int(entry))
    return found


async def test_clients_given_in_code_cannot_go_to_workers(tmp_path: Path) -> None:
    client = ScriptedChatCompletionClient(["Paris."])
    with pytest.raises(RunSetupError, match=r"clients given in code \(roles judge, witness\) cannot be sent to 2 "):
        await run_protocol(
            Chaos(), items(3), out=tmp_path / "t.jsonl", clients={"witness": client, "judge": client}, workers=2
        )
    assert not (tmp_path / "t.jsonl").exists()


async def test_a_protocol_with_lambdas_or_defined_in_a_function_goes_by_value(tmp_path: Path) -> None:
    class Local(Chaos):  # a class no worker can import, holding a lambda (as a prepared No-Data protocol does)
        def __init__(self) -> None:
            super().__init__()
            self.rule = lambda text: text.upper()

    roles, qs = script(tmp_path), items(4)
    one = await run_protocol(Chaos(), qs, out=tmp_path / "one.jsonl", roles=roles)
    two = await run_protocol(Local(), qs, out=tmp_path / "two.jsonl", roles=roles, workers=2)
    assert decisions(two) == decisions(one) and not two.errors


class Locked(Chaos):
    """A protocol holding what no pickle carries."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()


async def test_a_protocol_no_pickle_carries_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(RunSetupError, match=r"^chaos: the run cannot be sent to worker processes \(TypeError: "):
        await run_protocol(Locked(), items(3), out=tmp_path / "t.jsonl", roles=script(tmp_path), workers=2)
    assert not (tmp_path / "t.jsonl").exists()


async def test_a_script_that_cannot_be_read_fails_before_the_header(tmp_path: Path) -> None:
    out, roles = tmp_path / "t.jsonl", {"*": RoleSettings(model=f"scripted:{tmp_path / 'missing.yaml'}")}
    # The run's own process builds its clients first, so the error is the one a run in one process gives.
    with pytest.raises(ModelSpecError, match=r"missing.yaml: script file not found"):
        await run_protocol(Chaos(), items(3), out=out, roles=roles, workers=2)
    assert not out.exists() or not out.read_text()


async def test_a_script_of_replies_in_order_is_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "ordered.yaml"
    path.write_text("replies: [Paris., Yes., correct, Rome., Yes., incorrect]\ndefault: correct\n")
    with pytest.warns(UserWarning, match="gives replies in order, and each of the 2 worker processes"):
        await run_protocol(
            Chaos(), items(2), out=tmp_path / "t.jsonl", roles={"*": RoleSettings(model=f"scripted:{path}")}, workers=2
        )


@pytest.mark.parametrize(("option", "message"), [("workers", "workers must be at least 1"), ("executor", "expected")])
async def test_bad_executor_options(option: str, message: str, tmp_path: Path) -> None:
    value: dict[str, Any] = {"workers": 0} if option == "workers" else {"executor": "threads"}
    with pytest.raises(RunSetupError, match=message):
        await run_protocol(Chaos(), items(2), out=tmp_path / "t.jsonl", roles=script(tmp_path), **value)


def test_the_command_line_flag(chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    data, out, roles = questions(tmp_path / "qs.jsonl", 12), tmp_path / "t.jsonl", script(tmp_path)
    args = ["run", "chaos", "--data", str(data), "--model", roles["*"].model, "--out", str(out), "--json", "--warn"]
    assert main([*args, "--workers", "2", "--concurrency", "2"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert len(payload["verdicts"]) == 12 and not payload["errors"] and len(load(out).finished()) == 12
    # A warning every session gives, in both workers, is shown once by the parent.
    assert captured.err.count("warning: chaos: the same warning in every session") == 1
    assert payload["warnings"] == ["chaos: the same warning in every session"]
    assert main([*args, "--ray-address", "auto"]) == 2
    assert "voirdire: error: --ray-address: only with --executor ray" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*args, "--workers", "0"])
    assert "--workers: must be at least 1 (processes), got 0" in capsys.readouterr().err


def test_a_shared_writer_cuts_a_torn_line_a_killed_writer_left(tmp_path: Path) -> None:
    from voirdire.transcript import TranscriptWriter

    out = tmp_path / "t.jsonl"
    out.write_text('{"a": 1}\n{"kind": "message", "run_id": "r", "cont')  # a writer killed mid-line
    with TranscriptWriter(out, shared=True) as writer:
        assert out.read_text().endswith("cont")  # opening a shared writer leaves the file to the others
        writer.write_line('{"b": 2}')
    assert out.read_text() == '{"a": 1}\n{"b": 2}\n'


def _append(path: str, tag: str, count: int, size: int) -> None:
    from voirdire.transcript import TranscriptWriter

    with TranscriptWriter(path, shared=True) as writer:
        for i in range(count):
            writer.write_line(json.dumps({"tag": tag, "i": i, "pad": tag * size}))


def test_processes_appending_long_lines_never_interleave(tmp_path: Path) -> None:
    import multiprocessing

    out = tmp_path / "t.jsonl"
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_append, args=(str(out), tag, 40, 300_000)) for tag in "ab"]
    for w in writers:
        w.start()
    for w in writers:
        w.join(60)
    records = [json.loads(line) for line in out.read_text().splitlines()]  # lines far over a pipe's 64 KiB
    assert Counter(r["tag"] for r in records) == {"a": 40, "b": 40}
    assert all(r["pad"] == r["tag"] * 300_000 for r in records)


class _Bar:
    """What the progress line is given (a tqdm bar's postfix)."""

    def __init__(self) -> None:
        self.postfix = ""

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self.postfix = text

    def update(self, n: int = 1) -> None:
        pass

    def refresh(self) -> None:
        pass


def test_the_progress_line_shows_the_endpoint_limits_summed_over_workers(tmp_path: Path) -> None:
    assert limits_text({}) == "" and limits_text({"http://a/v1": (64, 12)}) == "limit 12/64"
    assert limits_text({"b": (32, 1), "a": (64, 2)}) == "limits a:64 b:32"
    workers = [{"a": (64, 10), "b": (8, 1)}, {"a": (32, 5)}]
    assert merge_limits(workers) == {"a": (96, 15), "b": (8, 1)}
    bar = _Bar()
    tally = Tally(RunResult(out=tmp_path, run_id="r"), left=4, allowed=0, budget="0", bar=bar)
    tally.limits = lambda: merge_limits([workers[0], {"b": (8, 2)}])
    tally.retry()
    assert bar.postfix == "retries 1, errors 0, limits a:64 b:16"
    tally.limits = lambda: {"a": (64, 10)}
    tally.end("q1", error="boom")  # over the budget of 0: the run stops, nothing else starts
    assert bar.postfix == "retries 1, errors 1 (100%), limit 10/64"
    assert tally.stopped and not tally.start()
    tally.finish()
    assert tally.result.not_started == 4


def _reported_in_two_processes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """A chaos run of 16 items in two forked processes: the transcripts the report read back, the run's report, and
    what ``voirdire report`` says of its transcript afterwards."""
    from voirdire.executors import local
    from voirdire.reports import stream as fold

    reads: list[str] = []

    def counted(path: Any) -> Any:
        reads.append(str(path))
        return iter_records(path)

    monkeypatch.setattr(fold, "iter_records", counted)
    monkeypatch.setattr(local, "_can_fork", lambda: True)  # as in a run's process (pytest may leave idle threads)
    data, out, roles = questions(tmp_path / "qs.jsonl", 16), tmp_path / "t.jsonl", script(tmp_path)
    args = ["run", "chaos", "--data", str(data), "--model", roles["*"].model, "--out", str(out), "--json"]
    assert main([*args, "--workers", "2", "--concurrency", "2"]) == 0
    report = json.loads(capsys.readouterr().out)["report"]
    run_reads = list(reads)
    assert main(["report", str(out), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    return run_reads, report, {k: v for k, v in again.items() if k in report}


def test_a_workers_run_reports_as_voirdire_report_does_reading_no_transcript_back(
    chaos_cli: None,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads, report, again = _reported_in_two_processes(tmp_path, capsys, monkeypatch)
    # Its sessions are in the transcript in the order they ended, not in the items' order: still the run's report,
    # not the file read again for "this command's sessions"; and folded as written: the workers fold their
    # sessions' parts, the parent its own sessions.
    assert reads == []
    assert again == report


def test_a_workers_run_with_a_masked_record_reads_its_transcript_back_for_the_same_report(
    chaos_cli: None,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CHAOS_TEST_API_KEY", "Capital 5?")  # one item's text is a credential: its records are masked
    reads, report, again = _reported_in_two_processes(tmp_path, capsys, monkeypatch)
    assert "Capital 5?" not in (tmp_path / "t.jsonl").read_text()
    assert len(reads) == 1  # the part folded from the unmasked records would hold the text: read back instead
    assert again == report
