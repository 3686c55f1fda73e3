"""Masking skips a rule only where its pattern cannot match: the same text as every pattern run over every record
(the reference below is the rules without those checks), and with the environment's secrets re-read after a change.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import quote

import pytest

from voirdire.base import secrets
from voirdire.base.secrets import MASK, mask_secrets, register_secret, secret_values

KEY = "sk-ref-Abc 123/+=xyz%é"  # a space, base64 and URL characters, a percent sign, a non-ASCII letter


def _reference(text: str) -> str:
    """Every rule over the whole text, in order: the secrets' forms, URLs, name=value pairs, authorization values."""
    forms = {form for value in secret_values() for form in secrets.encoded_forms(value)}
    if forms:
        literal = [re.escape(f) for f in sorted(forms, key=len, reverse=True)]
        mixtures = [secrets.percent_encoded(v) for v in sorted(secret_values())]
        text = re.compile("|".join(literal + mixtures)).sub(MASK, text)
    text = secrets._URL.sub(lambda m: secrets._clean_url(m.group(0)), text)
    text = secrets._PAIRS.sub(lambda m: m.group(1) + MASK, text)
    return secrets._AUTH_HEADER.sub(lambda m: m.group(1) + m.group(2) + MASK, text)


TEXTS = [
    "",
    "plain words, nothing to hide",
    '{"kind":"message","content":"Is the claim true? 50% of it."}',
    f"key in text {KEY} end",
    f"pair token={KEY} and more",
    f"a url https://u:p@h.example/v1?api_key={quote(KEY, safe='')}&page=2 done",
    "percent-mixed " + "".join(f"%{b:02X}" if i % 2 else chr(b) for i, b in enumerate(KEY[:6].encode())) + KEY[6:],
    "auth Bearer " + base64.b64encode(("u:" + KEY).encode()).decode(),
    "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==",
    "Basic information, Bearer of news",
    "hex " + KEY.encode().hex().upper() + " " + KEY.encode().hex(),
    "x-api-key=abc&access_token=def&monkey=ok http://h/x?sig=1",
    '{"model":"openai-compatible:fake@http://127.0.0.1:8000/v1","response":"Yes."}',
]


@pytest.mark.parametrize("with_key", [False, True])
def test_the_same_text_as_every_rule_over_everything(monkeypatch: pytest.MonkeyPatch, with_key: bool) -> None:
    if with_key:
        monkeypatch.setenv("REFERENCE_API_KEY", KEY)
        register_secret("registered-value-" + "9" * 12)
    for text in [*TEXTS, "registered-value-" + "9" * 12 + " in a line"]:
        assert mask_secrets(text) == _reference(text), text
    if with_key:
        assert KEY not in mask_secrets(f"pair token={KEY} and more")
        assert mask_secrets(f"key {KEY}") == f"key {MASK}"


def test_a_secret_set_in_the_environment_later_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    value = "late-arriving-credential-42"
    assert mask_secrets(f"x {value}") == f"x {value}"
    monkeypatch.setenv("LATE_TOKEN", value)
    assert mask_secrets(f"x {value}") == f"x {MASK}"
    monkeypatch.setenv("LATE_TOKEN", "another-credential-value-43")
    assert mask_secrets(f"x {value}") == f"x {value}"
    assert mask_secrets("x another-credential-value-43") == f"x {MASK}"
