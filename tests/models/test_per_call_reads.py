"""What a model call reads again at every call, kept between calls, must still follow every change: the reply cap's
environment variable (``max_reply_chars``) and a role's parsed spec (``RoleSettings.spec``)."""

from __future__ import annotations

import pytest

from voirdire.base import max_reply_chars
from voirdire.base.limits import DEFAULT_MAX_REPLY_CHARS, LimitError
from voirdire.models import RoleSettings


def test_the_reply_cap_follows_every_change_of_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOIRDIRE_MAX_REPLY_CHARS", raising=False)
    assert max_reply_chars() == max_reply_chars() == DEFAULT_MAX_REPLY_CHARS
    monkeypatch.setenv("VOIRDIRE_MAX_REPLY_CHARS", "5000")
    assert max_reply_chars() == max_reply_chars() == 5000
    monkeypatch.setenv("VOIRDIRE_MAX_REPLY_CHARS", "7000")
    assert max_reply_chars() == 7000
    monkeypatch.setenv("VOIRDIRE_MAX_REPLY_CHARS", "5000")  # the same text again, set anew
    assert max_reply_chars() == 5000
    monkeypatch.setenv("VOIRDIRE_MAX_REPLY_CHARS", "12")
    for _ in range(2):  # an invalid value is an error at every read, not only the first
        with pytest.raises(LimitError, match="VOIRDIRE_MAX_REPLY_CHARS='12'"):
            max_reply_chars()
    monkeypatch.setenv("VOIRDIRE_MAX_REPLY_CHARS", " 3000 ")
    assert max_reply_chars() == 3000
    monkeypatch.delenv("VOIRDIRE_MAX_REPLY_CHARS")
    assert max_reply_chars() == DEFAULT_MAX_REPLY_CHARS


def test_a_roles_spec_is_parsed_again_when_its_model_changes() -> None:
    settings = RoleSettings(model="openai-compatible:a@http://127.0.0.1:1/v1")
    assert settings.spec.model == "a"
    assert settings.spec is settings.spec  # parsed once
    settings.model = "openai-compatible:b@http://127.0.0.1:1/v1"
    assert settings.spec.model == "b"
    copy = settings.model_copy(update={"model": "ollama:c"})
    assert copy.spec.kind == "ollama" and copy.spec.model == "c"
    assert settings.spec.model == "b"
    assert RoleSettings(model="ollama:d").spec.model == "d"
