"""The oracle–checker scheme (Zeng, Wang, Ibbetson 2024): an LLM oracle's answer is accepted only when a checker's
test passes: the linearity checker for entity extraction (§3, App. A) with the guarantee of Theorems 3.1–3.2, the
Yes-prover (§4.3, Algorithm 1) and the No-checker (§4.1, Fig. 4) for paraphrase decisions."""

from typing import TYPE_CHECKING

from voirdire.kit import lazy_face

if TYPE_CHECKING:
    from .api import (
        acheck_entities as acheck_entities,
        acheck_paraphrase as acheck_paraphrase,
        check_entities as check_entities,
        check_paraphrase as check_paraphrase,
    )
    from .entities import Entity as Entity, linearity_test as linearity_test, parse_entities as parse_entities
    from .items import SentenceItem as SentenceItem
    from .linearity import LinearityChecker as LinearityChecker, LinearityParams as LinearityParams
    from .paraphrase import (
        PairItem as PairItem,
        ParaphraseChecker as ParaphraseChecker,
        ParaphraseParams as ParaphraseParams,
    )
    from .theorems import (
        Guarantee as Guarantee,
        failure_bound as failure_bound,
        guarantees as guarantees,
        rejection_bound as rejection_bound,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
