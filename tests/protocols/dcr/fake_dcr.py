"""A lexical stand-in for DCR's three agents behind a fake OpenAI-compatible endpoint (tests, benchmarks).

It answers the prompts of Tables 7-10 in their JSON: a sentence is consistent when every word of it occurs in the
reference (DCE), a reason is negative when it says "not consistent" (AMC), and an inconsistent sentence is
replaced by the reference sentence that shares most words with it (RAI), so a candidate converges in one round.
"""

from __future__ import annotations

import json
import re
from typing import Any

from voirdire.protocols.dcr.sentences import split_sentences

_WORDS = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(_WORDS.findall(text.lower()))


def between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0].strip()


def dce(prompt: str) -> str:
    if "## True Answer ##" in prompt:
        reference = between(prompt, "## True Answer ##", "## Attempt Answer ##")
        candidate = between(prompt, "## Attempt Answer ##", "\nTask\n")
    else:
        reference = between(prompt, "## Article ##", "## Summary ##")
        candidate = between(prompt, "## Summary ##", "\nTask\n")
    known = words(reference)
    reasons = []
    for sentence in split_sentences(candidate):
        missing = sorted(words(sentence) - known)
        reason = (
            "This sentence is consistent with the article."
            if not missing
            else f"This sentence is not consistent with the article: it says {', '.join(missing[:5])}."
        )
        reasons.append({"sentence": sentence, "reason": reason})
    return json.dumps({"reason": reasons, "is_consistent": all("not" not in r["reason"] for r in reasons)})


def amc(prompt: str) -> str:
    given = prompt.rsplit("## Attempt Answer ##:", 1)[1]
    paragraphs = [line for line in given.splitlines() if line.startswith('*"')]
    marks = [-1 if "not consistent" in p else 1 for p in paragraphs]
    return json.dumps({"reason": [f"mark {m}" for m in marks], "answer": marks})


def rai(prompt: str) -> str:
    reference = between(prompt, "\nArticle\n", "\nSentences\n")
    given: list[dict[str, Any]] = json.loads(between(prompt, "\nSentences\n", "\nTask\n"))
    pool = [s for s in split_sentences(reference) if len(s) <= 300] or [reference[:300]]
    out = []
    for g in given:
        if "not consistent" in g["reason"]:
            best = max(pool, key=lambda s: len(words(s) & words(g["sentence"])))
            out.append({"sentence": g["sentence"], "improved_sentence": best, "reason": "replaced by the article's"})
        else:
            out.append({"sentence": g["sentence"], "improved_sentence": g["sentence"], "reason": "ALREADY CONSISTENT"})
    return json.dumps(out)


def respond(messages: list[dict[str, Any]]) -> str:
    """The reply to a chat-completions request, by the prompt it carries."""
    prompt = str(messages[-1]["content"])
    if "Here is the evaluation in JSON format" in prompt:
        return dce(prompt)
    if "list of paragraphs about" in prompt:
        return amc(prompt)
    if "You are a good writer" in prompt:
        return rai(prompt)
    return "I do not know this prompt."
