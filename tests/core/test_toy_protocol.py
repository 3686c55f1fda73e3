"""A sixth protocol written from scratch, as the architecture page says: one folder of code, its prompt folder and
one entry-point line. It is installed offline into a folder of its own (pip, no network, no build isolation) and
``voirdire list`` and ``voirdire run`` find it and run it on a scripted model, with nothing of voirdire changed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from tests.core.test_plugin import voirdire  # the CLI in a subprocess, the plugin's folder on its path
from voirdire.transcript import load

CODE = '''
"""A toy protocol: a judge says whether a statement is true."""

from pydantic import BaseModel

from voirdire.kit import Ask, Protocol, Registration, Session, StateMachine, Verdict
from voirdire.kit.replies import read_yes_no


class Statement(BaseModel):
    id: str
    text: str


class JudgeParams(BaseModel):
    pass


class Judge(Protocol[Statement, JudgeParams]):
    """Judge a statement: true or false."""

    name = "toy_judge"
    roles = ("judge",)
    machine = StateMachine(initial=("judge",), edges={"judge": ("done",), "done": ()})
    Item, Params = Statement, JudgeParams

    async def run(self, item: Statement, session: Session) -> Verdict:
        session.enter("judge")
        ask = Ask(parse=read_yes_no, on_failure="undecided")
        reply = await session.ask("judge", "judge", ask, statement=item.text)
        session.enter("done")
        accepted = None if reply.value is None else reply.value == "yes"
        return session.verdict({True: "true", False: "false", None: "undecided"}[accepted], accepted=accepted)


registration = Registration(protocol=Judge)
'''

PROMPT = """\
source: "toy"
verbatim: false
note: "the toy protocol's one prompt"
variables: [statement]
messages:
  - role: user
    template: "Is this true? {statement} Answer yes or no."
"""

# The distribution's own file: its name, and the one line that registers the protocol. The package-data table is
# setuptools' rule for shipping a file that is not Python (the prompt), not voirdire's.
PYPROJECT = """\
[project]
name = "toy-judge"
version = "0.1"

[project.entry-points."voirdire.protocols"]
toy_judge = "toy_judge:registration"

[tool.setuptools.package-data]
toy_judge = ["prompts/toy_judge/*.yaml"]
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy written into a source folder and installed, offline, into a folder of its own."""
    source = tmp_path_factory.mktemp("toy-source")
    package = source / "toy_judge"
    (package / "prompts" / "toy_judge").mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(CODE), encoding="utf-8")
    (package / "prompts" / "toy_judge" / "judge.yaml").write_text(PROMPT, encoding="utf-8")
    (source / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")

    written = sorted(p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file())
    assert written == ["pyproject.toml", "toy_judge/__init__.py", "toy_judge/prompts/toy_judge/judge.yaml"]
    code_folders = {p.parent for p in source.rglob("*.py")}
    assert code_folders == {package}  # one folder of code
    entry_points = tomllib.loads(PYPROJECT)["project"]["entry-points"]
    assert entry_points == {"voirdire.protocols": {"toy_judge": "toy_judge:registration"}}  # one line, the group

    target = tmp_path_factory.mktemp("toy-site")
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    installed = subprocess.run(
        [*pip, "--target", str(target), str(source)], capture_output=True, text=True, cwd=source, timeout=300
    )
    assert installed.returncode == 0, installed.stderr
    assert (target / "toy_judge" / "prompts" / "toy_judge" / "judge.yaml").is_file()
    return target


def test_the_toy_protocol_is_listed_and_runs_on_a_scripted_model(site: Path, tmp_path: Path) -> None:
    listed = voirdire(site, "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "toy_judge" in listed.stdout and "judge" in listed.stdout

    data = tmp_path / "statements.jsonl"
    rows = [{"id": "s1", "text": "Paris is in France"}, {"id": "s2", "text": "The moon is cheese"}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    script = tmp_path / "judge.yaml"
    script.write_text('rules:\n  - match: "Paris"\n    reply: "yes"\n  - match: "moon"\n    reply: "no"\n')
    out = tmp_path / "toy.jsonl"
    run = voirdire(
        site, "run", "toy_judge", "--data", str(data), "--model", f"judge=scripted:{script}",
        "--out", str(out), "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr

    decided = {s.item["id"]: s.verdict.decision for s in load(out).sessions.values() if s.verdict is not None}
    assert decided == {"s1": "true", "s2": "false"}

    report = voirdire(site, "report", str(out), "--json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["verdicts"] == 2  # no report of its own: the counts every report starts with
