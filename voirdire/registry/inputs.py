"""What a command runs on: one item given as command-line arguments (its fields), or a dataset file of items.

``ItemInputs`` adds one positional argument or flag per chosen field of a protocol's ``Item`` (a list field's flag
repeats) and a dataset flag, and reads them back into items; a protocol's ``CommandSpec`` uses its
``add_arguments`` and ``load`` as its inputs.
"""

from __future__ import annotations

import argparse
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from voirdire.registry.datasets import parse_fields, source_name, stream_items
from voirdire.registry.plugins import InputError, Inputs
from voirdire.session import Protocol


@dataclass(frozen=True)
class ItemInputs:
    """``positional``: item fields taken as positional arguments; ``flags``: item field -> flag; ``build``: the
    item from the given fields (default: the protocol's ``item_from_record``); ``help``: field -> help text."""

    item: type[BaseModel]
    positional: tuple[str, ...] = ()
    flags: Mapping[str, str] = field(default_factory=dict)
    help: Mapping[str, str] = field(default_factory=dict)
    data_flag: str = "--data"
    data_help: str = "a dataset: JSONL, CSV, a JSON list, Parquet, a datasets folder (save_to_disk) or hf://owner/name"
    build: Callable[[dict[str, Any]], BaseModel] | None = None

    def _is_list(self, name: str) -> bool:
        annotation = self.item.model_fields[name].annotation
        return typing.get_origin(annotation) in (list, tuple)

    def _names(self) -> list[str]:
        """How the single-item arguments are named in errors (list fields cannot stand alone)."""
        return [p.upper() for p in self.positional] + [f for n, f in self.flags.items() if not self._is_list(n)]

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        for name in self.positional:
            p.add_argument(name, nargs="?", help=self.help.get(name, self.item.model_fields[name].description))
        for name, flag in self.flags.items():
            text = self.help.get(name, self.item.model_fields[name].description)
            if self._is_list(name):
                text = f"{text} (repeatable)" if text else "repeatable"
                p.add_argument(flag, dest=f"item__{name}", action="append", default=[], help=text, metavar=name.upper())
            else:
                p.add_argument(flag, dest=f"item__{name}", help=text, metavar=name.upper())
        p.add_argument(self.data_flag, dest="item__data", type=Path, help=self.data_help, metavar="FILE")
        add_field_option(p, self.data_flag)

    def load(self, args: argparse.Namespace, protocol: Protocol[Any, Any]) -> Inputs:
        parsed = vars(args)  # the dests this class added, named from the item's fields
        given = {n: parsed[n] for n in self.positional if parsed.get(n)}
        given |= {n: parsed[f"item__{n}"] for n in self.flags if parsed.get(f"item__{n}")}
        data = args.item__data
        if args.item__fields and data is None:
            raise InputError(f"--field: maps the columns of {self.data_flag} FILE, which is not given")
        if data is not None and given:
            raise InputError(f"give either {' / '.join(self._names())} or {self.data_flag} FILE, not both")
        if data is not None:
            fields = parse_fields(args.item__fields)
            items = stream_items(data, protocol.item_from_record, limit=args.limit, offset=args.offset, fields=fields)
            return Inputs(items=items, dataset=source_name(data))
        if not given or not any(n in given for n in (*self.positional, *self.flags) if not self._is_list(n)):
            raise InputError(f"give {', '.join(self._names())}, or {self.data_flag} FILE")
        for name, value in given.items():  # "   " would be examined as if it said something
            if isinstance(value, str) and not value.strip():
                raise InputError(f"{name}: empty (only whitespace)")
        try:
            item = self.build(given) if self.build else protocol.item_from_record(given)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            message = str(first.get("msg", "invalid item")).removeprefix("Value error, ")
            raise InputError(f"{where}: {message}" if where else message) from None
        except ValueError as exc:
            raise InputError(str(exc)) from None
        return Inputs(items=[item], single=True)


def add_field_option(p: argparse.ArgumentParser, data_flag: str = "--data") -> None:
    """``--field FIELD=COLUMN`` (repeatable): the dataset column an item field is read from."""
    p.add_argument(
        "--field",
        dest="item__fields",
        action="append",
        default=[],
        metavar="FIELD=COLUMN",
        help=f"read the item field FIELD from the column COLUMN of {data_flag} (repeatable)",
    )
