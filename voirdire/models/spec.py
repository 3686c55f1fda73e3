"""Model specs and the provider table: how each kind of spec is parsed, printed and turned into a client.

Specs (one per role)::

    local                              embedded SmolLM2-135M-Instruct GGUF on llama.cpp (offline default)
    local:/path/model.gguf             any GGUF file on llama.cpp
    openai:<model>                     OpenAI (OPENAI_API_KEY, optional OPENAI_BASE_URL)
    openai-compatible:<model>@<url>    vLLM, Ollama, llama.cpp server, ... (no key unless a role names one)
    anthropic:<model>                  Anthropic's Messages API (ANTHROPIC_API_KEY, optional ANTHROPIC_BASE_URL)
    ollama:<model>[@<url>]             an Ollama server's own API (default http://127.0.0.1:11434 or OLLAMA_HOST)
    azure:<deployment>@<endpoint>      an Azure OpenAI deployment (AZURE_OPENAI_API_KEY; api_version per role)
    scripted:<file>                    scripted/replay replies from a YAML/JSON file (tests, demos)
    human                              a person types the replies at the terminal

``openai/<model>``, ``anthropic/<model>``, ``ollama/<model>`` and ``azure/<deployment>@<endpoint>`` are the same
specs in LiteLLM's and Inspect AI's form (``SLASH_KINDS``): parsed to the same ``ModelSpec``, so a run's header and
transcript name the model the same way whichever form was written.

A new provider is one entry in ``PROVIDERS`` (and its name in ``Kind``). SDKs (llama-cpp-python, openai) are
imported only when a client is built.

Credentials: a role names the environment variable that holds its key (``api_key_env``); without one, an
``openai:`` spec reads OPENAI_API_KEY and an ``openai-compatible:`` spec sends no key at all, unless its URL is
OpenAI's own (``https://api.openai.com``), so the OpenAI key never goes to a server the user did not name it for.
Every key, of every provider, obeys one rule (``key_problem``): it travels over ``https://`` only (plain
``http://`` to this machine's loopback, which it never leaves), and a provider's own key used without the role
naming it goes only to the provider's hosts, scheme and host both checked. A URL with ``user:password@`` is
refused, in a spec or in the variable that gives a provider its URL (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``,
``OLLAMA_HOST``, ``AZURE_OPENAI_ENDPOINT``): its credentials would travel as HTTP Basic auth and be hard to keep
out of logs. Every key read is
registered with ``voirdire.base.secrets`` and masked wherever voirdire writes.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel, ConfigDict

from voirdire.base import mask_secrets, redact_url, register_secret
from voirdire.models import anthropic, azure, ollama
from voirdire.models.base import ModelSpecError
from voirdire.models.human import HumanClient
from voirdire.models.llama import LOCAL_TIMEOUT_S, LlamaCppClient, embedded_model_path
from voirdire.models.openai import CHAT_TIMEOUT_S, openai_client, openai_compatible_client
from voirdire.models.scripted import ScriptedChatCompletionClient

Kind = Literal["local", "openai", "openai-compatible", "anthropic", "ollama", "azure", "scripted", "human"]


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
class KeyRule:
    """Which environment variable holds a spec's API key when the role names none, and whether one is needed."""

    default_env: Callable[[ModelSpec], str | None]
    required: Callable[[ModelSpec], bool]
    url: Callable[[ModelSpec], str | None] | None = None
    """Where the key is sent (checked by ``key_problem``); None: the provider's fixed https endpoint."""


@dataclass(frozen=True)
class Provider:
    """One kind of model spec: what follows ``<kind>:``, how it is printed, and how its client is built."""

    forms: tuple[str, ...]
    """How the spec is written, as listed in the error for a spec of no known kind."""
    parse: Callable[[str], ModelSpec | None]
    """The spec from the text after ``<kind>:`` (empty when there is none); None when that text does not fit."""
    text: Callable[[ModelSpec], str]
    build: Callable[[ModelSpec, str | None], ChatCompletionClient]
    """The client, given the spec and its API key (None where it has none)."""
    label: Callable[[ModelSpec], str] | None = None
    """How transcripts name the spec, when that differs from ``text``."""
    expected: str | None = None
    """The form named when the text after ``<kind>:`` does not fit; None gives the unknown-spec error."""
    key: KeyRule | None = None
    """How the API key is found; None: the provider takes no key."""
    timeout_s: float | None = None
    """The deadline of one request when the role sets none; None: no deadline (a person typing)."""
    max_retries: int = 0
    """How often a transient failure is retried when the role does not say."""
    features: Features | None = None
    """What its client does with a reply schema, ``n`` samples and log-probabilities (``voirdire models``)."""


@dataclass(frozen=True)
class Features:
    """What a provider's client supports, as ``voirdire models`` lists it."""

    structured: str
    """How a reply schema is held: enforced by the backend (and how), or only validated on return."""
    samples: str
    """How ``n`` samples are drawn: in one request, or one request (or generation) each."""
    logprobs: bool = False
    """Whether voirdire reads token log-probabilities from it (none of its protocols needs them yet)."""
    key: str = "takes none"
    """Where its API key comes from when the role names none (``api_key_env``)."""


SLASH_KINDS: tuple[Kind, ...] = ("openai", "anthropic", "ollama", "azure")
"""Providers that may also be written ``<kind>/<model>`` (LiteLLM's and Inspect AI's form): only these known
prefixes, so that a model name with a slash of its own (a Hugging Face id such as ``meta-llama/Llama-3`` served
on an OpenAI-compatible endpoint) is never taken for a provider."""


def slash_form(text: str) -> str | None:
    """``<kind>:<model>`` for a spec written ``<kind>/<model>`` with a known provider prefix; None for any other
    text. A text whose part before its first ``:`` already names a provider (``openai:org/model``) is in the
    colon form, whatever slashes its model name holds."""
    text = text.strip()
    if text.partition(":")[0] in PROVIDERS:
        return None
    kind, slash, rest = text.partition("/")
    return f"{kind}:{rest}" if slash and rest and kind in SLASH_KINDS else None


def parse_spec(text: str) -> ModelSpec:
    text = text.strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in text):  # a newline would split every error naming it
        raise ModelSpecError(f"model spec {mask_secrets(text)!r}: holds a control character (a newline, a tab)")
    text = slash_form(text) or text
    kind, _, rest = text.partition(":")
    provider = PROVIDERS.get(kind)
    spec = provider.parse(rest) if provider else None
    if spec is not None:
        return spec
    if provider and provider.expected:
        raise ModelSpecError(f"model spec {mask_secrets(text)!r}: expected {provider.expected}")
    if _HUB_NAME.fullmatch(text) and text.partition("/")[0] not in PROVIDERS:
        raise ModelSpecError(hub_name_error(mask_secrets(text)))
    raise ModelSpecError(f"unknown model spec {mask_secrets(text)!r}: use {_ALL_FORMS}")


_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.:/-]+")
"""A model named as on the Hugging Face Hub (``org/model``), with no provider before it."""


def hub_name_error(name: str) -> str:
    """The one line for an ``org/model`` name with no provider: how vLLM or TGI, and Ollama, serve such a model."""
    return (
        f"model spec {name!r} names no provider: a model served by vLLM or TGI is "
        f"openai-compatible:{name}@http://HOST:PORT/v1 (vLLM serves on port 8000 by default), one pulled into Ollama "
        "is ollama:NAME (ollama:llama3.1, ollama:hf.co/ORG/MODEL-GGUF); openai/, anthropic/, ollama/ and azure/ "
        "name those providers (voirdire models lists every form)"
    )


def spec_label(spec: ModelSpec | str) -> str:
    """How a spec is named in transcripts: redacted, and with the endpoint an ``openai:`` spec really uses."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    provider = PROVIDERS[spec.kind]
    return (provider.label or provider.text)(spec)


def resolve_api_key(spec: ModelSpec, api_key_env: str | None = None) -> str | None:
    """The API key sent with ``spec``'s requests: from ``api_key_env`` when the role names it, else from the
    provider's own variable (OPENAI_API_KEY for OpenAI's endpoint only); None when none is sent. A key that is
    needed and missing is an error naming the variable; a key found is registered to be masked."""
    provider = PROVIDERS[spec.kind]
    rule = provider.key
    for variable, url in _url_variables(spec):  # refused exactly as in a spec: Basic auth, in the clear on http
        _refuse_url_credentials(url, variable)
    if rule is None:
        if api_key_env:
            raise ModelSpecError(f"model spec {spec.text!r} takes no API key, but api_key_env names {api_key_env}")
        return None
    var = api_key_env or rule.default_env(spec)
    if var is None:
        return None
    url = rule.url(spec) if rule.url else None
    problem = key_problem(url) if url else None
    if problem:
        raise ModelSpecError(f"model spec {spec.text!r}: {var} is not sent: {problem}")
    key = os.environ.get(var)
    if not key:
        if api_key_env:
            raise ModelSpecError(f"model spec {spec.text!r}: api_key_env names {var}, which is not set")
        if rule.required(spec):
            raise ModelSpecError(f"model spec {spec.text!r} needs {var} in the environment")
        return None
    register_secret(key)
    return key


def build_client(spec: ModelSpec, api_key_env: str | None = None) -> ChatCompletionClient:
    return PROVIDERS[spec.kind].build(spec, resolve_api_key(spec, api_key_env))


# ------------------------------------------------------------------------------------------- providers


def _refuse_url_credentials(url: str, where: str) -> None:
    if "@" in urlsplit(url).netloc:
        raise ModelSpecError(
            f"{where} {redact_url(url)!r} carries credentials (user:password@), which voirdire does not send: "
            "put the key in an environment variable and name it with api_key_env in the role's [roles.NAME] "
            "table (or --api-key-env ROLE=VAR)"
        )


def _url_variables(spec: ModelSpec) -> list[tuple[str, str]]:
    """The environment variables that give ``spec`` its URL, with the URL each gives (a scheme added to an
    ``OLLAMA_HOST`` of ``host:port``): only those the spec does use, since its own URL replaces them."""
    found = []
    if spec.kind == "openai" and os.environ.get("OPENAI_BASE_URL"):
        found.append(("OPENAI_BASE_URL", os.environ["OPENAI_BASE_URL"]))
    elif spec.kind == "anthropic" and os.environ.get(anthropic.BASE_URL_ENV):
        found.append((anthropic.BASE_URL_ENV, os.environ[anthropic.BASE_URL_ENV]))
    elif spec.kind == "ollama" and not spec.base_url and os.environ.get(ollama.HOST_ENV, "").strip():
        found.append((ollama.HOST_ENV, ollama.server_url(None)))
    elif spec.kind == "azure" and not spec.base_url and os.environ.get(azure.ENDPOINT_ENV):
        found.append((azure.ENDPOINT_ENV, os.environ[azure.ENDPOINT_ENV]))
    return found


LOOPBACK_HOSTS = frozenset({"localhost", "localhost.localdomain"})


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` is this machine (127.0.0.0/8, ::1, localhost): traffic to it never leaves the machine."""
    if not host:
        return False
    if host.lower() in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def key_problem(url: str, hosts: Collection[str] = ()) -> str | None:
    """Why an API key must not be sent to ``url``, or None when it may: the one rule for every provider's key.

    A key travels over ``https://`` only: plain ``http://`` carries it readable by every hop, except to this
    machine's loopback, which it never leaves. ``hosts``, when given, are the only hosts the key may go to (a
    provider's own key the role did not name, e.g. OPENAI_API_KEY: api.openai.com), and then on https's default
    port only: ``http://api.openai.com:8080`` is not OpenAI."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return "its URL is not valid"
    scheme = parts.scheme.lower()
    if hosts:
        if scheme != "https" or (host or "").lower() not in hosts or port not in (None, 443):
            return f"it goes only to https://{' or https://'.join(sorted(hosts))}"
        return None
    if scheme == "https" or (scheme == "http" and is_loopback(host)):
        return None
    return f"{redact_url(url)} is plain {scheme}://, which would carry the key readable on the way: use https://"


def _parse_openai_compatible(rest: str) -> ModelSpec | None:
    found = re.match(r"(.+?)@(https?://.+)$", rest)
    if not found:
        return None
    spec = ModelSpec(kind="openai-compatible", model=found.group(1), base_url=found.group(2))
    try:
        where = f"model spec {spec.text!r}: the URL"
    except ValueError as exc:  # a URL urlsplit cannot read ("http://[::1/v1") cannot be redacted either
        shown = f"openai-compatible:{mask_secrets(found.group(1))}@..."
        raise ModelSpecError(f"model spec {shown!r}: the URL is not valid ({exc})") from None
    _refuse_url_credentials(spec.base_url or "", where)
    try:
        parts = urlsplit(spec.base_url)
        port = parts.port
    except ValueError as exc:
        raise ModelSpecError(f"{where} is not valid ({exc})") from None
    if not parts.hostname or (port is not None and not 0 < port < 65536):
        raise ModelSpecError(f"{where} names no host" if not parts.hostname else f"{where} has port {port}")
    return spec


OPENAI_HOSTS = frozenset({"api.openai.com"})
ANTHROPIC_HOSTS = frozenset({"api.anthropic.com"})
AZURE_HOST_SUFFIXES = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com")


def _parse_at(kind: Kind, rest: str, *, url_required: bool) -> ModelSpec | None:
    """``MODEL@URL`` (or ``MODEL`` alone when the URL is optional), the URL checked as an openai-compatible one."""
    if "@" not in rest:
        return None if url_required or not rest else ModelSpec(kind=kind, model=rest)
    try:
        found = _parse_openai_compatible(rest)
    except ModelSpecError as exc:  # said of the spec as the user wrote it
        raise ModelSpecError(str(exc).replace("'openai-compatible:", f"'{kind}:", 1)) from None
    return found.model_copy(update={"kind": kind}) if found is not None else None


def _is_azure_endpoint(spec: ModelSpec) -> bool:
    """An Azure resource's own endpoint (https, its hosts): the only place AZURE_OPENAI_API_KEY goes unasked."""
    url = azure.endpoint_of(spec.base_url) or ""
    host = (urlsplit(url).hostname or "").lower()
    return host.endswith(AZURE_HOST_SUFFIXES) and key_problem(url, {host}) is None


def _at_label(kind: str) -> Callable[[ModelSpec], str]:
    return lambda s: f"{kind}:{s.model}@{redact_url(s.base_url)}" if s.base_url else f"{kind}:{s.model}"


def _is_openai_endpoint(spec: ModelSpec) -> bool:
    """OpenAI's own endpoint, scheme and host (and port) checked: the only place OPENAI_API_KEY goes unasked."""
    return key_problem(spec.base_url or "", OPENAI_HOSTS) is None


def _openai_label(spec: ModelSpec) -> str:
    base_url = os.environ.get("OPENAI_BASE_URL")
    return f"{spec.text}@{redact_url(base_url)}" if base_url else spec.text


PROVIDERS: dict[str, Provider] = {
    "local": Provider(
        forms=("local", "local:<file.gguf>"),
        parse=lambda rest: ModelSpec(kind="local", path=rest or None),
        text=lambda s: "local" if s.path is None else f"local:{s.path}",
        build=lambda s, key: LlamaCppClient.shared(Path(s.path) if s.path else embedded_model_path()),
        timeout_s=LOCAL_TIMEOUT_S,
        features=Features(structured="grammar (compiled from the schema)", samples="n generations"),
    ),
    "openai": Provider(
        forms=("openai:<model>",),
        parse=lambda rest: ModelSpec(kind="openai", model=rest) if rest else None,
        text=lambda s: f"openai:{s.model}",
        label=_openai_label,
        build=lambda s, key: openai_client(s.model, spec_text=s.text, api_key=key or ""),
        features=Features(structured="response_format (JSON schema)", samples="n in one request", key="OPENAI_API_KEY"),
        key=KeyRule(
            default_env=lambda s: "OPENAI_API_KEY",
            required=lambda s: True,
            url=lambda s: os.environ.get("OPENAI_BASE_URL") or None,
        ),
        timeout_s=CHAT_TIMEOUT_S,
        max_retries=3,
    ),
    "openai-compatible": Provider(
        forms=("openai-compatible:<model>@<url>",),
        parse=_parse_openai_compatible,
        text=lambda s: f"openai-compatible:{s.model}@{redact_url(s.base_url or '')}",
        build=lambda s, key: openai_compatible_client(s.model, s.base_url, spec_text=s.text, api_key=key),
        features=Features(
            structured="response_format (JSON schema), text on refusal",
            samples="n in one request, else n requests",
            key="none unless the role names one (OPENAI_API_KEY to https://api.openai.com)",
        ),
        expected="openai-compatible:<model>@<base_url>, e.g. openai-compatible:llama3@http://127.0.0.1:8080/v1",
        key=KeyRule(
            default_env=lambda s: "OPENAI_API_KEY" if _is_openai_endpoint(s) else None,
            required=_is_openai_endpoint,
            url=lambda s: s.base_url,
        ),
        timeout_s=CHAT_TIMEOUT_S,
        max_retries=3,
    ),
    "anthropic": Provider(
        forms=("anthropic:<model>",),
        parse=lambda rest: ModelSpec(kind="anthropic", model=rest) if rest else None,
        text=lambda s: f"anthropic:{s.model}",
        label=lambda s: f"{s.text}@{redact_url(b)}" if (b := os.environ.get(anthropic.BASE_URL_ENV)) else s.text,
        build=lambda s, key: anthropic.anthropic_client(s.model, spec_text=s.text, api_key=key or ""),
        expected="anthropic:<model>, e.g. anthropic:claude-haiku-4-5",
        key=KeyRule(
            default_env=lambda s: "ANTHROPIC_API_KEY",
            required=lambda s: True,
            url=lambda s: os.environ.get(anthropic.BASE_URL_ENV) or None,
        ),
        timeout_s=CHAT_TIMEOUT_S,
        max_retries=3,
        features=Features(
            structured="tool use (a forced tool whose input is the schema)",
            samples="n requests",
            key="ANTHROPIC_API_KEY",
        ),
    ),
    "ollama": Provider(
        forms=("ollama:<model>[@<url>]",),
        parse=lambda rest: _parse_at("ollama", rest, url_required=False),
        text=_at_label("ollama"),
        # The server as the transcript records it (like anthropic's base URL): OLLAMA_HOST's when it names one.
        label=lambda s: s.text if s.base_url or not os.environ.get(ollama.HOST_ENV, "").strip() else (
            f"{s.text}@{redact_url(ollama.server_url(None))}"
        ),
        build=lambda s, key: ollama.ollama_client(s.model, s.base_url, spec_text=s.text, api_key=key),
        expected="ollama:<model>[@<url>], e.g. ollama:llama3.2 or ollama:llama3.2@http://127.0.0.1:11434",
        key=KeyRule(default_env=lambda s: None, required=lambda s: False, url=lambda s: ollama.server_url(s.base_url)),
        timeout_s=ollama.OLLAMA_TIMEOUT_S,
        max_retries=3,
        features=Features(
            structured="format (the JSON schema)",
            samples="n requests, seeds differing",
            key="none unless the role names one",
        ),
    ),
    "azure": Provider(
        forms=("azure:<deployment>@<endpoint>",),
        parse=lambda rest: _parse_at("azure", rest, url_required=False),
        text=_at_label("azure"),
        build=lambda s, key: azure.azure_client(s.model, s.base_url, spec_text=s.text, api_key=key or ""),
        expected="azure:<deployment>@<endpoint>, e.g. azure:gpt-4o-mini@https://myresource.openai.azure.com",
        key=KeyRule(
            default_env=lambda s: azure.KEY_ENV if _is_azure_endpoint(s) else None,
            required=_is_azure_endpoint,
            url=lambda s: azure.endpoint_of(s.base_url),
        ),
        timeout_s=CHAT_TIMEOUT_S,
        max_retries=3,
        features=Features(
            structured="response_format (JSON schema), text on refusal",
            samples="n in one request",
            key="AZURE_OPENAI_API_KEY (to *.openai.azure.com and Azure's AI hosts only)",
        ),
    ),
    "scripted": Provider(
        forms=("scripted:<file>",),
        parse=lambda rest: ModelSpec(kind="scripted", path=rest) if rest else None,
        text=lambda s: f"scripted:{s.path}",
        build=lambda s, key: ScriptedChatCompletionClient.from_file(s.path or ""),
        features=Features(structured="validated", samples="n replies from the script"),
    ),
    "human": Provider(
        forms=("human",),
        parse=lambda rest: None if rest else ModelSpec(kind="human"),
        text=lambda s: "human",
        build=lambda s, key: HumanClient(),
        features=Features(structured="validated", samples="asked n times"),
    ),
}

_forms = [form for provider in PROVIDERS.values() for form in provider.forms]
_ALL_FORMS = f"{', '.join(_forms[:-1])} or {_forms[-1]}"
