"""Run a protocol's own code over items with its events in memory, for batch experiments that need no file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel

from voirdire.models import RoleSettings
from voirdire.runner.roles import client_label
from voirdire.session import PromptLibrary, Protocol, Session
from voirdire.transcript import MemoryWriter, Verdict

if TYPE_CHECKING:
    from autogen_agentchat.agents import BaseChatAgent


async def run_in_memory(
    protocol: Protocol[Any, Any],
    items: Sequence[BaseModel],
    *,
    clients: Mapping[str, ChatCompletionClient] | None = None,
    prompts: PromptLibrary | None = None,
    keep: bool = False,
    run_id: str = "memory",
) -> tuple[list[Verdict], MemoryWriter]:
    """Run ``protocol`` on every item, one after another, with its events kept in memory (``keep``) or only
    counted: the protocol's own code for batch experiments of many thousands of sessions that need the verdicts
    and no file. Model roles are played by ``clients``; an exception propagates (no isolation, no resume)."""
    from voirdire.agents import ModelAgent  # autogen-agentchat: imported by a run, not by importing the runner

    prompts = prompts or protocol.prompt_library()
    prompts.preload(protocol.prompt_folder)
    writer = MemoryWriter(keep=keep)
    settings = RoleSettings()
    verdicts = []
    for i, item in enumerate(items):
        sid = protocol.item_id(item) or f"item-{i + 1}"
        agents: dict[str, BaseChatAgent] = dict(protocol.deterministic_agents(item))
        for role, client in (clients or {}).items():
            agents[role] = ModelAgent(role, client, settings, model_label=client_label(client))
        session = Session(
            run_id=run_id, session_id=sid, protocol=protocol, agents=agents, writer=writer, prompts=prompts
        )
        session.start(sid, item.model_dump(mode="json"))
        verdicts.append(await protocol.run(item, session))
    return verdicts, writer
