"""OpenAI and OpenAI-compatible servers (vLLM, Ollama, llama.cpp server, ...) through AutoGen's OpenAI client.

``spec_text`` is the spec as printed (credentials dropped), named in errors.
"""

from __future__ import annotations

import os
from typing import Any

from autogen_core.models import ChatCompletionClient, ModelFamily, ModelInfo

from voirdire.models.base import ModelSpecError


def openai_client(model: str | None, *, spec_text: str) -> ChatCompletionClient:
    """OpenAI itself, at OPENAI_BASE_URL when that is set; the caller has checked that OPENAI_API_KEY is."""
    kwargs: dict[str, Any] = {}
    if os.environ.get("OPENAI_BASE_URL"):
        kwargs["base_url"] = os.environ["OPENAI_BASE_URL"]
    return _client(model, kwargs, spec_text)


def openai_compatible_client(model: str | None, base_url: str | None, *, spec_text: str) -> ChatCompletionClient:
    """Any server that speaks the OpenAI API at ``base_url``; its models are unknown to the SDK."""
    kwargs: dict[str, Any] = {
        "base_url": base_url,
        # Local servers usually ignore the key but the SDK insists on one.
        "api_key": os.environ.get("OPENAI_API_KEY") or "not-needed",
        "model_info": ModelInfo(
            vision=False,
            function_calling=False,
            json_output=False,
            family=ModelFamily.UNKNOWN,
            structured_output=False,
        ),
    }
    return _client(model, kwargs, spec_text)


def _client(model: str | None, kwargs: dict[str, Any], spec_text: str) -> ChatCompletionClient:
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    try:
        # max_retries=0: voirdire retries transient errors itself and records how many it took.
        return OpenAIChatCompletionClient(model=model, max_retries=0, **kwargs)
    except ValueError as exc:  # unknown model names need model_info; say so plainly
        raise ModelSpecError(f"model spec {spec_text!r}: {exc}") from exc
