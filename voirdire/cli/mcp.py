"""``voirdire mcp``: voirdire as an MCP server on stdio (``voirdire.integrations``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.cli.options import CLIError, ModelOptions, add_model_options, at_least

if TYPE_CHECKING:
    from voirdire.integrations import McpConfig


def register(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve the runs and claim examinations to an agent over MCP (stdio): tools list_runs, read_session, "
        "report, examine_claim, list_sessions, show_session",
    )
    p.add_argument(
        "--folder", action="append", type=Path, default=[], metavar="DIR",
        help="a folder whose transcripts the tools read (repeatable; default: transcripts)",
    )  # fmt: skip
    p.add_argument(
        "--out", type=Path, metavar="FILE",
        help="the transcript examine_claim writes, one session a call (default: examine-mcp.jsonl in the first folder)",
    )  # fmt: skip
    p.add_argument(
        "--max-claim-chars", type=at_least(1), default=None, metavar="N",
        help="the longest claim examine_claim takes (default 10,000 characters; a longer one is a tool error)",
    )  # fmt: skip
    add_model_options(p)  # the roles are the server's: a tool call names a claim, never a model or a key
    p.set_defaults(func=cmd_mcp)


def config_of(args: argparse.Namespace) -> McpConfig:
    from voirdire.cli.roles import roles_from_options  # the models' layer: imported by this command, not by --help
    from voirdire.integrations import McpConfig  # the MCP server and the chat (rich): imported by this command only

    folders = args.folder or [Path("transcripts")]
    for folder in folders:
        if folder.exists() and not folder.is_dir():
            raise CLIError(f"--folder: {folder} is not a folder")
    out = args.out or folders[0] / "examine-mcp.jsonl"
    models = roles_from_options(ModelOptions.model_validate(vars(args)))
    cap = {"max_claim_chars": args.max_claim_chars} if args.max_claim_chars else {}  # else the server's default
    return McpConfig(folders=tuple(folders), out=out, models=models, **cap)


def cmd_mcp(args: argparse.Namespace) -> int:
    from voirdire.integrations import build_server

    config = config_of(args)
    server = build_server(config)
    print(config.startup_line(), file=sys.stderr, flush=True)
    server.run("stdio")  # the stdio transport: stdout carries the protocol, so nothing else may print there
    return 0
