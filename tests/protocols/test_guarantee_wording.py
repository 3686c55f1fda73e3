"""Each protocol's per-verdict guarantee says what its paper says, with numbers that follow from its formula.

Every statement is cut into its clauses ("; "). Each clause must match one entry of ``CLAIMS``: the clause's shape,
and where it comes from, either a sentence of the paper (quoted with its section; the quote is checked against
the paper's text where the papers are beside the checkout) or voirdire's own reading or measurement, named. The
numbers of each statement are parsed back and compared with the formula they come from: an upper bound is printed
rounded up (at least the exact value, less than one unit of its last digit above it), an exact value as it is.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from voirdire.kit.reports import round_up
from voirdire.protocols.cross_examination.outcome import majority_margin
from voirdire.protocols.dcr.dce import SentenceReason
from voirdire.protocols.dcr.protocol import Round
from voirdire.protocols.no_data.theory import MEASURED, measured_lie_pass, verdict_guarantee
from voirdire.protocols.oracle_checker.theorems import (
    acceptance_guarantee,
    indifferentiability_guarantee,
    pass_bound,
)

REPO = Path(__file__).resolve().parents[2]
PAPERS = REPO.parent / "shared" / "papers"
NUMBER = r"[0-9.]+"
THEOREM_3_1 = r"( \(the bound \(1 − p\)\^\d+, p = 3ε − 6ε² per test for ε ≤ 1/4, 2/9 above: Theorem 3\.1\))?"

# kind -> [(the clause's shape, the paper file or None for voirdire's own, the quote or reading, its section)]
CLAIMS: dict[str, list[tuple[str, str | None, str, str]]] = {
    "vote_margin": [
        (
            r"\d+–\d+ majority of \d+ examinations \((unanimous|split)\): the claim is "
            r"(false \(rejected\)|correct \(accepted\))",
            "lm-vs-lm-cross-examination.txt",
            "We reject the claim in case at least two of the examinations concluded it is false.",
            "§4.1, LMvLM (Majority)",
        ),
        (
            r"\d+–\d+ majority of \d+ examinations, "
            r"(second|third|fourth|fifth|sixth|seventh|eighth|ninth|the other \d+) not needed \(adaptive\): "
            r"the claim is (false \(rejected\)|correct \(accepted\))",
            "lm-vs-lm-cross-examination.txt",
            "We reject the claim in case at least two of the examinations concluded it is false.",
            "§4.1, LMvLM (Majority): the examinations not run could not change the majority",
        ),
        (
            r"decisions (correct|incorrect|inconclusive)(, (correct|incorrect|inconclusive))*",
            None,
            "the examinations' own decisions, as recorded",
            "the verdict's statistics",
        ),
        (
            r"\d+ inconclusive, counted as false \(§2 Stage 3\)",
            "lm-vs-lm-cross-examination.txt",
            "In cases where the examiner does not output either of “correct” or “incorrect”, we consider its final "
            "decision to be a rejection of the claim.",
            "§2, Stage 3",
        ),
    ],
    "ev_protocol_bound": [
        (
            rf"passed all \d+ EV rounds: Lemma 1 puts a lie's chance of getting through \d+ rounds at "
            rf"\(1/4\)\^\d+ = {NUMBER}%",
            "no-data-algorithm.txt",
            "The probability that the verifier fails to detect a lie by the evaluator in the the EV protocol sub-game "
            "after $r$ rounds is $(1/4)^r$ .",
            "§7.1, Lemma 1",
        ),
        (
            r"failed EV round \d+ of \d+: the verifier caught the evaluator",
            "no-data-algorithm.txt",
            "If the evaluator failed the tests, the EV Protocol returns a failure state.",
            "§6.1.2",
        ),
        (
            rf"its revealed label is flipped with probability φ = {NUMBER} \(Alg\. 1 line 10\)",
            "no-data-algorithm.txt",
            "$\\tilde{y} \\leftarrow \\neg y$ with probability $\\phi$ // The opposite label",
            "Algorithm 1, line 10",
        ),
        (
            rf"Lemma 1 assumes a liar passes a round with probability 1/4, which does not hold for every liar: one "
            rf"that always passes one of the two challenges gets through with \(1/2\)\^\d+ = {NUMBER}% \(App\. A\.3\)"
            rf"(, and the liars of voirdire reproduce nodata-lemma1 get through up to {NUMBER}% on the (IP|OOP) "
            rf"rubric at r = \d+ \([a-z-]+, 95% CI up to {NUMBER}%\)| \(no simulated rate for this rubric and r: run "
            r"voirdire reproduce nodata-lemma1\))",
            "no-data-algorithm.txt",
            "Now suppose that the evaluator anticipates Challenge 2, and picks an $x'$ such that $C(x') = C(x)$ .",
            "App. A.3 (the cheat); the rates are voirdire's measurement, voirdire reproduce nodata-lemma1",
        ),
        (
            rf"a datapoint the evaluator mislabels ends wrong with probability ≤ {NUMBER}% with Lemma 1's rate "
            rf"\(1 − φ \+ φ\(1/4\)\^r, App\. A\.4 eq\. 8\)(, ≤ {NUMBER}% with the measured rate "
            rf"\(1 − φ \+ φ·{NUMBER}%\))?",
            "no-data-algorithm.txt",
            "$$\\leq \\left(\\frac{1}{4}\\right)^r + (1 - \\phi) \\left(1 - \\left(\\frac{1}{4}\\right)^r\\right) "
            "\\quad (8)$$",
            "App. A.4, eq. (8)",
        ),
        (
            r"Theorem 1 over the run needs α: see the report",
            "no-data-algorithm.txt",
            "Suppose an evaluator has accuracy $\\alpha$ on a balanced dataset $X$ of size $n$ with binary labels",
            "§7.1, Theorem 1",
        ),
    ],
    "linearity_acceptance_bound": [
        (
            rf"(all \d+ linearity tests passed|had all passed): an extraction {NUMBER}-far passes with probability "
            rf"≤ {NUMBER}{THEOREM_3_1}",
            "oracle-checker.txt",
            "then the test fails with a probability at least $3\\epsilon - 6\\epsilon^2$ when $\\epsilon \\leq "
            "\\frac{1}{4}$ and at least $\\frac{2}{9}$ when otherwise",
            "§3, Theorem 3.1",
        ),
        (
            rf"{NUMBER}-far passes with probability ≤ {NUMBER}{THEOREM_3_1}",
            "oracle-checker.txt",
            "Theorem 3.2. *Continuing from Theorem 3.1, by running the linearity test n times",
            "§3, Theorems 3.1-3.2",
        ),
        (
            r"\d+ of \d+ tests failed: a linear extraction passes every test \(Theorem 3\.1\), so this one is not "
            r"linear on s",
            "oracle-checker.txt",
            "If f is a homomorphism from G_1 to G_2 , the test passes with probability 1.",
            "§3, Theorem 3.1",
        ),
    ],
    "non_equivalence_test": [
        (
            r"the oracle kept its \"no\" through \d+ test\(s\) with a paraphrase indifferentiable from the checker's "
            r"viewpoint \(category (AI|ĀI)\): no triangular evidence against it",
            "oracle-checker.txt",
            "Note that this indifferentiability is strictly from the checker’s viewpoint.",
            "§4.1",
        ),
        (
            r"the paper gives this test no probability bound \(§4's 1/2\^n is for graph non-isomorphism\), and an "
            r"oracle that always answers \"no\" passes it",
            "oracle-checker.txt",
            "if n such tests are run, the probability that the oracle correctly answers all n questions is only "
            "$\\frac{1}{2^n}$",
            "§4 (graph non-isomorphism); the test asks Prompt 5's yes or no (§4.1, Fig. 4): voirdire's reading",
        ),
    ],
    "sentence_coverage": [
        (
            r"Ẑ \(round \d+\) rests on \d+ of \d+ sentences scored( \(\d+%\))?, \d+ evaluated by DCE",
            "dcr-consistency.txt",
            "where $k$ is the length of the score array, i.e., the number of sentences in the candidate paragraph.",
            "§3.2, Eq. 3",
        ),
        (
            r"\d+ not evaluated, each counted z = −1 \(Eq\. 3\)",
            None,
            "a sentence no reason is about counts in k with z = −1 (amc.py; docs/dcr.md)",
            "voirdire's reading of §3.2",
        ),
    ],
}


def _clauses(statement: str) -> list[str]:
    return statement.split("; ")


def check_wording(kind: str, statement: str) -> None:
    """Every clause of ``statement`` matches one of the claims listed for ``kind``."""
    shapes = [re.compile(shape) for shape, *_ in CLAIMS[kind]]
    for clause in _clauses(statement):
        assert any(s.fullmatch(clause) for s in shapes), f"{kind}: a clause no paper sentence stands for: {clause!r}"


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.skipif(not PAPERS.is_dir(), reason="the papers are not beside this checkout")
@pytest.mark.parametrize(("kind", "paper", "quote", "section"), [
    (kind, paper, quote, section) for kind, claims in CLAIMS.items() for _, paper, quote, section in claims if paper
])  # fmt: skip
def test_each_quoted_sentence_is_the_papers(kind: str, paper: str, quote: str, section: str) -> None:
    assert _squeezed(quote) in _squeezed((PAPERS / paper).read_text(encoding="utf-8")), (kind, section)


def _bound(printed: float, exact: float, significant: int = 3) -> None:
    """An upper bound printed rounded up: at least the exact value, and the least such number of its digits."""
    assert printed >= exact - 1e-12 and printed == round_up(exact, significant), (printed, exact)


# ---------------------------------------------------------------- LMvLM (Majority), §4.1
@pytest.mark.parametrize("n", [3, 5])
def test_lmvlm_vote_margin(n: int) -> None:
    for decisions in itertools.product(("correct", "incorrect", "inconclusive"), repeat=n):
        g = majority_margin(list(decisions))
        assert g is not None
        check_wording("vote_margin", g.statement)
        reject = sum(d != "correct" for d in decisions)
        won, lost = (reject, n - reject) if reject > n - reject else (n - reject, reject)
        assert g.statement.startswith(f"{won}–{lost} majority of {n} examinations")
        assert ("false (rejected)" in g.statement) is (reject > n / 2)
        assert g.values["reject_votes"] == reject and g.values["accept_votes"] == n - reject


@pytest.mark.parametrize("n", [3, 5, 7])
def test_lmvlm_adaptive_vote_margin_says_what_was_not_needed(n: int) -> None:
    need = n // 2 + 1
    for decisions in itertools.product(("correct", "incorrect", "inconclusive"), repeat=need):
        reject = sum(d != "correct" for d in decisions)
        if 0 < reject < need:
            continue  # split: an adaptive run goes on
        g = majority_margin(list(decisions), planned=n)
        assert g is not None
        check_wording("vote_margin", g.statement)
        assert g.values["not_needed"] == n - need and g.values["examinations_planned"] == n
        assert g.statement.startswith(f"{need}–0 majority of {n} examinations, ")
        assert ("third not needed" in g.statement) is (n == 3)
        assert ("false (rejected)" in g.statement) is (reject == need)
        assert g.values["reject_votes"] + g.values["accept_votes"] == need  # the votes that ran


# ---------------------------------------------------------------- No-Data, Lemma 1 and eq. (8)
def _percent(pattern: str, statement: str) -> float:
    m = re.search(pattern, statement)
    assert m is not None, (pattern, statement)
    return float(m.group(1))


@pytest.mark.parametrize(
    ("rounds", "phi", "rubric"),
    list(itertools.product((1, 2, 3, 5, 7), (0.0, 0.5, 0.6, 0.9, 1.0), ("ip", "oop", None))),
)
@pytest.mark.parametrize("success", [True, False])
def test_no_data_numbers_follow_lemma_1_and_eq_8(rounds: int, phi: float, rubric: str | None, success: bool) -> None:
    g = verdict_guarantee(rounds, phi, rounds if success else 1, success, rubric)
    check_wording("ev_protocol_bound", g.statement)
    lemma1, half = 0.25**rounds, 0.5**rounds
    eq8 = (1 / 4) ** rounds + (1 - phi) * (1 - (1 / 4) ** rounds)  # App. A.4, eq. (8) as printed
    assert g.values["lemma1_undetected"] == pytest.approx(lemma1)
    assert g.values["wrong_if_mislabelled"] == pytest.approx(eq8)
    _bound(_percent(r"with probability ≤ ([0-9.]+)% with Lemma 1's rate", g.statement), 100 * eq8)
    measured = measured_lie_pass().get((rubric or "", rounds))
    if success:
        _bound(_percent(rf"\(1/4\)\^{rounds} = ([0-9.]+)%", g.statement), 100 * lemma1, 6)
        _bound(_percent(rf"\(1/2\)\^{rounds} = ([0-9.]+)%", g.statement), 100 * half, 6)
    if measured is None:
        assert g.values["measured_lie_pass"] is None and "with the measured rate" not in g.statement
        return
    shown = round_up(100 * measured.undetected)
    if success:
        _bound(_percent(r"get through up to ([0-9.]+)%", g.statement), 100 * measured.undetected)
        _bound(_percent(r"95% CI up to ([0-9.]+)%", g.statement), 100 * measured.ci_high)
    # eq. (8) with the measured rate as printed: the printed bound follows from the printed rate
    _bound(_percent(r"≤ ([0-9.]+)% with the measured rate", g.statement), 100 * (1 - phi + phi * shown / 100))
    assert f"φ·{shown:g}%" in g.statement


def test_the_measured_rates_are_the_simulations() -> None:
    """``lie_pass_measured.json`` holds, per rubric and r, the liar the simulation saw get through most often among
    those that do not know the total evaluation (``docs/results/no_data_lie_simulation.json``)."""
    results = json.loads((REPO / "docs/results/no_data_lie_simulation.json").read_text(encoding="utf-8"))
    packaged = json.loads(MEASURED.read_text(encoding="utf-8"))
    assert packaged["command"] == results["command"]
    best: dict[tuple[str, int], dict] = {}  # type: ignore[type-arg]
    for r in results["rows"]:
        key = (r["rubric"], r["rounds"])
        if not r["knows_total"] and (key not in best or r["undetected"] > best[key]["undetected"]):
            best[key] = r
    fields = ("rubric", "rounds", "strategy", "undetected", "ci_high", "trials")
    assert packaged["rows"] == [{f: best[k][f] for f in fields} for k in sorted(best)]


# ---------------------------------------------------------------- oracle–checker, Theorems 3.1-3.2 and §4
def paper_pass_bound(n: int, epsilon: float) -> float:
    """Theorem 3.1: one test fails an ε-far f with probability at least 3ε − 6ε² (ε ≤ 1/4), 2/9 above."""
    p = 3 * epsilon - 6 * epsilon**2 if epsilon <= 1 / 4 else 2 / 9
    return (1 - p) ** n


@pytest.mark.parametrize(("n", "epsilons"), [(1, (0.1,)), (3, (0.3, 0.25)), (5, (0.1, 0.05)), (10, (0.1,)),
                                              (20, (0.01, 0.2, 0.5))])  # fmt: skip
@pytest.mark.parametrize("failed", [0, 1])
def test_linearity_bounds_follow_theorem_3_1_rounded_up(n: int, epsilons: tuple[float, ...], failed: int) -> None:
    g = acceptance_guarantee(n, n - failed, epsilons)
    check_wording("linearity_acceptance_bound", g.statement)
    printed = [float(x) for x in re.findall(r"passes with probability ≤ ([0-9.e-]+)", g.statement)]
    assert len(printed) == len(epsilons)
    for shown, e in zip(printed, epsilons, strict=True):
        assert pass_bound(n, e) == pytest.approx(paper_pass_bound(n, e))
        _bound(shown, paper_pass_bound(n, e))


@pytest.mark.parametrize(("passed", "category"), [(1, "AI"), (3, "ĀI"), (2, "AĪ"), (0, "AI")])
def test_the_paraphrase_trust_test_states_no_bound_the_paper_does_not_give(passed: int, category: str) -> None:
    g = indifferentiability_guarantee(passed, category)
    if passed < 1 or category.endswith("Ī"):
        assert g is None
        return
    assert g is not None and g.kind == "non_equivalence_test"
    check_wording("non_equivalence_test", g.statement)
    assert not re.search(r"probability ≤|2\^-\d|= 0\.", g.statement)  # no bound the paper does not give
    assert g.values == {"tests_passed": passed, "category": category}


# ---------------------------------------------------------------- DCR, Eq. 3's k (§3.2)
@pytest.mark.parametrize(("marks", "covered"), [([1, -1], [[0], [1]]), ([1], [[0]]), ([1, 1, 1], [[0], [1], [2]])])
@pytest.mark.parametrize("k", [3, 4])
def test_dcr_coverage_counts_the_sentences_eq_3_rests_on(marks: list[int], covered: list[list[int]], k: int) -> None:
    reasons = [SentenceReason(sentence=f"s{j}", reason="r") for j in range(len(marks))]
    evaluated = {j for c in covered for j in c}
    r = Round(
        round=0,
        candidate="",
        sentences=[f"s{j}" for j in range(k)],
        reasons=reasons,
        reason_status=["scored"] * len(marks),
        reason_sentences=covered,
        counted=[True] * len(marks),
        marks=list(marks),
        score=0.5,
        not_evaluated=[j for j in range(k) if j not in evaluated],
    )
    g = r.coverage("sentence")
    check_wording("sentence_coverage", g.statement)
    scored = len(evaluated)
    assert f"rests on {scored} of {k} sentences scored ({100 * scored / k:.0f}%)" in g.statement
    assert f"; {k - scored} not evaluated" in g.statement
    assert g.values["share_scored"] == pytest.approx(scored / k)
