"""The protocol registry and what a protocol declares for the command line: registrations loaded from one
entry-point group, options generated from a ``Params`` model, items read from dataset files or given inline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.registry.datasets import (
        DatasetError as DatasetError,
        as_list as as_list,
        describe as describe,
        load_items as load_items,
        parse_fields as parse_fields,
        read_records as read_records,
        source_name as source_name,
        stream_items as stream_items,
    )
    from voirdire.registry.flags import (
        OptionError as OptionError,
        ParamsCLI as ParamsCLI,
        add_params_options as add_params_options,
        build_params as build_params,
        given_params as given_params,
    )
    from voirdire.registry.inputs import ItemInputs as ItemInputs, add_field_option as add_field_option
    from voirdire.registry.plugins import (
        Card as Card,
        CommandSpec as CommandSpec,
        CommandTable as CommandTable,
        InputError as InputError,
        Inputs as Inputs,
        Registration as Registration,
        RunOutcome as RunOutcome,
        api_function as api_function,
        api_names as api_names,
        card as card,
        cards as cards,
        command_plugins as command_plugins,
        default_summary as default_summary,
        get as get,
        known_roles as known_roles,
        registrations as registrations,
        report_folds as report_folds,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
