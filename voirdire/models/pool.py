"""Clients by spec for one run: each spec is built once and shared by every role that names it."""

from __future__ import annotations

from collections.abc import Mapping

from autogen_core.models import ChatCompletionClient

from voirdire.models.spec import build_client, parse_spec


class ModelPool:
    """Clients by spec, built once per run: roles that name the same spec share one client."""

    def __init__(self, overrides: Mapping[str, ChatCompletionClient] | None = None):
        self._clients: dict[str, ChatCompletionClient] = dict(overrides or {})

    def get(self, spec_text: str) -> ChatCompletionClient:
        if spec_text not in self._clients:
            self._clients[spec_text] = build_client(parse_spec(spec_text))
        return self._clients[spec_text]

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
