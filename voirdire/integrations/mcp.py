"""voirdire as an MCP server: an agent lists the runs, reads a session as a chat, reads a run's report, and asks
for a claim to be examined.

Built on the official ``mcp`` SDK (``MCPServer``, stdio transport). Which models play the roles, and where the
examinations are written, is the server's own configuration (its command line): a tool call names a claim, never a
model, an endpoint or a key, so a caller cannot spend another key or point a role at its own server. What a tool
reads is confined to the served folders: a run is named by its file name there, not by a path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.base import VoirdireError, mask_secrets, shown
from voirdire.chat import render
from voirdire.models import RoleSettings
from voirdire.registry import api_function, report_folds
from voirdire.reports import load_prices, report_file
from voirdire.transcript import is_transcript, load, load_outline, load_session

if TYPE_CHECKING:
    from mcp.server import MCPServer

LISTED_MAX = 500  # runs one list_runs answer names: an answer an agent can read, not a folder dump
EXAMINE_CALL = "aexamine"  # the registered API call that examines one claim (Registration.api)


class McpError(VoirdireError, ValueError):
    """A tool call that cannot be answered: an unknown run or session, or no examination protocol installed."""


@dataclass(frozen=True)
class McpConfig:
    """What the server serves: the folders whose runs it reads, the transcript examinations go to, the roles."""

    folders: Sequence[Path]
    out: Path
    models: Mapping[str, RoleSettings] = field(default_factory=dict)


def _runs(config: McpConfig) -> dict[str, Path]:
    """Transcripts in the served folders by the name a tool call uses (``folder/file.jsonl`` when two folders
    hold the same file name); sidecars (``.labels.jsonl``) and caches are not runs."""
    found: dict[str, Path] = {}
    for folder in config.folders:
        for path in sorted(folder.glob("*.jsonl")):
            if path.name.endswith(".labels.jsonl") or not is_transcript(path):
                continue
            name = path.name if path.name not in found else f"{folder.name}/{path.name}"
            found[name] = path
    return found


def _run(config: McpConfig, run: str) -> Path:
    runs = _runs(config)
    if run not in runs:
        known = ", ".join(list(runs)[:10]) or "none"
        raise McpError(f"no run {run!r} in the served folders (runs: {known})")
    return runs[run]


def list_runs(config: McpConfig) -> list[dict[str, Any]]:
    """Each run: its name, protocol, sessions, verdicts by decision."""
    listed = []
    for name, path in list(_runs(config).items())[:LISTED_MAX]:
        t = load_outline(path)
        decisions: dict[str, int] = {}
        for s in t.sessions.values():
            key = s.verdict.decision if s.verdict is not None else ("error" if s.errors else "unfinished")
            decisions[key] = decisions.get(key, 0) + 1
        listed.append(
            {
                "run": name,
                "protocol": t.header.protocol if t.header else None,
                "sessions": len(t.sessions),
                "decisions": decisions,
            }
        )
    return listed


def read_session(config: McpConfig, run: str, session_id: str) -> str:
    """One session of a run as the chat ``voirdire show`` prints, without colour."""
    path = _run(config, run)
    t = load_session(path, session_id)
    if session_id not in t.sessions:
        raise McpError(f"run {run!r} has no session {session_id!r} (list_runs names the runs; `voirdire show "
                       f"{path} --list` its sessions)")  # fmt: skip
    return mask_secrets(render(t, session=session_id, color=False))


def run_report(config: McpConfig, run: str) -> str:
    """The run's report, as ``voirdire report`` prints it."""
    path = _run(config, run)
    report, _ = report_file(path, report_folds(), prices=load_prices())
    return mask_secrets(shown(report.text()))


async def examine_claim(config: McpConfig, claim: str) -> dict[str, Any]:
    """Examine one claim with the server's roles; the verdict, its evidence and the session to read it by."""
    call = api_function(EXAMINE_CALL)
    if call is None:
        raise McpError("no installed protocol offers a claim examination (a registered `aexamine` API call)")
    if not claim.strip():
        raise McpError("claim: empty")
    verdict = await call(claim, models=dict(config.models) or None, out=config.out)
    t = load(config.out)
    run = config.out.name
    return {
        "decision": verdict.decision,
        "accepted": verdict.accepted,
        "evidence": [mask_secrets(e) for e in verdict.evidence],
        "run": run,
        "session_id": verdict.session_id,
        "chat": mask_secrets(render(t, session=verdict.session_id, color=False)),
    }


def build_server(config: McpConfig) -> MCPServer:
    """The MCP server with its four tools; errors a caller can cause come back as tool errors, not crashes."""
    from mcp.server import MCPServer

    server = MCPServer(
        "voirdire",
        instructions="voirdire examines claims with LLM agents and keeps every examination as a transcript. "
        "list_runs names the runs; read_session shows one session as a chat; report gives a run's numbers; "
        "examine_claim examines a claim with the server's configured models.",
    )

    from mcp.server.mcpserver.exceptions import ToolError

    def told(call: Any, *args: Any) -> Any:
        """A caller's mistake (an unknown run, an empty claim, a failed session) comes back with its message; any
        other exception stays the SDK's generic crash, its text kept on the server."""
        try:
            return call(*args)
        except VoirdireError as exc:
            raise ToolError(mask_secrets(str(exc))) from None

    def runs() -> list[dict[str, Any]]:
        return told(list_runs, config)  # type: ignore[no-any-return]

    def session(run: str, session_id: str) -> str:
        return told(read_session, config, run, session_id)  # type: ignore[no-any-return]

    def report(run: str) -> str:
        return told(run_report, config, run)  # type: ignore[no-any-return]

    async def examine(claim: str) -> dict[str, Any]:
        try:
            return await examine_claim(config, claim)
        except VoirdireError as exc:
            raise ToolError(mask_secrets(str(exc))) from None

    server.add_tool(runs, name="list_runs", description="The runs in the served folders: protocol, sessions, "
                    "verdicts by decision.")  # fmt: skip
    server.add_tool(session, name="read_session", description="One session of a run (a name list_runs gives) "
                    "as a chat.")  # fmt: skip
    server.add_tool(report, name="report", description="A run's report: its numbers with their intervals, as "
                    "`voirdire report` prints it.")  # fmt: skip
    server.add_tool(examine, name="examine_claim", description="Examine a claim with the server's configured "
                    "models; the verdict, its evidence and its chat.")  # fmt: skip
    return server

