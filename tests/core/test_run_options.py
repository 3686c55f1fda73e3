"""RunOptions: read once from the command line, taken whole or as keywords by the runner and the Python API; the
RoleTable's role fallback; the runner's three steps."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import ValidationError

from voirdire.cli.main import build_parser
from voirdire.cli.options import CLIError, CommandOptions
from voirdire.models import RoleSettings
from voirdire.runner import ErrorBudget, RoleTable, RunOptions, RunSetupError, run_protocol


def options_of(*argv: str) -> CommandOptions:
    command = ["run", "qa_lexical", "--data", "qa.jsonl", *argv]  # parsed only: nothing is read or run
    args = build_parser().parse_args(command)
    args.argv = ["voirdire", *command]
    return CommandOptions.from_args(args)


def test_the_command_line_becomes_run_options_once() -> None:
    opts = options_of("--fresh", "--no-coalesce", "--concurrency", "3", "--max-errors", "10%", "--json", "--seed", "7")
    run = opts.run
    assert (run.resume, run.coalesce, run.concurrency, run.seed) == (False, False, 3, 7)
    assert run.max_errors == ErrorBudget(share=0.1)
    assert run.progress is False and run.keep_verdicts is True  # --json: no bar, the verdicts are printed
    assert opts.as_json and opts.models.seed == 7 and opts.models.given("seed")
    plain = options_of()
    assert plain.run.progress and not plain.run.keep_verdicts and plain.run.resume and plain.run.command
    assert not plain.models.given("seed") and options_of("--seed", "0").models.given("seed")  # 0 is a value


def test_a_secret_on_the_command_line_is_masked_in_the_recorded_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.base.secrets import register_secret

    register_secret("sk-test-0123456789abcdef")
    opts = options_of("--model", "openai-compatible:m@https://u:sk-test-0123456789abcdef@example.org/v1")
    assert opts.run.command is not None and not any("sk-test-0123456789abcdef" in a for a in opts.run.command)


def test_ray_address_needs_the_ray_executor() -> None:
    with pytest.raises(CLIError, match="--ray-address: only with --executor ray"):
        options_of("--ray-address", "auto")


def test_run_options_check_what_cannot_run() -> None:
    with pytest.raises(RunSetupError, match="concurrency must be at least 1"):
        RunOptions(concurrency=0).check()
    with pytest.raises(RunSetupError, match="executor 'spark'"):
        RunOptions(executor="spark").check()
    with pytest.raises(ValidationError, match="expected a count N"):
        RunOptions(max_errors="many")
    with pytest.raises(ValidationError):
        RunOptions(concurency=2)  # type: ignore[call-arg]  # a misspelt option is refused, not ignored
    assert RunOptions(max_errors="5").max_errors == ErrorBudget(count=5)


def test_keywords_override_the_options_given_whole(tmp_path: Path) -> None:
    from voirdire.protocols.qa_entailment.data import QAItem
    from voirdire.registry.plugins import get

    proto = get("qa_lexical").protocol()
    item = QAItem(id="q1", question="Capital of France?", gold_answers=("Paris",), system="s", system_answer="Paris")
    out = tmp_path / "t.jsonl"
    first = asyncio.run(run_protocol(proto, [item], out=out, options=RunOptions(keep_verdicts=False)))
    assert first.verdicts == {} and first.skipped == 0
    resumed = asyncio.run(run_protocol(proto, [item], out=out, options=RunOptions()))
    assert resumed.skipped == 1 and set(resumed.verdicts) == {"q1"}  # kept from the transcript
    again = asyncio.run(run_protocol(proto, [item], out=out, options=RunOptions(), resume=False))
    assert again.skipped == 0 and set(again.verdicts) == {"q1"}  # the keyword wins: the file was started over


def test_the_role_table_falls_back_to_every_role_then_the_defaults() -> None:
    own, every = RoleSettings(model="scripted:a.yaml"), RoleSettings(model="scripted:b.yaml")
    table = RoleTable({"examiner": own, "*": every})
    assert table["examiner"] is own and table["examinee"] is every
    assert RoleTable({})["examiner"] == RoleSettings() and RoleTable({}).named("examiner") is None
    assert "examiner" in table and set(table) == {"examiner", "*"}
