"""Every command in README.md (and in the docs, where practical) runs as written.

The shell blocks of each document are run in order in a temporary folder of their own, with ``../shared`` beside
it, so files one command writes (``qs.jsonl``, a transcript) are there for the next; a TOML or YAML block whose
first line names a file (``# run.toml: ...``) is that file, written first; README's Python blocks run too. Each
``voirdire`` command runs in this process and must exit 0. What is changed, and only that:

- models: ``local`` answers from a fake OpenAI-compatible server on 127.0.0.1 (``tests/fake_openai.py``), as do
  ``openai:`` specs (``OPENAI_BASE_URL``) and every ``openai-compatible:`` URL; the server replies to every prompt
  of the built-in protocols by rule;
- size: a ``--limit`` above 3 becomes 3, a run on a whole dataset gets ``--limit 3``, ``--seeds`` above 2 becomes 2,
  so the documents' full-size runs stay short.

Commands that cannot run here are skipped for a stated reason (``SKIPS``): building the environment, benchmarks,
downloads, a server that runs until Ctrl-C, a person typing, model files or data of the reader's own, placeholders.
Without ``../shared`` (the papers' data) the test is skipped, except in CI.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import FakeOpenAIServer
from voirdire.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
DOCUMENTS = ("README.md", "docs/reliability.md", "docs/qa_entailment.md", "docs/no_data.md", "docs/viewer.md")

# (pattern in the command, why it is not run here)
SKIPS: tuple[tuple[str, str], ...] = (
    (r"^make\b", "builds the environment (make demo) or runs this suite (make test)"),
    (r"^(\.venv/bin/)?python\b", "a benchmark script or the test suite itself"),
    (r"^huggingface-cli\b", "downloads a model"),
    (r"^voirdire view\b", "a web server that runs until Ctrl-C (tests/web drives it)"),
    (r"<[a-z]+>", "a placeholder for a name the run prints"),
    (r"=human\b", "a person types the replies"),
    (r"--nli-model|local:/", "a model file of the reader's own"),
    (r"--data (NQ\.json|my_[a-z_]+\.json)", "a file of the reader's own"),
    (r"export-html transcripts/popqa\.jsonl --session", "a session of the README's PopQA run (README's own runs)"),
)


def responder(messages: list[dict[str, Any]]) -> str:
    """A reply to every prompt of the built-in protocols, by rule over the last message."""
    last = str(messages[-1].get("content", "")) if messages else ""
    everything = " ".join(str(m.get("content", "")) for m in messages)
    rules = (
        ("phrase your answer as a claim", "The Greek god of marriage is Hymenaios."),
        ("complete the following sentence", "Hymenaios."),
        ("Your goal is to try to verify", "1. Who is Hymenaios?\n2. Who is Hera?"),
        ("Imagine trying to prove", "1. Who is Hymenaios?"),
        ("regarding your claim.", "Hymenaios is the god of marriage; Hera is a goddess."),
        ("follow-up questions?", "No"),
        ("What are the follow-up questions", "1. Is Hera a god of marriage?"),
        ("correct or incorrect", "The claim is correct."),
        ("Are you sure", "Yes"),
        ("declarative statement", "The answer is Paris."),
        ("entails or contradicts", "entailment"),
        ("S1 entails S2", "1. S1 names the answer.\n2. S2 says the same."),
        ("rate how hard", "2"),
        ("golden answers", "4"),
    )
    for needle, reply in rules:
        if needle in last:
            return reply
    if "|label|" in everything or "labelling binary strings" in everything:
        return "|label|\n1\n|label|"
    if "|datapoint|" in everything or "datapoint" in everything.lower():
        bits = re.findall(r"\b[01]{6,}\b", last)
        return f"|datapoint|\n{bits[-1] if bits else '0' * 12}\n|datapoint|"
    return "I do not know."


# ---------------------------------------------------------------------------------------------------- the blocks


@dataclasses.dataclass(frozen=True)
class Block:
    document: str
    line: int
    lang: str
    text: str


def blocks(document: str) -> list[Block]:
    text = (ROOT / document).read_text(encoding="utf-8")
    return [
        Block(document, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2))
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)
    ]


def commands(block: Block) -> Iterator[tuple[int, str]]:
    """The block's commands, continuation lines joined, with the line each starts on."""
    pending, start = "", 0
    for k, line in enumerate(block.text.splitlines()):
        if not pending:
            start = block.line + 1 + k
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            yield start, command


def named_file(block: Block) -> str | None:
    """``run.toml`` for a block whose first line is ``# run.toml: ...``."""
    first = block.text.splitlines()[0] if block.text else ""
    found = re.match(r"#\s*([\w.-]+\.(?:toml|ya?ml|json|jsonl)):", first)
    return found.group(1) if found else None


def on_fake_server(text: str, url: str) -> str:
    """``text`` with every openai-compatible spec's URL replaced by the fake server's."""
    return re.sub(r"(openai-compatible:[^@\s\"']+)@[^\s\"']+", rf"\1@{url}", text)


def rewritten(argv: list[str], url: str) -> list[str]:
    """The command with every openai-compatible URL on the fake server and its runs cut short."""
    out = [on_fake_server(a, url) for a in argv]
    for flag, cap in (("--limit", 3), ("--seeds", 2)):
        if flag in out:
            k = out.index(flag) + 1
            out[k] = str(min(int(out[k]), cap))
    runs = out[0] in ("examine", "nodata", "qa-eval", "run") and any(f in out for f in ("--questions", "--data"))
    if runs and "--limit" not in out and "--help" not in out:
        out += ["--limit", "3"]
    return out


def skip_reason(command: str) -> str | None:
    return next((why for pattern, why in SKIPS if re.search(pattern, command)), None)


# ---------------------------------------------------------------------------------------------------- running


@pytest.fixture
def fake_models(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The fake server's URL; ``local``, ``openai:`` and keys point at it for the test."""
    from voirdire.models import spec
    from voirdire.models.openai import openai_compatible_client

    with FakeOpenAIServer(responder) as server:
        local = spec.PROVIDERS["local"]
        fake = dataclasses.replace(
            local, build=lambda s, key: openai_compatible_client("local", server.url, spec_text="local", api_key=None)
        )
        monkeypatch.setitem(spec.PROVIDERS, "local", fake)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-readme-test-0123456789")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("INFERENCE_KEY", "inference-readme-test-key")
        monkeypatch.setenv("NO_COLOR", "1")
        yield server.url


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder with ``../shared`` beside it."""
    if not SHARED.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{SHARED} is missing: the documents' commands read the papers' data from it")
        pytest.skip(f"{SHARED} (the papers' data) is not beside the repository")
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "shared").symlink_to(SHARED)
    monkeypatch.chdir(work)
    return work


def run_python(block: Block, namespace: dict[str, Any]) -> None:
    """Run a Python block in the document's one namespace (as a notebook would); top-level ``await`` allowed."""
    code = compile(block.text, f"{block.document}:{block.line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, namespace)  # a block with top-level await gives a coroutine
    if asyncio.iscoroutine(result):
        asyncio.run(result)


def run_document(document: str, url: str, capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str]]:
    """Run the document's blocks in order; returns the commands skipped, each with why."""
    skipped: list[tuple[str, str]] = []
    namespace: dict[str, Any] = {"__name__": "__readme__"}
    for block in blocks(document):  # the files the document spells out, before the commands that name them
        name = named_file(block)
        if name is not None:
            Path(name).write_text(on_fake_server(block.text, url), encoding="utf-8")
    for block in blocks(document):
        if named_file(block) is not None:
            continue
        if block.lang == "python" and document == "README.md":
            run_python(block, namespace)
            continue
        if block.lang not in ("sh", "bash"):
            continue
        for line, command in commands(block):
            where = f"{document}:{line}: {command}"
            why = skip_reason(command)
            if why:
                skipped.append((where, why))
                continue
            argv = shlex.split(command, comments=True)
            if argv[0] in ("echo", "printf"):
                subprocess.run(command, shell=True, check=True, executable="/bin/bash")
                continue
            assert argv[0] == "voirdire", f"{where}: not a voirdire command, and no reason to skip it"
            try:
                code = main(rewritten(argv[1:], url))
            except SystemExit as exc:  # --help
                code = int(exc.code or 0)
            err = capsys.readouterr().err
            assert code == 0, f"{where}\nexit {code}; stderr:\n{err[-2000:]}"
    return skipped


@pytest.mark.filterwarnings("ignore:examiner and examinee are both served")  # README's Python block binds both
def test_every_readme_command_runs(folder: Path, fake_models: str, capsys: pytest.CaptureFixture[str]) -> None:
    skipped = run_document("README.md", fake_models, capsys)
    print("\n".join(f"skipped {where} ({why})" for where, why in skipped))
    assert len(skipped) <= 4  # make demo, make test, the local NLI model, the view server
    assert Path("transcripts/popqa.jsonl").is_file() and Path("results.json").is_file()


@pytest.mark.parametrize("document", DOCUMENTS[1:])
def test_the_docs_commands_run(
    document: str, folder: Path, fake_models: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("qs.jsonl").write_text('{"question": "Who is the Greek god of marriage?", "answers": ["Hymenaios"]}\n')
    run_document(document, fake_models, capsys)


def test_commands_are_read_as_a_shell_reads_them() -> None:
    block = Block("x.md", 1, "sh", 'voirdire a \\\n    --b c   # a comment\n\n# only a comment\necho "x # y"\n')
    assert list(commands(block)) == [(2, "voirdire a      --b c   # a comment"), (6, 'echo "x # y"')]
    assert rewritten(["examine", "--questions", "q.jsonl", "--limit", "200"], "U") == [
        "examine", "--questions", "q.jsonl", "--limit", "3",
    ]  # fmt: skip
    assert rewritten(["examine", "X", "--model", "e=openai-compatible:m@http://h:1/v1"], "U")[-1] == (
        "e=openai-compatible:m@U"
    )
