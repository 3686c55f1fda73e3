"""Reason-Assisted Improver (RAI, §3.3, Eq. 4): the improver rewrites the sentences DCE found inconsistent.

⟨ŝ_1, …, ŝ_k⟩ = L_RAI({γ_1, …, γ_k}, ⟨s_1, …, s_k⟩, R): a sentence that is inconsistent is rewritten (ŝ_i ≠ s_i),
any other is retained. Sentence level uses Table 10 (a list of {sentence, reason} objects in, a list of {sentence,
improved_sentence, reason} out); paragraph level Table 12 (the summary and its one reason in, ``improved_summary``
out). ``align`` holds the improver to Eq. 4's k sentences in, k sentences out, matched by content: a reply that
repeats one entry and leaves out another loses a sentence, and that is recorded, never a silent replacement.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field, RootModel, create_model

from .coverage import same_facts
from .dce import REASON_CHARS, SENTENCE_CHARS
from .sentences import normalize

SUMMARY_CHARS = 2000


class ImprovedSentence(BaseModel):
    """Table 10: one sentence, its improved form and how it was improved (or 'ALREADY CONSISTENT')."""

    sentence: str = Field(max_length=SENTENCE_CHARS, description="original sentence")
    improved_sentence: str = Field(max_length=SENTENCE_CHARS, description="improved sentence (empty: deleted)")
    reason: str = Field(max_length=REASON_CHARS, description="how it is improved, or 'ALREADY CONSISTENT'")


class ImprovedSentences(RootModel[list[ImprovedSentence]]):
    """Table 10's reply: a JSON array with one object per given sentence."""


def rai_schema(k: int) -> type[ImprovedSentences]:
    """At most ``k`` improved sentences (one per sentence given); fewer are read by ``align``."""
    return create_model(  # type: ignore[call-overload, no-any-return]
        f"ImprovedSentences{k}",
        __base__=ImprovedSentences,
        root=(list[ImprovedSentence], Field(min_length=1, max_length=k)),
    )


class ImprovedSummary(BaseModel):
    """Table 12's reply: the original summary, the improved summary, how it was improved."""

    sentence: str = Field(max_length=SUMMARY_CHARS, description="original summary")
    improved_summary: str = Field(min_length=1, max_length=SUMMARY_CHARS, description="improved summary")
    reason: str = Field(max_length=REASON_CHARS, description="how it is improved, or 'ALREADY CONSISTENT'")


def as_objects(pairs: Sequence[tuple[str, str]]) -> str:
    """Table 10's ``{sentences}``: "a list of objects, each have two fields: sentence and reason", as JSON, from
    (sentence, reason) pairs."""
    return json.dumps([{"sentence": s, "reason": r} for s, r in pairs], ensure_ascii=False, indent=1)


class Alignment(BaseModel):
    """The improver's entries matched to the sentences it was given, by content (each entry's ``sentence`` field
    against the originals), never by position.

    An original is *flagged* when AMC marked its reason −1 (the sentences Eq. 4 rewrites); the others were judged
    consistent and Eq. 4 retains them. An original that has no entry, whose entry is blank (white space only) or
    whose improved text repeats another sentence of the candidate is gone from the improved candidate: *removed*
    when it was flagged (deleting an inconsistent sentence can be a repair), *lost* when nobody flagged it."""

    sentences: list[str] = Field(description="each original's text in the improved candidate; '' when it is gone")
    removed: list[int] = Field(default_factory=list, description="flagged originals left out, blanked or repeated")
    lost: list[int] = Field(default_factory=list, description="unflagged originals left out, blanked or repeated")
    why: dict[int, str] = Field(default_factory=dict, description="how each removed or lost original went")
    duplicated: list[int] = Field(default_factory=list, description="entries repeating a taken original: dropped")
    unmatched: list[int] = Field(default_factory=list, description="entries matching no original: dropped")
    rewrote_consistent: list[int] = Field(default_factory=list, description="unflagged originals rewritten anyway")

    @property
    def complete(self) -> bool:
        """One entry per original, each for a different original."""
        return not self.duplicated and not self.unmatched and not any(
            self.why.get(i) == "left out" for i in self.removed + self.lost
        )


def _match(original_keys: Sequence[str], originals: Sequence[str], quote: str, paired: Sequence[bool]) -> int | None:
    """The first unpaired original that ``quote`` repeats: letter for letter (``normalize``), else with a slip
    that changes no fact (``coverage.same_facts``, the rule that locates DCE's quotes)."""
    key = normalize(quote)
    if not key:
        return None
    for i, k in enumerate(original_keys):
        if not paired[i] and k == key:
            return i
    for i, k in enumerate(original_keys):
        if not paired[i] and k and same_facts(quote, originals[i]):
            return i
    return None


def align(
    originals: Sequence[str],
    entries: Sequence[ImprovedSentence],
    flagged: Sequence[bool],
    kept: Sequence[str] = (),
) -> Alignment:
    """Eq. 4 maps s_i to ŝ_i: each entry goes to the original its ``sentence`` field repeats (``_match``); an
    entry that repeats an original another entry took is a duplicate, one that repeats none is unmatched; both are
    dropped. ``kept`` are the candidate's sentences not given to the improver: an improved sentence that repeats
    one of them, or another improved sentence, is a repeat and its original is gone."""
    keys = [normalize(s) for s in originals]
    improved: list[str | None] = [None] * len(originals)
    duplicated: list[int] = []
    unmatched: list[int] = []
    for j, entry in enumerate(entries):
        i = _match(keys, originals, entry.sentence, [s is not None for s in improved])
        if i is not None:
            improved[i] = entry.improved_sentence.strip()
        elif _match(keys, originals, entry.sentence, [False] * len(originals)) is not None:
            duplicated.append(j)
        else:
            unmatched.append(j)
    why: dict[int, str] = {}
    # each text of the improved candidate so far, with the originals it comes from: a sentence the candidate held
    # twice, rewritten the same way twice, repeats nothing but itself
    seen: dict[str, set[str]] = {}
    for s in kept:
        seen.setdefault(normalize(s), set()).add(normalize(s))
    seen.pop("", None)
    for i, text in enumerate(improved):
        new = normalize(text or "")
        if text is None:
            why[i] = "left out"
        elif not new:
            why[i] = "blanked"
        elif new != keys[i] and new in seen and seen[new] != {keys[i]}:
            why[i] = "replaced by a repeat of another sentence"
        if new:
            seen.setdefault(new, set()).add(keys[i])
    gone = sorted(why)
    return Alignment(
        sentences=["" if i in why else (improved[i] or "") for i in range(len(originals))],
        removed=[i for i in gone if flagged[i]],
        lost=[i for i in gone if not flagged[i]],
        why=why,
        duplicated=duplicated,
        unmatched=unmatched,
        rewrote_consistent=[
            i for i, t in enumerate(improved) if i not in why and not flagged[i] and normalize(t or "") != keys[i]
        ],
    )
