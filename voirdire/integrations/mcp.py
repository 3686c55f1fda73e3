"""voirdire as an MCP server: an agent lists the runs, reads a session as a chat, reads a run's report, asks for
a claim to be examined, and lists and reads back the claims it had examined.

Built on the official ``mcp`` SDK (``MCPServer``, stdio transport). Which models play the roles, and where the
examinations are written, is the server's own configuration (its command line): a tool call names a claim, never a
model, an endpoint or a key, so a caller cannot spend another key or point a role at its own server. Every
examination is a session of its own in the server's one transcript (named in its startup line and in each result):
a claim examined again is examined again, across restarts too. A claim longer than ``max_claim_chars`` is refused.
What a tool reads is confined to the served folders: a run is named by its file name there, not by a path, and a
file whose real path (symbolic links followed) is outside its folder is not served.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.base import VoirdireError, mask_secrets, shown
from voirdire.chat import render
from voirdire.models import RoleSettings
from voirdire.registry import api_function, report_folds
from voirdire.reports import load_prices, report_file
from voirdire.transcript import is_transcript, load_outline, load_session

if TYPE_CHECKING:
    from mcp.server import MCPServer

LISTED_MAX = 500  # runs one list_runs answer names: an answer an agent can read, not a folder dump
EXAMINE_CALL = "aexamine"  # the registered API call that examines one claim (Registration.api)
MAX_CLAIM_CHARS = 10_000  # a claim an examination can read, not a document (a 6 MB claim wrote an 18 MB transcript)


class McpError(VoirdireError, ValueError):
    """A tool call that cannot be answered: an unknown run or session, or no examination protocol installed."""


@dataclass(frozen=True)
class McpConfig:
    """What the server serves: the folders whose runs it reads, the transcript examinations go to, the roles."""

    folders: Sequence[Path]
    out: Path
    models: Mapping[str, RoleSettings] = field(default_factory=dict)
    max_claim_chars: int = MAX_CLAIM_CHARS
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, compare=False)  # one examination at a time: ids in turn

    def startup_line(self) -> str:
        """What the server says on stderr when it starts (stdout carries the protocol)."""
        folders = ", ".join(str(f) for f in self.folders)
        return f"voirdire mcp: examinations go to {self.out}; serving the runs in {folders}"


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path``'s real path (every symbolic link followed) is inside ``folder``'s."""
    try:
        return path.resolve(strict=True).is_relative_to(folder.resolve(strict=True))
    except OSError:  # a dangling link, or a loop
        return False


def _runs(config: McpConfig) -> dict[str, Path]:
    """Transcripts in the served folders by the name a tool call uses (``folder/file.jsonl`` when two folders
    hold the same file name); sidecars (``.labels.jsonl``), caches and links out of the folder are not runs."""
    found: dict[str, Path] = {}
    for folder in config.folders:
        for path in sorted(folder.glob("*.jsonl")):
            if path.name.endswith(".labels.jsonl") or not _inside(path, folder) or not is_transcript(path):
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
    """Examine one claim with the server's roles, as a new session of the server's transcript; the verdict, its
    evidence, the transcript and the session to read it by."""
    call = api_function(EXAMINE_CALL)
    if call is None:
        raise McpError("no installed protocol offers a claim examination (a registered `aexamine` API call)")
    if not claim.strip():
        raise McpError("claim: empty")
    if len(claim) > config.max_claim_chars:
        raise McpError(f"claim: {len(claim):,} characters, more than the {config.max_claim_chars:,} this server "
                       "examines (its --max-claim-chars)")  # fmt: skip
    async with config.lock:  # the next session id is read from the transcript: two calls take theirs in turn
        verdict = await call(claim, models=dict(config.models) or None, out=config.out)
    t = load_session(config.out, verdict.session_id)
    return {
        "decision": verdict.decision,
        "accepted": verdict.accepted,
        "evidence": [mask_secrets(e) for e in verdict.evidence],
        "transcript": config.out.name,
        "run": config.out.name,
        "session_id": verdict.session_id,
        "chat": mask_secrets(render(t, session=verdict.session_id, color=False)),
    }


def list_sessions(config: McpConfig) -> list[dict[str, Any]]:
    """The sessions of the server's transcript, in the order they ran: each one's id, claim and verdict."""
    if not config.out.is_file():
        return []
    listed = []
    for sid, s in load_outline(config.out).sessions.items():
        v = s.verdict
        listed.append({
            "session_id": sid,
            "claim": mask_secrets(str(s.item.get("claim") or s.item.get("question") or "")),
            "decision": v.decision if v is not None else ("error" if s.errors else "unfinished"),
            "accepted": v.accepted if v is not None else None,
        })  # fmt: skip
    return listed


def show_session(config: McpConfig, session_id: str) -> str:
    """One session of the server's transcript as a chat."""
    if not config.out.is_file():
        raise McpError(f"no claim examined yet: {config.out.name} does not exist")
    t = load_session(config.out, session_id)
    if session_id not in t.sessions:
        raise McpError(f"{config.out.name} has no session {session_id!r} (list_sessions names them)")
    return mask_secrets(render(t, session=session_id, color=False))


def build_server(config: McpConfig) -> MCPServer:
    """The MCP server with its six tools; errors a caller can cause come back as tool errors, not crashes."""
    from mcp.server import MCPServer

    server = MCPServer(
        "voirdire",
        instructions="voirdire examines claims with LLM agents and keeps every examination as a transcript. "
        "list_runs names the runs; read_session shows one session as a chat; report gives a run's numbers; "
        "examine_claim examines a claim with the server's configured models, each call a new session of the server's "
        "transcript; list_sessions names those sessions and show_session shows one as a chat.",
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

    def sessions() -> list[dict[str, Any]]:
        return told(list_sessions, config)  # type: ignore[no-any-return]

    def show(session_id: str) -> str:
        return told(show_session, config, session_id)  # type: ignore[no-any-return]

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
                    "models, as a new session of the server's transcript; the verdict, its evidence and its "
                    "chat.")  # fmt: skip
    server.add_tool(sessions, name="list_sessions", description="The claims this server examined (its transcript's "
                    "sessions): session id, claim, verdict.")  # fmt: skip
    server.add_tool(show, name="show_session", description="One session of this server's transcript (an id "
                    "list_sessions gives) as a chat.")  # fmt: skip
    return server

