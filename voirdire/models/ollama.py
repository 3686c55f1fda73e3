"""``ollama:MODEL[@URL]``: an Ollama server's own chat API (``POST /api/chat``), spoken directly on voirdire's pools.

The request is the API's own: ``stream`` off, the generation settings in ``options`` (``max_tokens`` as
``num_predict``), a reply schema as ``format`` (Ollama constrains the reply to the JSON schema), and
``keep_alive`` so the model stays loaded between the calls of a run. ``n`` samples are ``n`` requests, each seed
the call's plus the sample's index. The server is ``URL`` when the spec names one, else ``OLLAMA_HOST`` (as the
``ollama`` command reads it, ``host:port`` or a URL), else ``http://127.0.0.1:11434``. No key is sent, unless the
role names one (``api_key_env``) for a server behind an authenticating proxy; it goes as ``Authorization: Bearer``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from autogen_core.models import LLMMessage

from voirdire.models.base import InvalidReply, ModelSpecError, openai_role, text_of
from voirdire.models.native import NativeChatClient, count, sample_seed
from voirdire.models.openai import _Reply

DEFAULT_URL = "http://127.0.0.1:11434"
HOST_ENV = "OLLAMA_HOST"
KEEP_ALIVE = "10m"
"""How long the server keeps the model loaded after a request: longer than Ollama's 5 minutes, so a slow phase of a
run (a person judging, a long examination on another role) does not unload it."""
OLLAMA_TIMEOUT_S = 120.0
"""A local server may load the model on the first request (seconds to minutes) and generates on the user's own
hardware: a larger default deadline than a hosted API's."""


def server_url(url: str | None = None) -> str:
    """The server: ``url``, else ``OLLAMA_HOST`` (a scheme added when it has none), else the default."""
    if url:
        return url.rstrip("/")
    host = os.environ.get(HOST_ENV, "").strip()
    if not host:
        return DEFAULT_URL
    if "://" not in host:
        host = f"http://{host}"
    return host.rstrip("/")


def chat_url(base: str) -> str:
    base = base.rstrip("/")
    return f"{base}/chat" if base.endswith("/api") else f"{base}/api/chat"


class OllamaClient(NativeChatClient):
    """A model served by Ollama."""

    api = "Ollama chat"
    enforces = "format"

    def __init__(
        self, model: str, *, url: str | None = None, api_key: str | None = None, timeout: float = OLLAMA_TIMEOUT_S
    ) -> None:
        root = server_url(url)
        headers = {"User-Agent": "voirdire (ollama)"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        super().__init__(model, endpoint=root, url=chat_url(root), headers=headers, timeout=timeout)

    def _body(
        self, messages: Sequence[LLMMessage], args: Mapping[str, Any], schema: bool, sample: int
    ) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if args.get("max_tokens") is not None:
            options["num_predict"] = args["max_tokens"]
        for key in ("temperature", "top_p", "stop"):
            if args.get(key) is not None:
                options[key] = args[key]
        seed = sample_seed(args, sample)
        if seed is not None:
            options["seed"] = seed
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": openai_role(m), "content": text_of(m)} for m in messages],
            "stream": False,
            "keep_alive": KEEP_ALIVE,
            "options": options,
        }
        if schema:
            body["format"] = args["response_format"]["schema"]
        return body

    def _read(self, data: dict[str, Any]) -> _Reply:
        message = data.get("message")
        if not isinstance(message, dict):
            raise InvalidReply("HTTP 200 whose body is not an Ollama chat reply (no message)")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise InvalidReply("HTTP 200 with a message whose content is not text")
        reason = data.get("done_reason")
        return _Reply(
            texts=[(content or "").strip()],
            finish_reason=reason if isinstance(reason, str) else None,
            prompt_tokens=count(data.get("prompt_eval_count"), "prompt_eval_count"),
            completion_tokens=count(data.get("eval_count"), "eval_count"),
        )


def ollama_client(
    model: str | None, url: str | None, *, spec_text: str, api_key: str | None, timeout: float = OLLAMA_TIMEOUT_S
) -> OllamaClient:
    if not model:
        raise ModelSpecError(f"model spec {spec_text!r}: no model name")
    return OllamaClient(model, url=url, api_key=api_key, timeout=timeout)
