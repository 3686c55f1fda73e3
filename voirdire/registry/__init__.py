"""The protocol registry and what a protocol declares for the command line: registrations loaded from one
entry-point group, options generated from a ``Params`` model, items read from dataset files or given inline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.registry.datasets import (
        DatasetError,
        as_list,
        describe,
        load_items,
        parse_fields,
        read_records,
        source_name,
        stream_items,
    )
    from voirdire.registry.flags import OptionError, ParamsCLI, add_params_options, build_params, given_params
    from voirdire.registry.inputs import ItemInputs, add_field_option
    from voirdire.registry.plugins import (
        Card,
        CommandSpec,
        CommandTable,
        InputError,
        Inputs,
        Registration,
        RunOutcome,
        api_function,
        card,
        cards,
        command_plugins,
        default_summary,
        get,
        known_roles,
        registrations,
        report_folds,
    )

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.registry.datasets": (
            "DatasetError", "as_list", "describe", "load_items", "parse_fields", "read_records", "source_name",
            "stream_items",
        ),
        "voirdire.registry.flags": ("OptionError", "ParamsCLI", "add_params_options", "build_params", "given_params"),
        "voirdire.registry.inputs": ("ItemInputs", "add_field_option"),
        "voirdire.registry.plugins": (
            "Card", "CommandSpec", "CommandTable", "InputError", "Inputs", "Registration", "RunOutcome", "api_function",
            "command_plugins", "default_summary", "get", "known_roles", "card", "cards",
            "registrations", "report_folds",
        ),
    },
)

__all__ = [
    "Card",
    "CommandSpec",
    "CommandTable",
    "DatasetError",
    "InputError",
    "Inputs",
    "ItemInputs",
    "OptionError",
    "ParamsCLI",
    "Registration",
    "RunOutcome",
    "add_field_option",
    "add_params_options",
    "api_function",
    "as_list",
    "build_params",
    "card",
    "cards",
    "command_plugins",
    "default_summary",
    "describe",
    "get",
    "given_params",
    "known_roles",
    "load_items",
    "parse_fields",
    "read_records",
    "registrations",
    "report_folds",
    "source_name",
    "stream_items",
]
