"""The card of DCR (entry point ``dcr`` in the ``voirdire.protocols`` group): what ``voirdire --help`` and
``voirdire list`` show of it, as data; the registration is ``registration``'s, imported when a command runs DCR
(``voirdire.kit.Card``)."""

from __future__ import annotations

from voirdire.kit import Card

dcr = Card(
    name="dcr",
    target="voirdire.protocols.dcr.registration:dcr",
    roles=("evaluator", "converter", "improver"),
    paper=(
        "Cui, Zhang, Li, Lopez, Das, Malin, Kumar 2024. DCR-Consistency: Divide-Conquer-Reasoning for Consistency "
        "Evaluation and Improvement of Large Language Models (../shared/papers/dcr-consistency.txt)"
    ),
    command="dcr",
    help="evaluate a candidate against a reference and improve it (DCR: DCE -> AMC -> RAI)",
)
