"""Credential masking for every string voirdire writes or prints.

``mask_secrets`` is the one masking function. Transcripts (every event, through the runner's writer), the reply
cache, ``--json`` output, ``--report`` files, reproductions (``NAME.json`` and what ``reproduce`` prints),
warnings, errors and the recorded command line all pass through it.
It hides:

- known secret values: the value of ``OPENAI_API_KEY``, of every ``api_key_env`` variable a run uses (registered
  with ``register_secret`` when the key is read), and of every environment variable whose name says it holds a
  credential (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, ...); each also percent-encoded (any of
  its bytes, in either case), in hex (either case) and in base64, including base64 of a longer text that contains
  it (``user:KEY`` as HTTP Basic auth sends it; hex is byte-aligned, so a longer text's hex holds the secret's own);
- URL credentials: the ``user:password@`` part, and query parameters named like credentials (``?api_key=...``);
- ``name=value`` pairs whose name is a credential (``token=...``, ``api-key=...``), and ``Bearer``/``Basic``
  authorization values.

``redact_url`` is stricter, for URLs that name an endpoint (model labels): it drops the whole query string.
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

MASK = "***"
MIN_SECRET_LENGTH = 8
"""Shorter values are never treated as secrets: masking them would garble ordinary text."""

_URL = re.compile(r"https?://[^\s'\"<>`]+")
_CREDENTIAL_NAME = r"(?:[\w-]*[_-])?(?:api[_-]?key|key|token|auth|password|passwd|secret)"
_PAIRS = re.compile(rf"\b({_CREDENTIAL_NAME}=)[^&\s]+", re.IGNORECASE)
# The gap may also be a JSON-escaped line break or tab (backslash n, r, t): the writer first looks for something
# to mask in the record's JSON line, where a real line break is those two characters.
_AUTH_HEADER = re.compile(r"\b(Bearer|Basic)((?:\s|\\[nrt])+)(?=[A-Za-z0-9+/=._~-]*[0-9+/=])[A-Za-z0-9+/=._~-]{12,}")
_CREDENTIAL_PARAM = re.compile(rf"^{_CREDENTIAL_NAME}$|^(?:sig|signature|code|access_token)$", re.IGNORECASE)
_CREDENTIAL_ENV = re.compile(r"(?:API_?KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.IGNORECASE)

_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Mask ``value`` (an API key read from an ``api_key_env`` variable, say) in everything written from now on."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        _registered.add(value)


_from_env: tuple[dict[Any, Any] | None, frozenset[str]] = (None, frozenset())


def _environment_secrets() -> frozenset[str]:
    """The values of credential-named environment variables, recomputed only when the environment changed: every
    transcript record is masked, and decoding the whole environment for each one cost more than the record. The
    check compares the encoded mapping with a copy of it (its values are the same objects until one is set)."""
    global _from_env
    raw = getattr(os.environ, "_data", None)  # the encoded mapping behind os.environ (POSIX and Windows)
    current: dict[Any, Any] = raw if isinstance(raw, dict) else dict(os.environ)
    if _from_env[0] != current:
        found = frozenset(
            value
            for name, value in os.environ.items()
            if value and len(value) >= MIN_SECRET_LENGTH and (name == "OPENAI_API_KEY" or _CREDENTIAL_ENV.search(name))
        )
        _from_env = (dict(current), found)
    return _from_env[1]


def secret_values() -> frozenset[str]:
    """Every value masked right now: the registered ones and those of credential-named environment variables."""
    env = _environment_secrets()
    return env | _registered if _registered else env


def encoded_forms(secret: str) -> set[str]:
    """The secret as written, percent-encoded, in hex (lower and upper case), and in base64 (standard and
    URL-safe), also when it sits inside a longer base64 text: for each of the three byte alignments, the run of
    base64 characters that depends on the secret's bytes alone."""
    raw = secret.encode()
    forms = {secret, quote(secret, safe=""), raw.hex(), raw.hex().upper()}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        forms.add(encode(raw).decode())
        for offset in range(3):
            encoded = encode(b"\0" * offset + raw).decode().rstrip("=")
            start = -(-8 * offset // 6)  # the first character made of the secret's bits only
            end = 8 * (offset + len(raw)) // 6  # past the last one
            core = encoded[start:end]
            if len(core) >= MIN_SECRET_LENGTH:
                forms.add(core)
    return forms


def percent_encoded(secret: str) -> str:
    """A pattern for the secret with any of its bytes percent-encoded, in either case (``%76%64...``, ``v%64-...``):
    a URL or form encoder may encode every byte, or only some, and no list of strings holds every mixture."""
    parts = []
    for char in secret:
        escaped = "".join(f"%(?i:{byte:02x})" for byte in char.encode())
        parts.append(f"(?:{re.escape(char)}|{escaped})")
    return "".join(parts)


@dataclass(frozen=True)
class _Masker:
    """Every form of every secret known, as one compiled pattern, and the literal forms it can match without a
    ``%``: a text with no ``%`` and none of those forms as a substring has nothing for the pattern to match, and
    ``str.__contains__`` rules that out several times faster than the pattern's scan (most records hold no secret)."""

    forms: tuple[str, ...]
    pattern: re.Pattern[str]

    def sub(self, text: str) -> str:
        if "%" not in text and not any(form in text for form in self.forms):
            return text
        return self.pattern.sub(MASK, text)


@lru_cache(maxsize=32)
def _masker(values: frozenset[str]) -> _Masker | None:
    """One pattern for all the secrets: each one's encoded forms as literals (longest first) and its
    percent-encoded mixtures."""
    forms = {form for value in values for form in encoded_forms(value)}
    if not forms:
        return None
    literal = sorted(forms, key=len, reverse=True)
    mixtures = [percent_encoded(value) for value in sorted(values)]
    pattern = re.compile("|".join([re.escape(f) for f in literal] + mixtures))
    return _Masker(tuple(literal), pattern)


def _clean_url_match(match: re.Match[str]) -> str:
    return _clean_url(match.group(0))


@lru_cache(maxsize=1024)  # a record's URLs are mostly the run's few model URLs
def _clean_url(url: str) -> str:
    """A URL without its user, password and credential-named query parameters; everything else is kept."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc.rpartition("@")[2]
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            kept = [(k, v) for k, v in pairs if not _CREDENTIAL_PARAM.match(k)]
            if len(kept) != len(pairs):
                query = urlencode(kept)
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:  # not a URL urllib can split: keep the scheme only
        return url.split("://", 1)[0] + f"://{MASK}"


def mask_secrets(text: str) -> str:
    """``text`` with every credential this process knows of, or can recognise, replaced by ``***``.

    Each rule runs only where the text holds what its pattern cannot match without (``://`` for a URL, ``=`` for a
    ``name=value`` pair, the word ``Bearer`` or ``Basic``): the same result as running every pattern, without
    scanning every record four times. A one-character test goes first where it rules the longer one out (``/``,
    ``B``): a search for one character is a ``memchr``, a search for ``://`` in a JSON line, full of ``:``, is
    ten times slower."""
    if not text:
        return text
    masker = _masker(secret_values())
    if masker is not None:
        text = masker.sub(text)
    if "/" in text and "://" in text:
        text = _URL.sub(_clean_url_match, text)
    if "=" in text:
        text = _PAIRS.sub(lambda m: m.group(1) + MASK, text)
    if "B" in text and ("Bearer" in text or "Basic" in text):
        text = _AUTH_HEADER.sub(lambda m: m.group(1) + m.group(2) + MASK, text)
    return text


def mask_tree(value: Any) -> Any:
    """``mask_secrets`` applied to every string (keys included) of a JSON-like value."""
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, dict):
        return {mask_tree(k): mask_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_tree(v) for v in value]
    return value


def redact_url(url: str) -> str:
    """Drop credentials and query strings from a URL before it is written anywhere."""
    if not url:
        return url
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    try:
        if parts.port:
            netloc += f":{parts.port}"
    except ValueError:  # a malformed port: keep the host only
        pass
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
