"""Scripted DCR agents: an evaluator, a converter and an improver that reply in the JSON of Tables 7-12."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from voirdire.models import Script, ScriptedChatCompletionClient, ScriptRule
from voirdire.protocols.dcr import DCR, DCRItem, DCRParams
from voirdire.runner import run_protocol
from voirdire.transcript import Transcript, load

ARTICLE = (
    "Usain Bolt will compete at the IAAF/BTC World Relays in the Bahamas next month . The six-time Olympic gold "
    "medallist will compete at the relay championship on May 2 and 3 as part of the Jamaican team . JAAA General "
    "Secretary Garth Gayle said Bolt always does his best to make the country proud ."
)
S1 = "Usain bolt will compete at the relay championship on may 2 and 3 ."
S2 = "Bolt is the iaaf/btc general secretary ."
S2_FIXED = "Garth Gayle is the JAAA general secretary ."
SUMMARY = f"{S1} {S2}"

def pairs_file(folder: Path) -> Path:
    """Two article/summary pairs (one consistent, one fixed) with human scores 0 and 1, as a JSONL ``--data`` file."""
    data = folder / "pairs.jsonl"
    summaries = [SUMMARY, f"{S1} {S2_FIXED}"]
    rows = [{"id": f"p{i}", "article": ARTICLE, "summary": summaries[i], "score": float(i)} for i in range(2)]
    data.write_text("\n".join(json.dumps(r) for r in rows))
    return data


DCE = r"Here is the evaluation in JSON format"
AMC = r"list of paragraphs about"
RAI = r"You are a good writer"


def dce(*pairs: tuple[str, str], consistent: bool | None = None) -> str:
    reasons = [{"sentence": s, "reason": r} for s, r in pairs]
    ok = all("is consistent" in r for _, r in pairs) if consistent is None else consistent
    return json.dumps({"reason": reasons, "is_consistent": ok})


def amc(*marks: int) -> str:
    return json.dumps({"reason": [f"mark {m}" for m in marks], "answer": list(marks)})


def rai(*pairs: tuple[str, str]) -> str:
    return json.dumps(
        [
            {"sentence": s, "improved_sentence": t, "reason": "ALREADY CONSISTENT" if s == t else "fixed"}
            for s, t in pairs
        ]
    )


GOOD = "This sentence is consistent with the article."
BAD = "This sentence is not consistent with the article: Gayle is the secretary."


def client(match: str, replies: list[str] | str, name: str) -> ScriptedChatCompletionClient:
    rule = (
        ScriptRule(match=match, reply=replies) if isinstance(replies, str) else ScriptRule(match=match, replies=replies)
    )
    return ScriptedChatCompletionClient(Script(rules=[rule]), name=name)


def agents(evaluator: list[str] | str, converter: list[str] | str, improver: list[str] | str = "[]") -> dict[str, Any]:
    return {
        "evaluator": client(DCE, evaluator, "evaluator"),
        "converter": client(AMC, converter, "converter"),
        "improver": client(RAI, improver, "improver"),
    }


def item(candidate: str = SUMMARY, **kw: Any) -> DCRItem:
    return DCRItem(id=kw.pop("id", "bolt"), reference=ARTICLE, candidate=candidate, **kw)


async def run(tmp_path: Path, clients: dict[str, Any], items: list[DCRItem] | None = None, **params: Any) -> Transcript:
    out = tmp_path / "dcr.jsonl"
    result = await run_protocol(DCR(DCRParams(**params)), items or [item()], out=out, clients=clients)
    assert not result.errors, result.errors
    return load(out)
