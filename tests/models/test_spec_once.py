"""A role's model spec is parsed once a process: ``RoleSettings.spec`` reads it from ``parsed_spec``, so settings
and their copies that name one spec share it, and a copy that names another spec parses that one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from voirdire.models import ModelSpecError, RoleSettings, settings as settings_module


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    seen: list[str] = []
    real = settings_module.parse_spec

    def counting(text: str):  # type: ignore[no-untyped-def]
        seen.append(text)
        return real(text)

    monkeypatch.setattr(settings_module, "parse_spec", counting)
    settings_module.parsed_spec.cache_clear()
    yield seen
    settings_module.parsed_spec.cache_clear()


def test_the_spec_is_parsed_once_however_often_it_is_read(parses: list[str]) -> None:
    s = RoleSettings(model="openai:gpt-4o-mini", timeout=None)
    assert s.spec.kind == "openai" and s.spec.model == "gpt-4o-mini"
    s.timeout_s(), s.retries(), s.spec
    assert parses == ["openai:gpt-4o-mini"]


def test_a_copy_keeps_its_parsed_spec_and_a_changed_one_is_parsed_again(parses: list[str]) -> None:
    s = RoleSettings(model="scripted:x.yaml")
    s.spec  # noqa: B018
    same = RoleSettings.model_validate({**s.model_dump(), "max_tokens": 9})
    assert same.spec is s.spec and parses == ["scripted:x.yaml"]
    other = s.model_copy(update={"model": "local"})
    assert other.spec.kind == "local" and parses == ["scripted:x.yaml", "local"]


def test_a_bad_spec_is_an_error_where_it_is_read() -> None:
    with pytest.raises(ModelSpecError, match="unknown model spec"):
        RoleSettings(model="bogus:zz").spec  # noqa: B018
