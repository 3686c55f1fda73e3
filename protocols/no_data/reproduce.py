"""No-Data's tables that ``voirdire reproduce`` runs offline: Table 2 (decision-tree columns), Table 3 (the
lying evaluators, in two readings) and the undetected-lie simulation behind Lemma 1 (§7.1); Table 2's LLM columns
with a model. ``bench/no_data_reproduce.py`` and ``bench/no_data_lie_simulation.py`` write the docs' sections from
these.

Every Table 2/3 cell is mean ± sd over seeds 0..N-1 next to the paper's value, in two readings for Table 3:

* **paper**: the experiment as the paper describes it — φ is the probability of flipping a failed label
  (Alg. 1 line 10), "No Flips" means φ = 0, the Table 3 evaluator mislabels w.p. 1/10 in every cell, Lie 1
  outputs ``C(x)`` without knowing ``C̄(x)`` (§8.1.1), Lie 2 matches ``f(x') = ŷ`` and Lie 3 uses p = 1/10;
* **notebook**: the experiment as the authors' notebook ran it (No-Data-Algorithm.ipynb, commit d5e6d33) —
  its φ = 0.6 flips w.p. 0.4, so it is φ = 0.4 here; "No Flips" negates every failed label (φ = 1); the
  "Flips" cells come from its non-lying-evaluator cell except IP / No lie; Lie 3 runs with the generator's
  default p = 0.25; Lie 1 outputs a permutation of ``C(x)``; Lie 2 matches a majority vote over the bits of
  ``x'``.

Success rates also get their exact expectation ``mean_x q(x)^r`` (theory.py).
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from voirdire.kit.charts import BarChart, Line, LineChart, Series
from voirdire.kit.reports import accuracy
from voirdire.kit.reproduce import Cell, Options, Outcome, Reproduction, model_args, paper_models_note, run_voirdire

from .challenges import RuleVerifier
from .data import Dataset, load_split
from .experiments import ExperimentConfig, aggregate, build_generator, decision_tree, f1, run_experiment
from .rubric import IP_RUBRIC, OOP_RUBRIC
from .simulation import STRATEGIES, UndetectedRate, simulate
from .theory import round_pass_probability

PAPER = "Labelling Data with Unknown References (the No-Data Algorithm; de Wynter)"
SEEDS = 10
TRIALS = 2000

# The paper's numbers (percent). None = "—" in the paper.
PAPER_T2 = {
    ("ip", "known"): {"accuracy": 62.2, "f1": 58.8},
    ("oop", "known"): {"accuracy": 54.2, "f1": 54.2},
    ("ip", "unknown"): {"success_rate": 100.0, "flip_rate": 0.0, "accuracy": 62.2, "f1": 59.8},
    ("oop", "unknown"): {"success_rate": 4.8, "flip_rate": 46.4, "accuracy": 52.8, "f1": 52.1},
}
_T3 = {  # row -> (IP Flips, IP No Flips, OOP Flips, OOP No Flips) as (successes, flips, accuracy, F1)
    "oracle": [(100.0, 0.0, 60.6, 58.8), (100.0, None, 59.0, 57.4), (6.0, 35.3, 48.6, 47.3), (6.4, None, 45.6, 44.8)],
    "lie-sigma": [(17.0, 35.1, 58.6, 58.8), (15.1, None, 42.6, 45.0), (2.8, 35.1, 52.4, 53.8), (2.2, None, 49.0, 49.4)],
    "lie-f": [(0.6, 37.4, 50.6, 48.1), (0.2, None, 39.4, 42.4), (3.0, 35.7, 51.4, 52.2), (2.8, None, 51.2, 52.8)],
    "lie-p": [(43.6, 24.9, 55.8, 54.2), (51.3, None, 49.0, 49.4), (4.4, 37.9, 47.6, 49.5), (4.6, None, 46.6, 48.6)],
}
ROW_NAMES = {
    "oracle": "No lie (DT)",
    "lie-sigma": "Lie 1: σ unknown",
    "lie-f": "Lie 2: f unknown",
    "lie-p": "Lie 3: generator w.p. p",
}
COLUMNS = [("ip", "flips"), ("ip", "no-flips"), ("oop", "flips"), ("oop", "no-flips")]
KEYS = ("success_rate", "flip_rate", "accuracy", "f1")
PAPER_T3 = {
    (row, *col): dict(zip(KEYS, vals[i], strict=True)) for row, vals in _T3.items() for i, col in enumerate(COLUMNS)
}


def table3_config(row: str, data: str, column: str, reading: str) -> ExperimentConfig:
    if reading == "paper":
        return ExperimentConfig(
            data=data,
            generator=row,
            label_noise=0.1,
            p=0.1,
            lie_f_target="f",
            lie_sigma_mode="encoding",
            phi=0.6 if column == "flips" else 0.0,
        )
    # The notebook: Flips = no_data_algorithm_with_flips(phi=0.6) which keeps a failed label w.p. 0.6; the
    # Flips cells come from the plain-DT cell except (No lie, IP), taken from the lying-evaluator cell;
    # No Flips = no_data_algorithm(), which negates every failed label, with the lying evaluator.
    noisy = column == "no-flips" or (row == "oracle" and data == "ip")
    return ExperimentConfig(
        data=data,
        generator=row,
        label_noise=0.1 if noisy else 0.0,
        p=0.25,
        lie_f_target="bit-majority",
        lie_sigma_mode="permutation",
        phi=0.4 if column == "flips" else 1.0,
    )


def expected_success(config: ExperimentConfig, data: Dataset) -> float:
    """Exact E[success rate]: mean over x of q̄(x)^r, q̄ averaging the per-round pass probability over ŷ."""
    dt = decision_tree(config.encoding)
    generator = build_generator(config)
    verifier = RuleVerifier(data.rubric)
    total = 0.0
    for x, y_dt in zip(data.xs, dt.predict_many(data.xs), strict=True):
        q = 0.0
        for y_hat, w in ((y_dt, 1 - config.label_noise), (1 - y_dt, config.label_noise)):
            if w:
                q += w * round_pass_probability(x, generator.distribution(x, y_hat), verifier)  # type: ignore[attr-defined]
        total += q**config.rounds
    return total / len(data.xs)


def deterministic(gold: list[int], pred: list[int]) -> dict[str, Any]:
    """Scores of a deterministic evaluation (the 'known' case), shaped like a seed aggregate (sd 0)."""
    return {
        "accuracy": {"mean": 100 * accuracy(gold, pred), "sd": 0.0},
        "f1": {"mean": 100 * f1(gold, pred), "sd": 0.0},
    }


async def cell(config: ExperimentConfig, seeds: int, data: Dataset) -> dict[str, Any]:
    reports = [await run_experiment(config.model_copy(update={"seed": s}), dataset=data) for s in range(seeds)]
    agg = aggregate(reports)
    out: dict[str, Any] = {k: {"mean": 100 * v.mean, "sd": 100 * v.sd} for k, v in agg.items()}
    out["expected_success_rate"] = 100 * expected_success(config, data)
    out["config"] = config.model_dump(exclude={"seed"})
    import numpy as np  # here: the registration (`voirdire --help`) does not import numpy

    out["theorem1_bound_mean"] = 100 * float(np.mean([r.theory.theorem1_bound for r in reports]))
    out["lemma1"] = reports[0].theory.lemma1_undetected
    return out


async def table2(seeds: int) -> list[dict[str, Any]]:
    """Table 2's decision-tree columns: known, unknown at φ = 0.5 (as run) and 0.6 (caption), and bit features."""
    data = {name: load_split(name, "test") for name in ("ip", "oop")}
    dt = decision_tree()
    table2: list[dict[str, Any]] = []
    for name in ("ip", "oop"):
        pred = dt.predict_many(data[name].xs)
        table2.append(
            {
                "data": name,
                "case": "known",
                "paper": PAPER_T2[(name, "known")],
                "ours": deterministic(data[name].ys, pred),
            }
        )
    for name in ("ip", "oop"):
        for phi, label in ((0.5, "unknown (φ = 0.5, as run)"), (0.6, "unknown (φ = 0.6, Table 2 caption)")):
            c = await cell(ExperimentConfig(data=name, generator="oracle", phi=phi), seeds, data[name])
            table2.append({"data": name, "case": label, "phi": phi, "paper": PAPER_T2[(name, "unknown")], "ours": c})
    # Extra, not in the paper: the same DT with one feature per bit instead of the decimal reading.
    bits = decision_tree("bits")
    for name in ("ip", "oop"):
        pred = bits.predict_many(data[name].xs)
        table2.append(
            {
                "data": name,
                "case": "known, bit features (not in paper)",
                "paper": None,
                "ours": deterministic(data[name].ys, pred),
            }
        )

    return table2


async def table3(seeds: int) -> list[dict[str, Any]]:
    """Table 3, every cell in the paper's reading and the notebook's."""
    data = {name: load_split(name, "test") for name in ("ip", "oop")}
    table3: list[dict[str, Any]] = []
    for row in _T3:
        for name, column in COLUMNS:
            entry: dict[str, Any] = {"row": row, "data": name, "column": column, "paper": PAPER_T3[(row, name, column)]}
            for reading in ("paper", "notebook"):
                config = table3_config(row, name, column, reading)
                entry[f"ours_{reading}_reading"] = await cell(config, seeds, data[name])
            table3.append(entry)
    return table3


def tally(result: dict[str, Any]) -> dict[str, dict[str, int]]:
    """How many published Table 3 numbers each reading reproduces (within 2 sd / 1 point)."""
    out: dict[str, dict[str, int]] = {}
    for reading in ("ours_paper_reading", "ours_notebook_reading"):
        hits = [agrees(r["paper"][k], r[reading][k]) for r in result["table3"] for k in KEYS]
        out[reading] = {"agree": sum(h is True for h in hits), "of": sum(h is not None for h in hits)}
    return out


def agrees(paper: float | None, ours: dict[str, float]) -> bool | None:
    """A paper value agrees when it is within 2 sd of our mean (at least 1 point: the paper rounds to 0.1
    and reports one run, so a run-to-run sd is the right yardstick)."""
    if paper is None:
        return None
    return abs(paper - ours["mean"]) <= tolerance(ours)


def tolerance(ours: dict[str, float]) -> float:
    return max(2 * ours["sd"], 1.0)


# Printed cells that the paper's own columns or the authors' notebook contradict (docs/no_data.md, Discrepancies):
# a miss on one of them says so.
DISAGREE = {
    "IP known: F1": "Table 2 prints 58.8; its own IP unknown column (which equals the known case when every "
    "datapoint succeeds, as here) and the authors' notebook output (0.622 | 0.598) give 59.8: a miss against a "
    "likely transcription slip",
}
METRIC_NAMES = {"success_rate": "successes", "flip_rate": "flips", "accuracy": "accuracy", "f1": "F1"}
TOLERANCE_TEXT = "2 sd of our mean over seeds, at least 1 point (the paper prints one run, to 0.1)"


def _cells(label: str, paper: dict[str, Any] | None, ours: dict[str, Any], note: str = "") -> list[Cell]:
    out = []
    for key, name in METRIC_NAMES.items():
        o = ours.get(key)
        if not isinstance(o, dict):
            continue
        p = None if paper is None else paper.get(key)
        out.append(Cell(f"{label}: {name}", p, o["mean"], tolerance(o) if p is not None else None, note))
    return out


def _seeds(options: Options) -> int:
    return options.seeds or SEEDS


def run_table2(options: Options) -> Outcome:
    seeds = _seeds(options)
    rows = asyncio.run(table2(seeds))
    out = Outcome(details={"seeds": seeds, "table2": rows})
    for r in rows:
        out.cells += _cells(f"{r['data'].upper()} {r['case']}", r["paper"], r["ours"])
    out.cells = [replace(c, note=DISAGREE[c.label]) if c.label in DISAGREE else c for c in out.cells]
    known = {r["data"]: r["ours"]["accuracy"]["mean"] for r in rows if r["case"] == "known"}
    unknown = {r["data"]: r["ours"]["accuracy"]["mean"] for r in rows if r.get("phi") == 0.5}
    out.charts.append(
        BarChart(
            "table2-dt-accuracy", "No-Data Table 2 (DT): accuracy known vs unknown, paper and ours", "data set",
            "accuracy (%)", ("IP known", "OOP known", "IP unknown", "OOP unknown"),
            (
                Series("paper", (PAPER_T2[("ip", "known")]["accuracy"], PAPER_T2[("oop", "known")]["accuracy"],
                                 PAPER_T2[("ip", "unknown")]["accuracy"], PAPER_T2[("oop", "unknown")]["accuracy"])),
                Series("ours", (known["ip"], known["oop"], unknown["ip"], unknown["oop"])),
            ),
            ylim=(0, 100),
        )
    )  # fmt: skip
    out.notes += [
        f"Mean over seeds 0..{seeds - 1}; tolerance: {TOLERANCE_TEXT}.",
        "Two 'unknown' readings: φ = 0.5 is what the published numbers were run with, φ = 0.6 what the caption says "
        "(docs/no_data.md, Discrepancies); the bit-feature rows are not in the paper.",
    ]
    return out


def run_table3(options: Options) -> Outcome:
    seeds = _seeds(options)
    rows = asyncio.run(table3(seeds))
    out = Outcome(details={"seeds": seeds, "table3": rows})
    for r in rows:
        col = f"{r['data'].upper()} ({'Flips' if r['column'] == 'flips' else 'No Flips'})"
        for reading in ("paper", "notebook"):
            label = f"{ROW_NAMES[r['row']]} · {col} [{reading} reading]"
            out.cells += _cells(label, r["paper"], r[f"ours_{reading}_reading"])
    counts = tally({"table3": rows})
    out.details["agreement"] = counts
    a, b = counts["ours_paper_reading"], counts["ours_notebook_reading"]
    out.summary = (
        f"published values reproduced: paper reading {a['agree']}/{a['of']}, notebook reading {b['agree']}/{b['of']}"
    )
    out.notes += [  # the agreement itself is the summary line, printed once
        f"Mean over seeds 0..{seeds - 1}; tolerance: {TOLERANCE_TEXT}. The two readings: this module's docstring "
        "and docs/no_data.md.",
    ]
    names = tuple(ROW_NAMES[row] for row in _T3)
    for data in ("ip", "oop"):
        pick = [r for r in rows if r["data"] == data and r["column"] == "flips"]
        out.charts.append(
            BarChart(
                f"table3-success-{data}", f"No-Data Table 3 ({data.upper()}, Flips): success rate per evaluator",
                "evaluator", "success rate (%)", names,
                (
                    Series("paper", tuple(r["paper"]["success_rate"] for r in pick)),
                    Series("ours, paper reading", tuple(r["ours_paper_reading"]["success_rate"]["mean"] for r in pick)),
                    Series("ours, notebook reading",
                           tuple(r["ours_notebook_reading"]["success_rate"]["mean"] for r in pick)),
                ),
                ylim=(0, 105),
            )
        )  # fmt: skip
    return out


def lemma1_verdict(r: UndetectedRate) -> str:
    if r.ci_low > r.lemma1:
        return "above (1/4)^r"
    if r.ci_high < r.lemma1:
        return "below"
    return "consistent"


def run_lemma1(options: Options) -> Outcome:
    trials = options.limit or TRIALS
    rubrics = [(IP_RUBRIC, load_split("ip", "test").xs), (OOP_RUBRIC, load_split("oop", "test").xs)]
    rows = simulate(rubrics, list(STRATEGIES), [1, 2, 3, 4, 5], trials, 0)
    out = Outcome(details={"trials": trials, "seed": 0, "rows": [r.model_dump() for r in rows]})
    for r in rows:
        if r.knows_total:
            continue
        out.cells.append(
            Cell(f"{r.rubric.upper()} {r.strategy} r={r.rounds}: undetected (%)", 100 * r.lemma1, 100 * r.undetected,
                 note=f"{lemma1_verdict(r)}; 95% CI [{100 * r.ci_low:.2f}, {100 * r.ci_high:.2f}], "
                      f"exact {100 * r.exact:.2f}")
        )  # fmt: skip
    at3 = [r for r in rows if r.rounds == 3 and not r.knows_total]
    above = [r for r in at3 if lemma1_verdict(r) == "above (1/4)^r"]
    out.notes += [
        "The paper's column is Lemma 1's bound (1/4)^r, not a measurement: a cell is above it when the 95% Wilson "
        "interval of the measured rate lies above.",
        f"At r = 3, {len(above)} of {len(at3)} liars that do not know C̄ survive significantly more often than "
        f"(1/4)^3: {', '.join(f'{r.rubric.upper()} {r.strategy}' for r in above) or 'none'}.",
        f"{trials} trials per cell (--limit), seed 0.",
    ]
    out.details["above_at_r3"] = [f"{r.rubric}:{r.strategy}" for r in above]
    out.summary = f"at r = 3, {len(above)} of {len(at3)} liars that do not know C̄ survive more often than (1/4)^3"
    for rubric in ("ip", "oop"):
        mine = [r for r in rows if r.rubric == rubric and not r.knows_total]
        rounds = sorted({r.rounds for r in mine})
        lines = [
            Line("Lemma 1: (1/4)^r", tuple(map(float, rounds)), tuple(100 * 0.25**k for k in rounds), "dashed"),
            Line("(1/2)^r: a liar that always passes one challenge", tuple(map(float, rounds)),
                 tuple(100 * 0.5**k for k in rounds), "dotted"),
        ]  # fmt: skip
        for strategy in dict.fromkeys(r.strategy for r in mine):
            pts = sorted((r.rounds, 100 * r.undetected) for r in mine if r.strategy == strategy)
            lines.append(Line(strategy, tuple(float(k) for k, _ in pts), tuple(v for _, v in pts)))
        out.charts.append(
            LineChart(
                f"lemma1-{rubric}", f"No-Data Lemma 1 ({rubric.upper()} verifier): undetected lies vs rounds",
                "rounds r", "lies undetected (%)", tuple(lines), integer_x=True,
            )
        )  # fmt: skip
    return out


PAPER_LLM = {
    "ip": {"success_rate": 81.3, "flip_rate": 1.8, "accuracy": 97.6, "f1": 97.6},
    "oop": {"success_rate": 28.0, "flip_rate": 6.0, "accuracy": 59.0, "f1": 64.0},
}


def run_table2_llm(options: Options) -> Outcome:
    from voirdire.kit.reports import report_file

    from .report import NoDataReport, report

    limit = options.limit or 20
    work = options.out or Path(tempfile.mkdtemp(prefix="voirdire-reproduce-"))
    out = Outcome(notes=[paper_models_note("o3-mini (§8, Table 2 'LLM'), φ = 0.9", options)])
    for data in ("ip", "oop"):
        transcript = work / f"nodata-{data}-llm.jsonl"
        run_voirdire(options, ["nodata", "--data", data, "--evaluator", "llm", "--phi", "0.9", "--limit", str(limit),
             "--out", str(transcript), "--fresh", *model_args(options)]
        )  # fmt: skip
        r, _ = report_file(transcript, report)
        assert isinstance(r, NoDataReport)
        ours = {k: {"mean": 100 * v.mean, "sd": 100 * v.sd} for k, v in r.aggregate.items()}
        for key, name in METRIC_NAMES.items():
            if key in ours:
                out.cells.append(Cell(f"{data.upper()} LLM (unknown): {name}", PAPER_LLM[data][key], ours[key]["mean"]))
        out.details[data] = {"transcript": str(transcript), "items": limit}
    out.notes.append(f"The first {limit} datapoints of each test split (--limit); the paper runs all 498.")
    return out


REPRODUCTIONS = (
    Reproduction(
        "nodata-table2",
        PAPER,
        "Table 2, decision-tree columns (known and unknown, IP and OOP)",
        "offline",
        run_table2,
        tolerance=TOLERANCE_TEXT,
        takes="about 15-40 s (10 seeds)",
    ),
    Reproduction(
        "nodata-table3",
        PAPER,
        "Table 3, lying DT evaluators (r = 3), paper and notebook readings",
        "offline",
        run_table3,
        tolerance=TOLERANCE_TEXT,
        takes="about 1-2 min (10 seeds)",
    ),
    Reproduction(
        "nodata-lemma1",
        PAPER,
        "Lemma 1 / Remark 3: undetected lies vs rounds, simulated liars against (1/4)^r",
        "offline",
        run_lemma1,
        tolerance="a bound: the measured rate's 95% CI against (1/4)^r",
        takes="about 1-3 min (2000 trials)",
    ),
    Reproduction(
        "nodata-table2-llm",
        PAPER,
        "Table 2, LLM (unknown) columns: success, flips, accuracy, F1 on IP and OOP",
        "model",
        run_table2_llm,
        tolerance="not judged: the paper's LLM is o3-mini",
        roles=("evaluator",),
        takes="minutes per 20 datapoints",
        example="voirdire reproduce nodata-table2-llm --model evaluator=openai:o3-mini --limit 100",
    ),
)
