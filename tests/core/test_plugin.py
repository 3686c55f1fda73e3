"""A third-party protocol, built here as an installed distribution with an entry point, runs through the generic
CLI (``voirdire run``, ``list``, ``show``, ``report``) with no change to voirdire: the registry's promise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TOY = '''
"""A toy protocol: the judge says whether a statement is true; a rule agent counts its words."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from voirdire.kit import (
    Ask,
    CommandSpec,
    DisplayHints,
    ParamsCLI,
    ParseError,
    Protocol,
    Registration,
    Report,
    Session,
    StateMachine,
    Verdict,
)
from voirdire.kit.data import Transcript
from voirdire.kit.models import FunctionAgent
from voirdire.kit.reports import counts


class Statement(BaseModel):
    id: str
    text: str
    truth: bool | None = None


class ToyParams(BaseModel):
    strictness: Literal["lenient", "strict"] = Field("lenient", description="how a hedged reply is read")
    min_words: int = Field(1, ge=1, description="statements shorter than this are refused unread")
    shout: bool = Field(False, description="upper-case the statement")

    @model_validator(mode="after")
    def _rule(self) -> ToyParams:
        if self.shout and self.strictness == "strict":
            raise ValueError("shouting is not allowed when strict")
        return self


def read_verdict(text: str) -> bool:
    """'true' or 'false'"""
    word = text.strip().lower().rstrip(".")
    if word not in ("true", "false"):
        raise ParseError(f"expected true or false, got {text!r}")
    return word == "true"


class Toy(Protocol[Statement, ToyParams]):
    name = "toy"
    paper = "A toy protocol for the registry test"
    roles = ("judge", "counter")
    machine = StateMachine(initial=("count",), edges={"count": ("judge", "done"), "judge": ("done",), "done": ()})
    display = DisplayHints(colors={"judge": "35"}, item_fields=("text",), gold_fields=("truth",))
    Item = Statement
    Params = ToyParams

    def rule_roles(self) -> tuple[str, ...]:
        return ("counter",)

    def deterministic_agents(self, item: Statement) -> dict:
        return {"counter": FunctionAgent("counter", lambda text: json.dumps({"words": len(text.split())}))}

    async def run(self, item: Statement, session: Session) -> Verdict:
        session.enter("count", stage="count")
        words = json.loads((await session.send("counter", item.text)).text)["words"]
        if words < self.params.min_words:
            session.enter("done")
            return session.verdict("refused", accepted=None, statistics={"words": words})
        session.enter("judge", stage="judge")
        text = item.text.upper() if self.params.shout else item.text
        reply = await session.ask("judge", "judge", Ask(parse=read_verdict, on_failure="undecided"), statement=text)
        session.enter("done")
        decision = {True: "true", False: "false", None: "undecided"}[reply.value]
        return session.verdict(decision, accepted=reply.value, statistics={"words": words})


class ToyReport(Report):
    agreement: float | None = None

    def text(self) -> str:
        return "\\n".join([*self.summary_lines(), f"agreement with truth: {self.agreement}"])


def report(t: Transcript) -> ToyReport:
    pairs = [
        (s.verdict.accepted, s.item.get("truth"))
        for s in t.sessions.values()
        if s.verdict is not None and s.verdict.accepted is not None and s.item.get("truth") is not None
    ]
    agreement = sum(a == b for a, b in pairs) / len(pairs) if pairs else None
    return ToyReport(protocol="toy", transcript=t.path, agreement=agreement, **counts(t.sessions.values()))


def add_command(sub) -> None:
    """A sub-command the package adds beside its protocol's own (the voirdire.commands group)."""
    p = sub.add_parser("toy-count", help="count words")
    p.add_argument("text")
    p.set_defaults(func=lambda args: print(len(args.text.split())) or 0)


registration = Registration(
    protocol=Toy,
    report=report,
    cli=CommandSpec(params=ParamsCLI(flags={"min_words": "--min-words"}), help="the toy protocol"),
)
'''

PROMPT = """\
source: "toy"
verbatim: false
note: "test prompt"
variables: [statement]
messages:
  - role: user
    template: "Is this true? {statement} Answer true or false."
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An installed distribution 'voirdire-toy' on a folder of its own: package, prompts and entry point."""
    root = tmp_path_factory.mktemp("site")
    package = root / "voirdire_toy"
    (package / "prompts" / "voirdire_toy").mkdir(parents=True)  # prompts/<package>/, found by default
    (package / "__init__.py").write_text(textwrap.dedent(TOY), encoding="utf-8")
    (package / "prompts" / "voirdire_toy" / "judge.yaml").write_text(PROMPT, encoding="utf-8")
    dist = root / "voirdire_toy-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: voirdire-toy\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[voirdire.protocols]\ntoy = voirdire_toy:registration\n\n"
        "[voirdire.commands]\ntoy-count = voirdire_toy:add_command\n",
        encoding="utf-8",
    )
    return root


def voirdire(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "voirdire.cli", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def test_a_plugin_protocol_runs_through_the_generic_cli(site: Path, tmp_path: Path) -> None:
    data = tmp_path / "statements.jsonl"
    rows = [
        {"id": "s1", "text": "Paris is in France", "truth": True},
        {"id": "s2", "text": "The moon is cheese", "truth": False},
        {"id": "s3", "text": "Hm", "truth": True},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    script = tmp_path / "judge.yaml"
    script.write_text('rules:\n  - match: "Paris"\n    reply: "true"\n  - match: "moon"\n    reply: "maybe"\n')
    out = tmp_path / "toy.jsonl"

    listed = voirdire(site, "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "toy" in listed.stdout and "judge, counter" in listed.stdout

    helped = voirdire(site, "run", "toy", "--help", cwd=tmp_path)
    assert "--strictness {lenient,strict}" in helped.stdout and "--min-words" in helped.stdout
    assert "--shout" in helped.stdout and "--model ROLE=SPEC" in helped.stdout

    run = voirdire(
        site, "run", "toy", "--data", str(data), "--min-words", "2", "--model", f"judge=scripted:{script}",
        "--out", str(out), "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "agreement with truth: 1.0" in run.stdout  # s1 judged true; s2 undecided; s3 refused

    shown = voirdire(site, "show", str(out), "--session", "s2", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "text: The moon is cheese" in shown.stdout and "gold: False" in shown.stdout
    assert "── judge ──" in shown.stdout and "could not parse" in shown.stdout

    graph = voirdire(site, "show", str(out), "--graph", cwd=tmp_path)
    assert "[*] --> count" in graph.stdout and "count --> judge" in graph.stdout

    report = voirdire(site, "report", str(out), "--json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    parsed = json.loads(report.stdout)
    assert parsed["sessions"] == 3 and parsed["verdicts"] == 3 and parsed["agreement"] == 1.0
    assert parsed["parse_failures"] == {"judge · voirdire_toy/judge": 1}
    assert parsed["replies"] == {"judge · voirdire_toy/judge": 2, "counter · text": 3}
    text = voirdire(site, "report", str(out), cwd=tmp_path).stdout
    assert "parse failures: judge · voirdire_toy/judge 1/2 (50%)" in text


def test_a_plugin_adds_a_command_of_its_own(site: Path, tmp_path: Path) -> None:
    res = voirdire(site, "toy-count", "three little words", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.strip() == "3"


def test_a_plugin_option_error_names_the_flag(site: Path, tmp_path: Path) -> None:
    bad = voirdire(site, "run", "toy", "--item", '{"id": "x", "text": "a b"}', "--min-words", "0", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].startswith("voirdire: error: --min-words: ")
    both = voirdire(
        site, "run", "toy", "--item", '{"id": "x", "text": "a b"}', "--shout", "--strictness", "strict", cwd=tmp_path
    )
    assert both.returncode == 2 and "shouting is not allowed when strict" in both.stderr


def test_without_the_plugin_the_protocol_is_unknown(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run(
        [sys.executable, "-m", "voirdire.cli", "run", "toy"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert res.returncode == 2 and "invalid choice: 'toy'" in res.stderr
