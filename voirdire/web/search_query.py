"""The search box's language: words, "quoted phrases" and ``field:value`` filters, read into a ``SearchQuery``.

A turn matches when it holds every word and every phrase (case-insensitive, whole words, as SQLite FTS5's
``unicode61`` tokenizer splits text: letters and digits make words, anything else separates them). The filters
narrow the sessions: ``role:`` the turn's speaker (``item`` for the item itself, ``verdict`` for the verdict),
``verdict:`` the session's decision, ``protocol:`` the run's protocol, ``label:`` people's labels of the session's
item (``agree``, ``disagree``, ``unsure``, ``any``, ``none``; read from the labels sidecar beside the transcript).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from voirdire.web.errors import ViewerError

FIELDS = ("role", "verdict", "protocol", "label")
LABELS = ("agree", "disagree", "unsure", "any", "none")
MAX_QUERY = 500  # characters of a query read
_WORD = re.compile(r"[^\W_]+")  # what unicode61 keeps as a token: letters and digits
_PART = re.compile(r'"([^"]*)"?|(\S+)')


class QueryError(ViewerError):
    """A query the search cannot read; the message says what is wrong."""


def tokens(text: str) -> list[str]:
    """The words of ``text`` as the index keeps them (lower case)."""
    return [t.lower() for t in _WORD.findall(text)]


@dataclass
class SearchQuery:
    """A parsed query: ``phrases`` (each a list of words; a single word is a phrase of one) and the filters."""

    text: str = ""
    phrases: list[list[str]] = field(default_factory=list)
    role: str | None = None
    verdict: str | None = None
    protocol: str | None = None
    label: str | None = None

    @property
    def empty(self) -> bool:
        return not self.phrases and not any((self.role, self.verdict, self.protocol, self.label))

    def fts(self) -> str:
        """The FTS5 MATCH expression: every phrase, each quoted (no word can be read as an FTS operator)."""
        return " AND ".join('"' + " ".join(p) + '"' for p in self.phrases)

    def words(self) -> set[str]:
        return {w for p in self.phrases for w in p}


def parse(text: str) -> SearchQuery:
    """``text`` as a query; a filter with an unknown name or value is a ``QueryError`` naming it."""
    text = text[:MAX_QUERY]
    q = SearchQuery(text=text)
    for m in _PART.finditer(text):
        quoted, bare = m[1], m[2]
        if bare is not None and ":" in bare and bare.split(":", 1)[0].lower() in FIELDS:
            name, value = bare.split(":", 1)
            _filter(q, name.lower(), value)
            continue
        words = tokens(quoted if quoted is not None else bare)
        if words:
            q.phrases.append(words)
    return q


def _filter(q: SearchQuery, name: str, value: str) -> None:
    value = value.strip().strip('"')
    if not value:
        raise QueryError(f"{name}: needs a value ({name}:WORD)")
    if getattr(q, name) is not None:
        raise QueryError(f"{name}: given twice")
    if name == "label" and value.lower() not in LABELS:
        raise QueryError(f"label:{value}: one of {', '.join(LABELS)}")
    setattr(q, name, value.lower())  # every filter compares without case
