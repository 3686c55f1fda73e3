"""The cards of LMvLM and its §4.1 baselines (entry points in the ``voirdire.protocols`` group): what
``voirdire --help`` and ``voirdire list`` show of them, as data; the registrations are ``registration``'s, imported
when a command runs one of them (``voirdire.kit.Card``)."""

from __future__ import annotations

from voirdire.kit import Card

PAPER = (
    "Cohen, Hamri, Geva, Globerson 2023. LM vs LM: Detecting Factual Errors via Cross Examination "
    "(../shared/papers/lm-vs-lm-cross-examination.txt)"
)

cross_examination = Card(
    name="cross_examination",
    target="voirdire.protocols.cross_examination.registration:cross_examination",
    roles=("examiner", "examinee"),
    paper=PAPER,
    command="examine",
    help="cross-examine a claim or a dataset of questions (LMvLM)",
)
ays = Card(
    name="ays",
    target="voirdire.protocols.cross_examination.registration:ays",
    roles=("examinee",),
    paper=PAPER,
    help="AYS (§4.1): ask the examinee whether it is sure of its claim; its Yes or No is the prediction",
)
idk = Card(
    name="idk",
    target="voirdire.protocols.cross_examination.registration:idk",
    roles=("examinee",),
    paper=PAPER,
    help="IDK (§4.1): a claim is false when the examinee answers \"I don't know\" to its query, else true",
)
