"""NLI cross-encoder entailment backend (the paper's "Entailment (small)" variant, App. C.1).

The paper pairs Llama-2 QA2D statements with ``cross-encoder/nli-deberta-v3-large``. Any sentence-transformers
``CrossEncoder`` with three NLI classes works: the class order is read from the model config's ``id2label``
(the cross-encoder/nli-* models use 0 = contradiction, 1 = entailment, 2 = neutral, but others differ), so a
model whose labels are not named entailment/neutral/contradiction needs an explicit ``label_map``.

Nothing is downloaded (``voirdire.models.encoders``: offline, one model per process): point ``model`` at a directory
holding the saved model, or at a Hugging Face name already in the local cache. Requires the ``nlp`` extra
(sentence-transformers).
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from voirdire.kit.models import cross_encoder

from .entailment import EntailmentOutcome
from .parsing import ENTAILMENT_LABELS, EntailmentLabel

# Label names seen in NLI model configs, normalised (lower case, "-"/" " -> "_").
_SYNONYMS: dict[str, EntailmentLabel] = {
    "entailment": "entailment",
    "entails": "entailment",
    "entail": "entailment",
    "entailed": "entailment",
    "contradiction": "contradiction",
    "contradicts": "contradiction",
    "contradict": "contradiction",
    "contradictory": "contradiction",
    "neutral": "neutral",
}


class NLILabelError(ValueError):
    """The model's labels cannot be mapped onto entailment / neutral / contradiction."""


class NLIPrediction(BaseModel):
    label: EntailmentLabel
    probabilities: dict[str, float]


def labels_from_config(id2label: Mapping[Any, str]) -> dict[int, EntailmentLabel]:
    """Map class ids to NLI labels by the names in a Hugging Face config's ``id2label``.

    Each of the three labels must appear exactly once; generic names such as LABEL_0, or two-way labels such as
    "not_entailment", are rejected rather than guessed."""
    mapping: dict[int, EntailmentLabel] = {}
    for key, name in id2label.items():
        normalised = str(name).strip().lower().replace("-", "_").replace(" ", "_")
        if normalised not in _SYNONYMS:
            raise NLILabelError(
                f"cannot map label {name!r} (id {key}) of {dict(id2label)} to entailment/neutral/contradiction; "
                "pass label_map={id: 'entailment' | 'neutral' | 'contradiction'} for this model"
            )
        mapping[int(key)] = _SYNONYMS[normalised]
    return _check_mapping(mapping, source=f"id2label {dict(id2label)}")


def _check_mapping(mapping: Mapping[int, str], *, source: str) -> dict[int, EntailmentLabel]:
    values = sorted(mapping.values())
    if values != sorted(ENTAILMENT_LABELS):
        raise NLILabelError(f"{source} must name entailment, neutral and contradiction exactly once each")
    if sorted(mapping) != list(range(len(mapping))):
        raise NLILabelError(f"{source} must use class ids 0, 1, 2")
    return dict(mapping)  # type: ignore[arg-type]  # values checked above


def _softmax(row: Sequence[float]) -> list[float]:
    top = max(row)
    exps = [math.exp(x - top) for x in row]
    total = sum(exps)
    return [x / total for x in exps]


class CrossEncoderNLI:
    """Entailment test with a local NLI cross-encoder: premise and hypothesis in, the argmax class out."""

    name = "nli"

    def __init__(
        self,
        model: str,
        *,
        label_map: Mapping[int, EntailmentLabel] | None = None,
        device: str | None = None,
        batch_size: int = 16,
        max_length: int | None = None,
    ) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self._encoder = cross_encoder(model, device=device, max_length=max_length)
        # .model is the underlying Hugging Face model (sentence-transformers 3 to 6); its config has id2label.
        hf_model = self._encoder.model
        if hf_model is None:
            raise NLILabelError(f"{model} is not a Hugging Face sequence-classification cross-encoder")
        config = hf_model.config
        if label_map is not None:
            self.id2label = _check_mapping(dict(label_map), source="label_map")
        else:
            self.id2label = labels_from_config(config.id2label)
        if config.num_labels != len(self.id2label):
            raise NLILabelError(f"{model} has {config.num_labels} output classes, expected 3 NLI classes")
        # Ask for raw logits and softmax them here: a saved model may carry its own activation (e.g. a sigmoid),
        # and the keyword is activation_fn since sentence-transformers 4, activation_fct before.
        import torch

        params = inspect.signature(self._encoder.predict).parameters
        keyword = "activation_fn" if "activation_fn" in params else "activation_fct"
        self._raw_logits: dict[str, Any] = {keyword: torch.nn.Identity()}

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[NLIPrediction]:
        """Classify (premise, hypothesis) pairs in batches."""
        if not pairs:
            return []
        logits = self._encoder.predict(
            [list(p) for p in pairs],
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            apply_softmax=False,
            **self._raw_logits,
        )
        predictions = []
        for row in logits.reshape(len(pairs), -1).tolist():
            probs = _softmax(row)
            by_label = {self.id2label[i]: p for i, p in enumerate(probs)}
            best = max(range(len(probs)), key=probs.__getitem__)
            predictions.append(NLIPrediction(label=self.id2label[best], probabilities=by_label))
        return predictions

    async def entail(self, premise: str, hypothesis: str) -> EntailmentOutcome:
        # Inference is CPU/GPU-bound; a worker thread keeps the event loop (and other items) responsive.
        [prediction] = await asyncio.to_thread(self.predict, [(premise, hypothesis)])
        return EntailmentOutcome(label=prediction.label, probabilities=prediction.probabilities)
