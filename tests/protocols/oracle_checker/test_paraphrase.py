"""The Yes-prover (§4.3, Algorithm 1) and the No-checker (§4.1, Fig. 4) with scripted oracles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from voirdire.protocols.oracle_checker.alignment import BagOfWordsEmbedder, MiniLMEmbedder, four_candidates, phi
from voirdire.protocols.oracle_checker.paraphrase import (
    PairItem,
    ParaphraseChecker,
    ParaphraseParams,
    read_paraphrases,
    read_yes_no,
)
from voirdire.protocols.oracle_checker.trees import SpacyParser, StanzaParser
from voirdire.runner import run_protocol
from voirdire.transcript import Step, load

from .oracles import FunctionClient

# Table 13 (App. B.3.2): a "Yes" the checker accepted
T13_S1 = (
    'Sheena Young of Child, the national infertility support network, hoped the guidelines would lead to a more "fair '
    'and equitable" service for infertility sufferers.'
)
T13_S2 = (
    "Sheena Young, a spokesman for Child, the national infertility support network, said the proposed guidelines "
    'should lead to a more "fair and equitable" service for infertility sufferers.'
)
UNRELATED = "The stock market fell sharply on Monday after weak earnings from technology companies."
S1 = "The company said its quarterly profit rose sharply in the spring."
S2 = "The company said on Monday that its quarterly profit rose sharply in the spring."


@pytest.fixture(scope="module")
def spacy_parser() -> SpacyParser:
    return SpacyParser()


def yes(explanation: str = "same") -> str:
    return json.dumps({"answer": "yes", "explanation": explanation})


def no(explanation: str = "different") -> str:
    return json.dumps({"answer": "no", "explanation": explanation})


def test_readers() -> None:
    assert read_yes_no('{"answer": "Yes.", "explanation": "x"}').answer == "yes"
    assert read_yes_no("No, they differ.").answer == "no"
    assert read_paraphrases('{"paraphrases": ["a", "b"]}').paraphrases == ["a", "b"]


def test_stanza_and_spacy_trees_share_one_interface(spacy_parser: SpacyParser) -> None:
    """The stanza path with a pipeline object built here from stanza's own tree reader: no model download."""
    from stanza.models.constituency import tree_reader

    bracket = "(ROOT (S (NP (NNP Sheena) (NNP Young)) (VP (VBD hoped) (NP (DT the) (NNS guidelines))) (. .)))"

    class Sentence:
        constituency = tree_reader.read_trees(bracket)[0]

    class Doc:
        sentences: ClassVar[list[Sentence]] = [Sentence()]

    stanza_tree = StanzaParser(pipeline=lambda text: Doc()).parse("Sheena Young hoped the guidelines.")
    assert stanza_tree.tokens == ["Sheena", "Young", "hoped", "the", "guidelines", "."]
    assert [stanza_tree.text(c) for c in stanza_tree.root.children] == [
        "Sheena Young", "hoped the guidelines", ".",
    ]  # fmt: skip
    spacy_tree = spacy_parser.parse("Sheena Young hoped the guidelines.")
    assert spacy_tree.tokens == stanza_tree.tokens
    for tree in (stanza_tree, spacy_tree):
        assert [n.start for n in tree.leaves] == list(range(6))
        assert all(n.parent is not None for n in tree.nodes if n is not tree.root)
    assert "hoped the guidelines" in [spacy_tree.text(n) for n in spacy_tree.nodes]


def test_unrelated_pair_has_no_potential_alignment(spacy_parser: SpacyParser) -> None:
    got = four_candidates(T13_S1, UNRELATED, spacy_parser, BagOfWordsEmbedder())
    assert not any(c.covered for c in got.values())


@pytest.mark.slow
def test_table_13_pair_aligns_with_minilm(spacy_parser: SpacyParser) -> None:
    """Offline: spaCy phrases and all-MiniLM-L6-v2 find ρ_{s2→s1} for Table 13's pair, with Table 13's phrases."""
    got = four_candidates(T13_S1, T13_S2, spacy_parser, MiniLMEmbedder())
    assert phi({k: c.covered for k, c in got.items()}, "or")
    pairs = got["rho_21"].phrase_pairs()
    assert any(a.startswith("said the proposed guidelines") and b.startswith("hoped the guidelines") for a, b in pairs)
    assert not any(c.covered for c in four_candidates(T13_S1, UNRELATED, spacy_parser, MiniLMEmbedder()).values())


def scripted(decide: str, phrase: str = yes(), test: str = yes(), paraphrases: list[str] | None = None):  # type: ignore[no-untyped-def]
    """Prompt 5's first reply ``decide``, later ones ``test``; Prompt 6 ``phrase``; Prompt 7 the paraphrases."""
    asked = {"decide": 0}

    def reply(user: str) -> str:
        if user.startswith("Decide whether the following two sentences"):
            asked["decide"] += 1
            return decide if asked["decide"] == 1 else test
        if user.startswith("Decide whether the following two texts"):
            return phrase
        if user.startswith("Generate five paraphrases"):
            return json.dumps({"paraphrases": paraphrases or []})
        raise AssertionError(user[:60])

    return FunctionClient(reply)


async def run(tmp_path: Path, client: FunctionClient, s1: str, s2: str, **params: object):  # type: ignore[no-untyped-def]
    out = tmp_path / "t.jsonl"
    protocol = ParaphraseChecker(ParaphraseParams(embedder="bag-of-words", **params))  # type: ignore[arg-type]
    result = await run_protocol(protocol, [PairItem(id="p", sentence1=s1, sentence2=s2)], out=out,
                                clients={"oracle": client})  # fmt: skip
    assert not result.errors, result.errors
    return load(out).sessions["p"]


async def test_yes_proved_asks_the_oracle_about_matched_phrases(tmp_path: Path) -> None:
    client = scripted(yes())
    s = await run(tmp_path, client, S1, S2)
    assert s.verdict.decision == "yes accepted" and s.verdict.accepted is True
    phrase_queries = [c for c in client.calls if "two texts" in c]
    assert phrase_queries and s.verdict.statistics["phrase_queries"] == len(phrase_queries)
    assert any("->" in e for e in s.verdict.evidence)  # the alignment is the evidence


async def test_yes_refused_when_the_oracle_rejects_a_phrase_pair(tmp_path: Path) -> None:
    s = await run(tmp_path, scripted(yes(), phrase=no()), S1, S2)
    assert s.verdict.decision == "yes rejected"


async def test_unrelated_yes_fails_without_asking_the_oracle(tmp_path: Path) -> None:
    client = scripted(yes())
    s = await run(tmp_path, client, T13_S1, UNRELATED)
    assert s.verdict.decision == "yes rejected"
    assert not [c for c in client.calls if "two texts" in c]  # no potential alignment: no Prompt 6
    assert any("leftover" in e for e in s.verdict.evidence)


async def test_no_checker_triangular_evidence_for_a_contradictory_oracle(tmp_path: Path) -> None:
    """The oracle says s1 ≢ s2, then that p (its own paraphrase, aligned with the other sentence) ≡ the other."""
    paraphrases = [S1.replace("spring", "early spring"), S2.replace("sharply", "steeply")]
    client = scripted(no(), test=yes(), paraphrases=paraphrases)
    s = await run(tmp_path, client, S1, S2)
    v = s.verdict
    assert v.decision == "no rejected" and v.accepted is False
    assert v.statistics["category"] == "AI"
    tri = v.statistics["triangular_evidence"]
    assert tri["s1"] == S1 and tri["s2"] == S2 and tri["p"] in v.statistics["indifferentiable"][tri["p_from"]]
    assert any("triangular evidence" in e for e in v.evidence)
    names = [e.name for e in s.events if isinstance(e, Step)]
    assert "category" in names and names.count("phi_alignment") >= 2


async def test_no_accepted_when_the_oracle_stays_consistent(tmp_path: Path) -> None:
    client = scripted(no(), test=no(), phrase=no(), paraphrases=["An entirely different remark.", "Another."])
    s = await run(tmp_path, client, T13_S1, UNRELATED)
    assert s.verdict.decision == "no accepted" and s.verdict.statistics["category"] == "ĀĪ"


async def test_several_coin_toss_tests_all_pass_for_a_consistent_oracle(tmp_path: Path) -> None:
    paraphrases = [S1.replace("spring", "early spring"), S2.replace("sharply", "steeply")]
    s = await run(tmp_path, scripted(no(), test=no(), paraphrases=paraphrases), S1, S2, no_tests=3)
    assert s.verdict.decision == "no accepted" and len(s.verdict.statistics["tests"]) == 3
