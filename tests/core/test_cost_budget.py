"""The model bill: provider prompt caching priced at its own rates, ``--max-cost`` stopping a run resumably, and
``report --fail-under`` as a CI gate; driven by a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import FakeOpenAIServer
from voirdire.cli import main
from voirdire.reports.prices import Price, Prices, read_prices, run_cost
from voirdire.transcript import ModelCall, TokenUsage, load


# ------------------------------------------------------------------ prices with cache rates
def test_cache_reads_and_writes_are_priced_at_their_own_rates() -> None:
    price = Price(input=3.0, output=15.0, cached_input=0.3, cache_write=3.75)
    # 1M prompt tokens: 600k read from the cache, 100k written to it, 300k uncached; 10k completion tokens
    assert price.cost(1_000_000, 10_000, 600_000, 100_000) == pytest.approx(0.9 + 0.18 + 0.375 + 0.15)
    assert price.uncached(1_000_000, 10_000) == pytest.approx(3.0 + 0.15)
    plain = Price(input=1.0, output=2.0)  # no cache rates: every prompt token at input
    assert plain.cost(1_000_000, 0, 500_000, 0) == pytest.approx(1.0)
    cost = run_cost({"anthropic:claude-x": (1_000_000, 10_000, 1, 600_000, 100_000), "local": (5, 5, 1)},
                    Prices({"claude-x": price}))  # fmt: skip
    assert cost.usd == pytest.approx(1.605) and cost.uncached_usd == pytest.approx(3.15)
    assert run_cost({"anthropic:claude-x": (10, 10, 1)}, Prices({"claude-x": price})).usd == pytest.approx(
        (30 + 150) / 1e6
    )  # the three-number usage of earlier readers still prices


def test_price_files_take_cache_rates_and_name_a_bad_key(tmp_path: Path) -> None:
    f = tmp_path / "p.toml"
    f.write_text('[models]\n"m" = { input = 1, output = 2, cached_input = 0.1, cache_write = 1.25 }\n')
    assert read_prices(f).table["m"] == Price(1.0, 2.0, 0.1, 1.25)
    f.write_text('[models]\n"m" = { input = 1, output = 2, cached_inputs = 0.1 }\n')
    with pytest.raises(ValueError, match=r"p.toml:2: models.m: unknown key 'cached_inputs' \(did you mean"):
        read_prices(f)


def test_the_packaged_table_prices_cache_reads_for_the_models_it_lists() -> None:
    from voirdire.reports import load_prices

    table = load_prices(env={}).table
    assert table["claude-sonnet-4-5"].cached_input == pytest.approx(0.3)
    assert table["claude-sonnet-4-5"].cache_write == pytest.approx(3.75)
    assert table["gpt-4o-mini"].cached_input == pytest.approx(0.075)


def test_old_transcripts_usage_reads_as_uncached_and_writes_as_before() -> None:
    old = TokenUsage.model_validate({"prompt_tokens": 10, "completion_tokens": 3})
    assert old.cache_read_tokens == old.cache_write_tokens == 0 and old.uncached_input_tokens == 10
    assert json.loads(old.model_dump_json()) == {"prompt_tokens": 10, "completion_tokens": 3}
    new = TokenUsage(prompt_tokens=2000, completion_tokens=3, cache_read_tokens=1536)
    assert json.loads(new.model_dump_json())["cache_read_tokens"] == 1536 and new.uncached_input_tokens == 464


# ------------------------------------------------------------------ LMvLM over the fake endpoint
def lmvlm(messages: list[dict[str, Any]]) -> str:
    """Examiner and examinee of one short examination: one question, no follow-up, the claim is correct."""
    last = messages[-1]["content"]
    if re.search(r"verify the correctness|Imagine trying to prove", last):
        return "1. Where is it?"
    if "follow-up questions" in last:
        return "No"
    if re.search(r"correct or incorrect\?", last):
        return "The claim is correct." if "odd" not in messages[0]["content"] + last else "The claim is incorrect."
    return "It is in France, as I said."


def claims(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "claims.jsonl"
    rows = [{"id": f"c{i}", "question": f"Where is tower {i}?", "claim": f"Tower {i} ({'odd' if i % 2 else 'even'}) "
             "is in Paris.", "answers": ["Paris"]} for i in range(n)]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def price_file(tmp_path: Path) -> Path:
    path = tmp_path / "prices.toml"
    path.write_text('[models]\n"fake" = { input = 1000, output = 2000, cached_input = 100 }\n')
    return path


def examine(server: FakeOpenAIServer, tmp_path: Path, out: Path, *extra: str) -> int:
    return main(["examine", "--questions", str(claims(tmp_path, 12)), "--model", f"openai-compatible:fake@{server.url}",
                 "--out", str(out), "--no-progress", "--concurrency", "1", "--prices", str(price_file(tmp_path)),
                 *extra])  # fmt: skip


def billed(out: Path, prices: Prices) -> float:
    total = 0.0
    for s in load(out).sessions.values():
        for call in s.of_kind(ModelCall):
            u = call.usage
            total += prices.pricing(call.model).price.cost(  # type: ignore[union-attr]
                u.prompt_tokens, u.completion_tokens, u.cache_read_tokens, u.cache_write_tokens
            )
    return total


def test_max_cost_stops_resumably_within_one_sessions_cost_and_resumes_to_the_same_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = read_prices(price_file(tmp_path))
    with FakeOpenAIServer(lmvlm) as server:
        assert examine(server, tmp_path, tmp_path / "full.jsonl") == 0
        full = billed(tmp_path / "full.jsonl", prices)
        per_session = full / 12
        budget = 0.2 * full
        capsys.readouterr()
        rc = examine(server, tmp_path, tmp_path / "budget.jsonl", "--max-cost", f"{budget:.6f}")
        err = capsys.readouterr().err
        assert rc == 4, err
        assert "--max-cost" in err and "billed" in err and "sessions (items) left" in err and "resume" in err
        spent = billed(tmp_path / "budget.jsonl", prices)
        assert budget <= spent < budget + per_session * 1.0001  # it stopped within one session's cost
        finished = [s for s in load(tmp_path / "budget.jsonl").sessions.values() if s.verdict is not None]
        assert 0 < len(finished) < 12
        assert examine(server, tmp_path, tmp_path / "budget.jsonl") == 0  # the same command, resumed
    verdicts = {k: s.verdict.accepted for k, s in load(tmp_path / "budget.jsonl").sessions.items()}  # type: ignore[union-attr]
    assert verdicts == {k: s.verdict.accepted for k, s in load(tmp_path / "full.jsonl").sessions.items()}  # type: ignore[union-attr]


def test_max_cost_refuses_a_model_without_a_price_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.jsonl"
    with FakeOpenAIServer(lmvlm) as server:
        rc = main(["examine", "Paris is in France.", "--model", f"openai-compatible:unpriced@{server.url}",
                   "--out", str(out), "--max-cost", "1"])  # fmt: skip
        assert not server.requests
    assert rc == 2 and "--max-cost: no price for openai-compatible:unpriced" in capsys.readouterr().err
    assert not out.exists() or not out.read_text()
    with pytest.raises(SystemExit, match="2"):
        main(["examine", "x", "--max-cost", "-1"])
    assert "--max-cost: must be a positive amount of USD" in capsys.readouterr().err
    priced = ["--model", "openai-compatible:fake@http://127.0.0.1:9/v1", "--prices", str(price_file(tmp_path))]
    assert main(["examine", "x", *priced, "--out", str(out), "--max-cost", "1", "--workers", "2"]) == 2
    assert "max_cost: the budget is kept in one process" in capsys.readouterr().err


def test_report_fail_under_gates_on_a_metric_and_its_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.jsonl"
    with FakeOpenAIServer(lmvlm) as server:
        assert examine(server, tmp_path, out) == 0
    capsys.readouterr()
    # Half the claims are found incorrect, all of them in fact correct: claims correct 100%, F1 of acceptance 2/3.
    assert main(["report", str(out), "--fail-under", "claims correct=0.9"]) == 0
    assert "fail-under: ok: claims correct = 1" in capsys.readouterr().err
    assert (
        main(["report", str(out), "--fail-under", "accept correct F1=0.9", "--fail-under", "claims correct=90%"]) == 1
    )
    err = capsys.readouterr().err
    assert "FAILED: accept correct · F1 = 0.6667, below 0.9" in err and "1 of 2 --fail-under thresholds" in err
    assert main(["report", str(out), "--fail-under", "accept correct · F1.low=0.5"]) == 1  # the interval's low end
    assert "(interval low)" in capsys.readouterr().err
    assert main(["report", str(out), "--fail-under", "F1=0.5"]) == 2  # two F1s: name one
    assert "names several numbers" in capsys.readouterr().err
    assert main(["report", str(out), "--fail-under", "bogus=0.5"]) == 2
    with pytest.raises(SystemExit, match="2"):  # no =VALUE: the option's own error
        main(["report", str(out), "--fail-under", "accuracy"])
    assert "--fail-under: expected METRIC=VALUE" in capsys.readouterr().err


def test_the_sessions_in_flight_count_against_the_budget() -> None:
    from voirdire.executors import CostBudget

    prices = Prices({"fake": Price(input=1e6, output=0.0)})  # a dollar a prompt token
    budget = CostBudget(3.0, prices)
    call = ModelCall(
        session_id="s", run_id="r", seq=1, role="r", model="openai-compatible:fake@http://h/v1", request_digest="d",
        response="x", usage=TokenUsage(prompt_tokens=1), latency_s=0.0,
    )  # fmt: skip
    assert not budget.exhausted(in_flight=5)  # nothing billed, nothing finished: nothing to expect yet
    budget.observe(call)
    budget.observe(call.model_copy(update={"cached": True}))  # a reply from the response cache bills nothing
    budget.session_ended()
    assert budget.spent == 1.0 and not budget.exhausted(in_flight=1)  # $1 billed + one session of $1 expected
    assert budget.exhausted(in_flight=2)  # $1 + two of $1 reach $3: no further session starts
    assert "2 sessions in flight" in budget.reason(2, left=7) and "7 sessions (items) left" in budget.reason(2, 7)


def test_a_budget_reached_by_the_last_session_stops_nothing(tmp_path: Path) -> None:
    prices = read_prices(price_file(tmp_path))
    with FakeOpenAIServer(lmvlm) as server:
        assert examine(server, tmp_path, tmp_path / "full.jsonl") == 0
        full = billed(tmp_path / "full.jsonl", prices)
        # A budget the whole run reaches only with its last session: it finishes, exit 0, nothing stopped.
        assert examine(server, tmp_path, tmp_path / "t.jsonl", "--max-cost", f"{full * 0.999:.6f}") == 0
    assert all(s.verdict is not None for s in load(tmp_path / "t.jsonl").sessions.values())
