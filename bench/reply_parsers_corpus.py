"""Every reply reader on the one labelled corpus (``tests/replies/corpus.jsonl``): flips, over-reads, refusals.

A *flip* is a value other than the label where neither is a refusal; an *over-read* is a value read from a reply
labelled ``refuse``; the *refusal rate* is the share of replies with a non-refuse label that the reader refused
(each one an inconclusive item, never a wrong one). Numbers per reader, for the whole corpus and its held-out part.

    python bench/reply_parsers_corpus.py [--at COMMIT | --tree PATH] [--out docs/results/reply_corpus.json] [--lines]

``--at COMMIT`` measures the protocols' reader modules as that commit had them (``git show``) on today's corpus,
with today's core reader: the numbers before the core reader are ``--at 897e2b39``. ``--tree PATH`` measures a
whole other checkout's readers (its ``voirdire``, ``agents`` and ``protocols``, core reader included) on today's
corpus, in a fresh interpreter: ``git worktree add /tmp/before d35292d`` then ``--tree /tmp/before`` gives the
numbers before issue 26. ``--lines`` counts the lines of reply-reading code instead
(``voirdire/replies/``, the protocols' ``parsing.py`` files and the oracle-checker's reader), in all and as code
only (no blank, comment or docstring lines), at ``--at`` or in the working tree.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import subprocess
import sys
import tokenize
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_INSIDE = "--inside-tree"


def _use_tree(tree: Path) -> None:
    """Import ``voirdire`` (and the folders mapped into it) from ``tree`` rather than the installed checkout."""
    import importlib.util

    sys.path.insert(0, str(tree))
    for name, folder in (("voirdire.agents", "agents"), ("voirdire.protocols", "protocols")):
        init = tree / folder / "__init__.py"
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(tree / folder)])
        assert spec is not None and spec.loader is not None, init
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


if len(sys.argv) == 3 and sys.argv[1] == _INSIDE:  # a child measuring another checkout (--tree)
    _use_tree(Path(sys.argv[2]))
    sys.path.insert(1, str(ROOT))
else:
    sys.path.insert(0, str(ROOT))

from tests.replies.readers import CURRENT, Table, read, readers_at  # noqa: E402

CORPUS = ROOT / "tests/replies/corpus.jsonl"


def measure(rows: list[dict], readers: Table = CURRENT) -> dict[str, dict[str, float | int]]:
    acc: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in rows:
        got = read(r, readers)
        for key in (r["reader"], f"{r['reader']} (held-out)" if r["split"] == "held-out" else None):
            if key is None:
                continue
            a = acc[key]
            a["n"] += 1
            a["ok"] += got == r["label"]
            if r["label"] != "refuse":
                a["answerable"] += 1
                a["refused"] += got == "refuse"
                a["flips"] += got not in ("refuse", r["label"])
            else:
                a["over_reads"] += got != "refuse"
    out: dict[str, dict[str, float | int]] = {}
    for key in sorted(acc):
        a = acc[key]
        out[key] = {
            "n": a["n"],
            "accuracy": round(a["ok"] / a["n"], 4),
            "flips": a["flips"],
            "over_reads": a["over_reads"],
            "refusal_rate": round(a["refused"] / a["answerable"], 4) if a["answerable"] else 0.0,
        }
    return out


# The oracle-checker's reader lives among other code: only these definitions are counted.
ORACLE = ("protocols/oracle_checker/paraphrase.py", ("_json_object", "EQUIVALENCE", "read_yes_no"))


def _source(path: str, at: str | None) -> str | None:
    if at is None:
        file = ROOT / path
        return file.read_text(encoding="utf-8") if file.exists() else None
    shown = subprocess.run(["git", "show", f"{at}:{path}"], cwd=ROOT, capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


def _counts(source: str, names: tuple[str, ...] = ()) -> tuple[int, int]:
    """Lines in all and code lines (no blank, comment or docstring line), of the whole file or of ``names``."""
    tree = ast.parse(source)
    keep: set[int] | None = None
    if names:
        keep = set()
        for node in tree.body:
            targets = [getattr(t, "id", "") for t in getattr(node, "targets", [])] + [getattr(node, "name", "")]
            if any(t in names for t in targets):
                keep.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    docs: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            docs.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    code: set[int] = set()
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            code.update(n for n in range(tok.start[0], tok.end[0] + 1) if n not in docs)
    lines = set(range(1, len(source.splitlines()) + 1))
    if keep is not None:
        lines, code = lines & keep, code & keep
    return len(lines), len(code)


def count_lines(at: str | None) -> dict[str, tuple[int, int]]:
    """Lines and code lines of every file holding reply-reading code, at ``at`` or in the working tree."""
    listed = (
        subprocess.run(
            ["git", "ls-tree", "--name-only", at, "voirdire/replies/"], cwd=ROOT, capture_output=True, text=True
        ).stdout.split()
        if at
        else [str(p.relative_to(ROOT)) for p in sorted((ROOT / "voirdire/replies").glob("*.py"))]
    )
    paths = [p for p in listed if p.endswith(".py")]
    paths += ["protocols/cross_examination/parsing.py", "protocols/qa_entailment/parsing.py"]
    out = {p: _counts(src) for p in paths if (src := _source(p, at)) is not None}
    src = _source(ORACLE[0], at)
    if src is not None:
        out[f"{ORACLE[0]} ({', '.join(ORACLE[1])})"] = _counts(src, ORACLE[1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the numbers as JSON here")
    ap.add_argument("--at", metavar="COMMIT", help="measure the readers as this commit had them")
    ap.add_argument("--tree", type=Path, metavar="PATH", help="measure the readers of another checkout (a worktree)")
    ap.add_argument("--lines", action="store_true", help="count the lines of reply-reading code instead")
    args = ap.parse_args()
    if args.lines:
        counts = count_lines(args.at)
        for path, (lines, code) in counts.items():
            print(f"{lines:6d} {code:6d}  {path}")
        print(f"{sum(c[0] for c in counts.values()):6d} {sum(c[1] for c in counts.values()):6d}  total (lines, code)")
        return
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.tree is not None:
        if not (args.tree / "voirdire").is_dir():
            ap.error(f"--tree: {args.tree} is not a voirdire checkout (no voirdire/ folder)")
        child = subprocess.run(
            [sys.executable, __file__, _INSIDE, str(args.tree.resolve())], capture_output=True, text=True, check=True
        )
        numbers = json.loads(child.stdout)
    else:
        numbers = measure(rows, readers_at(ROOT, args.at) if args.at else CURRENT)
    print("| reader | n | accuracy | flips | over-reads | refusal rate |\n|---|---|---|---|---|---|")
    for key, m in numbers.items():
        cells = f"{m['n']} | {m['accuracy']:.3f} | {m['flips']} | {m['over_reads']} | {m['refusal_rate']:.3f}"
        print(f"| {key} | {cells} |")
    if args.out:
        args.out.write_text(json.dumps(numbers, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == _INSIDE:
        lines = CORPUS.read_text(encoding="utf-8").splitlines()
        print(json.dumps(measure([json.loads(line) for line in lines if line.strip()])))
    else:
        main()
