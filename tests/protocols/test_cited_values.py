"""Every label tells the truth: a value that ``--help`` or a reproduction attributes to a paper is one the paper
states. ``CITED`` is the table of the values the help texts cite, each with its section or table and the paper's own
words, checked against the papers' text; every help text of every command is walked and each paper claim in it must
be in the table. Every number a reproduction prints in its "paper" column is found in its paper's text (or is a
bound the paper states as a formula, ``FORMULAS``), and a number voirdire computes is never in that column."""

from __future__ import annotations

import argparse
import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from voirdire.analysis.reproduce import reproductions, text
from voirdire.cli.main import build_parser
from voirdire.reports.paper_tables import Options

PAPERS = Path(__file__).resolve().parents[2].parent / "shared" / "papers"
LMVLM, DCR, NODATA = "lm-vs-lm-cross-examination.txt", "dcr-consistency.txt", "no-data-algorithm.txt"
ORACLE, QA = "oracle-checker.txt", "entailment-qa-eval.txt"
# Which paper each command (and its ``run NAME`` and ``check KIND`` aliases) follows.
COMMANDS = {
    "examine": LMVLM, "cross_examination": LMVLM, "idk": LMVLM, "ays": LMVLM, "dcr": DCR, "nodata": NODATA,
    "no_data": NODATA, "check-entities": ORACLE, "check-paraphrase": ORACLE, "oracle_entities": ORACLE,
    "oracle_paraphrase": ORACLE, "entities": ORACLE, "paraphrase": ORACLE, "qa-eval": QA, "qa_entailment": QA,
    "qa_lexical": QA, "qa_token_f1": QA,
}  # fmt: skip

# (paper, option, value): (citation, the paper's words that state it)
CITED: dict[tuple[str, str, float], tuple[str, str]] = {
    (LMVLM, "--max-followups", 5): ("§2, footnote 3", "We use a maximum of five turns in our experiments."),
    (LMVLM, "--examinations", 3): ("§4.1, LMvLM (Majority)", "we apply our method three times"),
    (DCR, "--temperature", 0.0): ("§4.1", "We set the temperature to 0.0"),
    (NODATA, "--rounds", 3): ("§8", "we run the No-Data Algorithm with $r = 3$"),
    (NODATA, "--phi", 0.6): ("Table 2 caption", "(0.6 for DT; 0.9 for LLM)"),
    (NODATA, "--phi", 0.9): ("Table 2 caption", "(0.6 for DT; 0.9 for LLM)"),
    (NODATA, "--phi", 0.5): ("§9.2", "the flip probability is set to $\\phi = 0.5$"),
    (NODATA, "--p", 0.1): ("Table 3 caption", "(lying with probability $p = 1/10$ )"),
    (NODATA, "--label-noise", 0.1): ("Table 3 caption", "outputs the incorrect label with probability $p = 1/10$"),
    (NODATA, "--exemplars", 5): ("§8.0.2, App. D.2", "the LLM observed five exemplars in the prompt"),
    (NODATA, "--attempts", 5): ("App. D.2", "we retried the call up to five times"),
    (QA, "--max-tokens", 300): ("App. A.1", "set max_tokens=300"),
    (QA, "--temperature", 0.0): ("App. A.1", "temperature=0.0"),
    (QA, "--seed", 42): ("App. A.1", "we set seed=42"),
}
# Values a help text must say are voirdire's, not the paper's (the papers state none).
OURS = {(DCR, "--max-tokens"), (ORACLE, "--temperature"), (LMVLM, "--sampling-temperature")}
# The paper's column may hold a bound the paper states as a formula: Lemma 1, (1/4)^r, in %.
FORMULAS = {"nodata-lemma1": ("Lemma 1", "after $r$ rounds is $(1/4)^r$", {100 * 0.25**r for r in range(1, 6)})}
# The module constants every reproduction's "paper" column is drawn from, model reproductions included.
PRINTED_TABLES = [
    ("voirdire.protocols.cross_examination.reproduce", ("TABLE4_POPQA", "TABLE8", "TABLE8_INCONCLUSIVE"), LMVLM),
    ("voirdire.protocols.dcr.correlate", ("PRINTED",), DCR),
    ("voirdire.protocols.dcr.reproduce", ("TABLE5",), DCR),
    ("voirdire.protocols.no_data.reproduce", ("PAPER_T2", "PAPER_T3", "PAPER_LLM"), NODATA),
    ("voirdire.protocols.oracle_checker.reproduce", ("WORKED", "TABLE1", "FIG6", "TABLE2_AGREEMENT"), ORACLE),
    ("voirdire.protocols.qa_entailment.reproduce", ("LEXICAL", "ENTAILMENT"), QA),
]
PAPER_TITLES = {"LM vs LM": LMVLM, "DCR-Consistency": DCR, "No-Data": NODATA, "Oracle-Checker": ORACLE}
PAPER_TITLES |= {"Open-QA": QA}
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}

# A claim in a help text: "(paper: V)", "(paper, §8: V)", "(the paper's φ: V ...)", "(§4.1: V)", "(Table 3: V)",
# "(App. D.2: V)", and a role default "(this protocol's default: V; the paper's setting, CITATION)".
CLAIMS = [
    re.compile(r"\((?:the )?paper(?:'s [^:()]*)?(?:, [^:()]+)?: ([^()]*)\)"),
    re.compile(r"\((?:§|Tables? |App\. |Alg\. )[^:()]*: ([^()]*)\)"),
    re.compile(r"this protocol's default: ([^;()]+); the paper's setting"),
]
CITATION = re.compile(r"§\s?[\d.]+|\b(?:Tables?|Alg\.|line|App\.|Prompts?|Theorems?|Lemma)\s?[A-Z]?[\d.]*")


def paper_text(name: str) -> str:
    path = PAPERS / name
    if not path.is_file():
        pytest.skip(f"the papers are not beside the checkout ({PAPERS})")
    return " ".join(path.read_text(encoding="utf-8").split())


def values(claim: str) -> list[float]:
    """The numbers a claim states, citations left out ("§9.2", "Table 2" are where, not what)."""
    claim = CITATION.sub(" ", claim)
    found = [float(n) for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])", claim)]
    return found + [float(v) for w, v in WORDS.items() if re.search(rf"\b{w}\b", claim)]


def help_texts() -> Iterator[tuple[str, str, str]]:
    """(command, option, help) for every option of every command and sub-command, as ``--help`` prints it."""

    def walk(p: argparse.ArgumentParser, command: str) -> Iterator[tuple[str, str, str]]:
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    yield from walk(sub, name)
            elif a.help and a.help != argparse.SUPPRESS:
                shown = a.help % {**vars(a), "prog": p.prog} if "%(" in a.help else a.help
                yield command, (a.option_strings or [a.dest])[0], " ".join(shown.split())

    yield from walk(build_parser(), "voirdire")


def paper_claims() -> list[tuple[str, str, str, float]]:
    out = []
    for command, option, help in help_texts():
        for pattern in CLAIMS:
            for m in pattern.finditer(help):
                out += [(command, option, help, v) for v in values(m.group(1))]
    return out


def test_the_help_texts_make_claims_to_check() -> None:
    claims = paper_claims()
    assert {(c, o) for c, o, _, _ in claims} >= {("dcr", "--temperature"), ("nodata", "--phi"), ("qa-eval", "--seed")}


@pytest.mark.parametrize(("key", "cited"), CITED.items(), ids=[f"{k[0][:6]}{k[1]}={k[2]}" for k in CITED])
def test_every_cited_value_is_in_its_paper(key: tuple[str, str, float], cited: tuple[str, str]) -> None:
    paper, _, _ = key
    _, words = cited
    assert " ".join(words.split()) in paper_text(paper)


def test_every_value_a_help_text_gives_the_paper_is_a_cited_one() -> None:
    wrong = []
    for command, option, help, value in paper_claims():
        paper = COMMANDS.get(command)
        if paper is None or (paper, option, value) not in CITED:
            wrong.append(f"{command} {option}: {value:g} is not in CITED ({help})")
    assert not wrong, "\n".join(wrong)


def test_voirdires_own_choices_are_never_called_the_papers() -> None:
    seen = set()
    for command, option, help in help_texts():
        paper = COMMANDS.get(command)
        if (paper, option) in OURS:
            seen.add((paper, option))
            assert "paper's setting" not in help and re.search(r"voirdire's|is ours|ours\b", help), help
    assert seen == OURS


def test_phi_help_gives_the_papers_three_values() -> None:
    (phi,) = {h for c, o, h in help_texts() if c == "nodata" and o == "--phi"}
    assert all(v in values(phi) for v in (0.6, 0.9, 0.5)) and "Table 2" in phi and "§9" in phi


def _printed(x: Any) -> Iterator[float]:
    if isinstance(x, bool) or x is None:
        return
    if isinstance(x, int | float):
        yield float(x)
    elif isinstance(x, dict):
        for v in x.values():
            yield from _printed(v)
    elif isinstance(x, list | tuple | set):
        for v in x:
            yield from _printed(v)


def in_text(value: float, text: str) -> bool:
    """Whether ``value`` is printed in ``text`` to 0-3 decimals ("0.187", ".187", "86.71", "100.0", "−0.011")."""
    forms = set()
    for d in range(4):
        s = f"{value:.{d}f}"
        forms |= {s, s.replace("-", "−")} | ({s[1:]} if s.startswith("0.") else set())
    return any(re.search(rf"(?<![\d.]){re.escape(f)}(?!\d)", text) for f in forms)


@pytest.mark.parametrize(
    ("module", "names", "paper"), PRINTED_TABLES, ids=[m.split(".")[2] for m, *_ in PRINTED_TABLES]
)
def test_every_printed_table_value_is_in_its_paper(module: str, names: tuple[str, ...], paper: str) -> None:
    text = paper_text(paper)
    m = importlib.import_module(module)
    missing = [(n, v) for n in names for v in _printed(getattr(m, n)) if not in_text(v, text)]
    assert not missing


def paper_of(title: str) -> str:
    return next(p for key, p in PAPER_TITLES.items() if key in title)


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("oracle-theorems", Options(limit=20)),
        ("evouna-table1-lexical", Options()),
        ("nodata-lemma1", Options(limit=20)),
    ],
)
def test_every_paper_cell_of_an_offline_reproduction_is_the_papers(name: str, options: Options) -> None:
    rep = reproductions()[name]
    text_of_paper = paper_text(paper_of(rep.paper))
    outcome = rep.run(options)
    _, _, bounds = FORMULAS.get(name, ("", "", set()))
    cited = [c for c in outcome.cells if c.paper is not None]
    assert cited
    wrong = [
        c.label
        for c in cited
        if not in_text(c.paper, text_of_paper) and not any(abs(c.paper - b) < 1e-9 for b in bounds)  # type: ignore[operator]
    ]
    assert not wrong
    if name == "oracle-theorems":  # the bound of Theorems 3.1-3.2 at a simulated ε is voirdire's number
        computed = [c for c in outcome.cells if c.label.startswith("acceptance at")]
        assert computed and all(c.paper is None and "voirdire computes" in c.note for c in computed)


def test_formulas_are_the_papers() -> None:
    for citation, words, _ in FORMULAS.values():
        assert " ".join(words.split()) in paper_text(NODATA), citation


@pytest.mark.paper
def test_nodata_table2_says_where_the_paper_disagrees_with_the_cell_it_misses() -> None:
    outcome = reproductions()["nodata-table2"].run(Options(seeds=1))
    (f1,) = [c for c in outcome.cells if c.label == "IP known: F1"]
    assert f1.paper == 58.8 and "59.8" in f1.note and "notebook" in f1.note and "IP unknown" in f1.note


@pytest.mark.paper
def test_nodata_table3_prints_its_summary_once() -> None:
    rep = reproductions()["nodata-table3"]
    outcome = rep.run(Options(seeds=1))
    assert outcome.summary and text(rep, outcome).lower().count("published values reproduced") == 1
