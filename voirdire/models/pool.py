"""Clients by spec for one run: each spec (with its key) is built once and shared by every role that names it."""

from __future__ import annotations

from collections.abc import Mapping

from autogen_core.models import ChatCompletionClient

from voirdire.models.replay import replayed
from voirdire.models.spec import ModelSpec, build_client, parse_spec


class ModelPool:
    """Clients by spec and key variable, built once per run: roles that name the same spec and key share one."""

    def __init__(self, overrides: Mapping[str, ChatCompletionClient] | None = None):
        self._clients: dict[tuple[str, str | None], ChatCompletionClient] = {
            (spec, None): client for spec, client in (overrides or {}).items()
        }

    def get(
        self, spec_text: str, api_key_env: str | None = None, spec: ModelSpec | None = None
    ) -> ChatCompletionClient:
        """The client of ``spec_text`` (``spec``: the same, already parsed) with the key ``api_key_env`` names."""
        key = (spec_text, api_key_env)
        if key not in self._clients:
            parsed = spec if spec is not None else parse_spec(spec_text)
            # under replay (VOIRDIRE_REPLAY) the recordings answer: the real client is built only to record
            self._clients[key] = replayed(spec_text, lambda: build_client(parsed, api_key_env))
        return self._clients[key]

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
