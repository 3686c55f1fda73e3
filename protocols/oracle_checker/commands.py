"""``voirdire check entities|paraphrase``: the oracle–checker's two protocols under one command word, added to
``voirdire`` through the ``voirdire.commands`` entry-point group (``check-entities`` / ``check-paraphrase`` and
``run oracle_entities|oracle_paraphrase`` are the same commands)."""

from __future__ import annotations

from typing import Any

from voirdire.cli import add_protocol_command

from .plugin import oracle_entities, oracle_paraphrase


def add_command(sub: Any) -> None:
    p = sub.add_parser("check", help="oracle–checker: trust an LLM's answer only when a checker's test passes")
    words = p.add_subparsers(dest="check", required=True, metavar="entities|paraphrase")
    add_protocol_command(words, "entities", oracle_entities, help="entity extraction, checked for linearity (§3)")
    add_protocol_command(
        words, "paraphrase", oracle_paraphrase, help="a paraphrase decision, proved (yes, §4.3) or trusted (no, §4.1)"
    )
