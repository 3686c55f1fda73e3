"""How ``python -m bench.speed.percall`` judges a goal: the median's distribution-free interval, and rounds pooled
from earlier invocations' JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import binom

from bench.speed.percall import PYTHON, goal_verdict, main, median_interval


def _row(net: float) -> dict[str, Any]:
    return {"cpu_s": 5.0, "startup_cpu_s": 2.5, "requests": 5000, "calls": 4995, "net_cpu_ms_per_call": net,
            "wall_s": 5.6}  # fmt: skip


def _earlier(path: Path, nets: list[float], **extra: Any) -> Path:
    record = {"command": "python -m bench.speed.percall --rounds 3", "rows": {"this-checkout": [_row(x) for x in nets]}}
    path.write_text(json.dumps(record | extra))
    return path


def test_the_medians_interval_is_the_order_statistics_one() -> None:
    """For n values the interval runs from the k-th smallest to the k-th largest, k the largest rank whose
    binomial coverage is still at least 95% (19 values: the 5th and the 15th, coverage 98.1%)."""
    values = [float(v) for v in range(19, 0, -1)]  # order does not matter
    low, high = median_interval(values) or (0, 0)
    k = int(low)
    assert (low, high) == (5.0, 15.0)
    assert 1 - 2 * binom.cdf(k - 1, 19, 0.5) >= 0.95 > 1 - 2 * binom.cdf(k, 19, 0.5)


def test_too_few_rounds_have_no_interval() -> None:
    assert median_interval([0.4, 0.5, 0.6, 0.45, 0.55]) is None
    assert median_interval([0.4, 0.5, 0.6, 0.45, 0.55, 0.5]) == (0.4, 0.6)


@pytest.mark.parametrize(
    ("interval", "verdict"),
    [
        ((0.46, 0.49), "met"),
        ((0.46, 0.5), "met"),
        ((0.51, 0.53), "not met"),
        ((0.485, 0.515), "not decided (the median"),
        (None, "not decided: fewer than 6 rounds"),
    ],
)
def test_the_goal_is_judged_on_the_whole_interval(interval: tuple[float, float] | None, verdict: str) -> None:
    assert goal_verdict(interval, 0.5).startswith(verdict)


def test_pooled_rounds_are_judged_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--rounds 0 --pool A --pool B``: A's and B's rounds of the same version judged as one set, nothing run and
    nothing written."""
    a = _earlier(tmp_path / "a.json", [0.47, 0.48, 0.46])
    b = _earlier(tmp_path / "b.json", [0.45, 0.47, 0.48, 0.49], scenario={"sessions": 1000, "concurrency": 200,
                                                                          "latency_ms": 100})  # fmt: skip
    main(["--rounds", "0", "--pool", str(a), "--pool", str(b)])
    out = capsys.readouterr().out
    assert "| this-checkout (" in out and "| 7 | 0.470 (0.450–0.490) | 0.450–0.490 |" in out
    assert "this-checkout: net CPU a call ≤ 0.5 ms: met" in out
    assert "JSON:" not in out
    main(["--rounds", "0", "--pool", str(a), "--pool", str(b), "--goal-ms", "0.47"])
    assert "≤ 0.47 ms: not decided" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "command", "says"),
    [
        ({"scenario": {"sessions": 500, "concurrency": 200, "latency_ms": 100}}, None, "another scenario"),
        ({}, "python -m bench.speed.percall --rounds 3 --latency-ms 20", "another scenario"),
        ({"python": "3.12.1"}, None, "another interpreter (3.12.1, not " + PYTHON),
    ],
)
def test_rounds_of_another_run_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: dict[str, Any], command: str | None, says: str
) -> None:
    """A file of another scenario (recorded, or for older files read from their command) or of another interpreter
    is refused, in one line naming it."""
    earlier = _earlier(tmp_path / "earlier.json", [0.5] * 6, **extra)
    if command is not None:
        earlier.write_text(json.dumps(json.loads(earlier.read_text()) | {"command": command}))
    with pytest.raises(SystemExit) as stop:
        main(["--rounds", "0", "--pool", str(earlier)])
    assert stop.value.code == 2
    assert f"error: --pool {earlier}: its runs are of {says}" in capsys.readouterr().err


def test_a_file_that_is_not_such_a_json_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "notes.json"
    other.write_text('{"rounds": []}')
    with pytest.raises(SystemExit):
        main(["--rounds", "0", "--pool", str(other)])
    assert f"--pool {other}: not the JSON of an earlier run of this benchmark" in capsys.readouterr().err
