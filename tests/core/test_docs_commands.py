"""Every command block of the README and of every page of docs/, run in sequence in ONE working folder (a copy of
the checkout, ``../shared`` beside it), as a new user would copy them: so a run that refuses another's transcript,
a file one page expects another to have left, or a name one command prints and the next cannot find, fails here.

How the documents mark their code: a fenced block opened with ```` ```sh ```` holds shell commands (one a line,
``\\`` continues one, ``#`` starts a comment); ```` ```toml ````, ```` ```yaml ```` and ```` ```python ```` blocks whose
first line is ``# NAME.EXT: ...`` are files a command reads (written into the folder before the page's commands);
the README's other Python blocks run in one namespace, as a notebook would; a docs page's Python that is a
complete program runs too, a fragment (a protocol author's class, ``roles=...``) is skipped for its reason. Shell
globs (``logs/*.voirdire``) are expanded as a shell would.

What is changed, and only that (``tests/core/test_readme.py``'s rules): ``local``, ``openai:`` and every
``openai-compatible:`` URL answer from a fake OpenAI-compatible server on 127.0.0.1, ``anthropic:`` from a fake
Messages API, ``ollama:`` from a fake Ollama, ``azure:`` from a fake chat-completions server (the page's own
endpoint replaced), DCR's prompts answered by ``tests/protocols/dcr/fake_dcr.py``; runs are cut to 3 items and 2
seeds, a correlation to 48 items. ``inspect eval`` runs as a command (Inspect's own CLI) with Inspect's
``openai/`` and ``ollama/`` providers pointed at the fake server. Commands that cannot run offline are skipped for
a stated reason (``SKIPS``), and the test says which. It never writes into the checkout and
does not depend on the folder it is started from: what the commands open for writing is recorded as they run (an
audit hook), so a user running the same commands in the checkout meanwhile cannot fail it.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.core import test_readme as readme
from tests.core.test_readme import Block, blocks, commands, responder as readme_responder, run_python
from tests.fake_openai import FakeOpenAIServer
from tests.models.fake_providers import FakeAnthropic, FakeChatCompletions, FakeOllama
from tests.protocols.dcr import fake_dcr
from voirdire.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
DOCUMENTS = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))

# (pattern in the command, why it cannot run here): the only commands left out.
SKIPS: tuple[tuple[str, str], ...] = (
    (r"^make\b", "builds the environment (make demo) or runs this suite (make test)"),
    (r"^(\.venv/bin/)?python\b", "a benchmark script or the test suite itself (bench/, timed on a quiet machine)"),
    (r"^pip install\b", "installs a package (needs the network)"),
    (r"^huggingface-cli\b", "downloads a model (needs the network)"),
    (r"^export\b", "sets the reader's own API key (the test sets a fake one)"),
    (r"^voirdire view\b", "a web server that runs until Ctrl-C (tests/web drives it)"),
    (r"=human\b", "a person types the replies"),
    (r"--nli-model|local:/", "a model file of the reader's own (an NLI cross-encoder or a GGUF file)"),
    (r"--data (NQ\.json|my_[a-z_]+\.json)", "a data file of the reader's own"),
    (r"--session (4382392|ID\b)", "a session id of the paper's PopQA data; here the run is cut to its first 3 items"),
    (r"^voirdire reproduce (?!--list|paper-examples)",
     "a paper's whole table (minutes to hours; the paper-marked tests run them)"),
)

# Python blocks of docs pages that are fragments, not programs: (document, why).
FRAGMENTS = {
    "docs/architecture.md": "a protocol author's class, its imports and Params left out",
    "docs/charts.md": "a protocol author's chart function, its protocol left out",
    "docs/qa_entailment.md": "a fragment (roles=..., an NLI model file of the reader's own)",
}


def checkout_files() -> list[str]:
    """The checkout's files as a clone has them: tracked, and new ones git does not ignore (without git: every file
    but the virtualenv's, git's and the caches')."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        listed = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, check=True,
        ).stdout  # fmt: skip
        return [name for name in os.fsdecode(listed).split("\0") if name and (ROOT / name).is_file()]
    skip = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache"}
    return [
        str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.relative_to(ROOT).parts)
    ]


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the checkout, ``../shared`` beside it, as the working folder: the documents' commands run where
    they say to run them, never in the user's own checkout."""
    if not SHARED.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{SHARED} is missing: the documents' commands read the papers' data from it")
        pytest.skip(f"{SHARED} (the papers' data) is not beside the repository")
    copy = tmp_path / "voirdire"
    for name in checkout_files():
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    (tmp_path / "shared").symlink_to(SHARED)
    monkeypatch.chdir(copy)
    return copy


_WRITES: list[list[str]] = []  # while a recorder is on: every path this process opened for writing, made or removed
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _WRITES:
        return
    paths: tuple[Any, ...] = ()
    if event == "open" and len(args) >= 3:
        path, mode, flags = args[:3]
        if (isinstance(mode, str) and set(mode) & set("wax+")) or (mode is None and int(flags or 0) & _WRITE_FLAGS):
            paths = (path,)
    elif event in ("os.rename", "os.remove", "os.mkdir", "os.rmdir", "os.symlink", "os.truncate", "sqlite3.connect"):
        paths = args[:2] if event in ("os.rename", "os.symlink") else args[:1]
    for path in paths:
        if isinstance(path, str | bytes | os.PathLike):
            _WRITES[-1].append(os.path.abspath(os.fsdecode(path)))


def into_the_checkout(written: list[str]) -> list[str]:
    """The paths of ``written`` inside this checkout, but for the interpreter's own bytecode and virtualenv."""
    inside = {Path(path) for path in written if Path(path).is_relative_to(ROOT)}
    return sorted(
        str(path.relative_to(ROOT))
        for path in inside
        if "__pycache__" not in path.parts and not path.is_relative_to(ROOT / ".venv")
    )


@pytest.fixture
def writes() -> Iterator[list[str]]:
    """What this process opens for writing (or makes, renames, removes) while the test runs, by absolute path."""
    if not getattr(sys, "_voirdire_docs_audit", False):  # an audit hook cannot be removed: one, switched on and off
        sys.addaudithook(_audit)
        sys._voirdire_docs_audit = True  # type: ignore[attr-defined]
    _WRITES.append([])
    try:
        yield _WRITES[-1]
    finally:
        _WRITES.clear()


def responder(messages: list[dict[str, Any]]) -> str:
    """The README test's replies, and DCR's three agents by their prompts (``tests/protocols/dcr/fake_dcr.py``)."""
    reply = fake_dcr.respond(messages)
    return readme_responder(messages) if reply == "I do not know this prompt." else reply


def named_file(block: Block) -> str | None:
    """``claims.py`` for a block whose first line is ``# claims.py: ...`` (README's rule, Python files too)."""
    first = block.text.splitlines()[0] if block.text else ""
    found = re.match(r"#\s*([\w.-]+\.(?:toml|ya?ml|json|jsonl|py)):", first)
    return found.group(1) if found else None


def expanded(argv: list[str]) -> list[str]:
    """``argv`` with its glob patterns expanded, sorted, as a shell does (a pattern matching nothing stays)."""
    out: list[str] = []
    for arg in argv:
        matches = sorted(glob.glob(arg)) if any(c in arg for c in "*?[") else []
        out.extend(matches or [arg])
    return out


def cut_short(args: list[str]) -> list[str]:
    """README's size rules for every run command on a dataset (``dcr``, ``check``, ``run`` ...: 3 items), and a
    correlation on its first 48 items (3 SummEval documents, 16 summaries each): the pages' full-size runs, short."""
    if "--help" in args or not any(flag in args for flag in ("--data", "--questions")):
        return args
    cap = 48 if args[0] == "correlate" else 3
    if "--limit" in args:
        k = args.index("--limit") + 1
        return [*args[:k], str(min(int(args[k]), cap)), *args[k + 1 :]]
    if args[0] == "correlate" and "--transcript" in args:  # a transcript's scores: as many as it holds
        return args
    return [*args, "--limit", str(cap)]


def skip_reason(command: str) -> str | None:
    return next((why for pattern, why in SKIPS if re.search(pattern, command)), None)


class Fakes:
    """The fake servers every model spec of the documents answers from, and the rewrite of a text onto them."""

    def __init__(self, openai: str, ollama: FakeOllama, azure: FakeChatCompletions, claude: FakeAnthropic) -> None:
        self.openai, self.ollama, self.azure, self.claude = openai, ollama, azure, claude

    def rewrite(self, text: str) -> str:
        text = readme.on_fake_server(text, self.openai)
        text = re.sub(r"(ollama:[^@\s\"']+)@[^\s\"']+", rf"\1@{self.ollama.url}", text)
        return re.sub(r"(azure:[^@\s\"']+)@[^\s\"']+", rf"\1@{self.azure.url}", text)


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> Iterator[Fakes]:
    from voirdire.models import spec
    from voirdire.models.openai import openai_compatible_client

    with (
        FakeOpenAIServer(responder) as server,
        FakeOllama(responder) as ollama,
        FakeChatCompletions(responder) as azure,
        FakeAnthropic(responder) as claude,
    ):
        fake = dataclasses.replace(
            spec.PROVIDERS["local"],
            build=lambda s, key: openai_compatible_client("local", server.url, spec_text="local", api_key=None),
        )
        monkeypatch.setitem(spec.PROVIDERS, "local", fake)
        env = {
            "OPENAI_API_KEY": "sk-docs-test-0123456789",
            "OPENAI_BASE_URL": server.url,
            "INFERENCE_KEY": "inference-docs-test-key",
            "ANTHROPIC_API_KEY": "sk-ant-docs-test-0123456789",
            "ANTHROPIC_BASE_URL": claude.url,
            "OLLAMA_HOST": ollama.url,
            "OLLAMA_BASE_URL": server.url,  # Inspect's ollama/ provider: OpenAI's API at this URL
            "GEMINI_API_KEY": "gemini-docs-test-0123456789",
            "GROQ_API_KEY": "groq-docs-test-0123456789",
            "NO_COLOR": "1",
            "INSPECT_DISPLAY": "none",
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        yield Fakes(server.url, ollama, azure, claude)




def run_inspect(argv: list[str], where: str) -> None:
    """``inspect ...`` as the reader runs it: Inspect's own command, in this folder, with this environment."""
    inspect = shutil.which("inspect", path=str(Path(sys.executable).parent))
    if inspect is None:
        pytest.fail(f"{where}: Inspect AI's `inspect` command is not installed (pip install 'voirdire[inspect]')")
    done = subprocess.run([inspect, *argv], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"{where}\nexit {done.returncode}; stderr:\n{done.stderr[-2000:]}"


def run_documents(fakes: Fakes, capsys: pytest.CaptureFixture[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Run every document's blocks in order in the current folder; the commands run and those skipped (why)."""
    ran: list[str] = []
    skipped: list[tuple[str, str]] = []
    for document in DOCUMENTS:
        namespace: dict[str, Any] = {"__name__": "__docs__"}
        for block in blocks(document):  # the files the page spells out, before the commands that name them
            name = named_file(block)
            if name is not None:
                Path(name).write_text(fakes.rewrite(block.text), encoding="utf-8")
        for block in blocks(document):
            if named_file(block) is not None:
                continue
            where = f"{document}:{block.line}"
            if block.lang == "python":
                if document in FRAGMENTS:
                    skipped.append((where, FRAGMENTS[document]))
                    continue
                run_python(Block(block.document, block.line, block.lang, fakes.rewrite(block.text)), namespace)
                ran.append(f"{where}: python")
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
                    ran.append(where)
                    continue
                if argv[0] == "inspect":
                    run_inspect(expanded(argv[1:]), where)
                    ran.append(where)
                    continue
                assert argv[0] == "voirdire", f"{where}: not a voirdire command, and no reason to skip it"
                args = cut_short([fakes.rewrite(a) for a in readme.rewritten(expanded(argv[1:]), fakes.openai)])
                try:
                    code = main(args)
                except SystemExit as exc:  # --help
                    code = int(exc.code or 0)
                err = capsys.readouterr().err
                assert code == 0, f"{where}\nexit {code}; stderr:\n{err[-2000:]}"
                ran.append(where)
    return ran, skipped


@pytest.mark.filterwarnings("ignore:examiner and examinee are both served")
def test_every_documented_command_runs_in_one_folder(
    checkout: Path, writes: list[str], fakes: Fakes, capsys: pytest.CaptureFixture[str]
) -> None:
    ran, skipped = run_documents(fakes, capsys)
    with capsys.disabled():
        print(f"\n{len(ran)} documented commands ran in one folder; {len(skipped)} skipped:")
        print("\n".join(f"  skipped {where} ({why})" for where, why in skipped))
    assert len(ran) > 60 and all(why for _, why in skipped)
    # every provider the documents name answered, and nothing was written into the checkout
    assert fakes.ollama.requests and fakes.azure.requests and fakes.claude.requests
    # the commands wrote into the copy (transcripts/..., charts/..., logs/..., qs.jsonl), never into this checkout
    assert [w for w in writes if Path(w).is_relative_to(checkout / "transcripts")]
    assert not into_the_checkout(writes), f"written into the checkout: {into_the_checkout(writes)}"


def test_globs_are_expanded_as_a_shell_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs" / "a.voirdire").mkdir(parents=True)
    (tmp_path / "logs" / "a.voirdire" / "x_epoch1.jsonl").write_text("")
    assert expanded(["show", "logs/*.voirdire/x_epoch1.jsonl"]) == ["show", "logs/a.voirdire/x_epoch1.jsonl"]
    assert expanded(["show", "none/*.jsonl"]) == ["show", "none/*.jsonl"]
    assert named_file(Block("d.md", 1, "python", "# claims.py: a task\nx = 1\n")) == "claims.py"
    assert skip_reason("voirdire reproduce --list") is None and skip_reason("voirdire reproduce dcr-x")
    assert cut_short(["dcr", "--data", "summeval", "--rounds", "1"]) == ["dcr", "--data", "summeval", "--rounds", "1",
                                                                        "--limit", "3"]  # fmt: skip
    assert cut_short(["correlate", "--data", "summeval", "--metric", "rouge-2"])[-2:] == ["--limit", "48"]
    assert cut_short(["check-paraphrase", "--data", "msrp", "--limit", "20"])[-1] == "3"
    assert cut_short(["show", "t.jsonl"]) == ["show", "t.jsonl"]


def test_what_is_opened_for_writing_is_recorded_and_placed(tmp_path: Path, writes: list[str]) -> None:
    import sqlite3

    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "a.txt").read_text()  # a read is not a write
    os.replace(tmp_path / "a.txt", tmp_path / "b.txt")
    os.close(os.open(tmp_path / "c.txt", os.O_WRONLY | os.O_CREAT))
    sqlite3.connect(tmp_path / "d.index").close()
    names = [Path(w).name for w in writes]
    assert names.count("a.txt") == 2 and {"b.txt", "c.txt", "d.index"} <= set(names)  # written, then renamed
    assert into_the_checkout([str(tmp_path / "b.txt")]) == []
    placed = [ROOT / "transcripts" / "demo.jsonl", ROOT / "voirdire" / "__pycache__" / "x.pyc", ROOT / ".venv" / "x"]
    assert into_the_checkout([str(p) for p in placed]) == ["transcripts/demo.jsonl"]
