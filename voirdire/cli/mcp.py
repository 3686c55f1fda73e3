"""``voirdire mcp``: voirdire as an MCP server on stdio (``voirdire.integrations``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.cli.options import CLIError, ModelOptions, add_model_options

if TYPE_CHECKING:
    from voirdire.integrations import McpConfig


def register(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve the runs and claim examinations to an agent over MCP (stdio): tools list_runs, read_session, "
        "report, examine_claim",
    )
    p.add_argument(
        "--folder", action="append", type=Path, default=[], metavar="DIR",
        help="a folder whose transcripts the tools read (repeatable; default: transcripts)",
    )  # fmt: skip
    p.add_argument(
        "--out", type=Path, metavar="FILE",
        help="the transcript examine_claim writes (default: examine-mcp.jsonl in the first folder)",
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
    return McpConfig(folders=tuple(folders), out=out, models=models)


def cmd_mcp(args: argparse.Namespace) -> int:
    from voirdire.integrations import build_server

    server = build_server(config_of(args))
    server.run("stdio")  # the stdio transport: stdout carries the protocol, so nothing else may print there
    return 0
