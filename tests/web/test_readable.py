"""Tables, comparisons and whole-run exports that read: no word broken inside a table cell (viewer) or at an
80-column terminal (DCR), each aligned phrase pair with its own similarity, side-by-side columns that never overlap,
runs of one file name told apart by their folder, the item's question beside its id in compare tables, and an
export of a run that opens with the report's numbers and an index of its sessions."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web import runs
from tests.web.test_compare_browser import two_runs
from voirdire.analysis.compare import compare
from voirdire.chat.terminal import render
from voirdire.chat.turns import Note, chat_of
from voirdire.transcript import load
from voirdire.web.export import export_file
from voirdire.web.server import Viewer

# the width of the longest word of an element's text against the width its cell gives it (inside the padding)
WORDS_FIT = """
const out = [];
const probe = document.createElement('span');
probe.style.whiteSpace = 'nowrap';
for (const cell of document.querySelectorAll(arguments[0])) {
  const words = cell.innerText.split(/\\s+/).filter(w => w);
  if (!words.length) continue;
  const style = getComputedStyle(cell);
  probe.style.font = style.font;
  cell.appendChild(probe);
  let widest = 0, word = '';
  for (const w of words) {
    probe.textContent = w;
    if (probe.offsetWidth > widest) { widest = probe.offsetWidth; word = w; }
  }
  cell.removeChild(probe);
  const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  out.push([word, widest, room]);
}
return out;
"""


# each column's box, and whether anything in it shows outside it: an element wider than its column must sit in a
# scroll container inside the column (the role tables scroll there), never spill into the next
SPILL = """
return [...document.querySelectorAll('.side')].map(s => {
  const r = s.getBoundingClientRect();
  const clipped = e => { for (let a = e.parentElement; a && a !== s; a = a.parentElement) {
    const o = getComputedStyle(a).overflowX, q = a.getBoundingClientRect();
    if (o !== 'visible' && q.right <= r.right + 1 && q.left >= r.left - 1) return true; } return false; };
  const spill = [...s.querySelectorAll('*')].some(e => { const q = e.getBoundingClientRect();
    return q.width > 0 && (q.right > r.right + 1 || q.left < r.left - 1) && !clipped(e); });
  return [r.left, r.right, spill];
});
"""


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Two LMvLM runs in one folder, and a run of the same file name in another."""
    first, other, scripts = (tmp_path_factory.mktemp(n) for n in ("runs-a", "runs-b", "readable-scripts"))
    two_runs(first, scripts)
    runs.cross_examination(other, scripts)
    return first, other, scripts


@pytest.fixture(scope="module")
def both(folders: tuple[Path, Path, Path]) -> Iterator[Viewer]:
    v = Viewer([folders[0], folders[1]], port=0).start()
    yield v
    v.stop()


def test_a_dcr_session_at_80_columns_breaks_no_word(transcripts: dict[str, Path], monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    text = render(load(transcripts["dcr"]), color=False)
    assert max(len(line) for line in text.splitlines()) <= 80
    # every word of the candidate's sentences stands whole in the AMC table
    table = text[text.index("#  candidate sentence") :]
    for word in ("championship", "inconsistent", "secretary", "Kingston"):
        assert re.search(rf"\b{word}\b", table), word
    assert "champion\n" not in table and "inconsi" not in table.replace("inconsistent", "")


def test_the_terminal_chat_wraps_at_a_wide_terminal_once(transcripts: dict[str, Path], monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    narrow = render(load(transcripts["dcr"]), color=False)
    assert max(len(line) for line in narrow.splitlines()) <= 60
    monkeypatch.delenv("COLUMNS")
    piped = render(load(transcripts["dcr"]), color=False)  # no terminal: the widths of a file
    assert max(len(line) for line in piped.splitlines()) > 80


def test_each_aligned_pair_has_its_similarity_on_its_line(transcripts: dict[str, Path]) -> None:
    t = load(transcripts["paraphrase"])
    (session,) = t.sessions.values()
    card = next(x.card for x in chat_of(session, t.header).turns if isinstance(x, Note) and x.name == "phi_alignment")
    assert "aligned phrase pairs (similarity)" in card.headers and "similarities" not in card.headers
    cell = card.rows[0][card.headers.index("aligned phrase pairs (similarity)")].text
    lines = cell.splitlines()
    assert len(lines) == 2 and all(re.fullmatch(r".+ → .+  \((1|0\.\d+)\)", line) for line in lines), lines


def test_no_table_cell_of_the_viewer_breaks_a_word(browser: Any, viewer: Viewer) -> None:
    for run in ("paraphrase.jsonl", "dcr.jsonl", "entities.jsonl"):
        browser.set_window_size(1000, 900)  # narrow enough that the tables must wrap
        browser.get(viewer.url + f"run/{run}")
        browser.find_element("css selector", "a.session-link").click()
        measured = browser.execute_script(WORDS_FIT, "table.steps th, table.steps td")
        assert measured, run
        broken = [(w, width, room) for w, width, room in measured if width > room + 1]
        assert not broken, f"{run}: words wider than their cells: {broken}"
    browser.set_window_size(1400, 1000)


def test_side_by_side_columns_never_overlap(browser: Any, both: Viewer) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.set_window_size(1100, 900)
    browser.get(both.url)  # the runs list names every run (examine.jsonl~2 is the second folder's)
    browser.get(both.url + "compare/item?run=examine.jsonl&run=examine.jsonl~2&run=skeptic.jsonl&item=paris")
    WebDriverWait(browser, 60).until(lambda b: len(b.find_elements("css selector", ".side")) == 3, browser.page_source)
    boxes = browser.execute_script(SPILL)
    browser.set_window_size(1400, 1000)
    assert len(boxes) == 3
    assert all(not spill for _, _, spill in boxes), boxes  # nothing sticks out of its column
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(boxes)), boxes


def test_runs_of_one_name_are_told_apart_by_folder(both: Viewer, folders: tuple[Path, Path, Path]) -> None:
    import urllib.request

    first, other, _ = folders

    def get(path: str) -> str:
        with urllib.request.urlopen(both.url + path) as r:
            return str(r.read().decode())

    listing = get("")
    assert f">{first.name}/</span>" in listing and f">{other.name}/</span>" in listing
    page = get("compare?run=examine.jsonl&run=examine.jsonl~2&by=decision")
    header = page[page.index('<table class="compare-items">') :]
    assert f"{first.name}/</span>examine.jsonl" in header and f"{other.name}/</span>examine.jsonl" in header
    assert '<td class="item-title">What is the capital of France?</td>' in page
    side = get("compare/item?run=examine.jsonl&run=examine.jsonl~2&item=paris")
    assert f">{first.name}/</span>" in side and f">{other.name}/</span>" in side


def test_voirdire_compare_names_folders_and_items(folders: tuple[Path, Path, Path]) -> None:
    first, other, _ = folders
    c = compare([first / "examine.jsonl", other / "examine.jsonl", first / "skeptic.jsonl"])
    assert [r.label for r in c.runs] == [f"{first.name}/examine.jsonl", f"{other.name}/examine.jsonl", "skeptic.jsonl"]
    text = c.text()
    assert f"[1] {first.name}/examine.jsonl" in text and f"[2] {other.name}/examine.jsonl" in text
    paris = text.index("paris ")
    assert text.index("What is the capital of France?", paris) < text.index("rome ", paris)


def test_a_whole_run_export_opens_as_a_report(folders: tuple[Path, Path, Path], tmp_path: Path) -> None:
    html = export_file(folders[0] / "examine.jsonl", tmp_path / "run.html").read_text(encoding="utf-8")
    report, index, charts = html.index('id="report"'), html.index('id="sessions"'), html.index('id="charts"')
    first_session = html.index('<article class="exported"')
    assert report < index < charts < first_session
    numbers = html[report:index]
    assert "<b>2</b> sessions" in numbers and "<b>2/2</b> agree with gold" in numbers
    assert "cross_examination: 2 sessions" in numbers  # the report as `voirdire report` prints it
    rows = re.findall(r'<tr class="session[^"]*"><td><a href="#(s\d+)">', html)
    assert rows == ["s1", "s2"] and all(f'id="{a}"' in html for a in rows)
    assert '<td class="gold-values"><span class="gold">Paris</span></td>' in html
    assert html[charts:first_session].count('<figure class="chart">') >= 3
    one = export_file(folders[0] / "examine.jsonl", tmp_path / "one.html", session="paris").read_text(encoding="utf-8")
    assert 'id="report"' not in one and 'id="charts"' not in one  # one session: the chat only


def test_a_run_longer_than_a_page_is_split_and_said_before_it_is_written(
    folders: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``PAGE_SESSIONS`` sessions the export is several pages: the first holds the report and the list of
    every session, linking to the page that holds each; the others hold their sessions and a way back."""
    import voirdire.web.export as export

    monkeypatch.setattr(export, "PAGE_SESSIONS", 1)
    said: list[str] = []
    first = export_file(folders[0] / "examine.jsonl", tmp_path / "run.html", said=said.append)
    assert said == ["writing 2 sessions to " + str(tmp_path / "run.html") + " (the report and the list of sessions, "
                    "then sessions 1–1) and 1 more page of up to 1 (run-2.html)"]  # fmt: skip
    html, second = first.read_text(encoding="utf-8"), (tmp_path / "run-2.html").read_text(encoding="utf-8")
    assert re.findall(r'<tr class="session[^"]*"><td><a href="([^"]+)">', html) == ["#s1", "run-2.html#s2"]
    assert 'id="report"' in html and 'id="s1"' in html and 'id="s2"' not in html
    assert 'id="report"' not in second and 'id="s2"' in second and 'id="s1"' not in second
    assert 'page 2 of 2, sessions 2–2 of 2 · <a href="run.html">' in second
    assert not (tmp_path / "run-3.html").exists()
    export_file(folders[0] / "examine.jsonl", tmp_path / "cut.html", limit=1)
    assert (tmp_path / "cut.html").is_file() and not (tmp_path / "cut-2.html").exists()


def test_export_html_takes_several_sessions_and_a_limit(
    folders: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from voirdire.cli import main

    out = tmp_path / "two.html"
    args = ["export-html", str(folders[0] / "examine.jsonl"), "--session", "rome", "--session", "paris", "-o", str(out)]
    assert main(args) == 0
    html = out.read_text(encoding="utf-8")
    assert html.index('id="s1"') < html.index('id="s2"') and "Session rome" in html and "Session paris" in html
    assert "writing 2 sessions to" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["export-html", str(folders[0] / "examine.jsonl"), "--limit", "0", "-o", str(tmp_path / "none.html")])
    assert refused.value.code == 2 and "--limit: must be at least 1" in capsys.readouterr().err
    assert not (tmp_path / "none.html").exists()


def test_a_protocols_empty_charts_are_left_out_with_their_reason(transcripts: dict[str, Path]) -> None:
    from voirdire.analysis.drawing import transcript_charts
    from voirdire.reports.charts import LeftOut

    left: list[LeftOut] = []
    _, charts = transcript_charts(transcripts["majority"], left_out=left)  # a claim without a gold label
    assert "lmvlm-precision-recall" not in {c.name for c in charts}
    assert LeftOut("lmvlm-precision-recall", "no claim has a gold label to score against (§4.1)") in left
    left = []
    _, charts = transcript_charts(transcripts["dcr"], left_out=left)  # scored, but no human judgments
    assert "dcr-scores-per-round" in {c.name for c in charts} and "dcr-correlation" not in {c.name for c in charts}
    assert [x.name for x in left if x.name.startswith("dcr-")] == ["dcr-correlation"]
