"""One rule prices a run for every reader (``voirdire.reports.prices.run_cost``): free models cost $0, a billed model is
priced by its name whatever the base URL, cached replies are free, and a model without a price makes the cost
partial, or unknown when nothing is priced."""

from __future__ import annotations

import pytest

from voirdire.reports.prices import Price, Prices, run_cost

PRICES = Prices({"gpt-4o-mini": Price(0.15, 0.60)})


def test_a_model_is_priced_by_its_name_whatever_the_base_url() -> None:
    usage = {"openai:gpt-4o-mini@https://proxy.example/v1": (1_000_000, 100_000, 3), "scripted:x.yaml": (5, 5, 1)}
    cost = run_cost(usage, PRICES)
    assert cost.usd == pytest.approx(0.15 + 0.06) and not cost.partial and cost.text() == "$0.2100"


def test_local_scripted_and_human_models_cost_zero_not_unknown() -> None:
    cost = run_cost({"local": (10, 10, 1), "human": (0, 0, 1), "scripted:a.yaml": (3, 3, 1)}, PRICES)
    assert cost.usd == 0 and cost.text() == "$0.0000"


def test_a_model_without_a_price_makes_the_cost_partial_or_unknown() -> None:
    partial = run_cost(
        {"openai:gpt-4o-mini": (1_000_000, 0, 1), "openai-compatible:llama@http://h:8/v1": (9, 9, 1)}, PRICES
    )
    assert partial.partial and partial.unpriced_names == ["llama"] and partial.text() == "at least $0.1500"
    assert partial.missing == "no price for llama; give one with --prices FILE"
    free_and_unpriced = run_cost({"local": (5, 5, 1), "openai-compatible:llama@http://h:8/v1": (9, 9, 1)}, PRICES)
    assert free_and_unpriced.text() == "unknown" and "llama" in free_and_unpriced.missing  # not "at least $0.0000"
    unknown = run_cost({"openai-compatible:llama@http://h:8/v1": (9, 9, 1)}, PRICES)
    assert unknown.usd is None and unknown.text() == "unknown"
    cached_only = run_cost({"openai-compatible:llama@http://h:8/v1": (0, 0, 0)}, PRICES)  # nothing was billed
    assert cached_only.usd == 0


def test_a_run_without_model_calls_costs_nothing() -> None:
    assert run_cost({}, PRICES).text() == "$0.0000"
