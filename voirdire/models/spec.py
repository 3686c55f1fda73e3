"""Model specs and the provider table: how each kind of spec is parsed, printed and turned into a client.

Specs (one per role)::

    local                              embedded SmolLM2-135M-Instruct GGUF on llama.cpp (offline default)
    local:/path/model.gguf             any GGUF file on llama.cpp
    openai:<model>                     OpenAI (OPENAI_API_KEY, optional OPENAI_BASE_URL)
    openai-compatible:<model>@<url>    vLLM, Ollama, llama.cpp server, ... (key from OPENAI_API_KEY if set)
    scripted:<file>                    scripted/replay replies from a YAML/JSON file (tests, demos)
    human                              a person types the replies at the terminal

A new provider is one entry in ``PROVIDERS`` (and its name in ``Kind``). SDKs (llama-cpp-python, openai) are
imported only when a client is built.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel, ConfigDict

from voirdire.models.base import ModelSpecError
from voirdire.models.human import HumanClient
from voirdire.models.llama import LlamaCppClient, embedded_model_path
from voirdire.models.openai import openai_client, openai_compatible_client
from voirdire.models.scripted import ScriptedChatCompletionClient
from voirdire.secrets import mask_secrets, redact_url

Kind = Literal["local", "openai", "openai-compatible", "scripted", "human"]


class ModelSpec(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Kind
    model: str | None = None
    base_url: str | None = None
    path: str | None = None

    @property
    def text(self) -> str:
        """The spec as written, with credentials dropped from any URL."""
        return PROVIDERS[self.kind].text(self)


@dataclass(frozen=True)
class Provider:
    """One kind of model spec: what follows ``<kind>:``, how it is printed, and how its client is built."""

    forms: tuple[str, ...]
    """How the spec is written, as listed in the error for a spec of no known kind."""
    parse: Callable[[str], ModelSpec | None]
    """The spec from the text after ``<kind>:`` (empty when there is none); None when that text does not fit."""
    text: Callable[[ModelSpec], str]
    build: Callable[[ModelSpec], ChatCompletionClient]
    label: Callable[[ModelSpec], str] | None = None
    """How transcripts name the spec, when that differs from ``text``."""
    expected: str | None = None
    """The form named when the text after ``<kind>:`` does not fit; None gives the unknown-spec error."""
    key_env: str | None = None
    """The environment variable holding the API key the provider cannot work without."""


def parse_spec(text: str) -> ModelSpec:
    text = text.strip()
    kind, _, rest = text.partition(":")
    provider = PROVIDERS.get(kind)
    spec = provider.parse(rest) if provider else None
    if spec is not None:
        return spec
    if provider and provider.expected:
        raise ModelSpecError(f"model spec {mask_secrets(text)!r}: expected {provider.expected}")
    raise ModelSpecError(f"unknown model spec {mask_secrets(text)!r}: use {_ALL_FORMS}")


def spec_label(text: str) -> str:
    """How a spec is named in transcripts: redacted, and with the endpoint an ``openai:`` spec really uses."""
    spec = parse_spec(text)
    provider = PROVIDERS[spec.kind]
    return (provider.label or provider.text)(spec)


def build_client(spec: ModelSpec) -> ChatCompletionClient:
    provider = PROVIDERS[spec.kind]
    if provider.key_env and not os.environ.get(provider.key_env):
        raise ModelSpecError(f"model spec {spec.text!r} needs {provider.key_env} in the environment")
    return provider.build(spec)


# ------------------------------------------------------------------------------------------- providers


def _parse_openai_compatible(rest: str) -> ModelSpec | None:
    found = re.match(r"(.+?)@(https?://.+)$", rest)
    return ModelSpec(kind="openai-compatible", model=found.group(1), base_url=found.group(2)) if found else None


def _openai_label(spec: ModelSpec) -> str:
    base_url = os.environ.get("OPENAI_BASE_URL")
    return f"{spec.text}@{redact_url(base_url)}" if base_url else spec.text


PROVIDERS: dict[str, Provider] = {
    "local": Provider(
        forms=("local", "local:<file.gguf>"),
        parse=lambda rest: ModelSpec(kind="local", path=rest or None),
        text=lambda s: "local" if s.path is None else f"local:{s.path}",
        build=lambda s: LlamaCppClient.shared(Path(s.path) if s.path else embedded_model_path()),
    ),
    "openai": Provider(
        forms=("openai:<model>",),
        parse=lambda rest: ModelSpec(kind="openai", model=rest) if rest else None,
        text=lambda s: f"openai:{s.model}",
        label=_openai_label,
        build=lambda s: openai_client(s.model, spec_text=s.text),
        key_env="OPENAI_API_KEY",
    ),
    "openai-compatible": Provider(
        forms=("openai-compatible:<model>@<url>",),
        parse=_parse_openai_compatible,
        text=lambda s: f"openai-compatible:{s.model}@{redact_url(s.base_url or '')}",
        build=lambda s: openai_compatible_client(s.model, s.base_url, spec_text=s.text),
        expected="openai-compatible:<model>@<base_url>, e.g. openai-compatible:llama3@http://127.0.0.1:8080/v1",
    ),
    "scripted": Provider(
        forms=("scripted:<file>",),
        parse=lambda rest: ModelSpec(kind="scripted", path=rest) if rest else None,
        text=lambda s: f"scripted:{s.path}",
        build=lambda s: ScriptedChatCompletionClient.from_file(s.path or ""),
    ),
    "human": Provider(
        forms=("human",),
        parse=lambda rest: None if rest else ModelSpec(kind="human"),
        text=lambda s: "human",
        build=lambda s: HumanClient(),
    ),
}

_forms = [form for provider in PROVIDERS.values() for form in provider.forms]
_ALL_FORMS = f"{', '.join(_forms[:-1])} or {_forms[-1]}"
