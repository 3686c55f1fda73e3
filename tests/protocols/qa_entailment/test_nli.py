"""The CrossEncoder NLI backend, exercised with tiny randomly initialised BERT cross-encoders built here."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("sentence_transformers")

from tests.protocols.qa_entailment.helpers import PromptModel  # noqa: E402
from tests.protocols.qa_entailment.tiny_nli import NLI_LABELS, build_cross_encoder  # noqa: E402
from voirdire.protocols.qa_entailment.data import QAItem  # noqa: E402
from voirdire.protocols.qa_entailment.hierarchy import HierarchyCell  # noqa: E402
from voirdire.protocols.qa_entailment.nli import CrossEncoderNLI, NLILabelError, labels_from_config  # noqa: E402
from voirdire.protocols.qa_entailment.protocol import QAEntailmentGrading, QAEntailmentParams  # noqa: E402
from voirdire.runner import run_in_memory  # noqa: E402
from voirdire.transcript import Step  # noqa: E402


@pytest.fixture(scope="module")
def random_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_cross_encoder(tmp_path_factory.mktemp("nli") / "random", NLI_LABELS, seed=1)


PAIRS = [
    ("the show is filmed on oak island .", "the show is filmed in nova scotia ."),
    ("the show is filmed in nova scotia .", "the show is filmed on oak island ."),
    ("the show is filmed in hawaii .", "oak island"),
]


def test_predictions_follow_the_models_argmax_and_id2label(random_model: Path) -> None:
    backend = CrossEncoderNLI(str(random_model))
    predictions = backend.predict(PAIRS)
    # Reference: the same saved model run directly through transformers.
    tokenizer = transformers.AutoTokenizer.from_pretrained(random_model)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(random_model).eval()
    with torch.no_grad():
        logits = model(
            **tokenizer([p for p, _ in PAIRS], [h for _, h in PAIRS], return_tensors="pt", padding=True)
        ).logits
    probs = torch.softmax(logits, dim=-1)
    for prediction, row in zip(predictions, probs, strict=True):
        assert prediction.label == NLI_LABELS[int(row.argmax())]
        assert sum(prediction.probabilities.values()) == pytest.approx(1.0)
        for i, name in NLI_LABELS.items():
            assert prediction.probabilities[name] == pytest.approx(float(row[i]), abs=1e-5)
    assert backend.predict([]) == []


@pytest.mark.parametrize("favoured_id", [0, 1, 2])
def test_label_order_comes_from_the_config(tmp_path: Path, favoured_id: int) -> None:
    # A label order unlike cross-encoder/nli-*: the favoured id must be reported under its configured name.
    id2label = {0: "ENTAILMENT", 1: "Neutral", 2: "contradiction"}
    path = build_cross_encoder(tmp_path / "permuted", id2label, favour=favoured_id)
    backend = CrossEncoderNLI(str(path))
    expected = {0: "entailment", 1: "neutral", 2: "contradiction"}[favoured_id]
    assert {p.label for p in backend.predict(PAIRS)} == {expected}


def test_unmappable_labels_need_an_explicit_label_map(tmp_path: Path) -> None:
    generic = build_cross_encoder(tmp_path / "generic", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, favour=1)
    with pytest.raises(NLILabelError, match="label_map"):
        CrossEncoderNLI(str(generic))
    backend = CrossEncoderNLI(str(generic), label_map={0: "neutral", 1: "entailment", 2: "contradiction"})
    assert backend.predict(PAIRS[:1])[0].label == "entailment"
    with pytest.raises(NLILabelError):
        CrossEncoderNLI(str(generic), label_map={0: "neutral", 1: "entailment", 2: "entailment"})
    two_way = build_cross_encoder(tmp_path / "rte", {0: "entailment", 1: "not_entailment"})
    with pytest.raises(NLILabelError):
        CrossEncoderNLI(str(two_way))


def test_labels_from_config() -> None:
    assert labels_from_config({"0": "Contradiction", "1": "Entailment", "2": "Neutral"}) == {
        0: "contradiction",
        1: "entailment",
        2: "neutral",
    }
    with pytest.raises(NLILabelError):
        labels_from_config({0: "entailment", 1: "neutral"})


async def test_nli_backend_in_the_grader(tmp_path: Path) -> None:
    path = build_cross_encoder(tmp_path / "entails", NLI_LABELS, favour=1)  # always "entailment"
    protocol = QAEntailmentGrading(QAEntailmentParams(backend="nli", nli_model=str(path)))

    def qa2d_only(role: str, prompt: str, variables: Mapping[str, str], context: object) -> str:
        assert prompt == "qa2d"  # entailment must not go to a language model
        return f"the show is filmed on {variables['answer'].lower()} ."

    item = QAItem(
        id="x",
        question="where is the show filmed",
        gold_answers=("Oak Island",),
        system="s",
        system_answer="Nova Scotia",
    )
    [verdict], writer = await run_in_memory(protocol, [item], clients={"evaluator": PromptModel(qa2d_only)}, keep=True)
    assert verdict.statistics["cell"] == HierarchyCell.BOTH.value and verdict.accepted is True
    call = next(r.data for r in writer.records if isinstance(r, Step) and r.name == "entailment")
    assert call["backend"] == "nli" and call["outcome"]["probabilities"]["entailment"] > 0.99


def test_missing_local_model_fails_without_download(tmp_path: Path) -> None:
    with pytest.raises(Exception):  # noqa: B017  # the exact error type is sentence-transformers'/hub's choice
        CrossEncoderNLI(str(tmp_path / "no-such-model"))
