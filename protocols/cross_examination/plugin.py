"""The cards of LMvLM and its §4.1 baselines (entry points in the ``voirdire.protocols`` group): what
``voirdire --help`` and ``voirdire list`` show of them, as data; the registrations are ``registration``'s, imported
when a command runs one of them (``voirdire.kit.Card``)."""

from __future__ import annotations

from voirdire.kit import Card

cross_examination = Card(
    name="cross_examination",
    target="voirdire.protocols.cross_examination.registration:cross_examination",
    roles=("examiner", "examinee"),
    paper=(
        "Cohen, Hamri, Geva, Globerson 2023. LM vs LM: Detecting Factual Errors via Cross Examination "
        "(../shared/papers/lm-vs-lm-cross-examination.txt)"
    ),
    command="examine",
    help="cross-examine a claim or a dataset of questions (LMvLM)",
)
ays = Card(
    name="ays",
    target="voirdire.protocols.cross_examination.registration:ays",
    roles=("examinee",),
    paper=(
        "Cohen, Hamri, Geva, Globerson 2023. LM vs LM: Detecting Factual Errors via Cross Examination "
        "(../shared/papers/lm-vs-lm-cross-examination.txt)"
    ),
    help=(
        'AYS: right after claim generation ask "Are you sure regarding the correctness of your claim? Please '
        'answer with Yes or No" and take the answer as the prediction (§4.1). A reply that is neither is '
        "inconclusive and, as in LMvLM, counts as a rejection."
    ),
)
idk = Card(
    name="idk",
    target="voirdire.protocols.cross_examination.registration:idk",
    roles=("examinee",),
    paper=(
        "Cohen, Hamri, Geva, Globerson 2023. LM vs LM: Detecting Factual Errors via Cross Examination "
        "(../shared/papers/lm-vs-lm-cross-examination.txt)"
    ),
    help=(
        'IDK: the query gets "If you are not sure you know the answer, answer with \'I don\'t know\' only."; if '
        'the model answers "I don\'t know" the corresponding claim is labelled false, otherwise true (§4.1). The '
        "claim judged is the one the plain §4.1 query produces (the same claims LMvLM and AYS are scored on), made "
        "in its own conversation; the IDK reply only decides the label."
    ),
)
