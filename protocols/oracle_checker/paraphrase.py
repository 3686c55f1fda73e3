"""The paraphrase decision checked by the oracle–checker scheme (§4, App. B) as a declared state machine.

The **oracle** decides whether s1 and s2 are semantically equivalent (Prompt 5). The **checker** then

- on "yes", tries to *prove* it (§4.3, Algorithm 1): phrase trees of both sentences (``trees.py``), the matching
  graph from phrase embeddings, matching paths, and a potential ρ-alignment whose matched phrases cover the sentence;
  ``align()`` asks the oracle whether each matched phrase pair is equivalent (Prompt 6). The four alignments ρ, ρ*
  in both directions give φ_or (any) and φ_and (one per direction); the proof is the alignment, a failure the
  leftover words (Tables 12-13). The answer is accepted when the chosen φ holds;
- on "no", runs the trust test of Fig. 4 (§4.1, §5.2.3): five paraphrases of each sentence from the oracle
  (Prompt 7); a paraphrase x of s1 that φ-aligns with s2 (or y of s2 with s1) is *indifferentiable*; the category is
  A/Ā (φ: s1 ~ s2 found or not) and I/Ī (an indifferentiable paraphrase found or not, Table 5). The checker tosses a
  coin for the side h, takes p from h's indifferentiable paraphrases (Ī: a random one of h's), and asks the oracle
  whether the other sentence and p are equivalent (Prompt 5). "Yes" contradicts the "no": the answer is rejected
  with the triangular evidence (s1, s2, p) of App. B.4; "no" passes the test. §5.2.3 runs one test
  (``no_tests``, default 1); with more, any contradiction rejects.

The checker's coin tosses come from a rule agent with the session's own random stream; its alignments are
computed in code and recorded with ``session.note``. Within a session each phrase pair is asked once (Prompt 6
replies are reused), and ``align()`` stops at the first pair the oracle calls not equivalent.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from voirdire.kit import Ask, DisplayHints, ParseError, Protocol, Session, StateMachine, Verdict
from voirdire.kit.models import Device, pick_device
from voirdire.kit.replies import Polar, read_yes_no as read_yes_no_reply

from . import plugin
from .alignment import BagOfWordsEmbedder, Candidate, Embedder, MiniLMEmbedder, candidate, describe, phi
from .items import digest

if TYPE_CHECKING:  # autogen's agents: imported by a session's checker, not by the registration (`voirdire --help`)
    from autogen_agentchat.agents import BaseChatAgent

    from voirdire.kit.models import FunctionAgent
from .paraphrase_report import ParaphraseOutcome
from .theorems import indifferentiability_guarantee
from .trees import PhraseParser, PhraseTree, SpacyParser, StanzaParser
from .views import PARAPHRASE_VIEWS

MACHINE = StateMachine(
    initial=("decide",),
    edges={
        "decide": ("prove", "paraphrase", "done"),
        "prove": ("done",),
        "paraphrase": ("align", "done"),
        "align": ("coin",),
        "coin": ("coin", "done"),
        "done": (),
    },
)
DISPLAY = DisplayHints(
    colors={"oracle": "34", "checker": "35"},
    item_fields=("sentence1", "sentence2"),
    gold_fields=("label",),
    quiet_states=("done",),
    views=PARAPHRASE_VIEWS,
)


class PairItem(BaseModel):
    """Two sentences s1, s2 (§4); ``label`` is the dataset's yes/no (MSRP), never read by the checker."""

    model_config = ConfigDict(extra="ignore")
    id: str = ""
    sentence1: str = Field(description="s1")
    sentence2: str = Field(description="s2")
    label: str | None = Field(None, description="the dataset's label (yes/no), for reference only")

    def model_post_init(self, _: Any) -> None:
        if not self.sentence1.strip() or not self.sentence2.strip():
            raise ValueError("sentence1, sentence2: empty sentence")
        if not self.id:
            self.id = f"p-{digest(self.sentence1, self.sentence2)}"


class YesNo(BaseModel):
    """Prompts 5-6's JSON reply: keys 'answer' and 'explanation'."""

    answer: Literal["yes", "no"]
    explanation: str = ""


class Paraphrases(BaseModel):
    """Prompt 7's JSON reply: key 'paraphrases'."""

    paraphrases: list[str]


def _json_object(text: str) -> dict[str, Any] | None:
    start, end = text.find("{"), text.rfind("}")  # the first brace to the last, found without backtracking
    if start < 0 or end < start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


# What a reply to Prompts 5-6 may say of the two texts when it gives no yes/no word ("They are not paraphrases.").
EQUIVALENCE = Polar(
    positive=("equivalent", "paraphrases", "paraphrase", "synonymous", "identical"),
    negative=("different", "differ", "differs", "distinct", "inequivalent"),
    subjects=("sentences", "sentence", "phrases", "texts", "they", "both", "meanings", "pair"),
)


def read_yes_no(text: str) -> YesNo:
    """Prompts 5-6: yes or no, read by the core reader (``voirdire.replies.read_yes_no``): the JSON reply's 'answer'
    key, or the reply's words; a reply that says both, neither, or in another language is refused."""
    answer = read_yes_no_reply(text, EQUIVALENCE)
    obj = _json_object(text)
    explanation = str(obj.get("explanation", "")) if obj is not None else text.strip()
    return YesNo(answer=answer, explanation=explanation)  # type: ignore[arg-type]


def read_paraphrases(text: str) -> Paraphrases:
    """Prompt 7: the 'paraphrases' list of the JSON reply, else a numbered list."""
    obj = _json_object(text)
    if obj is not None and isinstance(obj.get("paraphrases"), list):
        items = [str(p).strip() for p in obj["paraphrases"] if str(p).strip()]
        if items:
            return Paraphrases(paraphrases=items)
    items = [m.group(1).strip().strip("\"'") for m in re.finditer(r"^\s*\d+[.)]\s*(.+)$", text, re.M)]
    if items:
        return Paraphrases(paraphrases=items)
    raise ParseError("no 'paraphrases' list")


class ParaphraseParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    phi: Literal["or", "and"] = Field("or", description="φ_or (any of ρ, ρ* both ways) or φ_and (one each way), §4.3")
    parser: Literal["spacy", "stanza"] = Field(
        "spacy", description="phrase trees: spaCy dependency phrases (offline) or stanza constituency (its models)"
    )
    embedder: Literal["minilm", "bag-of-words"] = Field(
        "minilm", description="node similarity: all-MiniLM-L6-v2 (offline package) or a hashed bag of words"
    )
    no_tests: int = Field(
        1, ge=1, description="coin-toss tests of a 'no' (§5.2.3 ran one); any contradiction rejects the 'no'"
    )
    checker_seed: int = Field(0, description="seed of the checker's coin tosses (Fig. 4)")
    # MiniLM only: where it runs. "auto" is recorded as the device it picked (a GPU's kernels may round a node
    # similarity, hence an alignment, differently); the bag of words runs no model and records None.
    device: Device | None = Field(
        "auto", description="all-MiniLM-L6-v2's device: auto (a GPU where there is one), cpu, cuda or mps"
    )

    @model_validator(mode="after")
    def _device_picked(self) -> ParaphraseParams:
        if self.embedder != "minilm":
            self.device = None
        elif self.device == "auto":
            self.device = pick_device("auto")  # type: ignore[assignment]
        return self


@cache
def load_parser(kind: str) -> PhraseParser:
    return StanzaParser() if kind == "stanza" else SpacyParser()


@cache
def load_embedder(kind: str, device: str | None = "auto") -> Embedder:
    return BagOfWordsEmbedder() if kind == "bag-of-words" else MiniLMEmbedder(device=device)


def coin_agent(seed: int, item_id: str) -> FunctionAgent:
    """The checker's random choices (Fig. 4): which side h, which paraphrase p."""
    from voirdire.kit.models import FunctionAgent

    rng = random.Random(f"{seed}:{item_id}")

    def toss(text: str) -> str:
        return json.dumps({"choice": rng.randrange(int(json.loads(text)["among"]))})

    return FunctionAgent("checker", toss, description="tosses the coins of the non-equivalence test")


class _Prover:
    """The checker's alignment work within one session: cached trees, cached Prompt 6 answers."""

    def __init__(self, protocol: ParaphraseChecker, session: Session) -> None:
        self.protocol, self.session = protocol, session
        self.trees: dict[str, PhraseTree] = {}
        self.answers: dict[tuple[str, str], bool | None] = {}
        self.queries = 0

    def tree(self, text: str) -> PhraseTree:
        if text not in self.trees:
            self.trees[text] = self.protocol.parser().parse(text)
        return self.trees[text]

    async def align(self, c: Candidate) -> bool:
        """align(): the oracle must call every matched phrase pair equivalent (Prompt 6)."""
        for a, b in c.phrase_pairs():
            if (a, b) not in self.answers:
                self.queries += 1
                request = Ask(
                    fresh=True, parse=read_yes_no, schema=YesNo, on_failure="the pair counts as not equivalent"
                )
                reply = await self.session.ask("oracle", "phrase", request, text1=a, text2=b)
                self.answers[(a, b)] = None if reply.value is None else reply.value.answer == "yes"
            if not self.answers[(a, b)]:
                return False
        return True

    async def phi(self, s1: str, s2: str, purpose: str) -> tuple[bool, dict[str, Any]]:
        """φ: s1 ~ s2 (§4.3): ρ and ρ* from s1 to s2, then from s2 to s1, until the chosen φ is decided."""
        kind = self.protocol.params.phi
        emb = self.protocol.embedder()
        t1, t2 = self.tree(s1), self.tree(s2)
        found: dict[str, bool] = {}
        tried: dict[str, dict[str, Any]] = {}
        for direction, (u, v) in (("12", (t1, t2)), ("21", (t2, t1))):
            for star in (False, True):
                name = f"rho{'*' if star else ''}_{direction}"
                c = candidate(u, v, emb, star=star)
                ok = c.covered and await self.align(c)
                found[name] = ok
                tried[name] = describe(c) | {"aligned": ok, "oracle_asked": c.covered}
                if ok:
                    break  # one alignment in this direction is enough for φ_or and φ_and alike
            if kind == "or" and phi(found, "or"):
                break
            if kind == "and" and not any(found.get(f"rho{s}_{direction}", False) for s in ("", "*")):
                break  # φ_and needs both directions
        result = phi(found, kind)
        self.session.note("phi_alignment", purpose=purpose, s1=s1, s2=s2, phi=kind, holds=result, alignments=tried)
        return result, tried


def _evidence_of(tried: dict[str, dict[str, Any]]) -> list[str]:
    out = []
    for name, t in tried.items():
        if t["aligned"]:
            out.append(f"{name}: " + "; ".join(f"'{a}' -> '{b}'" for a, b in t["pairs"]))
        else:
            why = "oracle refused a phrase pair" if t["covered"] else f"leftover {{{', '.join(t['leftover'])}}}"
            out.append(f"{name}: not aligned ({why})")
    return out


class ParaphraseChecker(Protocol[PairItem, ParaphraseParams]):
    """A paraphrase decision (Prompt 5) accepted by a proof (yes, §4.3) or a trust test (no, §4.1, Fig. 4)."""

    name, roles, paper = plugin.oracle_paraphrase.name, plugin.oracle_paraphrase.roles, plugin.oracle_paraphrase.paper
    machine = MACHINE
    display = DISPLAY
    Item = PairItem
    Params = ParaphraseParams
    Outcome = ParaphraseOutcome

    def rule_roles(self) -> tuple[str, ...]:
        return ("checker",)

    def deterministic_agents(self, item: PairItem) -> dict[str, BaseChatAgent]:
        return {"checker": coin_agent(self.params.checker_seed, self.item_id(item))}

    def parser(self) -> PhraseParser:
        return load_parser(self.params.parser)

    def embedder(self) -> Embedder:
        return load_embedder(self.params.embedder, self.params.device)

    async def run(self, item: PairItem, session: Session) -> Verdict:
        s1, s2 = item.sentence1, item.sentence2
        session.note("backends", parser=self.parser().name, embedder=self.embedder().name, phi=self.params.phi)
        session.enter("decide", stage="f_de(s1, s2)")
        d = await self.decide(session, s1, s2)
        if d is None:
            session.enter("done")
            return session.verdict("unreadable", accepted=None, evidence=["the oracle's decision is unreadable"])
        prover = _Prover(self, session)
        if d.answer == "yes":
            session.enter("prove", stage="Yes-prover (Algorithm 1)")
            holds, tried = await prover.phi(s1, s2, "proof of yes")
            session.enter("done")
            evidence = [f"oracle: yes ({d.explanation})", *_evidence_of(tried)]
            stats = {"answer": "yes", "phi": self.params.phi, "proved": holds, "alignments": tried,
                     "phrase_queries": prover.queries}  # fmt: skip
            return session.verdict("yes accepted" if holds else "yes rejected", accepted=holds, evidence=evidence,
                                   statistics=stats)  # fmt: skip
        return await self.check_no(session, prover, s1, s2, d)

    async def decide(self, session: Session, a: str, b: str) -> YesNo | None:
        request = Ask(fresh=True, parse=read_yes_no, schema=YesNo, on_failure="no decision")
        reply = await session.ask("oracle", "decide", request, sentence1=a, sentence2=b)
        return reply.value

    async def check_no(self, session: Session, prover: _Prover, s1: str, s2: str, d: YesNo) -> Verdict:
        """Fig. 4 and §5.2.3: paraphrases, indifferentiable ones, the category, one coin-toss test."""
        session.enter("paraphrase", stage="par(s1), par(s2) (Prompt 7)")
        pars: dict[str, list[str]] = {}
        sides = (("s1", s1), ("s2", s2))
        request = Ask(
            fresh=True, parse=read_paraphrases, schema=Paraphrases, on_failure="no paraphrases of this sentence"
        )
        replies = await asyncio.gather(*(  # par(s1) and par(s2) are independent
            session.ask("oracle", "paraphrases", request, sentence=s) for _, s in sides
        ))  # fmt: skip
        for (side, s), reply in zip(sides, replies, strict=True):
            pars[side] = [] if reply.value is None else [p for p in reply.value.paraphrases if p.strip() != s.strip()]
        if not pars["s1"] and not pars["s2"]:
            session.enter("done")
            return session.verdict("no untested", accepted=None, evidence=["the oracle gave no paraphrase"],
                                   statistics={"answer": "no", "phi": self.params.phi})  # fmt: skip
        session.enter("align", stage="φ-alignments")
        a, _ = await prover.phi(s1, s2, "A: φ s1 ~ s2")
        indiff: dict[str, list[str]] = {"s1": [], "s2": []}
        for side, other in (("s1", s2), ("s2", s1)):
            for p in pars[side]:
                ok, _ = await prover.phi(p, other, f"I: paraphrase of {side} aligned with the other sentence")
                if ok:
                    indiff[side].append(p)
        i = bool(indiff["s1"] or indiff["s2"])
        category = ("A" if a else "Ā") + ("I" if i else "Ī")
        session.note("category", category=category, indifferentiable=indiff)
        pool = indiff if i else pars
        sides = [k for k in ("s1", "s2") if pool[k]]
        stats: dict[str, Any] = {"answer": "no", "phi": self.params.phi, "category": category, "paraphrases": pars,
                                 "indifferentiable": indiff, "tests": []}  # fmt: skip
        passed = 0
        for t in range(self.params.no_tests):
            session.enter("coin", stage=f"coin toss {t + 1}/{self.params.no_tests} (Fig. 4)", turn=t + 1)
            side = sides[await self.toss(session, len(sides))]
            p = pool[side][await self.toss(session, len(pool[side]))]
            other = s2 if side == "s1" else s1
            answer = await self.decide(session, other, p)
            stats["tests"].append({"h": side, "p": p, "answer": None if answer is None else answer.answer})
            stats["h"], stats["p"] = side, p
            if answer is None:
                continue
            if answer.answer == "yes":
                session.enter("done")
                stats["phrase_queries"] = prover.queries
                stats["triangular_evidence"] = {"s1": s1, "s2": s2, "p": p, "p_from": side}
                evidence = [
                    f"triangular evidence (App. B.4): p is the oracle's paraphrase of {side}, the oracle says p ≡ "
                    f"{'s2' if side == 's1' else 's1'}, and said s1 ≢ s2",
                    f"s1: {s1}", f"s2: {s2}", f"p: {p}", f"category {category}",
                ]  # fmt: skip
                return session.verdict("no rejected", accepted=False, evidence=evidence, statistics=stats)
            passed += 1
        session.enter("done")
        stats["phrase_queries"] = prover.queries
        if not passed:
            return session.verdict("no untested", accepted=None, evidence=["every test query was unreadable"],
                                   statistics=stats)  # fmt: skip
        evidence = [f"the oracle called p not equivalent to the other sentence in {passed} test(s)",
                    f"p: {stats['p']}", f"category {category}"]  # fmt: skip
        guarantee = indifferentiability_guarantee(passed, category)
        return session.verdict("no accepted", accepted=True, evidence=evidence, statistics=stats, guarantee=guarantee)

    async def toss(self, session: Session, among: int) -> int:
        reply = await session.send("checker", json.dumps({"among": among}), parse=json.loads)
        return int(reply.value["choice"])  # type: ignore[index]
