"""``voirdire export TRANSCRIPT --format parquet|csv|jsonl -o FILE [--table sessions|turns|verdicts]``: a run as a
table for pandas, spreadsheets or a warehouse (``--format html`` is ``export-html``'s page).
``voirdire export otel TRANSCRIPT --endpoint URL``: a finished run's sessions as OpenTelemetry traces
(``voirdire.integrations``).

The tables are the transcript's frames (``voirdire.load(T).sessions_frame()`` and its siblings): one row per
session, per turn or per verdict. Parquet keeps lists as lists and reads back equal (pyarrow, ``pip install
'voirdire[data]'``); CSV writes a list or nested value as JSON text; JSONL writes one JSON object a row.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.base import VoirdireError, shown, write_atomic
from voirdire.cli.options import add_command, add_prices_option

if TYPE_CHECKING:
    pass

FORMATS = ("parquet", "csv", "jsonl", "html")


class ExportError(VoirdireError, ValueError):
    """An export that cannot be written as asked; the message names the option."""


def register(sub: Any) -> None:
    add_command(
        sub, "export", add_export_options,
        help="a transcript as a table: parquet, csv or jsonl (one row per session, turn or verdict)",
    )  # fmt: skip


def add_export_options(ex: argparse.ArgumentParser) -> None:
    from voirdire.transcript import TABLES  # the transcript's schema: imported by this command, not by --help

    ex.add_argument("transcript", nargs="+", type=Path, metavar="[otel] TRANSCRIPT",
                    help="the transcript; `otel TRANSCRIPT`: send its sessions as traces to --endpoint")  # fmt: skip
    ex.add_argument("--format", choices=FORMATS, help="default: from the suffix of -o (.parquet, .csv, .jsonl)")
    ex.add_argument("-o", "--out", type=Path, metavar="FILE", help="the file to write (every format but otel)")
    ex.add_argument("--table", choices=TABLES, default="sessions", help="one row per ... (default sessions)")
    ex.add_argument("--session", help="--format html: only this session id")
    ex.add_argument("--endpoint", metavar="URL", help="export otel: the OTLP/HTTP receiver (default: "
                    "$OTEL_EXPORTER_OTLP_ENDPOINT)")  # fmt: skip
    ex.add_argument("--phoenix", metavar="URL", help="export otel: Arize Phoenix at URL: the traces go there (unless "
                    "--endpoint names another receiver), each verdict as a span annotation")  # fmt: skip
    ex.add_argument("--otel-content", action="store_true",
                    help="export otel: the messages too, as gen_ai.input.messages / gen_ai.output.messages "
                    "(prompts may be sensitive)")  # fmt: skip
    ex.add_argument("--otel-span-events", action="store_true",
                    help="export otel: each verdict as an event of its session's span, not a log record")  # fmt: skip
    ex.add_argument("--resend", action="store_true",
                    help="export otel: send the sessions this receiver was sent before again (same ids)")  # fmt: skip
    add_prices_option(ex)
    ex.set_defaults(func=cmd_export)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    suffix = args.out.suffix.lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    raise ExportError(f"--format: give parquet, csv, jsonl or html (-o {args.out.name} does not say which)")


def cmd_export(args: argparse.Namespace) -> int:
    if str(args.transcript[0]) == "otel" and len(args.transcript) == 2:
        return cmd_export_otel(args.transcript[1], args)
    if len(args.transcript) != 1:
        raise ExportError("export: give one TRANSCRIPT (or `otel TRANSCRIPT --endpoint URL`)")
    args.transcript = args.transcript[0]
    if args.out is None:
        raise ExportError("-o/--out: the file to write")
    kind = _format(args)
    if kind == "html":
        from voirdire.cli.web import cmd_export_html

        return cmd_export_html(args)
    if args.session:
        raise ExportError("--session: only for --format html (a table holds every session; filter its rows)")
    from voirdire.api import load  # the API and the chat (rich): imported by this command, not by `voirdire --help`
    from voirdire.chat import stage

    with stage(f"reading {args.transcript}"):
        frame = load(args.transcript, prices=args.prices).frame(args.table)
    with stage(f"writing {args.out}"):
        write_table(frame, args.out, kind)
    print(shown(f"{args.out}: {len(frame):,} {args.table} rows, {len(frame.columns)} columns ({kind})"))
    return 0


def cmd_export_otel(path: Path, args: argparse.Namespace) -> int:
    import os

    from voirdire.chat import stage
    from voirdire.integrations import export_transcript

    endpoint = args.endpoint or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or None
    if not endpoint and not args.phoenix:
        raise ExportError(
            "export otel: --endpoint URL (the OTLP/HTTP receiver) or --phoenix URL, or set OTEL_EXPORTER_OTLP_ENDPOINT"
        )
    if not path.is_file():
        raise ExportError(f"{path}: no such transcript")
    with stage(f"exporting {path}"):
        sent = export_transcript(path, endpoint, content=args.otel_content, phoenix=args.phoenix,
                                 span_events=args.otel_span_events, resend=args.resend)  # fmt: skip
    print(shown(f"{path}: {sent:,} session{'s' * (sent != 1)} exported as traces"))
    return 0


def write_table(frame: Any, out: Path, kind: str) -> None:
    """``frame`` written as ``kind`` to ``out``, whole or not at all (written beside it, then renamed)."""
    if kind == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ExportError("--format parquet needs pyarrow: pip install 'voirdire[data]'") from None
        sink = pa.BufferOutputStream()
        pq.write_table(_arrow_table(pa, frame), sink)
        write_atomic(out, sink.getvalue().to_pybytes(), "export")
        return
    if kind == "csv":
        flat = frame.apply(lambda column: column.map(_csv_cell) if column.dtype == object else column)
        write_atomic(out, flat.to_csv(index=False), "export")
        return
    lines = (json.dumps({k: _json_cell(v) for k, v in row.items()}, ensure_ascii=False, default=str) for row in
             frame.to_dict("records"))  # fmt: skip
    write_atomic(out, "".join(line + "\n" for line in lines), "export")


def _csv_cell(value: Any) -> Any:
    """A list in a CSV cell as JSON text (not Python's repr)."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list) else value


def _json_cell(value: Any) -> Any:
    """NaN and NaT as null: JSON has no NaN."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "isoformat"):
        return None if str(value) == "NaT" else value.isoformat()
    return value


def _arrow_table(pa: Any, frame: Any) -> Any:
    """The frame as an Arrow table; a column whose cells are of kinds Arrow cannot hold together (a statistic that
    is a number in one verdict and a word in another) is written as JSON text, cell by cell."""
    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        frame = frame.copy()
        for name in [c for c in frame.columns if frame[c].dtype == "object"]:
            try:
                pa.array(frame[name], from_pandas=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                frame[name] = frame[name].map(lambda v: None if v is None else json.dumps(v, default=str))
        return pa.Table.from_pandas(frame, preserve_index=False)
