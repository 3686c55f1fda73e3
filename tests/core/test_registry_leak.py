"""The guard every test runs under (``tests/conftest.py``): a test that fills the registry's process-wide cache
with protocols that are not installed fails, and the next test finds the installed ones again."""

from __future__ import annotations

import pytest

from tests.conftest import registry_leak
from voirdire.registry import Card, plugins


def test_a_fake_protocol_left_in_the_registry_cache_is_found_and_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    installed = plugins.registrations()
    assert registry_leak() is None  # the installed protocols, as the entry points name them
    fake = Card(name="fake", target="voirdire.protocols.no_such_module:fake", roles=("judge",))
    monkeypatch.setattr(plugins, "_entry_point_cards", lambda: {"fake": fake})
    monkeypatch.setattr(plugins, "_load", lambda card: installed["cross_examination"])
    plugins.registrations.cache_clear()
    try:
        assert list(plugins.registrations()) == ["fake"]  # cached for the process, past the patches
    finally:
        monkeypatch.undo()
    leak = registry_leak()
    assert leak is not None and "['fake']" in leak and "replace" in leak
    assert plugins.registrations().keys() == installed.keys()  # cleared: read again from the entry points
    assert registry_leak() is None


def test_a_replaced_registrations_is_not_a_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins, "registrations", lambda: {})
    assert registry_leak() is None  # monkeypatch puts the cached function back when the test ends
