"""The ground floor: errors a user can cause, secrets kept out of every output, bounds on what is read from
outside, a user's files read with one-line errors, text made safe to show, and files written whole or not at all.

Nothing here knows a model, a transcript or a protocol; every other package may import it.
"""

from __future__ import annotations

from voirdire.base.appends import append_all, cut_torn_tail
from voirdire.base.bounds import (
    MAX_CONCURRENCY,
    MAX_REPEATS,
    MAX_TIMEOUT_S,
    MAX_TOKENS,
    MAX_WORKERS,
    count_problem,
    seconds_problem,
)
from voirdire.base.columns import Column
from voirdire.base.display import HtmlDisplay, set_html_renderer
from voirdire.base.errors import CannotWrite, EndpointDown, SessionTimeout, VoirdireError, cannot_write, run_stopping
from voirdire.base.faces import lazy_face
from voirdire.base.files import parse_toml, read_text, user_cache
from voirdire.base.ids import IdList, SeenIds
from voirdire.base.limits import (
    MAX_JSON_DEPTH,
    MAX_REPLY_CHARS_ENV,
    TOKEN_COUNT_MAX,
    cut_reply,
    max_reply_chars,
    shortened,
    token_count,
    too_deep,
)
from voirdire.base.secrets import mask_secrets, mask_tree, redact_url, register_secret
from voirdire.base.text import shown
from voirdire.base.writes import write_atomic

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_JSON_DEPTH",
    "MAX_REPEATS",
    "MAX_REPLY_CHARS_ENV",
    "MAX_TIMEOUT_S",
    "MAX_TOKENS",
    "MAX_WORKERS",
    "TOKEN_COUNT_MAX",
    "CannotWrite",
    "Column",
    "EndpointDown",
    "HtmlDisplay",
    "IdList",
    "SeenIds",
    "SessionTimeout",
    "VoirdireError",
    "append_all",
    "cannot_write",
    "count_problem",
    "cut_reply",
    "cut_torn_tail",
    "lazy_face",
    "mask_secrets",
    "mask_tree",
    "max_reply_chars",
    "parse_toml",
    "read_text",
    "redact_url",
    "register_secret",
    "run_stopping",
    "seconds_problem",
    "set_html_renderer",
    "shortened",
    "shown",
    "token_count",
    "too_deep",
    "user_cache",
    "write_atomic",
]
