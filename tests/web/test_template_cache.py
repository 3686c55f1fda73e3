"""The viewer's compiled templates kept between processes (``voirdire.web.template_cache``): a second viewer loads
what the first compiled, a damaged entry is compiled again, and a folder others can write to is not used."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from jinja2 import DictLoader, Environment
from jinja2.bccache import bc_magic

from voirdire.web.render import environment
from voirdire.web.template_cache import TemplateCache, template_cache


def fresh(monkeypatch: pytest.MonkeyPatch, cache: Path) -> Environment:
    """The viewer's environment as a new process builds it, with ``cache`` as the user's cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return environment.__wrapped__()


def no_compiling(env: Environment, monkeypatch: pytest.MonkeyPatch) -> None:
    def compile_refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled a template the cache holds")

    monkeypatch.setattr(env, "compile", compile_refused)


def test_a_second_viewer_loads_what_the_first_compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = fresh(monkeypatch, tmp_path)
    page = first.get_template("error.html").render(detail="no such run", status=404, version="")
    entries = list((tmp_path / "voirdire" / "templates").iterdir())
    assert entries, "nothing was kept"
    assert (tmp_path / "voirdire" / "templates").stat().st_mode & 0o077 == 0  # this user's alone
    second = fresh(monkeypatch, tmp_path)
    no_compiling(second, monkeypatch)
    assert second.get_template("error.html").render(detail="no such run", status=404, version="") == page


def test_a_damaged_entry_is_compiled_again_and_written_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh(monkeypatch, tmp_path).get_template("error.html")
    folder = tmp_path / "voirdire" / "templates"
    for entry in folder.iterdir():
        # Jinja's header, then bytes where its checksum's pickle should be: no pickle loads from them
        entry.write_bytes(entry.read_bytes()[: len(bc_magic)] + b"\xff\x00not a pickle")
    again = fresh(monkeypatch, tmp_path)
    assert "no such run" in again.get_template("error.html").render(detail="no such run", status=404, version="")
    reread = fresh(monkeypatch, tmp_path)
    no_compiling(reread, monkeypatch)
    reread.get_template("error.html")  # the entry was written again, whole


def test_a_folder_others_can_write_to_is_not_used(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    assert template_cache(shared) is None
    taken = tmp_path / "a-file"
    taken.write_text("not a folder")
    assert template_cache(taken) is None
    assert isinstance(template_cache(tmp_path / "mine"), TemplateCache)


def test_a_cache_that_cannot_be_written_compiles_without_an_error(tmp_path: Path) -> None:
    cache = template_cache(tmp_path / "gone")
    assert cache is not None
    (tmp_path / "gone").rmdir()  # removed under the viewer: every write to it fails
    env = Environment(loader=DictLoader({"t.html": "{{ x }}"}), bytecode_cache=cache)
    assert env.get_template("t.html").render(x="kept") == "kept"
