"""A prompt renders each message through its langchain-core string template, not through the chat messages
``format_messages`` builds: the same roles and texts as ``format_messages`` gives, for every prompt file."""

from __future__ import annotations

from pathlib import Path

import pytest

from voirdire.session.prompts import PromptLibrary, _from_langchain, default_root, load_prompt_file

ROOT = default_root()
NAMES = sorted(str(p.relative_to(ROOT).with_suffix("")) for p in ROOT.rglob("*.yaml"))


@pytest.mark.parametrize("name", NAMES)
def test_render_is_what_the_chat_template_formats(name: str) -> None:
    prompt = PromptLibrary(ROOT).get(name)
    for values in (
        {v: f"value of {v}" for v in prompt.spec.variables},
        {v: "{x} {{y}} }{ é 東京\n\t" for v in prompt.spec.variables},
        {v: [i, {"k": None}] for i, v in enumerate(prompt.spec.variables)},
    ):
        expected = [_from_langchain(m) for m in prompt.template.format_messages(**values)]
        assert prompt.render(**values) == expected


def test_a_template_with_message_kwargs_is_formatted_whole(tmp_path: Path) -> None:
    """A message template carrying more than its text (``additional_kwargs``) goes through ``format_messages``."""
    path = tmp_path / "p.yaml"
    path.write_text("source: t\nverbatim: true\nvariables: [x]\nmessages:\n  - role: system\n    template: 'a {x}'\n"
                    "  - role: user\n    template: 'b {x}'\n")  # fmt: skip
    prompt = load_prompt_file(path)
    prompt.template.messages[1].additional_kwargs = {"name": "moderator"}  # type: ignore[union-attr]
    calls: list[dict[str, object]] = []
    original = type(prompt.template).format_messages

    def spy(self: object, **kwargs: object) -> object:
        calls.append(kwargs)
        return original(self, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(prompt.template), "format_messages", spy)
        rendered = prompt.render(x="1")
    assert calls == [{"x": "1"}]
    assert [(m.role, m.content) for m in rendered] == [("system", "a 1"), ("user", "b 1")]
