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


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[role.examiner]\nmodel = "local"\n', "run.toml: unknown table [role] (did you mean 'roles'?)"),
        ("max_tokens = 64\n", "run.toml: top-level key 'max_tokens' sets nothing: put it in a [roles.NAME] table"),
        ("verbose = true\n", "run.toml: unknown top-level key 'verbose'"),
        (
            "[roles.examiner]\nmax_token = 64\n",
            "[roles.examiner]: unknown key 'max_token' (did you mean 'max_tokens'?)",
        ),
        ('[roles]\nexaminer = "local"\n', "[roles.examiner] must be a table of settings"),
        ('roles = "local"\n', "roles must be tables [roles.NAME]"),
        (
            "[roles.examiner]\ntemperature = -1\n",
            "[roles.examiner]: temperature: Input should be greater than or equal",
        ),
        ("[roles.examiner]\ntimeout = 0\n", "[roles.examiner]: timeout: Input should be greater than 0"),
        ("[roles.examiner]\nmax_retries = -2\n", "[roles.examiner]: max_retries: Input should be greater than"),
    ],
)
def test_config_errors_name_the_file_and_key(tmp_path: Path, toml: str, message: str) -> None:
    cfg = tmp_path / "run.toml"
    cfg.write_text(toml)
    with pytest.raises(ModelSpecError) as error:
        load_role_config(cfg)
    text = str(error.value)
    assert message in text and str(cfg) in text
    assert "pydantic" not in text and "\n" not in text


def test_a_key_pasted_into_api_key_env_is_refused_and_not_echoed(tmp_path: Path) -> None:
    cfg = tmp_path / "run.toml"
    cfg.write_text('[roles.examiner]\napi_key_env = "sk-proj-4b1c9e-SECRET"\n')
    with pytest.raises(ModelSpecError, match="must name an environment variable") as error:
        load_role_config(cfg)
    assert "SECRET" not in str(error.value)


def test_a_config_that_is_not_utf8_is_a_one_line_error(tmp_path: Path) -> None:
    cfg = tmp_path / "run.toml"
    cfg.write_bytes(b'[roles.examiner]\n# caf\xe9\nmodel = "local"\n')
    with pytest.raises(ModelSpecError) as error:
        load_role_config(cfg)
    assert str(error.value) == f"{cfg}:2: not UTF-8 text (byte 0xe9); save it as UTF-8"
    with pytest.raises(ModelSpecError, match="is a folder"):
        load_role_config(tmp_path)


def test_timeout_retries_and_key_per_role(tmp_path: Path) -> None:
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        '[roles.examiner]\nmodel = "openai-compatible:m@http://127.0.0.1:9/v1"\ntimeout = 12.5\nmax_retries = 5\n'
        'api_key_env = "MY_KEY"\n[roles.examinee]\nmodel = "local"\n[roles.judge]\nmodel = "human"\n'
    )
    roles = load_role_config(cfg)
    examiner, examinee, judge = roles["examiner"], roles["examinee"], roles["judge"]
    assert (examiner.timeout_s(), examiner.retries(), examiner.api_key_env) == (12.5, 5, "MY_KEY")
    assert (examinee.timeout_s(), examinee.retries()) == (600.0, 0)  # the local model: long, not retried
    assert (judge.timeout_s(), judge.retries()) == (None, 0)  # a person typing has no deadline
    assert RoleSettings(model="openai:gpt-4o").timeout_s() == 30.0 and RoleSettings(model="openai:x").retries() == 3
    assert "timeout" not in examiner.create_args()  # never part of the request (nor of its digest)
