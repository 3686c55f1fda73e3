"""Options generated from a Params model: types, choices, flags, defaults from the model, errors naming flags."""

from __future__ import annotations

import argparse
import enum
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field, model_validator

from voirdire.registry.flags import OptionError, ParamsCLI, add_params_options, build_params, given_params


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Params(BaseModel):
    rounds: int = Field(3, ge=1, description="EV rounds")
    phi: float = 0.6
    mode: Literal["a", "b", "c"] = "a"
    colour: Colour = Colour.RED
    relabel: bool = True
    verbose: bool = False
    path: Path | None = None
    labels: tuple[str, ...] | None = None
    hidden: int = 0

    @model_validator(mode="after")
    def _rule(self) -> Params:
        if self.mode == "c" and self.verbose:
            raise ValueError("mode c is quiet")
        return self


SPEC = ParamsCLI(
    flags={"rounds": "--r"},
    negate={"relabel": "--label-once"},
    choices={"mode": ("a", "b")},
    help={"phi": "flip probability"},
    exclude=frozenset({"hidden"}),
)


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_params_options(p, Params, SPEC)
    return p.parse_args(list(argv))


def test_only_given_options_are_passed_so_model_defaults_hold() -> None:
    assert given_params(parse()) == {}
    params = build_params(Params, SPEC, given_params(parse()))
    assert params == Params() and params.model_fields_set == set()


def test_types_flags_choices_and_lists() -> None:
    args = parse("--r", "5", "--phi", "0.5", "--mode", "b", "--colour", "blue", "--label-once", "--verbose",
                 "--path", "x.json", "--labels", "p, q,r")  # fmt: skip
    params = build_params(Params, SPEC, given_params(args))
    assert params.rounds == 5 and params.phi == 0.5 and params.mode == "b" and params.colour is Colour.BLUE
    assert params.relabel is False and params.verbose is True and params.path == Path("x.json")
    assert params.labels == ("p", "q", "r")


def test_help_choices_and_excluded_fields() -> None:
    p = argparse.ArgumentParser()
    add_params_options(p, Params, SPEC)
    text = p.format_help()
    assert "--mode {a,b}" in text and "flip probability (default 0.6)" in text and "EV rounds (default 3)" in text
    assert "--hidden" not in text and "--rounds" not in text
    with pytest.raises(SystemExit):
        p.parse_args(["--mode", "c"])  # the CLI offers a subset of the model's choices


def test_errors_name_the_flag_or_the_rule() -> None:
    with pytest.raises(OptionError, match=r"^--r: Input should be greater than or equal to 1$"):
        build_params(Params, SPEC, given_params(parse("--r", "0")))
    with pytest.raises(OptionError, match=r"^mode c is quiet$"):
        build_params(Params, SPEC, {"mode": "c", "verbose": True})


def test_a_type_without_an_option_is_a_clear_programming_error() -> None:
    class Nested(BaseModel):
        inner: Params = Params()

    with pytest.raises(TypeError, match=r"Nested.inner: no option"):
        add_params_options(argparse.ArgumentParser(), Nested, ParamsCLI())
