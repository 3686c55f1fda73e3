"""voirdire in pytest: quality gates on verdicts, replayed in CI with no key and no network.

Installed with voirdire (entry point ``pytest11``), so a test suite only asks for the fixtures:

- ``voirdire_models``: role → model spec, from ``--voirdire-model ROLE=SPEC`` (repeatable) or the
  ``[tool.voirdire.models]`` table of the project's ``pyproject.toml``;
- ``examine``: examine a claim with those models, return an ``Examined`` (its verdict and its chat);
- ``run_protocol``: run any registered protocol on items, return a ``Ran``.

``assert_accepted``, ``assert_verdict`` and ``assert_agreement`` fail with the session(s) printed as chats, so a
failing gate shows the examination that made it fail. ``--voirdire-replay DIR`` answers every model call from the
recordings in DIR (``voirdire.models.replay``) and fails on a call it has no recording for; ``--voirdire-record``
makes the real calls and records them there. This module imports voirdire only inside fixtures: it is loaded by
every pytest run in an environment where voirdire is installed, and must cost such runs nothing.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPLAY_ENV = "VOIRDIRE_REPLAY"  # voirdire.models.replay's switches, named here so loading the plugin imports nothing
RECORD_ENV = "VOIRDIRE_RECORD"
CHATS_SHOWN = 3  # disagreements printed in full when an agreement gate fails


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("voirdire", "voirdire: verdicts as test gates")
    g.addoption("--voirdire-model", action="append", default=[], metavar="ROLE=SPEC",
                help="bind a role to a model spec (repeatable; a bare SPEC: every role)")  # fmt: skip
    g.addoption("--voirdire-replay", metavar="DIR",
                help="answer every model call from the recordings in DIR; a call with none fails")  # fmt: skip
    g.addoption("--voirdire-record", action="store_true",
                help="with --voirdire-replay DIR: make the real calls and record their replies in DIR")  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    replay, record = config.getoption("--voirdire-replay"), config.getoption("--voirdire-record")
    if record and not replay:
        raise pytest.UsageError("--voirdire-record: name the folder to record into with --voirdire-replay DIR")
    if not replay:
        return
    before = {k: os.environ.get(k) for k in (REPLAY_ENV, RECORD_ENV)}
    os.environ[REPLAY_ENV] = str(Path(replay).resolve())  # the environment reaches worker processes too
    os.environ[RECORD_ENV] = "1" if record else "0"

    def restore() -> None:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    config.add_cleanup(restore)


def _models_from_pyproject(root: Path) -> dict[str, str]:
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    table = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("voirdire", {}).get("models", {})
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise pytest.UsageError(f"{path}: [tool.voirdire.models] maps role names to model spec strings")
    return dict(table)


@pytest.fixture(scope="session")
def voirdire_models(pytestconfig: pytest.Config) -> dict[str, str]:
    """Role → model spec: ``--voirdire-model`` options, else ``[tool.voirdire.models]`` in pyproject.toml."""
    given: list[str] = pytestconfig.getoption("--voirdire-model")
    if not given:
        return _models_from_pyproject(Path(pytestconfig.rootpath))
    models: dict[str, str] = {}
    for entry in given:
        role, sep, spec = entry.partition("=")
        if not sep or ":" in role or "/" in role:  # a bare spec (its own ':' or '/'): every role
            role, spec = "*", entry
        if role in models:
            raise pytest.UsageError(f"--voirdire-model: role {role} given twice")
        models[role] = spec
    return models


@dataclass
class Examined:
    """One examination: its verdict and where its transcript is."""

    verdict: Any
    transcript: Path

    @property
    def decision(self) -> str:
        return str(self.verdict.decision)

    @property
    def accepted(self) -> bool | None:
        return self.verdict.accepted  # type: ignore[no-any-return]

    def chat(self) -> str:
        return _chat(self.transcript, self.verdict.session_id)


@dataclass
class Ran:
    """A run of a protocol: its result (``voirdire.runner.RunResult``) and the items' sessions."""

    result: Any
    transcript: Path
    items: dict[str, str] = field(default_factory=dict)  # item id → session id

    def decisions(self) -> dict[str, str]:
        verdicts = self.result.verdicts
        return {item: verdicts[sid].decision for item, sid in self.items.items() if sid in verdicts}

    def chat(self, item_id: str) -> str:
        return _chat(self.transcript, self.items[item_id])


def _chat(transcript: Path, session_id: str) -> str:
    from voirdire.chat import render
    from voirdire.transcript import load_session

    return render(load_session(transcript, session_id), session=session_id, color=False)


@pytest.fixture
def examine(voirdire_models: dict[str, str], tmp_path: Path) -> Callable[..., Examined]:
    """``examine(claim, **params)``: the claim examined with ``voirdire_models`` (params: the protocol's). Every
    call is a session of its own in the test's one transcript, so a test can examine several claims, or one twice."""
    from voirdire.registry import api_function

    out = tmp_path / "voirdire-examine.jsonl"
    examined = api_function("examine")  # the examination a protocol registers (voirdire.examine)
    if examined is None:
        pytest.fail("no installed protocol offers `examine` (a registered API call)")

    def call(claim: str, **params: Any) -> Examined:
        verdict = examined(claim, models=voirdire_models or None, out=out, **params)
        return Examined(verdict, out)

    return call


@pytest.fixture
def run_protocol(voirdire_models: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Ran]]:
    """``run_protocol(name, items, **params)``: a registered protocol run on items (dicts or item models)."""
    from voirdire.api import run

    runs = iter(range(1, 1_000_000))

    def call(name: str, items: Sequence[Mapping[str, Any] | Any], **params: Any) -> Ran:
        out = tmp_path / f"voirdire-{name}-{next(runs)}.jsonl"
        result = run(name, list(items), models=voirdire_models or None, out=out, **params)
        from voirdire.transcript import load_outline

        sessions = load_outline(out).sessions
        mine = set(result.session_ids)  # looked up once a session, not read through once each
        ids = {s.item_id or sid: sid for sid, s in sessions.items() if sid in mine}
        return Ran(result, out, ids)

    yield call


def assert_accepted(result: Examined) -> None:
    """The examined output was trusted; otherwise the failure shows the examination."""
    if result.accepted is not True:
        raise AssertionError(f"expected it accepted; the verdict is {result.decision!r}\n\n{result.chat()}")


def assert_verdict(result: Examined, decision: str) -> None:
    """The verdict's decision is ``decision``; otherwise the failure shows the examination."""
    if result.decision != decision:
        raise AssertionError(f"expected the verdict {decision!r}, got {result.decision!r}\n\n{result.chat()}")


def assert_agreement(run: Ran, labels: Mapping[str, str], min_kappa: float = 0.6) -> float:
    """Cohen's κ between the run's decisions and people's labels (item id → label) is at least ``min_kappa``;
    otherwise the failure gives κ and shows the first disagreements as chats. Returns κ."""
    from voirdire.reports import cohen_kappa

    decided = run.decisions()
    unknown = sorted(set(labels) - set(decided))
    if unknown:
        raise AssertionError(f"labels name items the run has no verdict for: {', '.join(unknown[:10])}")
    items = sorted(labels)
    kappa = cohen_kappa([decided[i] for i in items], [labels[i] for i in items])
    if not kappa >= min_kappa:  # nan (undefined κ: one class everywhere) fails too, and says so
        wrong = [i for i in items if decided[i] != labels[i]]
        shown = "\n\n".join(
            f"--- item {i}: verdict {decided[i]!r}, label {labels[i]!r}\n{run.chat(i)}" for i in wrong[:CHATS_SHOWN]
        )
        more = f"\n\n(and {len(wrong) - CHATS_SHOWN} more disagreements)" if len(wrong) > CHATS_SHOWN else ""
        raise AssertionError(
            f"Cohen's κ {kappa:.3f} < {min_kappa} over {len(items)} items ({len(wrong)} disagree)\n\n{shown}{more}"
        )
    return float(kappa)
