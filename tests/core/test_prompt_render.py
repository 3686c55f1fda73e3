"""Every prompt file renders its variables' values as given, whatever they hold (braces, non-text values,
non-ASCII): a value is never read as a template."""

from __future__ import annotations

from pathlib import Path

import pytest

from voirdire.session.prompts import PromptError, PromptLibrary, default_root, load_prompt_file

ROOT = default_root()
NAMES = sorted(str(p.relative_to(ROOT).with_suffix("")) for p in ROOT.rglob("*.yaml"))


@pytest.mark.parametrize("name", NAMES)
def test_every_prompt_renders_values_verbatim(name: str) -> None:
    prompt = PromptLibrary(ROOT).get(name)
    for values in (
        {v: f"value of {v}" for v in prompt.spec.variables},
        {v: "{not a field} {{doubled}} }{ é 東京\n" for v in prompt.spec.variables},
        {v: i * 1.5 for i, v in enumerate(prompt.spec.variables)},
        {v: ["a", {"b": 2}] for v in prompt.spec.variables},
    ):
        expected = [m.template.format_map(values) for m in prompt.spec.messages]
        assert [m.content for m in prompt.render(**values)] == expected
        assert [m.role for m in prompt.render(**values)] == [m.role for m in prompt.spec.messages]


def test_a_prompt_file_renders_its_variables_and_names_missing_ones(tmp_path: Path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text("source: t\nverbatim: true\nvariables: [x]\nmessages:\n  - role: user\n    template: '{x} ok'\n")
    assert load_prompt_file(path).render(x="A")[0].content == "A ok"
    with pytest.raises(PromptError, match="missing variables"):
        load_prompt_file(path).render()
