"""The linearity checker for entity extraction (§3, §5.1, App. A) as a declared state machine.

The **oracle** (the LLM) extracts the entities of s (Prompt 1, k = 11 samples, the most frequent set kept), helps
the synonym generator syn (Prompt 2 with a vote of 11 for entities the App. A.2 rules cannot classify; Prompt 3 for
named entities and Prompt 4 for the others, each with a vote of 7), and extracts again from every R-transformed
sentence. The **checker** draws the random characteristic vectors x, y of each test (a rule agent with the
session's own random stream), and computes in code, recorded with ``session.note``: the named/non-named rules,
the synonym votes, R, and the test f(x ⊕ y) = f(x) ⊖ f(y) over every combination of the k extractions of R(x),
R(y), R(x ⊕ y) (§5.1). A sentence is accepted when all n tests (paper: 5) pass; every verdict states what the
acceptance guarantees by Theorems 3.1–3.2 for the chosen ε.

The k samples of one query are one ``session.ask(..., samples=k)``: one request with ``n=k`` where the endpoint
supports it, so the extraction queries of a sentence take 1 + 3n = 16 requests rather than k(1 + 3n) = 176 calls
(the paper counts 165 = 11 × 15 for the 15 R-transformed sentences alone).
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from voirdire.kit import Ask, DisplayHints, Protocol, Session, StateMachine, Statistics, Verdict

from . import plugin
from .entities import (
    NAMED_CHOICES,
    Candidates,
    Entity,
    Extraction,
    LinearityResult,
    as_candidates,
    as_entities,
    as_named,
    complement,
    linearity_test,
    most_frequent,
    named_by_rule,
    observe,
    occurs,
    parse_entities,
    parse_list,
    parse_named,
    replace,
    vote_named,
    vote_synonym,
    xor,
)
from .items import SentenceItem, sentence_from_record
from .theorems import acceptance_guarantee, guarantees
from .views import ENTITY_VIEWS

if TYPE_CHECKING:  # autogen's agents: imported by a session's checker, not by the registration (`voirdire --help`)
    from autogen_agentchat.agents import BaseChatAgent

    from voirdire.kit.models import FunctionAgent

# extract (Prompt 1) -> classify (App. A.2 rules, Prompt 2) -> synonyms (Prompts 3-4) -> test x n -> done
MACHINE = StateMachine(
    initial=("extract",),
    edges={
        "extract": ("classify", "done"),
        "classify": ("synonyms",),
        "synonyms": ("test", "done"),
        "test": ("test", "done"),
        "done": (),
    },
)
DISPLAY = DisplayHints(
    colors={"oracle": "34", "checker": "35"},
    item_fields=("text",),
    gold_fields=("gold",),
    quiet_states=("done",),
    views=ENTITY_VIEWS,
)


class LinearityParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    samples: int = Field(11, ge=1, description="k: repeated extractions per sentence, most frequent set kept (§5.1)")
    tests: int = Field(5, ge=1, description="n: linearity tests per sentence (§5.1)")
    named_votes: int = Field(11, ge=1, description="Prompt 2 self-consistency vote for named/non-named (App. A.2)")
    synonym_votes: int = Field(7, ge=1, description="Prompts 3-4 self-consistency vote for the synonym (App. A.2)")
    epsilons: tuple[float, ...] = Field(
        (0.1, 0.05), description="the ε for which every verdict states what an acceptance guarantees (Thm 3.1-3.2)"
    )
    checker_seed: int = Field(0, description="seed of the checker's random characteristic vectors")


def vector_agent(seed: int, item_id: str) -> FunctionAgent:
    """The checker's random choices: uniform characteristic vectors x, y ∈ {0,1}^m for each test (§3)."""
    from voirdire.kit.models import FunctionAgent

    rng = random.Random(f"{seed}:{item_id}")

    def draw(text: str) -> str:
        m = int(json.loads(text)["m"])
        return json.dumps({"x": [rng.randint(0, 1) for _ in range(m)], "y": [rng.randint(0, 1) for _ in range(m)]})

    return FunctionAgent("checker", draw, description="draws the random characteristic vectors of each test")


def _values(reply: Any) -> list[Any]:
    return [r.value for r in (reply.samples or (reply,))]


class LinearityOutcome(Statistics):
    """A linearity verdict's statistics (§3.3, Table 1): what the report reads of each sentence."""

    entities: list[dict[str, Any]] = Field(default_factory=list, description="the extracted entities in s")
    tested: list[str] = Field(default_factory=list, description="the entities replaced in the tests")
    synonyms: list[str] = Field(default_factory=list)
    con_o: int | None = None
    con_rs: int | None = None
    a_test: int | None = None
    a_rate: float | None = None
    n_entities: int | None = None
    tests: int | None = None
    guarantees: list[dict[str, Any]] = Field(default_factory=list)


class LinearityChecker(Protocol[SentenceItem, LinearityParams]):
    """Entity extraction checked by a linearity test (§3): accept L_e(s) when f(x ⊕ y) = f(x) ⊖ f(y) n times."""

    name, roles, paper = plugin.oracle_entities.name, plugin.oracle_entities.roles, plugin.oracle_entities.paper
    machine = MACHINE
    display = DISPLAY
    Item = SentenceItem
    Params = LinearityParams
    Outcome = LinearityOutcome

    def rule_roles(self) -> tuple[str, ...]:
        return ("checker",)

    def deterministic_agents(self, item: SentenceItem) -> dict[str, BaseChatAgent]:
        return {"checker": vector_agent(self.params.checker_seed, self.item_id(item))}

    @classmethod
    def item_from_record(cls, record: dict[str, Any]) -> SentenceItem:
        return sentence_from_record(record)

    # ------------------------------------------------------------------ §3, §5.1
    async def run(self, item: SentenceItem, session: Session) -> Verdict:
        p = self.params
        session.enter("extract", stage="L_e(s)")
        entities, con_o = await self.extract(session, item.text, "the original sentence")
        if entities is None:
            session.enter("done")
            return session.verdict("unreadable", accepted=None, evidence=["no readable extraction of s"])
        present = [e for e in entities if occurs(e.text, item.text)]
        absent = [e.text for e in entities if e not in present]
        if absent:
            session.note("not_in_sentence", entities=absent, outcome="not testable: R cannot replace them")
        if not present:
            session.enter("done")
            return session.verdict(
                "no_entities", accepted=None, evidence=["no extracted entity occurs in the sentence"],
                statistics={"con_o": con_o, "entities": [e.model_dump() for e in entities]},
            )  # fmt: skip

        session.enter("classify", stage="syn: named?")
        # The entities are classified independently (one-off oracle requests), so all at once.
        named = list(await asyncio.gather(*(self.classify(session, e, item.text) for e in present)))
        session.enter("synonyms", stage="syn")
        synonyms: list[str | None] = []
        taken: set[str] = set()
        for e, is_named in zip(present, named, strict=True):
            s = await self.synonym(session, e, is_named, item.text, taken)
            synonyms.append(s)
            if s:
                taken.add(s.casefold())
        tested = [(e.text, s) for e, s in zip(present, synonyms, strict=True) if s]
        if not tested:
            session.enter("done")
            return session.verdict("untestable", accepted=None, evidence=["syn found no synonym for any entity"])
        names, syns = [t[0] for t in tested], [t[1] for t in tested]

        results: list[LinearityResult] = []
        for i in range(p.tests):
            session.enter("test", stage=f"test {i + 1}/{p.tests}", turn=i + 1)
            results.append(await self.test(session, i + 1, item.text, names, syns))
        session.enter("done")
        return self.conclude(session, con_o, names, syns, present, results)

    async def samples(self, session: Session, text: str, on_failure: str) -> list[Any]:
        """Prompt 1 on ``text``, k samples in one call: each sample's entity set (None where unreadable)."""
        reply = await session.ask(
            "oracle",
            "extract",
            Ask(
                fresh=True,
                parse=parse_entities,
                schema=Extraction,
                samples=self.params.samples,
                expected="a numbered list 'N. class: entity'",
                on_failure=on_failure,
            ),
            text=text,
        )
        return [as_entities(v) for v in _values(reply)]

    async def extract(self, session: Session, text: str, what: str) -> tuple[list[Entity] | None, int]:
        """Prompt 1 on the sentence; the most frequent entity set and its count (Con)."""
        chosen, count = most_frequent(await self.samples(session, text, "this sample is not a vote"))
        session.note("extraction", of=what, chosen=[e.model_dump() for e in chosen or []], con=count)
        return chosen, count

    async def classify(self, session: Session, entity: Entity, text: str) -> bool:
        """App. A.2 part 1: the rules, else Prompt 2's vote (a tie counts as non-named)."""
        decided, rule = named_by_rule(entity)
        votes: list[bool | None] = []
        if decided is None:
            reply = await session.ask(
                "oracle",
                "named",
                Ask(
                    fresh=True,
                    parse=parse_named,
                    schema=NAMED_CHOICES,
                    samples=self.params.named_votes,
                    expected="[[named entity]] or [[normal entity]]",
                    on_failure="this sample is not a vote",
                ),
                entity=entity.text,
                text=text,
            )
            votes = [as_named(v) for v in _values(reply)]
            vote = vote_named(votes)
            decided = bool(vote)
            rule = f"Prompt 2 vote of {len(votes)}" + (" (tie or unreadable: non-named)" if vote is None else "")
        session.note("named", entity=entity.text, cls=entity.cls, named=decided, rule=rule, votes=votes)
        return decided

    async def synonym(self, session: Session, entity: Entity, named: bool, text: str, taken: set[str]) -> str | None:
        """App. A.2 part 2: Prompt 3 (named: another entity of the type) or Prompt 4 (synonyms), voted over 7."""
        request = Ask(
            fresh=True,
            samples=self.params.synonym_votes,
            parse=parse_list,
            schema=Candidates,
            expected="a numbered list",
            on_failure="this sample is not a vote",
        )
        if named:
            kind = entity.cls or "entity"
            reply = await session.ask(
                "oracle", "replace_named", request, entity_type=kind, entity=entity.text, text=text
            )
        else:
            reply = await session.ask("oracle", "synonyms", request, entity=entity.text, text=text)
        chosen = vote_synonym([as_candidates(v) for v in _values(reply)], entity.text, text, taken)
        session.note(
            "synonym", entity=entity.text, named=named, prompt="Prompt 3" if named else "Prompt 4", synonym=chosen,
            outcome="" if chosen else "no usable synonym: the entity is left out of the test",
        )  # fmt: skip
        return chosen

    async def test(self, session: Session, i: int, text: str, names: list[str], syns: list[str]) -> LinearityResult:
        """One linearity test: random x, y from the checker; R(x), R(y), R(x ⊕ y) each extracted k times."""
        draw = await session.send("checker", json.dumps({"test": i, "m": len(names)}), parse=json.loads)
        x, y = tuple(draw.value["x"]), tuple(draw.value["y"])  # type: ignore[index]
        observed: dict[str, list[Any]] = {}
        sentences: dict[str, str] = {}
        con: dict[str, int] = {}
        vectors = (("x", x), ("y", y), ("x+y", xor(x, y)))
        for label, v in vectors:
            sentences[label] = replace(text, names, syns, v)
        # R(x), R(y), R(x ⊕ y) are extracted independently, so at once.
        drawn = await asyncio.gather(
            *(
                self.samples(session, sentences[label], "this sample is not a vote (no combination holding it passes)")
                for label, _ in vectors
            )
        )
        for (label, _), values in zip(vectors, drawn, strict=True):
            _, con[label] = most_frequent(values)
            observed[label] = [observe(e, names, syns) for e in values]
        result = linearity_test(x, y, observed, sentences, con)
        session.note(
            "linearity_test", test=i, **result.model_dump(), rate=result.rate,
            expected={"x": list(complement(x)), "y": list(complement(y)), "x+y": list(complement(xor(x, y)))},
            observed_most_common={k: _most_common(v) for k, v in observed.items()},
        )  # fmt: skip
        return result

    def conclude(
        self,
        session: Session,
        con_o: int,
        names: list[str],
        syns: list[str],
        present: list[Entity],
        results: list[LinearityResult],
    ) -> Verdict:
        n = len(results)
        a_test = sum(r.passed for r in results)
        combos = sum(r.combinations for r in results)
        a_rate = sum(r.passing for r in results) / combos if combos else 0.0
        con_rs = min(c for r in results for c in r.con_r.values())
        accepted = a_test == n
        promises = guarantees(n, self.params.epsilons)
        evidence = [f"entities tested: {', '.join(f'{e} -> {s}' for e, s in zip(names, syns, strict=True))}"]
        evidence += [
            f"test {i + 1}: x={r.x} y={r.y} {'passed' if r.passed else 'failed'} ({r.passing}/{r.combinations})"
            for i, r in enumerate(results)
        ]
        if accepted:
            evidence += [g.text() for g in promises]
        else:  # Theorem 3.1: a homomorphism passes every test, so one failure shows f is not one
            evidence.append(f"{n - a_test} of {n} tests failed: the extraction is not linear on this sentence "
                            "(Theorem 3.1: a homomorphism passes every test)")  # fmt: skip
            evidence += [f"had all passed: {g.text()}" for g in promises]
        stats = {
            "entities": [e.model_dump() for e in present],
            "tested": names,
            "synonyms": syns,
            "con_o": con_o,
            "con_rs": con_rs,
            "a_test": a_test,
            "a_rate": a_rate,
            "n_entities": len(names),
            "tests": n,
            "guarantees": [g.model_dump() for g in promises],
        }
        guarantee = acceptance_guarantee(n, a_test, self.params.epsilons)
        return session.verdict("accepted" if accepted else "rejected", accepted=accepted, evidence=evidence,
                               statistics=stats, guarantee=guarantee)  # fmt: skip


def _most_common(values: list[Any]) -> list[int | None] | None:
    readable = [v for v in values if v is not None]
    if not readable:
        return None
    best = max(set(readable), key=readable.count)
    return list(best)
