"""``azure:DEPLOYMENT@ENDPOINT``: a deployment of Azure OpenAI (``https://RESOURCE.openai.azure.com``).

Azure serves OpenAI's chat completions under the deployment's own path, with the API version as a query
parameter and the key in an ``api-key`` header::

    POST {ENDPOINT}/openai/deployments/{DEPLOYMENT}/chat/completions?api-version={api_version}

so the client is voirdire's OpenAI client (its pools, limit, ``n`` in one request, ``response_format`` with the
text fallback) with that URL and header. The API version is the role's ``api_version`` setting (``[roles.NAME]``
in the run config), else ``DEFAULT_API_VERSION``; it travels with each call, so roles that share a deployment may
ask for different versions. The key is ``AZURE_OPENAI_API_KEY`` (or the role's ``api_key_env``); ``ENDPOINT`` may
be left out when ``AZURE_OPENAI_ENDPOINT`` names it.
"""

from __future__ import annotations

import contextvars
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from autogen_core.models import LLMMessage

from voirdire.models.base import Completion, ModelSpecError
from voirdire.models.openai import CHAT_TIMEOUT_S, OpenAIChatClient

ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"
KEY_ENV = "AZURE_OPENAI_API_KEY"
DEFAULT_API_VERSION = "2024-10-21"
"""Azure OpenAI's generally available API version with structured outputs (``response_format`` JSON schema)."""
API_VERSION_ARG = "api_version"
"""The key of a call's arguments that carries the role's API version: voirdire's own, never a generation setting."""

_version: contextvars.ContextVar[str] = contextvars.ContextVar("azure_api_version", default=DEFAULT_API_VERSION)


def endpoint_of(url: str | None) -> str | None:
    """The resource's endpoint: ``url``, else ``AZURE_OPENAI_ENDPOINT``; None when neither names one."""
    found = url or os.environ.get(ENDPOINT_ENV) or None
    return found.rstrip("/") if found else None


class AzureOpenAIClient(OpenAIChatClient):
    """One Azure OpenAI deployment; the request body is OpenAI's (``model`` is the deployment's name)."""

    def __init__(self, deployment: str, *, endpoint: str, api_key: str, timeout: float = CHAT_TIMEOUT_S) -> None:
        super().__init__(deployment, base_url=endpoint, api_key=api_key, timeout=timeout)
        self._deployment_url = (
            f"{endpoint.rstrip('/')}/openai/deployments/{quote(deployment, safe='')}/chat/completions"
        )
        self._headers = {
            **({"api-key": api_key} if api_key else {}),  # no key: no header, never an empty one
            "Accept": "application/json",
            "Content-Type": "application/json",
            "User-Agent": "voirdire (azure-openai)",
        }

    @property  # type: ignore[override]
    def _url(self) -> str:
        """The URL of the call in progress: the deployment's, with the call's API version."""
        return f"{self._deployment_url}?api-version={quote(_version.get(), safe='')}"

    @_url.setter
    def _url(self, value: str) -> None:  # the base class sets its own; this one depends on the call
        return None

    async def complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any], n: int = 1) -> Completion:
        # Set in this call's own context: calls of other roles running at the same time keep theirs.
        token = _version.set(str(args.get(API_VERSION_ARG) or DEFAULT_API_VERSION))
        try:
            return await super().complete(messages, args, n)
        finally:
            _version.reset(token)


def azure_client(
    deployment: str | None, endpoint: str | None, *, spec_text: str, api_key: str, timeout: float = CHAT_TIMEOUT_S
) -> AzureOpenAIClient:
    found = endpoint_of(endpoint)
    if not deployment:
        raise ModelSpecError(f"model spec {spec_text!r}: no deployment name")
    if not found:
        raise ModelSpecError(
            f"model spec {spec_text!r}: no endpoint; write azure:DEPLOYMENT@https://RESOURCE.openai.azure.com "
            f"or set {ENDPOINT_ENV}"
        )
    if not api_key and os.environ.get(KEY_ENV) and found not in _withheld_said:
        # The key goes unasked only to Azure's own hosts (a proxy or a gateway may log it): said once per endpoint.
        _withheld_said.add(found)
        warnings.warn(
            f"{spec_text}: {found} is not an Azure OpenAI host, so {KEY_ENV} is not sent (no api-key header); to "
            f"send it there, name it for the role: api_key_env = \"{KEY_ENV}\" in its [roles.NAME] table, or "
            f"--api-key-env ROLE={KEY_ENV}",
            stacklevel=2,
        )
    return AzureOpenAIClient(deployment, endpoint=found, api_key=api_key, timeout=timeout)


_withheld_said: set[str] = set()
