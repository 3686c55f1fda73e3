"""The conclusion a reply ends on: what supersedes what came before it, for every reader.

A reply's answer is its final stated conclusion. Before a reader reads the words, the reply is cut to that
conclusion:

- **Reasoning blocks.** ``<think>``, ``<thinking>``, ``<reasoning>``, ``<reflection>`` and ``<scratchpad>`` blocks
  are left out when anything follows them; a reply that is only a closed block is read as it is. A block that is
  never closed is a reply cut off inside its reasoning, before its answer: it is refused.
- **Answer tags.** The last ``<answer>``, ``<verdict>``, ``<decision>`` or ``<final_answer>`` element is the
  answer (an unclosed last one runs to the end of the reply).
- **Markers, the last one first.** The text after an explicit final marker ("Final:", "Final answer:", "Verdict:",
  "Conclusion:", "In conclusion"), after a self-correction at the start of a sentence ("Actually", "Wait", "On
  second thought", "On reflection", "Correction:", "Scratch that", "I take that back", "I was wrong", "No, that is
  wrong", "Let me reconsider"), or a closing line in bold (``**Incorrect**``) supersedes what came before it. The
  markers are tried from the last one back (the last four), and the first whose text reads gives the answer. The
  text after a final marker that does not read is a refusal, as is the text after a correction that withdraws the answer
  ("Wait, let me check the dates again.") and gives none; after "Actually" or a bold line that says nothing
  readable, the earlier text is read.
- **A reply cut off before its conclusion.** A reply whose last sentence is unfinished, opens a conclusion
  ("Therefore, the claim", "So the answer is") or breaks off where the verdict goes ("... the claim is"), and
  gives no answer itself, is refused: whatever came before it is not what the reply concluded.

Each step scans the reply once with regular expressions free of nested quantifiers: linear in its length.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from typing import TypeVar

from voirdire.replies.schema import ParseError, unwrapped

T = TypeVar("T")

# "Final answer:", "**Final verdict**:", "Final decision is:", "Final:", "Verdict:", "Conclusion:", "In conclusion,"
_FINAL = re.compile(
    r"\bfinal[ \t*_]+(?:answer|verdict|decision|label|conclusion|judg(?:e)?ment|assessment|response)[ \t*_]*"
    r"(?:is[ \t*_]*)?[:=\-—][ \t*_]*"
    r"|\b(?:final|verdict|conclusion)[ \t*_]*[:=][ \t*_]*"
    r"|\bin[ \t]+conclusion\b[ \t*_]*[,:]?[ \t*_]*",
    re.IGNORECASE,
)
# A self-correction opens a sentence (or follows a dash, a colon or an interjection such as "Hmm,"); all but
# "actually" may also follow a comma ("Yes, wait, no."). The named group says which marker it is.
_WITHDRAWING = (
    r"wait|hold[ \t]+on|on[ \t]+second[ \t]+thoughts?|correction[ \t]*:|scratch[ \t]+that"
    r"|i[ \t]+take[ \t]+(?:that|it)[ \t]+back|i[ \t]+was[ \t]+wrong|i[ \t]+made[ \t]+a[ \t]+mistake"
    r"|let[ \t]+me[ \t]+(?:reconsider|re-?check|double-check|check|correct|rethink)"
    r"|no,?[ \t]+that(?:[ \t]+is|'s|’s)[ \t]+(?:wrong|not[ \t]+right)|rethinking"
)
# Corrections that may only stress what follows: when the text after them says nothing readable, the earlier
# text is read.
_RECONSIDERING = r"actually|on[ \t]+(?:further[ \t]+)?reflection|upon[ \t]+reflection|looking[ \t]+again"
_CORRECTION = re.compile(
    r"(?:^|(?P<sep>[.!?;:\n(—–,}]|[ \t]-[ \t]))[ \t*_\"']*(?:(?:hmm+|oh|um+|well|ah|no|ok|okay)[ \t]*[,.!]?[ \t]*)?"
    r"(?:(?P<soft>" + _RECONSIDERING + r")|(?P<hard>" + _WITHDRAWING + r"))(?![a-z])",
    re.IGNORECASE,
)
_AFTER_MARKER = frozenset(" \t,:;.!—–-")
_OBJECT = re.compile(r"\{[^{}]*\}")  # a JSON object's strings hold no markers ("explanation": "Wait, ...")
_BOLD_LAST = re.compile(r"(?:^|\n)[ \t]*(\*\*|__)([^\n*_]{1,120})\1[ \t]*[.!]?[ \t]*$")


def _markers(text: str) -> list[tuple[int, str, str]]:
    """(where the superseding text starts, its kind, the marker) for every marker, in the reply's order; none
    inside a JSON object."""
    objects = [m.span() for m in _OBJECT.finditer(text)]  # in order, never overlapping
    starts = [a for a, _ in objects]

    def outside(at: int) -> bool:
        k = bisect_right(starts, at) - 1
        return k < 0 or at >= objects[k][1]

    out: list[tuple[int, str, str]] = [
        (m.end(), "final", m.group(0).strip()) for m in _FINAL.finditer(text) if outside(m.start())
    ]
    for m in _CORRECTION.finditer(text):
        soft = m.group("soft")
        emphasis = soft is not None and soft.lower() == "actually" and m.group("sep") == ","
        if emphasis or not outside(m.start("soft" if soft is not None else "hard")):
            continue  # "The claim is, actually, correct": emphasis, not a correction
        end = m.end()  # the punctuation after a marker is left to the next one ("Actually, wait, ...")
        while end < len(text) and text[end] in _AFTER_MARKER:
            end += 1
        out.append((end, "soft" if soft is not None else "withdrawing", (soft or m.group("hard")).lower()))
    bold = _BOLD_LAST.search(text.rstrip())
    if bold is not None and len(bold.group(2).split()) <= 12 and outside(bold.start()):
        out.append((bold.start(2), "bold", bold.group(2)))
    return sorted(out)


_CUE = re.compile(
    r"\b(?:therefore|thus|hence|so|overall|in[ \t]+conclusion|to[ \t]+conclude|final|verdict|conclusion|"
    r"conclude|the[ \t]+answer[ \t]+is)\b",
    re.IGNORECASE,
)
_COPULAS = ("is", "are", "was", "were", "be", "seems", "seem", "appears", "appear", "looks")
_BREAK_WORDS = frozenset({*_COPULAS, "claim", "statement", "verdict", "answer", "conclusion", "decision", "label"})
_TERMINATED = tuple(".!?\"')]}*>|`”’»")


def _last_sentence(text: str) -> str | None:
    """The reply's last sentence when it is unfinished (no closing mark), else None."""
    stripped = text.rstrip()
    if not stripped or stripped.endswith(_TERMINATED):
        return None
    cut = max(stripped.rfind(c) for c in ".!?\n")
    return stripped[cut + 1 :].strip() or None


def cut_off(text: str, read: Callable[[str], object]) -> None:
    """``ParseError`` when the reply breaks off in a sentence that was to give its conclusion and gives none."""
    last = _last_sentence(text)
    if last is None:
        return
    words = re.findall(r"[a-z]+", last.lower())
    if not words or not (_CUE.search(last) or words[-1] in _BREAK_WORDS):
        return
    try:
        read(last)
    except ParseError:
        raise ParseError(f"the reply breaks off before its conclusion ({last[-60:]!r})") from None


_TRIES = 4  # markers tried from the last one back, before the whole reply: a bounded number of readings


def read_conclusion(text: str, read: Callable[[str], T]) -> T:
    """The answer ``read`` takes from the conclusion the reply ends on (see the module's docstring)."""
    text = unwrapped(text)
    for start, kind, marker in reversed(_markers(text)[-_TRIES:]):
        tail = text[start:].strip().strip("*_").strip()
        if kind == "bold":
            tail = marker
        try:
            if not tail:
                raise ParseError(f"nothing follows {marker!r}")
            return read(tail)
        except ParseError as exc:
            if kind == "final":
                raise ParseError(f"after {marker!r}: {exc}") from None
            if kind == "withdrawing":
                raise ParseError(f"the reply takes its answer back ({marker!r}) and gives no new one") from None
    cut_off(text, read)
    return read(text)
