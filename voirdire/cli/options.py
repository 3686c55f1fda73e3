"""The options every run command shares, and ``CommandOptions``: all of them read once from the parsed command line.

The model options bind roles to models (``--model``, ``--config`` and the settings of every role); the run options
say where the transcript goes and how the sessions run (``RunOptions``, what the runner and the Python API take);
the output options say what is printed or written after the run.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from voirdire.base import (
    MAX_REPEATS,
    MAX_TOKENS,
    MAX_WORKERS,
    VoirdireError,
    count_problem,
    mask_secrets,
    seconds_problem,
)
from voirdire.runner import ErrorBudget, RunOptions  # CommandOptions' field; the runner's face imports it alone

REMOTE_CONCURRENCY = 10
"""``--concurrency``'s default when every model role is a remote endpoint: Inspect AI keeps 10 connections per model
by default (its ``max_connections``), which a hosted API and a local server both take; the embedded model answers one
call at a time, a script's replies in order and a person one question at a time, so those runs default to 1."""



def add_command(sub: Any, name: str, fill: Callable[[argparse.ArgumentParser], None], **kwargs: Any) -> None:
    """``name`` in the sub-command table ``sub``, its options added by ``fill(parser)`` when it is the command given
    where ``sub`` can wait (``voirdire.cli.main.LazyCommands``): what they need is then imported by that command
    alone, not by ``voirdire --help``. Elsewhere they are added now."""
    if hasattr(sub, "add_lazy_parser"):
        sub.add_lazy_parser(name, fill, **kwargs)
    else:
        fill(sub.add_parser(name, **kwargs))

class CLIError(VoirdireError):
    """A command line that cannot run; the message names the option."""


def at_least(low: int) -> Callable[[str], int]:
    """An option's int parser that refuses values below ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return parse


def between(low: int, high: int, unit: str) -> Callable[[str], int]:
    """An option's int parser that refuses values outside [low, high], naming the bound and its ``unit``."""
    return by_rule(lambda value: count_problem(value, low, high, unit))


def by_rule(problem: Callable[[int], str | None]) -> Callable[[str], int]:
    """An option's int parser that refuses what ``problem`` (the rule the run itself checks) finds wrong."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if (why := problem(value)) is not None:
            raise argparse.ArgumentTypeError(why)
        return value

    return parse


def _error_budget(text: str) -> ErrorBudget:
    try:
        return ErrorBudget.parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N or P%, e.g. 5 or 10%, not {text!r}") from None


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if (why := seconds_problem(value)) is not None:
        raise argparse.ArgumentTypeError(why)
    return value


def _usd(text: str) -> float:
    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an amount of USD such as 2.50, not {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive amount of USD, got {text}")
    return value


SHARED_HELP = {
    "max_tokens": "bound every reply (default 256)",
    "temperature": "sampling temperature for every role (default 0: greedy)",
    "seed": "sampling seed for every role",
}


def add_model_options(p: argparse.ArgumentParser, help: Mapping[str, str] | None = None) -> None:
    texts = {**SHARED_HELP, **(help or {})}
    g = p.add_argument_group("models (any role can be any model)")
    g.add_argument(
        "--model", action="append", default=[], metavar="ROLE=SPEC",
        help="bind a role to a model spec: local | local:FILE.gguf | openai:MODEL | "
        "openai-compatible:MODEL@URL | scripted:FILE | human; a bare SPEC binds every role (repeatable)",
    )  # fmt: skip
    g.add_argument(
        "--config", type=Path,
        help="TOML run config with [roles.NAME] tables: model, temperature, max_tokens, seed, structured, timeout, "
        "max_retries, api_key_env, prompt_cache",
    )  # fmt: skip
    g.add_argument("--max-tokens", type=between(1, MAX_TOKENS, "tokens"), metavar="N", help=texts["max_tokens"])
    g.add_argument("--temperature", type=float, help=texts["temperature"])
    g.add_argument("--seed", type=int, help=texts["seed"])
    g.add_argument(
        "--timeout", type=_seconds, metavar="SECONDS",
        help="seconds one model request of every role may take, connecting included (default 30 for openai and "
        "openai-compatible specs, 600 for local models; a person typing has none); a request past it is retried "
        "like a dropped connection",
    )  # fmt: skip
    g.add_argument(
        "--max-retries", type=between(0, 100, "retries"), metavar="N",
        help="retries of a failed request of every role: timeouts, dropped connections, cut-off replies, 429 and "
        "5xx (default 3 for openai and openai-compatible specs, 0 for local models)",
    )  # fmt: skip
    g.add_argument(
        "--api-key-env", action="append", default=[], metavar="[ROLE=]VAR",
        help="the environment variable holding a role's API key (a bare VAR: every role); without it openai: specs "
        "read OPENAI_API_KEY and openai-compatible: specs send no key (repeatable)",
    )  # fmt: skip
    g.add_argument(
        "--structured", action="store_true",
        help="ask every role for its closed answers through a reply schema the backend enforces (a grammar for "
        "llama.cpp, response_format for OpenAI-compatible endpoints) instead of reading the paper's free text; "
        "per role: structured = true in the --config table",
    )  # fmt: skip
    g.add_argument(
        "--no-prompt-cache", action="store_true",
        help="send no prompt-cache marks (Anthropic's cache_control breakpoints on the stable prefix, set by default "
        "when it is long enough); per role: prompt_cache = false in the --config table. OpenAI caches on its own",
    )  # fmt: skip


def add_run_options(p: argparse.ArgumentParser) -> None:
    from voirdire.executors import concurrency_problem
    from voirdire.runner import DEFAULT_MAX_ERRORS

    g = p.add_argument_group("run")
    g.add_argument("--out", type=Path, help="transcript file (JSONL); a batch resumes it if it exists")
    g.add_argument("--fresh", action="store_true", help="overwrite --out instead of resuming it")
    g.add_argument(
        "--concurrency", type=by_rule(concurrency_problem), metavar="N",
        help=f"sessions at a time (default {REMOTE_CONCURRENCY} when every model role is a remote endpoint, as "
        "Inspect AI's 10 connections per model; 1 when a role runs on the embedded model, a script or a person)",
    )  # fmt: skip
    g.add_argument("--limit", type=at_least(1), metavar="N", help="first N items of the dataset")
    g.add_argument(
        "--offset", type=at_least(0), default=0, metavar="N", help="skip the first N items (counted from the start)"
    )
    g.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    g.add_argument("--report", type=Path, help="also write the metrics report as JSON here")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.add_argument(
        "--follow", "-v", action="store_true",
        help="print each session's chat as it finishes (one item: every turn as it happens, as at a terminal)",
    )  # fmt: skip
    g.add_argument("--cache", type=Path, help="JSONL cache of model replies: identical deterministic calls are reused")
    g.add_argument(
        "--no-coalesce", action="store_true",
        help="send every request, even one identical to an earlier greedy (or seeded) request of the same session; "
        "by default such a request is answered by the first one and marked coalesced in the transcript",
    )  # fmt: skip
    g.add_argument(
        "--max-errors", type=_error_budget, metavar="N|P%", default=DEFAULT_MAX_ERRORS,
        help="stop the run once more than N sessions (or P%% of the sessions to run) have failed; the sessions not "
        "started are left for a re-run to resume (exit status 4); default: more than half of them, and more than 10",
    )  # fmt: skip
    g.add_argument(
        "--max-cost", type=_usd, metavar="USD",
        help="stop the run once what its model calls were billed, with what the sessions in flight are expected to "
        "cost, reaches USD (priced as the report prices, --prices included); the sessions in flight finish, the "
        "rest are left for a re-run to resume (exit status 4). One process only (--workers 1)",
    )  # fmt: skip
    g.add_argument(
        "--session-timeout", type=_seconds, metavar="SECONDS",
        help="end a session that runs longer than this as an error (the others go on); without it a session takes "
        "at most its calls' own bounds, see docs/reliability.md",
    )  # fmt: skip
    g.add_argument(
        "--allow-errors", action="store_true",
        help="exit 0 even when sessions failed (otherwise exit status 3; failed sessions are in the transcript)",
    )  # fmt: skip
    g.add_argument(
        "--workers", type=between(1, MAX_WORKERS, "processes"), default=1, metavar="N",
        help="run the sessions in N processes (--concurrency sessions at a time in each), all writing the one "
        "transcript; with --executor ray, N Ray actors (default 1: this process alone)",
    )  # fmt: skip
    g.add_argument(
        "--executor", choices=("local", "ray"), default="local",
        help="where the sessions run: local (this machine, --workers processes) or ray (a Ray cluster, --workers "
        "actors; needs voirdire[ray]); the transcript is the same (default local)",
    )  # fmt: skip
    g.add_argument(
        "--repeats", type=between(1, MAX_REPEATS, "sessions per item"), default=1, metavar="N",
        help="examine each item N times, as N sessions ITEM@r1..ITEM@rN with seeds of their own and no reply cache; "
        "the report adds each item's verdicts, decided or undecided (--decided-at), and the flip rate (default 1)",
    )  # fmt: skip
    g.add_argument(
        "--stop-when-decided", action="store_true",
        help="with --repeats N: stop an item's repeats once its decided or undecided status at --decided-at can no "
        "longer change (the statuses are those of N full repeats; the report says how many each item used)",
    )  # fmt: skip
    g.add_argument(
        "--ray-address", metavar="ADDRESS",
        help="with --executor ray: the cluster to join (auto: the one this machine belongs to; default: start a "
        "local Ray instance for this run)",
    )  # fmt: skip
    g.add_argument(
        "--otel", metavar="URL",
        help="export each session as an OpenTelemetry trace (GenAI conventions), and its verdict as a log record, "
        "to the OTLP/HTTP receiver at URL as it ends (default: $OTEL_EXPORTER_OTLP_ENDPOINT when set); a receiver "
        "that is down costs the run nothing but one warning; needs voirdire[otel]",
    )  # fmt: skip
    g.add_argument(
        "--otel-content", action="store_true",
        help="with --otel or --phoenix: export the messages (prompts, replies) too, as gen_ai.input.messages and "
        "gen_ai.output.messages (and Phoenix's input and output); off by default, since prompts may be sensitive",
    )  # fmt: skip
    g.add_argument(
        "--phoenix", metavar="URL",
        help="Arize Phoenix at URL (e.g. http://127.0.0.1:6006): each session's trace goes there (unless --otel "
        "names another receiver) and each verdict becomes a span annotation of its session; a --otel receiver "
        "that is Phoenix is found without it",
    )  # fmt: skip
    g.add_argument(
        "--otel-span-events", action="store_true",
        help="with --otel: each verdict as a gen_ai.evaluation.result event of its session's span, not a log "
        "record (for receivers that take traces only, such as Jaeger)",
    )  # fmt: skip


def add_prices_option(p: argparse.ArgumentParser) -> None:
    from voirdire.reports import ENV as PRICES_ENV

    p.add_argument(
        "--prices", type=Path, metavar="FILE",
        help="a TOML price table ([models] NAME = { input = USD, output = USD } per million tokens) over the "
        f"packaged one and ${PRICES_ENV}'s, for the report's cost lines",
    )  # fmt: skip


class ModelOptions(BaseModel):
    """The shared model options as given (None: not given, so a paper's default or the config's value holds)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    model: tuple[str, ...] = ()
    config: Path | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None
    timeout: float | None = None
    max_retries: int | None = None
    api_key_env: tuple[str, ...] = ()
    structured: bool = False
    no_prompt_cache: bool = False

    def given(self, key: str) -> bool:
        """Whether the flag that sets every role's ``key`` was given."""
        value = self.model_dump().get(key)
        return value is not None and value is not False  # 0 is a value given


class CommandOptions(BaseModel):
    """Every shared option of a run command, read once from the parsed arguments (``from_args``)."""

    model_config = ConfigDict(frozen=True)
    models: ModelOptions
    run: RunOptions
    out: Path | None = None
    limit: int | None = None
    offset: int = 0
    as_json: bool = False
    report: Path | None = None
    allow_errors: bool = False
    prices: Path | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CommandOptions:
        """The options of ``args`` (a run command's parse: every shared option is there, and ``argv``, the command
        line that ``main`` adds, recorded masked in the run header)."""
        given: dict[str, Any] = vars(args)
        if given["ray_address"] is not None and given["executor"] != "ray":
            raise CLIError("--ray-address: only with --executor ray")
        run = RunOptions(
            concurrency=given["concurrency"] or 1,  # unset: the command sets it from the roles (default_concurrency)
            resume=not given["fresh"],
            progress=not (given["no_progress"] or given["json"]),
            seed=given["seed"],
            command=[mask_secrets(a) for a in given["argv"]],
            cache=given["cache"],
            max_errors=given["max_errors"],
            # the verdicts are printed only with --json or --report; otherwise memory stays flat in the run size
            keep_verdicts=bool(given["json"] or given["report"]),
            workers=given["workers"],
            executor=given["executor"],
            ray_address=given["ray_address"],
            coalesce=not given["no_coalesce"],
            session_timeout=given["session_timeout"],
            repeats=given["repeats"],
            stop_when_decided=bool(given.get("stop_when_decided")),
            **({"decided_at": given["decided_at"]} if given.get("decided_at") else {}),
            max_cost=given.get("max_cost"),
            prices=given.get("prices"),
        )
        return cls(
            models=ModelOptions.model_validate(given),
            run=run,
            out=given["out"],
            limit=given["limit"],
            offset=given["offset"],
            as_json=given["json"],
            report=given["report"],
            allow_errors=given["allow_errors"],
            prices=given["prices"],
        )
