"""Reports as folds over sessions: the same numbers as the whole-transcript reports, never an event held once its
session ended; tokens, requests and cost per role from an editable price table."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

import voirdire.reports.fold as report_module
import voirdire.reports.stream as stream_module
from voirdire.cli import main
from voirdire.registry.plugins import registrations, report_folds
from voirdire.reports.fold import ReportBuilder, ReportFold, generic_report
from voirdire.reports.prices import PriceError, load_prices, read_prices
from voirdire.reports.stream import report_file
from voirdire.transcript import (
    ErrorEvent,
    Message,
    ModelCall,
    RunHeader,
    SessionRecord,
    SessionStart,
    TokenUsage,
    TranscriptWriter,
    Verdict,
    _Event,
    iter_records,
    load,
)

FIXTURES = Path(__file__).parent / "report_fixtures"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.jsonl"))
# not in the reports the fixtures were made with; checked elsewhere: the intervals in tests/reports/test_intervals.py,
# stability in tests/certificate/test_repeats_stability.py, margins and sentence coverage in test_guarantee_protocols.py
NEW_FIELDS = {
    "transcript", "usage", "total_usage", "ci", "ci_seed", "intervals", "stability", "margins", "sentence_coverage",
}  # fmt: skip


def fold_for(header: RunHeader | None) -> ReportFold[Any, Any]:
    return report_folds()(header)


def shown(report: Any) -> tuple[dict[str, Any], str]:
    """The report without the fields added since the fixtures were made, and its text without the interval and
    usage lines (the point numbers above them read exactly as they did)."""
    data = {k: v for k, v in report.model_dump(mode="json").items() if k not in NEW_FIELDS}
    text = report.text()
    for lines, what in ((report.usage_lines(), "usage"), (report.interval_lines(), "interval")):
        if lines:
            tail = "\n" + "\n".join(lines)
            assert text.endswith(tail), f"the {what} lines end a report's text"
            text = text[: -len(tail)]
    return data, text


def rounded(value: Any) -> Any:
    """Floats to 12 significant digits: the frozen reports predate scikit-learn's F1 (2tp / (2tp + fp + fn)), which
    differs from 2PR / (P + R) in the last bit."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


@pytest.mark.parametrize("name", NAMES)
def test_the_streamed_report_is_the_whole_transcript_report(name: str) -> None:
    path = FIXTURES / f"{name}.jsonl"
    expected = json.loads((FIXTURES / f"{name}.report.json").read_text())
    streamed, builder = report_file(path, fold_for)
    data, text = shown(streamed)
    assert (rounded(data), text) == (rounded(expected["report"]), expected["text"])
    assert streamed.transcript == str(path) and builder.headers
    t = load(path)  # report(transcript), the form tests and the API call, still gives it
    reg = registrations().get(t.header.protocol) if t.header else None
    whole = (reg.report if reg else generic_report)(t)
    assert whole.model_dump() == streamed.model_dump()


@pytest.mark.parametrize("name", NAMES)
def test_folds_alongside_take_each_session_as_the_report_assembled_it(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``report_file``'s ``alongside`` folds are given the session objects the report's own fold was given (one
    assembly of each attempt for all), and the report is the same with them as without."""
    path = FIXTURES / f"{name}.jsonl"
    alone, _ = report_file(path, fold_for)
    made: list[Any] = []
    assemble = report_module.session_record
    monkeypatch.setattr(report_module, "session_record", lambda *a: made.append(assemble(*a)) or made[-1])
    given: list[list[Any]] = [[], []]

    def watching(k: int) -> ReportFold[Any, Any]:
        return ReportFold(session=given[k].append, finish=lambda values, ctx: generic_report.finish([], ctx))

    report, _ = report_file(path, fold_for, alongside=[watching(0), watching(1)])
    assert report == alone

    def ended(sessions: list[Any]) -> list[Any]:  # (an attempt the file leaves open is closed by each builder)
        return [s for s in sessions if any(isinstance(e, Verdict | ErrorEvent) for e in s.events)]

    assert given[0] and [id(s) for s in ended(given[0])] == [id(s) for s in ended(given[1])]
    assert len(ended(made)) == len({(s.session_id, s.run_id) for s in ended(made)})  # none assembled twice


# ---- resumed, re-run, crashed and doubled transcripts: the stream picks each session's attempt as load() does


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _variant(records: list[dict[str, Any]], kind: str) -> tuple[list[dict[str, Any]], str]:
    heads = [r for r in records if r["kind"] == "header"]
    events = [r for r in records if r["kind"] != "header"]
    sids = list(dict.fromkeys(e["session_id"] for e in events))
    second = dict(heads[-1], run_id="rerun-" + heads[-1]["run_id"])
    if kind == "rerun":  # every session finished twice: the later run's attempt counts
        return [*records, second, *(dict(e, run_id=second["run_id"]) for e in events)], ""
    if kind == "resume":  # run 1 fails every other session and leaves the last open; run 2 redoes them, interleaved
        failed, open_ = set(sids[::2]), {sids[-1]}
        first = []
        for e in events:
            if e["kind"] == "verdict" and e["session_id"] in failed:
                keep = {k: e[k] for k in ("run_id", "session_id", "seq", "time", "stage", "turn")}
                first.append(keep | {"kind": "error", "error_type": "RuntimeError", "message": "boom"})
            elif not (e["kind"] == "verdict" and e["session_id"] in open_):
                first.append(e)
        by_session: dict[str, list[dict[str, Any]]] = {}
        for e in events:
            if e["session_id"] in failed | open_:
                by_session.setdefault(e["session_id"], []).append(dict(e, run_id=second["run_id"]))
        # Run 2's sessions interleaved, as concurrent sessions write them.
        redo = [e for group in itertools.zip_longest(*by_session.values()) for e in group if e is not None]
        return [*heads, *first, second, *redo], ""
    if kind == "crash":  # the first session never ends and the last line is torn
        cut = [e for e in events if not (e["session_id"] == sids[0] and e["kind"] == "verdict")]
        return [*heads, *cut], '{"kind": "message", "run_id": "x", "ses'
    assert kind == "twice"  # a file appended to itself: the same attempts go on after their verdicts
    return [*records, *records], ""


VARIED = ("cross_examination-errors", "dcr-correlation", "no_data", "qa_entailment-aurocs-error", "oracle_paraphrase",
          "oracle_entities-labelled")  # fmt: skip


VARIANTS = ("rerun", "resume", "crash", "twice")


def variant_file(tmp_path: Path, name: str, kind: str) -> Path:
    """The fixture ``name`` written as the variant ``kind`` (``_variant``) to a file of its own."""
    records, tail = _variant(_records(FIXTURES / f"{name}.jsonl"), kind)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return path


def spy_on_load(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every path read whole (``load``, as the report module and the transcript package give it) from now on."""
    loads: list[object] = []
    monkeypatch.setattr(stream_module, "load", lambda p: loads.append(p) or load(p))
    monkeypatch.setattr("voirdire.transcript.load", lambda p: loads.append(p) or load(p))
    return loads


@pytest.mark.parametrize("kind", VARIANTS)
@pytest.mark.parametrize("name", VARIED)
def test_attempts_are_picked_as_load_picks_them(
    name: str, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = variant_file(tmp_path, name, kind)
    loads = spy_on_load(monkeypatch)
    streamed, _ = report_file(path, fold_for)
    # Only a file the runner cannot write (events after a verdict) is read whole.
    assert bool(loads) == (kind == "twice")
    whole = fold_for(load(path).header)(load(path))
    drop = {"usage", "total_usage"}  # the stream counts every attempt's model calls, load() keeps one per session
    assert streamed.model_dump(exclude=drop) == whole.model_dump(exclude=drop)
    if kind in ("crash", "twice"):
        assert streamed.model_dump() == whole.model_dump()


def _events_in(value: Any) -> bool:
    if isinstance(value, _Event | SessionRecord):
        return True
    if isinstance(value, dict):
        return any(_events_in(v) for v in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return any(_events_in(v) for v in value)
    return False


@pytest.mark.parametrize("name", [n for n in NAMES if n != "unregistered-protocol"])
def test_the_fold_keeps_no_event_once_a_session_ended(name: str) -> None:
    builder = ReportBuilder(fold_for)
    records = list(iter_records(FIXTURES / f"{name}.jsonl"))
    ends = 0
    for record in records:
        builder.add(record)
        if isinstance(record, Verdict | ErrorEvent):
            ends += 1
            assert not any(sid == record.session_id for sid, _ in builder._open), "an ended session stays open"
    assert ends
    assert not _events_in(builder._values)


# ---- tokens, requests and cost


def _call(sid: str, seq: int, role: str, model: str, p: int, c: int, **kw: Any) -> ModelCall:
    return ModelCall(run_id="r1", session_id=sid, seq=seq, role=role, model=model, request_digest="d", response="x",
                     usage=TokenUsage(prompt_tokens=p, completion_tokens=c), latency_s=0.1, **kw)  # fmt: skip


def _transcript(path: Path, calls: list[tuple[str, str, int, int, dict[str, Any]]]) -> Path:
    """One session whose model calls are ``(role, model, prompt tokens, completion tokens, extra fields)``."""
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r1", protocol="cross_examination"))
        w.write(SessionStart(run_id="r1", session_id="s1", seq=1, item_id="s1", item={"claim": "X."}))
        for i, (role, model, p, c, kw) in enumerate(calls, 2):
            w.write(_call("s1", i, role, model, p, c, **kw))
        w.write(Message(run_id="r1", session_id="s1", seq=99, sender="examiner", receiver="moderator", content="ok"))
        w.write(Verdict(run_id="r1", session_id="s1", seq=100, decision="correct", accepted=True))
    return path


def _prices(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    return path


def test_cost_per_role_from_a_price_file_of_ones_own(tmp_path: Path) -> None:
    t = _transcript(tmp_path / "t.jsonl", [
        ("examiner", "openai:gpt-4o-mini", 1_000_000, 200_000, {}),
        ("examiner", "openai:gpt-4o-mini", 500_000, 0, {"cached": True, "requests": 0}),  # from the cache: free
        ("examiner", "openai:gpt-4o-mini", 0, 0, {"coalesced": True, "requests": 0}),
        ("examinee", "openai-compatible:llama3@http://gpu1:8000/v1", 2_000_000, 1_000_000, {"requests": 2}),
        ("judge", "local", 300, 20, {}),
    ])  # fmt: skip
    prices = load_prices(_prices(tmp_path, '[models]\nllama3 = { input = 0.5, output = 1 }\n"gpt-4o-mini" = '
                                           "{ input = 1, output = 2 }\n"), env={})  # fmt: skip
    r, _ = report_file(t, fold_for, prices=prices)
    examiner, examinee, judge = r.usage["examiner"], r.usage["examinee"], r.usage["judge"]
    assert (examiner.calls, examiner.requests, examiner.cached_calls, examiner.coalesced_calls) == (3, 1, 1, 1)
    assert (examiner.prompt_tokens, examiner.cached_prompt_tokens) == (1_000_000, 500_000)
    assert examiner.cost_usd == pytest.approx(1 * 1 + 0.2 * 2)  # the user's price overrides the packaged one
    assert examinee.cost_usd == pytest.approx(2 * 0.5 + 1 * 1) and examinee.requests == 2
    assert judge.cost_usd == 0 and judge.free == ["local"]
    total = r.total_usage
    assert total is not None and total.cost_usd == pytest.approx(1.4 + 2.0) and not total.cost_partial
    assert (total.prompt_tokens, total.completion_tokens, total.requests) == (3_000_300, 1_200_020, 4)
    lines = r.usage_lines()
    assert lines[0] == (
        "tokens: 3,000,300 prompt + 1,200,020 completion in 4 requests "
        "for 5 model calls: 1 cached (500,000 + 0 tokens, free), 1 coalesced"
    )
    assert lines[1] == (
        "cost: $3.4000 · by role: examiner $1.4000 (gpt-4o-mini), examinee $2.0000 (llama3), judge free (local)"
    )
    assert r.text().endswith("\n".join(lines))


def test_an_unknown_model_is_an_unknown_cost_and_the_total_partial(tmp_path: Path) -> None:
    t = _transcript(tmp_path / "t.jsonl", [
        ("examiner", "openai:gpt-4o-mini", 1_000_000, 0, {}),
        ("examinee", "openai-compatible:mystery@http://h/v1", 10, 10, {}),
        ("judge", "openai-compatible:other@http://h/v1", 10, 10, {"cached": True, "requests": 0}),
    ])  # fmt: skip
    r, _ = report_file(t, fold_for, prices=load_prices(env={}))
    assert r.usage["examiner"].cost_usd == pytest.approx(0.15)  # the packaged price of gpt-4o-mini
    assert r.usage["examinee"].cost_usd is None and r.usage["examinee"].unpriced == [
        "openai-compatible:mystery@http://h/v1"
    ]
    assert r.usage["judge"].cost_usd == 0  # only cached replies: nothing was billed, priced or not
    total = r.total_usage
    assert total is not None and total.cost_partial and total.cost_usd == pytest.approx(0.15)
    assert "cost: at least $0.1500 (partial: no price for mystery" in r.text()
    assert "examinee unknown (no price for mystery)" in r.text()
    only_unknown = _transcript(tmp_path / "u.jsonl", [("examiner", "openai:gpt-9", 5, 5, {})])
    u, _ = report_file(only_unknown, fold_for, prices=load_prices(env={}))
    assert u.total_usage is not None and u.total_usage.cost_usd is None and not u.total_usage.cost_partial
    assert "cost: unknown (no price for gpt-9; give one with --prices FILE)" in u.text()


def test_a_report_of_a_rule_only_run_has_no_usage_lines(tmp_path: Path) -> None:
    r, _ = report_file(FIXTURES / "qa_lexical.jsonl", fold_for)
    assert r.total_usage is not None and r.total_usage.calls == 0 and r.usage_lines() == []


def test_the_report_command_prints_usage_and_takes_a_price_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VOIRDIRE_PRICES", raising=False)
    t = _transcript(tmp_path / "t.jsonl", [("examiner", "openai-compatible:llama3@http://h/v1", 2_000_000, 0, {})])
    assert main(["report", str(t)]) == 0
    assert "examiner unknown (no price for llama3)" in capsys.readouterr().out
    prices = _prices(tmp_path, "[models]\nllama3 = { input = 0.25, output = 1 }\n")
    assert main(["report", str(t), "--prices", str(prices), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["usage"]["examiner"]["cost_usd"] == 0.5 and data["total_usage"]["cost_usd"] == 0.5
    monkeypatch.setenv("VOIRDIRE_PRICES", str(prices))  # the same file named by the environment
    assert main(["report", str(t)]) == 0
    assert "cost: $0.5000" in capsys.readouterr().out


# ---- bad price files: one line naming the file and the line or key


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[models]\n"gpt-x" = { input = 1, output = }\n', "prices.toml:2: invalid TOML: "),
        ('[models]\n"gpt-x" = { input = "1.5", output = 2 }\n',
         "prices.toml:2: models.gpt-x: input must be a number of USD per million tokens, at least 0, got '1.5'"),
        ("[models]\nm = { input = -1, output = 2 }\n", "prices.toml:2: models.m: input must be a number"),
        ("[models.m]\ninput = 1\n", "prices.toml:1: models.m: output is missing (USD per million completion tokens)"),
        ("[models]\nm = { input = 1, ouput = 2 }\n",
         "prices.toml:2: models.m: unknown key 'ouput' (did you mean 'output'?)"),
        ("[model]\nm = { input = 1, output = 2 }\n", "prices.toml:1: unknown table 'model' (did you mean 'models'?)"),
        ("[models]\nm = 3\n", "prices.toml:2: models.m: expected { input = USD, output = USD } per million tokens"),
    ],
)  # fmt: skip
def test_a_bad_price_file_is_one_line_naming_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = _prices(tmp_path, text)
    with pytest.raises(PriceError) as exc:
        read_prices(path)
    assert str(exc.value).startswith(f"{tmp_path}/{message}") and "\n" not in str(exc.value)


def test_a_missing_price_file_and_one_named_by_the_environment(tmp_path: Path) -> None:
    with pytest.raises(PriceError, match=r"nope.toml: price file not found$"):
        load_prices(tmp_path / "nope.toml", env={})
    with pytest.raises(PriceError, match=r"nope.toml: price file not found \(the file VOIRDIRE_PRICES names\)$"):
        load_prices(env={"VOIRDIRE_PRICES": str(tmp_path / "nope.toml")})


def test_a_run_with_a_bad_price_file_stops_before_it_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _prices(tmp_path, "[models]\nm = { input = 1 }\n")
    out = tmp_path / "t.jsonl"
    code = main(["examine", "X.", "--model", "local", "--out", str(out), "--prices", str(bad)])
    assert code == 2 and not out.exists()
    missing = "output is missing (USD per million completion tokens)"
    assert capsys.readouterr().err.strip() == f"voirdire: error: {bad}:2: models.m: {missing}"


def test_the_packaged_table_prices_well_known_models() -> None:
    prices = load_prices(env={})
    for label in ("openai:gpt-4o-mini", "openai:gpt-4o", "openai:gpt-4.1-mini", "openai:gpt-4o-mini@https://proxy/v1"):
        assert prices.pricing(label).price is not None, label
    for label in ("local", "local:/m.gguf", "scripted:s.yaml", "human", "client:ScriptedChatCompletionClient"):
        assert prices.pricing(label).free is not None, label
    for label in ("openai-compatible:llama3@http://h/v1", "openai:gpt-99", "client:SomeClient"):
        assert not prices.pricing(label).known, label


def test_two_protocols_in_one_file_are_reported_by_the_last_header(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes((FIXTURES / "qa_lexical.jsonl").read_bytes() + (FIXTURES / "qa_token_f1.jsonl").read_bytes())
    streamed, _ = report_file(path, fold_for)
    assert streamed.protocol == "qa_token_f1"
    assert streamed.model_dump() == registrations()["qa_token_f1"].report(load(path)).model_dump()


def test_a_transcript_without_a_header_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    lines = (FIXTURES / "ays.jsonl").read_text().splitlines()
    path.write_text("".join(line + "\n" for line in lines if json.loads(line)["kind"] != "header"))
    assert main(["report", str(path)]) == 2
    assert capsys.readouterr().err == f"voirdire: error: {path}: no run header, so no protocol to report on\n"
