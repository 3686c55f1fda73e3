"""The ids voirdire gives autogen's messages: the form of autogen's own default (a version-4 UUID's text), distinct,
and distinct again in a forked worker (which must not repeat its parent's sequence)."""

from __future__ import annotations

import multiprocessing
import uuid

import pytest

from voirdire.agents import message_id


def test_ids_are_version_4_uuid_text_and_distinct() -> None:
    ids = [message_id() for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    for text in ids[:2_000]:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


def _child_ids(queue: multiprocessing.Queue[list[str]]) -> None:
    queue.put([message_id() for _ in range(50)])


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform")
def test_a_forked_process_draws_ids_of_its_own() -> None:
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue[list[str]] = context.Queue()
    child = context.Process(target=_child_ids, args=(queue,))
    child.start()
    theirs = queue.get(timeout=60)
    child.join(timeout=60)
    ours = [message_id() for _ in range(50)]  # the parent's next ids: what the child would repeat without a reseed
    assert not set(theirs) & set(ours)

