"""Command-line options generated from a protocol's pydantic ``Params``.

Each field becomes one option: its type, default, ``description`` and ``Literal``/``Enum`` choices come from the
model; ``ParamsCLI`` holds the few things a paper's names need (a flag name, a negating flag, a value parser, a
help text, fields left out). Only the options a user gives are passed on, so the model's defaults and its
cross-field validators stay the single source of truth, and a validation error names the flag, not the field.
"""

from __future__ import annotations

import argparse
import enum
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from voirdire.base import VoirdireError


class OptionError(VoirdireError, ValueError):
    """A bad option value; the message starts with the flag."""


@dataclass(frozen=True)
class ParamsCLI:
    """How a ``Params`` model maps to options, where its field names alone are not enough.

    ``flags``: field -> flag (``max_followup_rounds`` -> ``--max-followups``); ``negate``: a boolean field that
    defaults to True -> a flag that sets it False (``--batch-questions``); ``convert``: field -> a parser of the
    option's text; ``choices``: field -> the choices the CLI offers (a subset of the model's); ``help``: field ->
    help text; ``metavar``: field -> metavar; ``exclude``: fields with no option (set in code or by another flag).
    """

    flags: Mapping[str, str] = field(default_factory=dict)
    negate: Mapping[str, str] = field(default_factory=dict)
    convert: Mapping[str, Callable[[str], Any]] = field(default_factory=dict)
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    help: Mapping[str, str] = field(default_factory=dict)
    metavar: Mapping[str, str] = field(default_factory=dict)
    exclude: frozenset[str] = frozenset()
    title: str = "protocol parameters"

    def flag(self, name: str) -> str:
        return self.negate.get(name) or self.flags.get(name) or "--" + name.replace("_", "-")


def _unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def _literal_values(annotation: Any) -> tuple[Any, ...] | None:
    if typing.get_origin(annotation) is Literal:
        return typing.get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return tuple(m.value for m in annotation)
    return None


def _scalar(annotation: Any) -> Callable[[str], Any] | None:
    if annotation in (int, float, str):
        return annotation  # type: ignore[no-any-return]
    if annotation is Path:
        return Path
    return None


def _comma_list(item: Callable[[str], Any]) -> Callable[[str], tuple[Any, ...]]:
    def parse(text: str) -> tuple[Any, ...]:
        return tuple(item(part.strip()) for part in text.split(",") if part.strip())

    return parse


def _help(info: FieldInfo, spec: ParamsCLI, name: str, shown_default: Any) -> str:
    text = spec.help.get(name) or info.description or ""
    if shown_default not in (None, False, ()) and "default" not in text:
        text += f" (default {shown_default})" if text else f"default {shown_default}"
    return text.replace("%", "%%")


def add_params_options(parser: argparse.ArgumentParser, params: type[BaseModel], spec: ParamsCLI) -> None:
    """One option per field of ``params`` (see ``ParamsCLI``); absent options leave no attribute on the args."""
    group = parser.add_argument_group(spec.title)
    for name, info in params.model_fields.items():
        if name in spec.exclude:
            continue
        flag, dest = spec.flag(name), f"param__{name}"
        annotation, _ = _unwrap_optional(info.annotation)
        default = None if info.is_required() else info.get_default(call_default_factory=True)
        common: dict[str, Any] = {"dest": dest, "default": argparse.SUPPRESS}
        if annotation is bool:
            if name in spec.negate or default is True:
                group.add_argument(
                    flag if name in spec.negate else f"--no-{name.replace('_', '-')}",
                    action="store_false",
                    help=_help(info, spec, name, None),
                    **common,
                )
            else:
                group.add_argument(flag, action="store_true", help=_help(info, spec, name, None), **common)
            continue
        values = _literal_values(annotation)
        convert = spec.convert.get(name)
        if convert is None and values is not None:
            choices = spec.choices.get(name) or tuple(str(v) for v in values)
            by_text = {str(v): v for v in values}
            group.add_argument(
                flag,
                choices=choices,
                type=lambda t, m=by_text: m.get(t, t),
                help=_help(info, spec, name, default),
                metavar=spec.metavar.get(name),
                **common,
            )
            continue
        if convert is None:
            convert = _scalar(annotation)
        if convert is None and typing.get_origin(annotation) in (tuple, list):
            inner = _scalar(typing.get_args(annotation)[0])
            convert = _comma_list(inner) if inner else None
        if convert is None:
            raise TypeError(f"{params.__name__}.{name}: no option for type {annotation!r}; exclude it or convert it")
        group.add_argument(
            flag,
            type=convert,
            help=_help(info, spec, name, default),
            metavar=spec.metavar.get(name, name.upper()),
            **common,
        )


def given_params(args: argparse.Namespace) -> dict[str, Any]:
    """The parameter values the user gave on the command line."""
    return {k.removeprefix("param__"): v for k, v in vars(args).items() if k.startswith("param__")}


def build_params(params: type[BaseModel], spec: ParamsCLI, values: Mapping[str, Any]) -> BaseModel:
    """Validate ``values`` into ``params``; an error names the flag (or 'options' for a cross-field rule)."""
    try:
        return params.model_validate(dict(values))
    except ValidationError as exc:
        raise OptionError(describe_validation_error(exc, spec)) from None


def describe_validation_error(exc: ValidationError, spec: ParamsCLI) -> str:
    """One line per problem, each starting with the flag it concerns; no pydantic URLs."""
    lines = []
    for err in exc.errors(include_url=False):
        loc = err.get("loc") or ()
        message = str(err.get("msg", "invalid value")).removeprefix("Value error, ")
        if loc and isinstance(loc[0], str):
            lines.append(f"{spec.flag(loc[0])}: {message}")
        else:
            lines.append(message)
    return "; ".join(lines)
