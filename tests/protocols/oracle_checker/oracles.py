"""Scripted oracles for the oracle–checker tests: entity extractors that are linear or not (§3), answering the
Prompts 1-4 of App. A.1."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from autogen_core.models import CreateResult, LLMMessage, RequestUsage

from voirdire.models.base import TextOnlyClient, text_of

SENTENCE = "Barack Obama visited Paris with the dog last week."
ENTITIES = [("person", "Barack Obama"), ("location", "Paris"), ("animal", "dog")]
SYNONYMS = {"Barack Obama": ["John Smith", "Jane Doe"], "Paris": ["Berlin", "Rome"], "dog": ["hound", "canine"]}
VOCAB: list[tuple[str, str]] = ENTITIES + [(c, SYNONYMS[e][0]) for c, e in ENTITIES]


class FunctionClient(TextOnlyClient):
    """A model that answers ``reply(user)``; every request's user text is kept in ``calls``."""

    def __init__(self, reply: Callable[[str], str]) -> None:
        super().__init__()
        self.reply = reply
        self.calls: list[str] = []

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        user = text_of(messages[-1])
        self.calls.append(user)
        usage = RequestUsage(prompt_tokens=0, completion_tokens=0)
        return CreateResult(finish_reason="stop", content=self.reply(user), usage=usage, cached=False)


def sentence_of(prompt: str) -> str:
    return re.search(r'following sentence: "(.*)"', prompt, re.S).group(1)  # type: ignore[union-attr]


def listing(found: list[tuple[str, str]]) -> str:
    return "\n".join(f"{i}. {c}: {e}" for i, (c, e) in enumerate(found, 1))


def found_in(s: str) -> list[tuple[str, str]]:
    return [(c, e) for c, e in VOCAB if e in s]


def linear(s: str) -> list[tuple[str, str]]:
    """Extracts every entity (original or synonym) the sentence holds: a homomorphism (§3.1)."""
    return found_in(s)


def dropping(s: str) -> list[tuple[str, str]]:
    """Drops one other entity whenever an entity is replaced: e_{r+1} (in either form) for the first replaced e_r."""
    found = found_in(s)
    originals = [e for _, e in ENTITIES]
    replaced = [i for i, e in enumerate(originals) if SYNONYMS[e][0] in s]
    if not replaced:
        return found
    drop = {originals[(replaced[0] + 1) % 3], SYNONYMS[originals[(replaced[0] + 1) % 3]][0]}
    return [(c, e) for c, e in found if e not in drop]


def dropping_when_both_named_replaced(s: str) -> list[tuple[str, str]]:
    """Drops the dog (in either form) only when both named entities are replaced: ε = 1/4 from linear."""
    found = found_in(s)
    if SYNONYMS["Barack Obama"][0] in s and SYNONYMS["Paris"][0] in s:
        return [(c, e) for c, e in found if e not in ("dog", SYNONYMS["dog"][0])]
    return found


def oracle(extractor: Callable[[str], list[tuple[str, str]]]) -> FunctionClient:
    def reply(user: str) -> str:
        if user.startswith("Please perform entity recognition"):
            return listing(extractor(sentence_of(user)))
        if user.startswith("Is the entity"):
            return "It names a specific thing. [[named entity]]"
        m = re.search(r'(?:could replace|synonyms for) "([^"]+)"', user)
        if m:
            return "\n".join(f"{i}. {c}" for i, c in enumerate(SYNONYMS[m.group(1)], 1))
        raise AssertionError(f"unexpected prompt: {user[:80]}")

    return FunctionClient(reply)
