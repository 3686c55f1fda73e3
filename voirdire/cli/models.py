"""``voirdire models``: the model specs a role can name, with where each one's key comes from and what its client
supports (reply schemas, ``n`` samples, log-probabilities), read from the provider table. A provider that may also
be written ``<kind>/<model>`` (``SLASH_KINDS``) lists that form beside its own."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from voirdire.models import Provider



def register(sub: Any) -> None:
    p = sub.add_parser("models", help="the model specs a role can name and what each supports")
    p.add_argument("--json", action="store_true", help="the same as JSON")
    p.set_defaults(func=cmd_models)


def _row(kind: str, provider: Provider) -> dict[str, Any]:
    from voirdire.models import SLASH_KINDS

    features = provider.features
    return {
        "kind": kind,
        "forms": [*provider.forms, *(f.replace(":", "/", 1) for f in provider.forms if kind in SLASH_KINDS)],
        "key": features.key if features else "takes none",
        "structured": features.structured if features else "validated",
        "samples": features.samples if features else "n requests",
        "logprobs": bool(features and features.logprobs),
        "timeout_s": provider.timeout_s,
        "max_retries": provider.max_retries,
    }


def cmd_models(args: argparse.Namespace) -> int:
    from voirdire.models import PROVIDERS

    rows = [_row(kind, provider) for kind, provider in PROVIDERS.items()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print(" | ".join(row["forms"]))
        print(f"    key: {row['key']}")
        print(f"    structured replies: {row['structured']}")
        print(f"    n samples: {row['samples']}; logprobs: {'yes' if row['logprobs'] else 'no'}")
        timeout = f"{row['timeout_s']:g} s" if row["timeout_s"] is not None else "none"
        print(f"    default timeout: {timeout}; retries: {row['max_retries']}")
    return 0
