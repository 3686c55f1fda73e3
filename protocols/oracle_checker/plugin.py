"""The cards of the oracle–checker scheme (entry points in the ``voirdire.protocols`` group): what ``voirdire
--help`` and ``voirdire list`` show of them, as data; the registrations are ``registration``'s, imported when a
command runs one of them (``voirdire.kit.Card``)."""

from __future__ import annotations

from voirdire.kit import Card

oracle_entities = Card(
    name="oracle_entities",
    target="voirdire.protocols.oracle_checker.registration:oracle_entities",
    roles=("oracle", "checker"),
    paper=(
        "Zeng, Wang, Ibbetson 2024. Oracle-Checker Scheme for Evaluating a Generative Large Language Model "
        "(../shared/papers/oracle-checker.txt), §3 and App. A: the linearity checker for entity extraction"
    ),
    command="check-entities",
    help="check an LLM's entity extraction with the linearity test (oracle-checker scheme, §3)",
)
oracle_paraphrase = Card(
    name="oracle_paraphrase",
    target="voirdire.protocols.oracle_checker.registration:oracle_paraphrase",
    roles=("oracle", "checker"),
    paper=(
        "Zeng, Wang, Ibbetson 2024. Oracle-Checker Scheme for Evaluating a Generative Large Language Model "
        "(../shared/papers/oracle-checker.txt), §4 and App. B: the Yes-prover and the No-checker for paraphrase "
        "decisions"
    ),
    command="check-paraphrase",
    help="check an LLM's paraphrase decision: prove a yes (Algorithm 1), test a no (Fig. 4) (oracle-checker, §4)",
)
