"""Credential masking for anything voirdire writes or prints: recorded commands, error messages, model labels."""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit, urlunsplit

_URL = re.compile(r"https?://[^\s'\"]+")
_SECRETS = re.compile(r"\b((?:api[_-]?key|key|token|auth|password|secret)=)[^&\s]+", re.IGNORECASE)


def mask_secrets(text: str) -> str:
    """Hide credentials in free text (recorded commands, error messages): URLs lose their user, password and
    query string, key-like ``name=value`` pairs their value, and the value of OPENAI_API_KEY is masked."""
    text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    text = _SECRETS.sub(lambda m: m.group(1) + "***", text)
    key = os.environ.get("OPENAI_API_KEY")
    return text.replace(key, "***") if key and len(key) >= 8 else text


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
