"""The site's command-line reference, written from voirdire's own argparse parser at build time.

An MkDocs hook (``hooks:`` in mkdocs.yml): ``on_files`` adds ``reference/cli.md``, generated, so the reference is
always the parser the installed ``voirdire`` builds. Every command is a section with its help line, its usage and
its options by group. The model and run options every run command shares are written once; a command whose
options are another's (``voirdire run cross_examination`` and ``voirdire examine``) points at it.
"""

from __future__ import annotations

import argparse
import html
import os
import re
from collections.abc import Iterator
from typing import Any

PAGE = "reference/cli.md"
WIDTH = "100"  # the usage lines' width (argparse reads $COLUMNS)
SHARED_GROUPS = ("models (any role can be any model)", "run")
INTRO = """# Command line

Every `voirdire` command, its options and what each does. This page is generated from the parser of the
installed `voirdire` when the site is built: `voirdire COMMAND --help` prints the same.

A protocol's run command (`voirdire examine`, `voirdire nodata`, `voirdire run NAME`, ...) takes its own
parameters, the [model options](#model-options) and the [run options](#run-options).
Exit status: 0 done, 2 a bad input (one line naming the file or the option; nothing written), 1 a bug,
130 interrupted. [Bad input](../bad_input.md) lists what each bad input prints.
"""


def commands(parser: argparse.ArgumentParser, name: str = "voirdire") -> Iterator[tuple[str, str, Any]]:
    """``(command, help line, parser)`` for every command under ``parser``, depth first, in the parser's order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for sub, subparser in action.choices.items():  # reading a parser fills its options
                yield f"{name} {sub}", helps.get(sub, ""), subparser
                yield from commands(subparser, f"{name} {sub}")


def text(value: str) -> str:
    """Help text as Markdown: its backticks stay code, what would be HTML or emphasis is shown as written."""
    return html.escape(" ".join(value.split()), quote=False).replace("*", r"\*")


def expanded(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """An option's help line with argparse's ``%(default)s`` and the like filled in, as ``--help`` shows it."""
    if not action.help:
        return ""
    values = {k: v for k, v in vars(action).items() if v is not argparse.SUPPRESS}
    values["prog"] = parser.prog
    for key in ("choices",):
        if values.get(key) is not None:
            values[key] = ", ".join(map(str, values[key]))
    try:
        return action.help % values
    except (KeyError, TypeError, ValueError):
        return action.help


def term(action: argparse.Action) -> str:
    """How an option is written: ``--out OUT``, ``-h, --help``, or a positional's name."""
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    metavar = ""
    if action.nargs != 0:
        shown = action.metavar or (action.dest.upper() if not action.choices else "{" + ",".join(action.choices) + "}")
        metavar = " " + (" ".join(shown) if isinstance(shown, tuple) else str(shown))
    return ", ".join(f"`{flag}{metavar}`" for flag in action.option_strings)


def group(parser: argparse.ArgumentParser, actions: list[argparse.Action]) -> str:
    """A group's options as a definition list (sub-command tables and ``--help`` left out)."""
    lines = []
    for action in actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        lines += [", ".join([term(action)]), f":   {text(expanded(parser, action)) or '&nbsp;'}", ""]
    return "\n".join(lines)


def usage(parser: argparse.ArgumentParser) -> str:
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        first, *rest = parser.format_usage().removeprefix("usage: ").rstrip().splitlines()
        text = "\n".join([first, *(line.removeprefix(" " * len("usage: ")) for line in rest)])
        text = re.sub(r"\{[^{}]{60,}\}", "COMMAND", text)  # a sub-command table's every name: the sections below
        return re.sub(r"\s*\n\s*(COMMAND|\.\.\.)(?=\s|$)", r" \1", text)
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def render(parser: argparse.ArgumentParser) -> str:
    """The whole reference page for ``parser``."""
    out = [INTRO, "## Global options", "", "```text", usage(parser), "```", ""]
    out.append(group(parser, parser._actions))
    shared: dict[str, str] = {}
    found: list[tuple[str, str, argparse.ArgumentParser, list[str]]] = []
    for name, help_line, sub in commands(parser):
        body: list[str] = []
        takes_shared = False
        for g in sub._action_groups:
            written = group(sub, g._group_actions)
            if not written:
                continue
            if g.title in SHARED_GROUPS and shared.setdefault(g.title, written) == written:
                takes_shared = True  # the shared model or run options, written once below
                continue
            title = "Arguments" if g.title == "positional arguments" else (g.title or "options").capitalize()
            body += [f"**{text(title)}**", "", written]
        if takes_shared:
            body += ["Also the [model options](#model-options) and the [run options](#run-options).", ""]
        found.append((name, help_line, sub, body))
    # Commands with the same options are written once, under the name a user types (`examine`, not `run ...`).
    canonical: dict[str, str] = {}
    for name, _, _, body in sorted(found, key=lambda f: f[0].startswith("voirdire run ")):
        canonical.setdefault("\n".join(body), name)
    for title, anchor in zip(SHARED_GROUPS, ("Model options", "Run options"), strict=True):
        if title in shared:
            out += [f"## {anchor}", "", "Every run command takes these.", "", shared[title]]
    for name, help_line, sub, body in found:
        out += [f"## {name}", "", text(help_line or sub.description or ""), ""]
        first = canonical.get("\n".join(body), name) if body else name
        if first != name:
            out += [f"The same options as [`{first}`](#{first.replace(' ', '-')}).", ""]
        else:
            out += ["```text", usage(sub), "```", "", *body]
    return "\n".join(out)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    from voirdire.cli import build_parser

    files.append(File.generated(config, PAGE, content=render(build_parser())))
    return files
