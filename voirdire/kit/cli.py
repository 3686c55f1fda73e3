"""More of a protocol's command line than ``CommandSpec`` and ``ParamsCLI``: how it reads its inputs
(``Inputs``, ``ItemInputs``, ``InputError``, ``OptionError``), options built from ``Params`` (``build_params``,
``add_params_options``, ``given_params``), the run's summary (``default_summary``), and the installed protocols
(``get``, ``cards``, ``CommandTable``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.registry import (
        CommandTable as CommandTable,
        InputError as InputError,
        Inputs as Inputs,
        ItemInputs as ItemInputs,
        OptionError as OptionError,
        add_params_options as add_params_options,
        build_params as build_params,
        cards as cards,
        default_summary as default_summary,
        get as get,
        given_params as given_params,
    )

__getattr__, __dir__, __all__ = lazy_face(__name__)
