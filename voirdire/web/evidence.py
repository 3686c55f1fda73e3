"""Evidence you can click: which turn of a chat each line of a verdict's evidence names.

The protocols write their evidence as text (``voirdire.transcript.Verdict.evidence``), so a line is tied to a turn
by what it quotes: LMvLM's evidence is the examiner's deciding answer, word for word (§2: the conclusion of each
examination); DCR's lines name a sentence and the checker's reason (``-1 SENTENCE: REASON``, ``lost (...):
SENTENCE``, ...), the reason quoted from the checker's reply; the oracle–checker's ``test N: x=... y=...`` is the
checker's N-th draw. A line is linked to the last shown turn that holds the whole line, else its longest quoted
part (a reason, a sentence); a line that quotes nothing shown stays plain text. The link carries a text fragment
(``#m12:~:text=...``), so a browser that supports them also highlights the words themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

from voirdire.chat import Bubble, Chat

MIN_QUOTE = 8  # characters a quoted part needs to name a turn (shorter ones match by chance)
_PREFIX = re.compile(
    r"^(?:[+-]1 |(?:lost|removed) \([^)]*\): |not evaluated, counted -1: |not in the candidate, not scored: "
    r"|repeated, not scored: )"
)
_TEST = re.compile(r"^test (\d+): x=")


@dataclass(frozen=True)
class Target:
    """The turn an evidence line names (its element id on the page, without the page's prefix) and the words."""

    anchor: str
    words: str

    def fragment(self) -> str:
        """``m12:~:text=...``: the turn, and the words for a browser that highlights text fragments."""
        text = " ".join(self.words.split())[:300]
        return f"{self.anchor}:~:text={quote(text, safe='')}" if text else self.anchor


def _shown(chat: Chat) -> list[Bubble]:
    """The bubbles a session page shows without its prompts (prompt bubbles are hidden by default)."""
    return [t for t in chat.turns if isinstance(t, Bubble) and t.kind != "prompt"]


def quotes(line: str) -> list[str]:
    """What an evidence line may quote, most specific first: the whole line, then its parts longest first."""
    body = _PREFIX.sub("", line.strip())
    parts = [p.strip(" '\"") for p in body.split(": ")]
    found = [line.strip(), body, *sorted(parts, key=len, reverse=True)]
    return [q for q in dict.fromkeys(found) if len(q) >= MIN_QUOTE]


def evidence_targets(chat: Chat) -> list[Target | None]:
    """For each line of the chat's verdict evidence, the turn it names (or None)."""
    verdict = chat.verdict
    if verdict is None:
        return []
    bubbles = _shown(chat)
    out: list[Target | None] = []
    for line in verdict.evidence:
        out.append(_target(str(line), bubbles))
    return out


def _target(line: str, bubbles: list[Bubble]) -> Target | None:
    test = _TEST.match(line)
    if test is not None:  # the oracle-checker's N-th test: the checker's N-th draw of x, y
        draws = [b for b in bubbles if b.sender == "checker"]
        n = int(test[1])
        return Target(f"m{draws[n - 1].seq}", "") if 0 < n <= len(draws) else None
    body = _PREFIX.sub("", line.strip())
    found = quotes(line)
    whole = [q for q in found if q in (line.strip(), body)]
    parts = [q for q in found if q not in whole]
    if len(parts) > 1:  # a turn that holds the sentence and the reason together names the line best
        whole.append("\n".join(parts))
    for words in [*whole, *parts]:
        for b in reversed(bubbles):
            if all(_holds(b, w) for w in words.split("\n")):
                first = words.split("\n")[0]
                return Target(f"m{b.seq}", first if first in b.text else "")
    return None


def _holds(b: Bubble, words: str) -> bool:
    folded = words.casefold()
    return folded in b.text.casefold() or folded in b.content.casefold()
