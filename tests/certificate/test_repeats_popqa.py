"""``--repeats 5`` on 40 PopQA questions, cross-examined by a scripted examiner that decides 10 of them at random
on a seeded schedule (3 of 5 repeats one way, 2 the other, in a seeded order) and the other 30 the same way every
time: the report gives the flip rate (10 of 40, with its Wilson interval) and exactly those 10 items undecided, in
text and in ``--json``. The run is killed (SIGKILL) while sessions are in flight and resumed: 200 sessions, each
with exactly one verdict, none lost and none run twice to its end.

The examiner and the examinee are one fake OpenAI-compatible endpoint on 127.0.0.1 that reads each request's seed:
a repeat's calls carry the repeat's own seed (``voirdire.executors.repeats.repeat_seed``), which is how the scripted
examiner knows which repeat it is deciding.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.server import completion
from tests.conftest import SHARED
from voirdire.certificate import wilson
from voirdire.cli import main
from voirdire.executors import repeat_seed
from voirdire.transcript import iter_records, load

ROOT = Path(__file__).resolve().parents[2]
ITEMS, REPEATS, RANDOM_ITEMS = 40, 5, 10
HOLD_AFTER = 60  # decisions answered before the endpoint holds every further request, so the kill lands mid-run


class Endpoint:
    """The scripted examiner and examinee (the request's ``model``), on 127.0.0.1; after ``HOLD_AFTER`` examiner
    decisions it holds every request until ``release``."""

    def __init__(self, questions: dict[str, str], schedule: dict[str, list[bool]]) -> None:
        self.questions = questions  # question -> item id
        self.schedule = schedule  # item id -> each repeat's decision (True: correct)
        self.by_seed = {repeat_seed(None, r): r for r in range(1, REPEATS + 1)}
        self.decisions = 0
        self.seeds: Counter[tuple[str, int]] = Counter()  # (model, seed) -> requests
        self.held = threading.Event()  # set once requests are being held
        self.gate = threading.Event()
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                text = endpoint.reply(body)
                data = json.dumps(completion(body, [text])).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client was killed while this request was held
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def reply(self, body: dict[str, Any]) -> str:
        with self.lock:
            self.seeds[(body.get("model", ""), body.get("seed"))] += 1
            hold = self.decisions >= HOLD_AFTER and not self.gate.is_set()
        if hold:
            self.held.set()
            self.gate.wait(120)
        messages = body.get("messages", [])
        last = str(messages[-1]["content"]) if messages else ""
        if body.get("model") == "examinee":
            if "phrase your answer as a claim" in last:
                item = next(i for q, i in self.questions.items() if q in last)
                return f"Item {item}: the answer is documented."
            return "Yes" if "Are you sure" in last else "It is in the record."
        if re.search(r"correct or incorrect\?", last, re.IGNORECASE):
            seen = " ".join(str(m["content"]) for m in messages)
            item = re.search(r"Item (\d+):", seen).group(1)  # type: ignore[union-attr]
            with self.lock:
                self.decisions += 1
            repeat = self.by_seed[body["seed"]]
            correct = self.schedule.get(item, [True] * REPEATS)[repeat - 1]
            return "The claim is correct." if correct else "The claim is incorrect."
        if "Do you have any follow-up questions" in last:
            return "No"
        return "1. Where is it documented?"

    def __enter__(self) -> Endpoint:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.gate.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def popqa(shared_data: Path, folder: Path) -> tuple[Path, list[dict[str, Any]]]:
    """The first 40 PopQA questions, as a file of their own."""
    source = shared_data / "popqa" / "popqa_longtail_merged.jsonl"
    with source.open(encoding="utf-8") as fh:
        rows = [json.loads(next(fh)) for _ in range(ITEMS)]
    path = folder / "popqa40.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path, rows


def seeded_schedule(ids: list[str], seed: int = 29) -> dict[str, list[bool]]:
    """10 items drawn at random, each decided 3-2 (which way, and in which order of repeats, drawn too)."""
    rng = random.Random(seed)
    schedule = {}
    for item in rng.sample(ids, RANDOM_ITEMS):
        pattern = [True, True, True, False, False] if rng.random() < 0.5 else [True, True, False, False, False]
        rng.shuffle(pattern)
        schedule[item] = pattern
    return schedule


def wait_for_verdicts(out: Path, count: int) -> None:
    """Until ``out`` holds ``count`` verdicts (a bound of 120 s on a busy machine, not a measure)."""
    done = threading.Event()
    for _ in range(2400):
        if out.is_file() and out.read_text(encoding="utf-8").count('"kind":"verdict"') >= count:
            return
        done.wait(0.05)
    raise AssertionError(f"{out}: fewer than {count} verdicts written")


@pytest.fixture(scope="module")
def killed_and_resumed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    shared_data = SHARED / "data"
    if not shared_data.is_dir():
        pytest.skip("../shared/data is not beside this checkout")
    folder = tmp_path_factory.mktemp("repeats-popqa")
    data, rows = popqa(shared_data, folder)
    ids = [str(r["id"]) for r in rows]
    schedule = seeded_schedule(ids)
    out = folder / "popqa-repeats.jsonl"
    with Endpoint({r["question"]: str(r["id"]) for r in rows}, schedule) as endpoint:
        argv = [
            "examine", "--questions", str(data), "--repeats", str(REPEATS), "--temperature", "0.7",
            "--model", f"examiner=openai-compatible:examiner@{endpoint.url}",
            "--model", f"examinee=openai-compatible:examinee@{endpoint.url}",
            "--concurrency", "4", "--out", str(out), "--no-progress",
        ]  # fmt: skip
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": "sk-test", "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "voirdire", *argv], cwd=folder, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            assert endpoint.held.wait(240), "the run never reached the point where requests are held"
            # every session that had its decision writes its verdict (nothing holds it); then kill -9, with the
            # sessions that wait on a held request in flight
            wait_for_verdicts(out, endpoint.decisions)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(60)
        finally:
            if proc.poll() is None:
                proc.kill()
        before = [r for r in iter_records(out)]
        endpoint.gate.set()
        resumed = subprocess.run(
            [sys.executable, "-m", "voirdire", *argv], cwd=folder, env=env, capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
        seeds = dict(endpoint.seeds)
    yield {"out": out, "before": before, "resumed": resumed, "ids": ids, "schedule": schedule, "seeds": seeds}


def test_killed_mid_run_and_resumed_every_session_once(killed_and_resumed: dict[str, Any]) -> None:
    out, before = killed_and_resumed["out"], killed_and_resumed["before"]
    assert killed_and_resumed["resumed"].returncode == 0, killed_and_resumed["resumed"].stderr[-2000:]
    finished_before = {r.session_id for r in before if r.kind == "verdict"}
    started_before = {r.session_id for r in before if r.kind == "session_start"}
    assert HOLD_AFTER <= len(finished_before) < ITEMS * REPEATS  # the kill came mid-run, after every decision
    assert started_before - finished_before  # with sessions in flight, cut off without a verdict
    records = list(iter_records(out))
    verdicts = Counter(r.session_id for r in records if r.kind == "verdict")
    expected = {f"{i}@r{k}" for i in killed_and_resumed["ids"] for k in range(1, REPEATS + 1)}
    assert set(verdicts) == expected and set(verdicts.values()) == {1}  # none lost, none finished twice
    t = load(out)
    assert len(t.sessions) == ITEMS * REPEATS and t.finished() == expected
    assert {s.item_id for s in t.sessions.values()} == set(killed_and_resumed["ids"])
    # the resumed run ran exactly the sessions the killed one had not finished
    assert f"{len(finished_before)} resumed from the transcript" in killed_and_resumed["resumed"].stdout


def test_each_repeat_draws_with_its_own_recorded_seed(killed_and_resumed: dict[str, Any]) -> None:
    t = load(killed_and_resumed["out"])
    for sid, s in t.sessions.items():
        step = next(e for e in s.events if e.kind == "step" and e.name == "repeat")
        repeat = s.repeat
        assert repeat is not None and sid == f"{s.item_id}@r{repeat}"
        assert step.data == {"repeats": REPEATS,
                             "seeds": {"examiner": repeat_seed(None, repeat), "examinee": repeat_seed(None, repeat)}}
    sent = {seed for (_, seed) in killed_and_resumed["seeds"]}
    assert sent == {repeat_seed(None, r) for r in range(1, REPEATS + 1)}  # every request carried its repeat's seed


def test_the_report_gives_the_flip_rate_and_the_ten_undecided_items(
    killed_and_resumed: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out, schedule = killed_and_resumed["out"], killed_and_resumed["schedule"]
    text = killed_and_resumed["resumed"].stdout
    rate = wilson("flip rate", RANDOM_ITEMS, ITEMS)
    assert rate.low is not None and rate.high is not None
    line = f"flip rate 25.0% [{100 * rate.low:.1f}%, {100 * rate.high:.1f}%] (95% Wilson, n={ITEMS})"
    assert line in text, text
    assert f"decided {ITEMS - RANDOM_ITEMS}, undecided {RANDOM_ITEMS}" in text
    for item in schedule:  # each with the commands that open a repeat of each verdict
        assert re.search(rf"^    {item}: (correct|incorrect) 3, (correct|incorrect) 2 \(undecided\)$", text, re.M)
        assert f"voirdire show {out} --session {item}@r" in text
    assert main(["report", str(out), "--json"]) == 0
    stability = json.loads(capsys.readouterr().out)["stability"]
    assert sorted(stability["undecided_items"]) == sorted(schedule)
    assert stability["flipping"] == RANDOM_ITEMS and stability["assessed"] == ITEMS
    assert stability["flip_rate"] == pytest.approx(0.25)
    assert (stability["flip_low"], stability["flip_high"]) == pytest.approx((rate.low, rate.high))
    flips = {f["item_id"]: f for f in stability["flipping_items"]}
    assert set(flips) == set(schedule)
    for item, pattern in schedule.items():
        assert flips[item]["verdicts"] == {"correct": pattern.count(True), "incorrect": pattern.count(False)}
        first_wrong = pattern.index(False) + 1
        assert flips[item]["commands"]["incorrect"] == f"voirdire show {out} --session {item}@r{first_wrong}"
    # a stricter or looser majority moves the line between decided and undecided
    assert main(["report", str(out), "--json", "--decided-at", "0.6"]) == 0
    assert json.loads(capsys.readouterr().out)["stability"]["undecided_items"] == []
