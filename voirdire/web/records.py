"""What the transcript index (``voirdire.web.index``) reads of a transcript's lines: the fields it needs from one
line (``record``), an item's title, the searchable text of a record (``strings``, and ``turn_text`` for the
search across runs), a line's JSON or None."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

try:  # a faster JSON parser when installed
    from orjson import loads as _json_loads
except ImportError:  # pragma: no cover
    _json_loads = json.loads

_UNSEARCHED = frozenset({"run_id", "session_id", "time", "kind", "request_digest", "seq"})

HIT, END = "\x02", "\x03"  # the search's snippet markers: control characters, never kept in indexed text


def record(raw: bytes) -> dict[str, Any]:
    """One line's JSON object (a ``TypeError`` for JSON that is no object, a ``ValueError`` for no JSON)."""
    value = _json_loads(raw)
    if not isinstance(value, dict):
        raise TypeError("not a JSON object")
    return value


def turn_text(rec: dict[str, Any]) -> tuple[str, str] | None:
    """The role and searchable text of one record for the search across runs: the item (role ``item``), a
    message (its sender), the verdict (role ``verdict``: the decision and its evidence); None for other records."""
    kind = rec.get("kind")
    if kind == "session_start":
        role, text = "item", "\n".join(strings(rec.get("item") or {}))
    elif kind == "message" and isinstance(rec.get("content"), str):
        role, text = str(rec.get("sender") or ""), rec["content"]
    elif kind == "verdict":
        evidence = rec.get("evidence") or []
        role, text = "verdict", "\n".join([str(rec.get("decision")), *(e for e in evidence if isinstance(e, str))])
    else:
        return None
    return role, text.replace(HIT, " ").replace(END, " ")


def title(item: dict[str, Any], fields_hint: Iterable[str]) -> str:
    """An item's title: its first non-empty text field (those the display hints name first), cut to 160."""
    for key in [*fields_hint, *item]:
        value = item.get(key)
        if key != "id" and isinstance(value, str) and value.strip():
            text = " ".join(value.split())
            return text[:157] + "…" if len(text) > 160 else text
    return ""


def strings(value: Any, key: str = "") -> Iterator[str]:
    """The searchable text of a record: every string value, keys and bookkeeping fields left out."""
    if key in _UNSEARCHED:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def loads(raw: bytes) -> Any:
    """A line's JSON; None when it is not JSON."""
    try:
        return json.loads(raw)
    except ValueError:
        return None
