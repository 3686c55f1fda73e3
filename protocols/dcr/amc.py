"""Auto-Metric Converter (AMC, §3.2): the reasons of DCE become a number, computed in code and never read from the
model's words.

Eq. 2: the AMC agent classifies each reason γ_i as positive (+1, the sentence is consistent) or negative (−1) with
the prompt of Table 9, giving the score array {z_1, …, z_k}.

Eq. 3: Z = (Σ z_i + α) / (k + β), Ẑ = (Z + 1) / 2 ∈ [0, 1], with k the length of the score array.

App. A.4: α and β remove the reasons that are not about one sentence (a paragraph-level "The two paragraphs are
not consistent."): α = −Σ z_j and β = −(number of such reasons) over those reasons j, so the score is computed from
sentence-level reasons alone. §4.1 sets α = β = 0 in the paper's experiments, the default here; the A.4 heuristic
is ``alpha_beta="sentence-level"``.

k is "the number of sentences in the candidate paragraph" (§3.2). A sentence that no reason is about has no mark of
its own; it still counts in k, with z = −1 (it was not shown consistent): Z = (Σ z_i + α − u) / (k + β + u) over the
k marked reasons and the u sentences not evaluated. Counting it −1 never raises the score and keeps Ẑ below 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints, create_model

Mark = Literal[-1, 1]
AMC_REASON_CHARS = 200  # a bound on each AMC thought, so a grammar closes the JSON within the reply budget
Thought = Annotated[str, StringConstraints(max_length=AMC_REASON_CHARS)]


class UndefinedScore(ValueError):
    """Eq. 3 has no value: no sentence-level reason is left (k + β = 0)."""


def alpha_beta(z: Sequence[int], sentence_level: Sequence[bool]) -> tuple[int, int]:
    """App. A.4: α cancels the marks of the reasons that are not about one sentence, β removes them from k."""
    if len(z) != len(sentence_level):
        raise ValueError(f"{len(z)} marks for {len(sentence_level)} reasons")
    excluded = [mark for mark, one in zip(z, sentence_level, strict=True) if not one]
    return -sum(excluded), -len(excluded)


def raw_score(z: Sequence[int], alpha: float = 0, beta: float = 0, not_evaluated: int = 0) -> float:
    """Eq. 3, Z = (Σ z_i + α) / (k + β) ∈ [−1, 1], with each of the ``not_evaluated`` sentences a further z = −1."""
    if any(mark not in (-1, 1) for mark in z):
        raise ValueError(f"AMC marks are -1 or +1, got {list(z)}")
    if not_evaluated < 0:
        raise ValueError(f"not_evaluated is a count of sentences, got {not_evaluated}")
    k = len(z)
    if k + beta <= 0:
        raise UndefinedScore(f"k + beta = {k} + {beta}: no sentence-level reason to score")
    return (sum(z) + alpha - not_evaluated) / (k + beta + not_evaluated)


def consistency_score(z: Sequence[int], alpha: float = 0, beta: float = 0, not_evaluated: int = 0) -> float:
    """Eq. 3 rescaled, Ẑ = (Z + 1) / 2: 1 is completely consistent, 0 completely inconsistent."""
    return (raw_score(z, alpha, beta, not_evaluated) + 1) / 2


class AMCReply(BaseModel):
    """Table 9's answer: a thought per paragraph (reason) and the marks, one per paragraph."""

    reason: list[Thought] = Field(description="one thought per given paragraph")
    answer: list[Mark] = Field(description="+1 positive, -1 negative, one per given paragraph")


def amc_schema(k: int | None) -> type[AMCReply]:
    """The AMC reply schema for ``k`` reasons: exactly k marks (Eq. 2 gives one z_i per γ_i), so a backend that
    enforces the schema cannot return a shorter array; ``None`` leaves the length open (the authors' code reads
    whatever array comes back)."""
    bounds = {"min_length": k, "max_length": k} if k is not None else {"min_length": 1}
    return create_model(
        f"AMCReply{k or ''}",
        __base__=AMCReply,
        reason=(list[Thought], Field(description="one thought per given paragraph", max_length=k)),
        answer=(list[Mark], Field(description="+1 positive, -1 negative, one per given paragraph", **bounds)),
    )


def as_paragraphs(reasons: Sequence[str]) -> str:
    """The reasons as Table 9 lists its example paragraphs: one ``*"…",`` per line, the last without a comma."""
    lines = [f'*"{r.strip()}"' for r in reasons]
    return ",\n".join(lines)
