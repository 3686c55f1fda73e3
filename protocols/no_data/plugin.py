"""The No-Data Algorithm's card (entry point ``no_data`` in the ``voirdire.protocols`` group): what ``voirdire
--help`` and ``voirdire list`` show of it, as data; the registration is ``registration``'s, imported when a command
runs it (``voirdire.kit.Card``)."""

from __future__ import annotations

from voirdire.kit import Card

no_data = Card(
    name="no_data",
    target="voirdire.protocols.no_data.registration:no_data",
    roles=("evaluator", "verifier", "generator"),
    paper=(
        "de Wynter 2025. Labelling Data with Unknown References, arXiv:2506.03083 "
        "(../shared/papers/no-data-algorithm.txt)"
    ),
    command="nodata",
    help="No-Data Algorithm: an evaluator labels data and must convince a rule verifier (EV protocol)",
)
