"""Model and user text made safe to show: the one function every printer and page passes untrusted text through.

A model's reply (or an item, an error message, a step's data) can carry bytes that a terminal obeys rather than
shows: ESC starts a control sequence (``ESC[2J`` clears the screen, ``ESC]0;…BEL`` sets the window title, cursor
moves can overwrite a verdict already printed), C1 controls do the same in one byte (U+009B is CSI), a carriage
return or backspace overwrites, and Unicode's bidirectional overrides (U+202E) reverse what follows in a terminal
and in a browser alike. ``shown`` maps every such character to a visible stand-in: C0 controls and DEL to their
Unicode control pictures (``␛[2J``, ``␇``, ``␀``), everything else to ``<U+202E>``, so the text stays readable and
inert. Line feeds and tabs are kept. The mapping is one ``str.translate`` table: linear in the text's length.
"""

from __future__ import annotations

KEPT = frozenset("\n\t")

# Unicode's bidirectional formatting characters (UAX #9): embeddings, overrides, isolates and marks.
BIDI = (
    *range(0x202A, 0x202F),  # LRE RLE PDF LRO RLO
    *range(0x2066, 0x206A),  # LRI RLI FSI PDI
    0x200E,  # LRM
    0x200F,  # RLM
    0x061C,  # ALM
)
# Characters a terminal or a browser treats as a line or page break, or that hide text.
BREAKS = (0x2028, 0x2029, 0x0085, 0xFEFF, 0x200B)


def _codepoint(cp: int) -> str:
    return f"<U+{cp:04X}>"


def _table() -> dict[int, str]:
    table: dict[int, str] = {}
    for cp in range(0x20):
        if chr(cp) not in KEPT:
            table[cp] = chr(0x2400 + cp)  # the control pictures block mirrors C0: ESC -> U+241B ␛
    table[0x7F] = "\u2421"  # ␡
    for cp in (*range(0x80, 0xA0), *BIDI, *BREAKS, *range(0xD800, 0xE000)):  # C1, bidi, breaks, lone surrogates
        table[cp] = _codepoint(cp)
    return table


_TABLE = _table()


def shown(text: object) -> str:
    """``text`` (any value, as ``str()`` gives it) with every control, escape and bidi character made visible."""
    return str(text).translate(_TABLE)
