"""The fake OpenAI-compatible chat-completions server of the integration tests and the benches that need one: the
chaos server (``tests.chaos.server.ChaosServer``, 127.0.0.1 only) with the options those tests use."""

from __future__ import annotations

from typing import Any

from tests.chaos.server import ChaosServer, Responder

__all__ = ["FakeOpenAIServer", "Responder"]


class FakeOpenAIServer(ChaosServer):
    """Answers ``POST /v1/chat/completions`` with ``responder(messages)``; the first ``fail_first`` requests fail
    with HTTP 500 (to exercise retries); ``reject_response_format`` answers a request with a ``response_format``
    with HTTP 400; ``honour_n=False`` returns one choice whatever ``n`` asks. Every request body is in
    ``requests``."""

    def __init__(
        self,
        responder: Responder,
        fail_first: int = 0,
        *,
        reject_response_format: bool = False,
        honour_n: bool = True,
    ) -> None:
        def plan(index: int, body: dict[str, Any]) -> str:
            if index < fail_first:
                return "500"
            return "400" if reject_response_format and "response_format" in body else "ok"

        super().__init__(responder, plan, honour_n=honour_n)

    @property
    def requests(self) -> list[dict[str, Any]]:
        return [entry.body for entry in self.log]

    def __enter__(self) -> FakeOpenAIServer:
        super().__enter__()
        return self
