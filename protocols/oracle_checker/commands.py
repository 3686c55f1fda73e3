"""``voirdire check entities|paraphrase``: the two oracle–checker protocols under one command word.

Added through the ``voirdire.commands`` entry-point group beside the protocols' own ``check-entities`` and
``check-paraphrase`` (the same parsers: the same options, inputs and output).
"""

from __future__ import annotations

from voirdire.kit.cli import CommandTable, cards


def add_command(sub: CommandTable) -> None:
    """``voirdire check`` with the sub-words ``entities`` (linearity checker, §3) and ``paraphrase`` (§4)."""
    check = sub.add_parser("check", help="check an LLM's answer with the oracle-checker scheme: entities | paraphrase")
    words = check.add_subparsers(dest="check", required=True, metavar="entities|paraphrase")
    for word, name in (("entities", "oracle_entities"), ("paraphrase", "oracle_paraphrase")):
        card = cards()[name]  # the card: the protocol is imported when its word is the command given
        sub.add_protocol_command(words, word, card, help=card.help)
