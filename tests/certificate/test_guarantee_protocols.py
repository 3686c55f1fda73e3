"""Each verdict's own guarantee (issue 29 item 6), from scripted runs of each protocol: LMvLM (Majority)'s vote
margin and its examinations' decisions (§4.1), No-Data's Lemma 1 and App. A.4 eq. (8) for the run's r and φ, the
oracle–checker's Theorem 3.1-3.2 bound for the n tests run and what §4's trust test checked (no bound), DCR's
share of sentences scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.protocols.cross_examination.test_protocol import CLAIM, examinee, examiner, run as examine
from tests.protocols.dcr.helpers import BAD, GOOD, S1, S2, agents, amc, dce, item, run as run_dcr
from tests.protocols.no_data.test_protocol import dataset
from tests.protocols.oracle_checker.oracles import SENTENCE, dropping, linear, oracle
from tests.protocols.oracle_checker.test_paraphrase import (
    S1 as P1,
    S2 as P2,
    T13_S1,
    UNRELATED,
    no,
    run as run_paraphrase,
    scripted,
)
from voirdire.models import RoleSettings
from voirdire.protocols.cross_examination import score
from voirdire.protocols.dcr.report import score as dcr_score
from voirdire.protocols.no_data.evaluators import ComposedEvaluator, RubricLabeller
from voirdire.protocols.no_data.generators import LieApproxGenerator, OracleGenerator
from voirdire.protocols.no_data.protocol import NoDataProtocol, NoDataProtocolParams, make_items
from voirdire.protocols.no_data.rubric import IP_RUBRIC
from voirdire.protocols.oracle_checker import LinearityChecker, LinearityParams, SentenceItem
from voirdire.runner import run_in_memory, run_protocol
from voirdire.transcript import Guarantee, Verdict, load

ONE = SentenceItem(text=SENTENCE)
SAMPLED = {"examiner": RoleSettings(temperature=0.7)}  # sampled requests: three examinations, three answers


# ---------------------------------------------------------------- LMvLM (Majority), §4.1
@pytest.mark.parametrize(
    ("decisions", "margin", "reject", "accepted", "read"),
    [
        (["The claim is incorrect.", "The claim is correct.", "The claim is incorrect."], "2–1", 2, False,
         ["incorrect", "correct", "incorrect"]),
        (["The claim is correct.", "The claim is correct.", "The claim is incorrect."], "2–1", 1, True,
         ["correct", "correct", "incorrect"]),
        (["The claim is correct."] * 3, "3–0", 0, True, ["correct"] * 3),
        (["The claim is incorrect.", "I cannot tell.", "The claim is incorrect."], "3–0", 3, False,
         ["incorrect", "inconclusive", "incorrect"]),
    ],
)  # fmt: skip
async def test_majority_carries_its_vote_margin_and_each_decision(
    tmp_path: Path, decisions: list[str], margin: str, reject: int, accepted: bool, read: list[str]
) -> None:
    # One examination after another, so that the scripted decisions reach the examinations in this order.
    t = await examine(tmp_path, [CLAIM], examiner(decision=decisions), examinee(), roles=SAMPLED, examinations=3,
                      concurrent_examinations=False)  # fmt: skip
    v = t.sessions["c1"].verdict
    assert v is not None and v.accepted is accepted
    g = v.guarantee
    assert g is not None and g.kind == "vote_margin"
    assert g.values["margin"] == margin and g.values["reject_votes"] == reject
    assert g.values["accept_votes"] == 3 - reject and g.values["examinations"] == 3
    assert g.values["decisions"] == read == [e["decision"] for e in v.statistics["examinations"]]
    assert g.values["unanimous"] is (margin == "3–0")
    assert g.statement.startswith(f"{margin} majority of 3 examinations")
    assert ("counted as false" in g.statement) is ("inconclusive" in read)
    assert g.source is not None and "§4.1" in g.source


async def test_concurrent_examinations_give_the_same_margin(tmp_path: Path) -> None:
    decisions = ["The claim is incorrect.", "The claim is correct.", "The claim is incorrect."]
    t = await examine(tmp_path, [CLAIM], examiner(decision=decisions), examinee(), roles=SAMPLED, examinations=3)
    v = t.sessions["c1"].verdict
    assert v is not None and v.guarantee is not None and v.guarantee.values["margin"] == "2–1"
    assert sorted(v.guarantee.values["decisions"]) == ["correct", "incorrect", "incorrect"]  # type: ignore[arg-type]


async def test_the_report_counts_verdicts_by_margin(tmp_path: Path) -> None:
    decisions = ["The claim is incorrect.", "The claim is correct.", "The claim is incorrect."] + [
        "The claim is correct."
    ] * 3
    claims = [CLAIM, CLAIM.model_copy(update={"id": "c2"})]
    t = await examine(tmp_path, claims, examiner(decision=decisions), examinee(), roles=SAMPLED, examinations=3,
                      concurrent_examinations=False)  # fmt: skip (one session at a time: RunOptions' default)
    report = score(t.sessions.values())
    assert {r["id"]: r["margin"] for r in report.rows} == {"c1": "2–1", "c2": "3–0"}
    assert report.margins == {"3–0 accept": 1, "2–1 reject": 1}
    assert "vote margins (LMvLM (Majority), §4.1): 3–0 accept 1 · 2–1 reject 1" in report.text()


async def test_a_single_examination_has_no_vote_to_count(tmp_path: Path) -> None:
    t = await examine(tmp_path, [CLAIM], examiner(), examinee())
    v = t.sessions["c1"].verdict
    assert v is not None and v.decision == "correct" and v.guarantee is None
    report = score(t.sessions.values())
    assert "margin" not in report.rows[0] and report.margins == {} and "vote margins" not in report.text()


# ---------------------------------------------------------------- No-Data, Lemma 1 and Theorem 1 (§7.1, App. A.4)
@pytest.mark.parametrize(("rounds", "phi"), [(3, 0.6), (2, 0.9), (1, 0.0)])
async def test_no_data_verdicts_carry_lemma_1_and_eq_8_for_the_runs_r_and_phi(
    tmp_path: Path, rounds: int, phi: float
) -> None:
    liar = ComposedEvaluator(RubricLabeller(IP_RUBRIC), LieApproxGenerator(IP_RUBRIC, 0.5))
    proto = NoDataProtocol(NoDataProtocolParams(data="ip", rounds=rounds, phi=phi), evaluator=liar)
    result = await run_protocol(proto, make_items(dataset(n=30), [3]), out=tmp_path / "t.jsonl")
    assert not result.errors
    verdicts = [s.verdict for s in load(tmp_path / "t.jsonl").sessions.values()]
    seen = set()
    for v in verdicts:
        assert v is not None and v.guarantee is not None and v.guarantee.kind == "ev_protocol_bound"
        g = v.guarantee.values
        assert (g["rounds"], g["phi"]) == (rounds, phi)
        assert g["lemma1_undetected"] == pytest.approx((1 / 4) ** rounds)  # Lemma 1
        assert g["wrong_if_mislabelled"] == pytest.approx(1 - phi + phi * (1 / 4) ** rounds)  # eq. (8)
        assert g["passed"] is v.accepted and g["rounds_run"] == v.statistics["rounds_run"]
        assert g["rounds_run"] == rounds if v.accepted else 1 <= g["rounds_run"] <= rounds  # type: ignore[operator]
        assert g["one_challenge_liar_undetected"] == pytest.approx((1 / 2) ** rounds)  # App. A.3's cheat
        assert ("Lemma 1 puts a lie's chance" in v.guarantee.statement) is bool(v.accepted)
        assert ("caught the evaluator" in v.guarantee.statement) is not v.accepted
        seen.add(v.accepted)
    assert seen == {True, False}  # a lie caught and a lie passed, both with the bound


async def test_an_honest_evaluator_passes_every_round_with_the_same_bound(tmp_path: Path) -> None:
    honest = ComposedEvaluator(RubricLabeller(IP_RUBRIC), OracleGenerator(IP_RUBRIC))
    proto = NoDataProtocol(NoDataProtocolParams(data="ip", rounds=3, phi=0.6), evaluator=honest)
    got, _ = await run_in_memory(proto, make_items(dataset(n=5), [0]))
    for v in got:
        assert v.accepted is True and v.guarantee is not None
        assert "(1/4)^3 = 1.5625%" in v.guarantee.statement and v.guarantee.values["rounds_run"] == 3
        assert "64.7% on the IP rubric at r = 3" in v.guarantee.statement  # the measured rate beside Lemma 1's


# ---------------------------------------------------------------- oracle–checker, Theorems 3.1-3.2 and §4
def paper_pass_bound(n: int, epsilon: float) -> float:
    """§3: an ε-far f passes one test with probability at most 1 − (3ε − 6ε²) (ε ≤ 1/4), 7/9 above; n tests: ^n."""
    p = 3 * epsilon - 6 * epsilon**2 if epsilon <= 1 / 4 else 2 / 9
    return (1 - p) ** n


@pytest.mark.parametrize(("tests", "epsilons"), [(5, (0.1, 0.05)), (10, (0.1,)), (3, (0.3, 0.25))])
async def test_linearity_acceptance_carries_the_bound_for_the_tests_run(
    tests: int, epsilons: tuple[float, ...]
) -> None:
    params = LinearityParams(samples=2, named_votes=1, synonym_votes=1, tests=tests, epsilons=epsilons)
    got, _ = await run_in_memory(LinearityChecker(params), [ONE], clients={"oracle": oracle(linear)})
    (v,) = got
    assert v.decision == "accepted" and v.guarantee is not None and v.guarantee.kind == "linearity_acceptance_bound"
    g = v.guarantee.values
    assert g["tests"] == g["passed"] == tests and g["epsilons"] == list(epsilons)
    expected = [paper_pass_bound(tests, e) for e in epsilons]
    assert g["pass_probability_bounds"] == pytest.approx(expected)
    assert g["confidence"] == pytest.approx([1 - b for b in expected])
    if (tests, epsilons[0]) == (10, 0.1):
        assert g["confidence"] == pytest.approx([0.936], abs=5e-4)  # §3's worked reading: ≈ 0.936
    assert f"all {tests} linearity tests passed" in v.guarantee.statement


async def test_linearity_rejection_says_a_homomorphism_never_fails() -> None:
    params = LinearityParams(samples=2, named_votes=1, synonym_votes=1, checker_seed=1)
    got, _ = await run_in_memory(LinearityChecker(params), [ONE], clients={"oracle": oracle(dropping)})
    (v,) = got
    assert v.decision == "rejected" and v.guarantee is not None
    g = v.guarantee.values
    assert g["passed"] == v.statistics["a_test"] < 5  # type: ignore[operator]
    assert g["pass_probability_bounds"] == pytest.approx([paper_pass_bound(5, 0.1), paper_pass_bound(5, 0.05)])
    assert "Theorem 3.1" in v.guarantee.statement and "not linear" in v.guarantee.statement


@pytest.mark.parametrize("no_tests", [1, 3])
async def test_paraphrase_no_kept_through_indifferentiable_tests_says_what_was_checked_and_no_bound(
    tmp_path: Path, no_tests: int
) -> None:
    paraphrases = [P1.replace("spring", "early spring"), P2.replace("sharply", "steeply")]
    s = await run_paraphrase(tmp_path, scripted(no(), test=no(), paraphrases=paraphrases), P1, P2, no_tests=no_tests)
    v = s.verdict
    assert v.decision == "no accepted" and v.statistics["category"].endswith("I")
    g = v.guarantee
    assert g is not None and g.kind == "non_equivalence_test"
    assert g.values == {"tests_passed": no_tests, "category": v.statistics["category"]}
    assert "no probability bound" in g.statement and "2^-" not in g.statement  # §4's 1/2^n is not this test's


async def test_paraphrase_without_an_indifferentiable_paraphrase_has_no_bound(tmp_path: Path) -> None:
    client = scripted(no(), test=no(), phrase=no(), paraphrases=["An entirely different remark.", "Another."])
    s = await run_paraphrase(tmp_path, client, T13_S1, UNRELATED)
    assert s.verdict.decision == "no accepted" and s.verdict.statistics["category"] == "ĀĪ"
    assert s.verdict.guarantee is None


# ---------------------------------------------------------------- DCR, Eq. 3's sentences (§3.1-3.2)
async def test_dcr_carries_the_share_of_sentences_evaluated_and_scored(tmp_path: Path) -> None:
    s3 = "Bolt will run for the Jamaican team ."
    clients = agents(evaluator=dce((S1, GOOD), (S2, BAD)), converter=amc(1, -1))
    del clients["improver"]
    t = await run_dcr(tmp_path, clients, [item(candidate=f"{S1} {S2} {s3}")], rounds=0)
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.guarantee is not None and v.guarantee.kind == "sentence_coverage"
    g = v.guarantee.values
    assert (g["sentences"], g["evaluated"], g["scored"], g["not_evaluated"]) == (3, 2, 2, 1)
    assert g["share_scored"] == pytest.approx(2 / 3) and g["share_evaluated"] == pytest.approx(2 / 3)
    assert v.statistics["not_evaluated"] == [s3]
    assert "2 of 3 sentences scored (67%)" in v.guarantee.statement


async def test_dcr_report_adds_up_the_sentences_scores_rest_on(tmp_path: Path) -> None:
    s3 = "Bolt will run for the Jamaican team ."
    evaluations = [dce((S1, GOOD), (S2, BAD)), dce((S1, GOOD), (S2, GOOD))]
    clients = agents(evaluator=evaluations, converter=[amc(1, -1), amc(1, 1)])
    del clients["improver"]
    items = [item(candidate=f"{S1} {S2} {s3}"), item(id="two")]
    t = await run_dcr(tmp_path, clients, items, rounds=0)
    report = dcr_score(t.sessions.values())
    assert report.sentence_coverage == {"sentences": 5, "evaluated": 4, "scored": 4}
    assert {r["id"]: r["share_scored"] for r in report.rows} == {"bolt": pytest.approx(2 / 3), "two": 1.0}
    assert "sentences the final scores rest on (Eq. 3): 4 of 5 scored (80.0%), 4 evaluated by DCE" in report.text()


async def test_dcr_every_sentence_scored(tmp_path: Path) -> None:
    clients = agents(evaluator=dce((S1, GOOD), (S2, GOOD)), converter=amc(1, 1))
    t = await run_dcr(tmp_path, clients)
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.decision == "consistent" and v.guarantee is not None
    assert v.guarantee.values["share_scored"] == 1.0 and v.guarantee.values["not_evaluated"] == 0


async def test_dcr_unscored_verdict_has_no_coverage(tmp_path: Path) -> None:
    t = await run_dcr(tmp_path, agents(evaluator="not json at all", converter=amc(1)))
    (s,) = t.sessions.values()
    assert s.verdict is not None and s.verdict.decision == "unscored" and s.verdict.guarantee is None


# ---------------------------------------------------------------- the schema
def test_a_transcript_written_before_guarantees_still_loads(tmp_path: Path) -> None:
    """A verdict line with no ``guarantee`` key (every transcript before this field) reads back with None."""
    path = tmp_path / "old.jsonl"
    header = {"kind": "header", "run_id": "r1", "protocol": "cross_examination", "schema_version": 2}
    start = {"kind": "session_start", "run_id": "r1", "session_id": "s1", "seq": 0, "item_id": "s1", "item": {}}
    verdict = {"kind": "verdict", "run_id": "r1", "session_id": "s1", "seq": 1, "decision": "correct",
               "accepted": True, "evidence": [], "statistics": {"rejections": 0}}  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in (header, start, verdict)), encoding="utf-8")
    v = load(path).sessions["s1"].verdict
    assert v is not None and v.decision == "correct" and v.guarantee is None


def test_a_guarantee_is_typed_and_round_trips() -> None:
    values = {"margin": "2–1", "reject_votes": 2, "share": 0.5, "unanimous": False, "decisions": ["correct", None]}
    g = Guarantee(kind="vote_margin", statement="2–1", values=values)  # type: ignore[arg-type]
    v = Verdict(run_id="r", session_id="s", seq=1, decision="incorrect", guarantee=g)
    back = Verdict.model_validate_json(v.model_dump_json())
    assert back.guarantee == g and back.guarantee.values["reject_votes"] == 2
    assert isinstance(back.guarantee.values["share"], float) and back.guarantee.values["unanimous"] is False
    with pytest.raises(ValueError):
        Guarantee(kind="", statement="x")
    with pytest.raises(ValueError):
        Guarantee(kind="k", statement="x", bound=0.1)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        Guarantee(kind="k", statement="x", values={"nested": {"a": 1}})  # type: ignore[dict-item]
