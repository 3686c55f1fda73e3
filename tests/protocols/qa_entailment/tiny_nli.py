"""Tiny randomly initialised BERT NLI cross-encoders, saved to a folder, for the NLI backend tests (no download).

``favour`` puts a large bias on one class id, so the model's prediction is known whatever the input."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

WORDS = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "show",
    "is",
    "filmed",
    "on",
    "oak",
    "island",
    "in",
    "nova",
    "scotia",
    "hawaii",
    ".",
]
NLI_LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}


def build_cross_encoder(path: Path, id2label: Mapping[int, str], *, favour: int | None = None, seed: int = 0) -> Path:
    """Save a one-layer BERT sequence classifier and a word-level tokenizer to ``path``."""
    import torch
    import transformers

    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizer(vocab_file=str(path / "vocab.txt"))
    config = transformers.BertConfig(
        vocab_size=len(WORDS),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=64,
        num_labels=len(id2label),
        id2label=dict(id2label),
        label2id={v: k for k, v in id2label.items()},
    )
    torch.manual_seed(seed)
    model = transformers.BertForSequenceClassification(config)
    if favour is not None:
        with torch.no_grad():
            model.classifier.bias.zero_()
            model.classifier.bias[favour] = 50.0
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
