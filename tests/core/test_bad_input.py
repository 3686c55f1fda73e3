"""Every bad input of issue 13 gets its one-line message and exit status, and docs/bad_input.md is exactly the
table ``tests/bad_inputs.py`` prints, so the page cannot drift from what voirdire does. The No-Data rows read the
paper's data from ``../shared``: without it the module is skipped, except in CI."""

from __future__ import annotations

import os

import pytest

from tests.bad_inputs import CASES, DOC, ROOT, Outcome, check, run_case, table

SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[Outcome]:
    if not SHARED.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{SHARED} is missing: the No-Data rows read the papers' data from it")
        pytest.skip(f"{SHARED} (the papers' data) is not beside the repository")
    base = tmp_path_factory.mktemp("bad_inputs")
    return [run_case(case, base / f"case{k:02d}") for k, case in enumerate(CASES, 1)]


@pytest.mark.parametrize("k", range(len(CASES)), ids=[c.issue[:60] for c in CASES])
def test_bad_input_gets_its_message_and_exit_status(outcomes: list[Outcome], k: int) -> None:
    assert check(outcomes[k]) is None, f"{CASES[k].issue}: {check(outcomes[k])}"


def test_the_documented_table_is_what_the_cases_print(outcomes: list[Outcome]) -> None:
    assert DOC.read_text(encoding="utf-8") == table(outcomes), (
        f"{DOC} is stale: run `python tests/bad_inputs.py --write` and commit it"
    )


def test_no_message_is_a_traceback_or_a_pydantic_dump(outcomes: list[Outcome]) -> None:
    for o in outcomes:
        if "--debug" not in o.case.commands[0]:
            assert "Traceback" not in o.text and "errors.pydantic.dev" not in o.text, o.case.issue


def test_every_error_is_one_line(outcomes: list[Outcome]) -> None:
    for o in outcomes:
        errors = [ln for ln in o.text.splitlines() if ln.startswith("voirdire: error:") or ": error: " in ln]
        assert len(errors) <= 1, (o.case.issue, errors)


def test_a_refused_command_writes_nothing(outcomes: list[Outcome]) -> None:
    """Exit status 2 means nothing was run: no transcript, no report, no cache file was written."""
    from tests.bad_inputs import FIXTURES

    for k, o in enumerate(outcomes, 1):
        if o.code != 2 or len(o.case.commands) != 1 or o.case.python is not None:
            continue
        folder = o.folder
        made = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
        assert made <= set(FIXTURES) | set(o.case.files), (k, o.case.issue, made - set(FIXTURES) - set(o.case.files))


def test_a_bug_is_one_line_and_debug_shows_its_traceback(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    import voirdire.cli as cli
    import voirdire.cli.read

    def broken(args: object) -> int:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(voirdire.cli.read, "cmd_list", broken)
    assert cli.main(["list"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: ZeroDivisionError: division by zero" in err and "--debug" in err
    assert cli.main(["--debug", "list"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "in broken" in err
    assert err.rstrip().splitlines()[-1].startswith("voirdire: error: internal error: ZeroDivisionError")
