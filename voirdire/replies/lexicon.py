"""The words every reader starts from: lower case, quotes and dashes unified, contractions expanded.

One tokenising regular expression without nested quantifiers, so tokenising is linear in the reply's length.
"""

from __future__ import annotations

import re


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


TOKEN = re.compile(r"[a-z0-9]+(?:['\-][a-z0-9]+)*|\n|[^\sa-z0-9]")
TRANSLATE = str.maketrans(
    {"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "’": "'", "‘": "'", "`": "'", "—": " — ", "–": " — ", "…": "."}
)
_NT_BASE = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}
_CONTRACTIONS_S = words("it that there here what he she who this where how")
_SUFFIXES = {"'re": "are", "'m": "am", "'ve": "have", "'ll": "will", "'d": "would"}
_NO_APOSTROPHE = {
    "dont": ["do", "not"],
    "doesnt": ["does", "not"],
    "didnt": ["did", "not"],
    "isnt": ["is", "not"],
    "cant": ["can", "not"],
    "cannot": ["can", "not"],
    "wont": ["will", "not"],
    "wasnt": ["was", "not"],
    "arent": ["are", "not"],
    "im": ["i", "am"],
    "couldnt": ["could", "not"],
    "wouldnt": ["would", "not"],
}


def expand(word: str) -> list[str]:
    """Contractions into words: "isn't" → is not, "it's" → it is; a possessive ("examinee's") stays one word."""
    if word in _NO_APOSTROPHE:
        return _NO_APOSTROPHE[word]
    if "'" not in word:
        return [word]
    if word.endswith("n't"):
        base = word[:-3]
        return [_NT_BASE.get(base, base), "not"]
    for suffix, full in _SUFFIXES.items():
        if word.endswith(suffix):
            return [word[: -len(suffix)], full]
    if word.endswith("'s") and word[:-2] in _CONTRACTIONS_S:
        return [word[:-2], "is"]
    return [word]


def resolve_phrases(tokens: list[str], table: dict[tuple[str, ...], list[str]]) -> list[str]:
    """Fixed phrases replaced, longest first ("by no means" → not); the table's longest key bounds the look-ahead."""
    first = frozenset(k[0] for k in table)
    longest = max(len(k) for k in table)
    out: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        if tokens[i] in first:
            for size in range(min(longest, n - i), 1, -1):
                repl = table.get(tuple(tokens[i : i + size]))
                if repl is not None:
                    out.extend(repl)
                    i += size
                    break
            else:
                out.append(tokens[i])
                i += 1
        else:
            out.append(tokens[i])
            i += 1
    return out
