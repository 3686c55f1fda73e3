"""Per-role generation settings and TOML role configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from voirdire.models import ModelSpecError, RoleSettings, load_role_config


def test_role_config(tmp_path: Path) -> None:
    cfg = tmp_path / "run.toml"
    cfg.write_text('[roles.examiner]\nmodel = "openai:gpt-4o"\ntemperature = 0.7\n[roles.examinee]\nmax_tokens = 64\n')
    roles = load_role_config(cfg)
    assert roles["examiner"].create_args() == {"max_tokens": 256, "temperature": 0.7}
    assert roles["examinee"].create_args() == {"max_tokens": 64, "temperature": 0.0}  # greedy is sent, not assumed
    assert roles["examinee"].model == "local" and roles["examinee"].max_tokens == 64
    cfg.write_text('[roles.examiner]\nmodel = "nope"\n')
    with pytest.raises(ModelSpecError, match=r"run\.toml: \[roles\.examiner\]"):
        load_role_config(cfg)
    cfg.write_text("[roles\n")
    with pytest.raises(ModelSpecError, match="invalid TOML"):
        load_role_config(cfg)


def test_per_call_seed_is_mixed_with_the_role_seed() -> None:
    assert RoleSettings().create_args(temperature=0.7, seed=5) == {"max_tokens": 256, "temperature": 0.7, "seed": 5}
    seeded = RoleSettings(seed=7)
    assert seeded.create_args()["seed"] == 7
    draws = {seeded.create_args(seed=k)["seed"] for k in range(3)}
    assert len(draws) == 3 and 7 not in draws  # distinct per call, and --seed changes them
    assert RoleSettings(seed=8).create_args(seed=0)["seed"] != seeded.create_args(seed=0)["seed"]
