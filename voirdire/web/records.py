"""What the transcript index (``voirdire.web.index``) reads of a transcript's lines: the fields it needs from one
line (``record``), an item's title, the searchable text of a record, a line's JSON or None."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

try:  # a faster JSON parser when installed
    from orjson import loads as _json_loads
except ImportError:  # pragma: no cover
    _json_loads = json.loads

_UNSEARCHED = frozenset({"run_id", "session_id", "time", "kind", "request_digest", "seq"})

# The two most frequent records, messages and model calls, are read with patterns over the fixed field order the
# transcript writer uses (a string value cannot hold an unescaped quote, so the keys cannot be faked inside one);
# anything else, or a line the patterns do not fit, is parsed as JSON.
_STR = rb'"((?:[^"\\]|\\.)*)"'
_PREFIX = re.compile(
    rb'\{"run_id":' + _STR + rb',"session_id":' + _STR + rb',"seq":-?\d+,"time":"([^"\\]*)",'
    rb'"stage":(?:null|"(?:[^"\\]|\\.)*"),"turn":(?:null|-?\d+),"kind":"(message|model_call)"'
)
_CALL = re.compile(rb',"role":"(?:[^"\\]|\\.)*","model":' + _STR)
_USAGE_KEY = b'"usage":{"prompt_tokens":'
_USAGE = re.compile(
    rb'"usage":\{"prompt_tokens":(\d+),"completion_tokens":(\d+)\},"latency_s":([-+.eE0-9]+),"retries":(\d+),'
)
_REQUESTS = re.compile(rb'"requests":(\d+)')


def _text(raw: bytes) -> str:
    return str(json.loads(b'"' + raw + b'"')) if b"\\" in raw else raw.decode()


def record(raw: bytes) -> dict[str, Any]:
    """The fields the index needs from one line."""
    m = _PREFIX.match(raw)
    if m is not None:
        rec: dict[str, Any] = {
            "run_id": _text(m[1]),
            "session_id": _text(m[2]),
            "time": m[3].decode(),
            "kind": m[4].decode(),
        }
        if rec["kind"] == "message":
            return rec
        call = _CALL.match(raw, m.end())
        usage = _USAGE.match(raw, max(0, raw.rfind(_USAGE_KEY)))
        if call is not None and usage is not None:
            rec["model"] = _text(call[1])
            rec["usage"] = {"prompt_tokens": int(usage[1]), "completion_tokens": int(usage[2])}
            rec["latency_s"] = float(usage[3])
            rec["retries"] = int(usage[4])
            # The fields after usage are short and fixed (a quote inside a string value is escaped, so these keys
            # cannot be faked by a finish reason).
            tail = raw[usage.end() :]
            rec["cached"] = b'"cached":true' in tail
            rec["coalesced"] = b'"coalesced":true' in tail
            requests = _REQUESTS.search(tail)
            rec["requests"] = int(requests[1]) if requests else 1
            return rec
    value = _json_loads(raw)
    if not isinstance(value, dict):
        raise TypeError("not a JSON object")
    return value


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
