"""The linearity test for entity extraction (§3.1, App. A): its groups, the replacement R and the test itself.

- ``parse_entities`` reads Prompt 1's numbered list ``N. class: entity``; ``most_frequent`` keeps the most
  frequent entity set of the k repeated extractions (§5.1: k = 11) and its count, Con_o (Table 1).
- G_1 is the power set of the extracted entities L_e(s) = {e_1..e_m} as characteristic vectors under XOR; a bit
  b_i = 1 means e_i is replaced by its synonym e'_i (§3.1). ``replace`` is R: the original sentence with the chosen
  entities replaced (§5.1: "we simply keep the original sentence by replacing entities with their synonyms").
- G_2 is 2^SE under XNOR; the ideal extraction maps R(v) to the complement v̄. ``observe`` reads one extraction of
  R(v) as an element of G_2: u_i = 1 when e_i is extracted and e'_i is not, 0 for the converse; an entity that is
  extracted in neither form (or in both) has no value (None), and no equation holding it can pass. Entities beyond
  the m being tested are not part of the groups and are ignored.
- ``linearity_test`` checks f(x ⊕ y) = f(x) ⊖ f(y) over every combination of the repeated extractions of R(x),
  R(y), R(x ⊕ y) (§5.1: 11³; the test passes when any combination passes, and A_rate is the passing share).
- The named/non-named rules and the synonym vote of App. A.2 are ``named_by_rule`` and ``vote_synonym``.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel

from voirdire.kit import ParseError
from voirdire.kit.replies import Labels, read_label

Vector = tuple[int, ...]


class Entity(BaseModel):
    """One extracted entity: its text and the class the oracle gave it (App. A.1)."""

    text: str
    cls: str = ""


def norm(text: str) -> str:
    """How two entity strings are compared: case-folded, quotes and surrounding punctuation dropped, spaces single."""
    text = re.sub(r"[\"“”‘’`]", "", text).strip().strip(".,;:!?'()[]").strip()
    return re.sub(r"\s+", " ", text).casefold()


_ITEM = re.compile(r"^\s*(\d+)[.)]\s*(.+?)\s*$")


class UnreadableList(ParseError):
    """The reply is not a numbered list."""


def parse_entities(text: str) -> list[Entity]:
    """Prompt 1's reply: ``N. class: entity`` lines (a line without a class is an entity of class "")."""
    out: list[Entity] = []
    seen: set[str] = set()
    for line in text.splitlines():
        m = _ITEM.match(line.strip().strip('"'))
        if not m:
            continue
        body = m.group(2).strip().strip('"')
        cls, sep, name = body.partition(":")
        entity = Entity(text=name.strip(), cls=cls.strip().lower()) if sep else Entity(text=body.strip())
        key = norm(entity.text)
        if key and key not in seen:
            seen.add(key)
            out.append(entity)
    if not out and not re.search(r"\bno entit", text, re.I):
        raise UnreadableList("no numbered 'N. class: entity' line")
    return out


class ExtractedEntity(BaseModel):
    """One entity as structured mode asks for it: Prompt 1's ``class: entity`` as two fields."""

    type: str
    name: str


class Extraction(BaseModel):
    """Prompt 1 in structured mode (``--structured``): the numbered list as a JSON list."""

    entities: list[ExtractedEntity]


class Candidates(BaseModel):
    """Prompts 3-4 in structured mode: the numbered list of candidates as a JSON list."""

    candidates: list[str]


NAMED_CHOICES = ("named entity", "normal entity")


def as_entities(value: list[Entity] | Extraction | None) -> list[Entity] | None:
    """Prompt 1's reading in either mode as entities (duplicates dropped)."""
    if value is None or isinstance(value, list):
        return value
    out: list[Entity] = []
    for e in value.entities:
        if e.name.strip() and norm(e.name) not in {norm(o.text) for o in out}:
            out.append(Entity(text=e.name.strip(), cls=e.type.strip().lower()))
    return out


def as_candidates(value: list[str] | Candidates | None) -> list[str] | None:
    if value is None or isinstance(value, list):
        return value
    return [c for c in value.candidates if c.strip()]


def as_named(value: bool | str | None) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    return value == NAMED_CHOICES[0]


def parse_list(text: str) -> list[str]:
    """Prompts 3-4's reply: a numbered list of candidates."""
    out = [m.group(2).strip().strip('"').strip() for line in text.splitlines() if (m := _ITEM.match(line.strip()))]
    out = [c for c in out if c]
    if not out:
        raise UnreadableList("no numbered line")
    return out


# Prompt 2's two answers, as the core reader reads the bracketed one ("[[not a named entity]]" is normal).
NAMED_OR_NORMAL = Labels(
    names=("named", "normal"),
    forms=(("named", "named", "noun"), ("normal", "normal", "noun"), ("unnamed", "normal", "noun")),
)


def parse_named(text: str) -> bool:
    """Prompt 2's answer in double brackets: True for "named entity", False for "normal entity" (the last bracket,
    read by ``voirdire.replies.read_label``; one that names both or neither is refused)."""
    found = re.findall(r"\[\[\s*([^\]]+?)\s*\]\]", text)
    if not found:
        raise ParseError("no [[answer]] in double brackets")
    try:
        return read_label(found[-1], NAMED_OR_NORMAL) == "named"
    except ParseError:
        raise ParseError(f"[[{found[-1]}]] is neither 'named entity' nor 'normal entity'") from None


def key_set(entities: Sequence[Entity]) -> frozenset[str]:
    return frozenset(norm(e.text) for e in entities)


def most_frequent(samples: Sequence[list[Entity] | None]) -> tuple[list[Entity] | None, int]:
    """§5.1: the most frequent entity set among the k extractions and how often it came (Con_o); unreadable
    samples are not votes. Ties go to the set seen first."""
    readable = [s for s in samples if s is not None]
    if not readable:
        return None, 0
    counts = Counter(key_set(s) for s in readable)
    best = max(counts.values())
    for s in readable:
        if counts[key_set(s)] == best:
            return s, best
    raise AssertionError("unreachable")  # pragma: no cover


# ---------------------------------------------------------------- App. A.2, part 1: named / non-named rules
# Classes among GPT-3.5's most common labels (App. A.2) whose capitalised members are names; "a person with any
# capitalization is named".
NAMED_CLASSES = frozenset(
    {
        "person", "people", "location", "organization", "organisation", "date", "film", "movie", "video game",
        "country", "city", "state", "company", "band", "song", "album", "book", "event", "time", "year",
    }
)  # fmt: skip


def named_by_rule(entity: Entity) -> tuple[bool | None, str]:
    """App. A.2: the capitalisation, universal and class rules. Returns (named?, the rule) or (None, "") when no
    rule decides and Prompt 2's vote must."""
    text, cls = entity.text.strip(), entity.cls.strip().lower()
    has_digit = any(c.isdigit() for c in text)
    has_upper = any(c.isupper() for c in text)
    if not has_upper and not has_digit:
        return False, "universal: lowercase and non-numeric = non-named"
    if cls in ("person", "people") and has_upper:
        return True, "class: a person with any capitalization is named"
    if cls in NAMED_CLASSES and (has_upper or has_digit):
        return True, f"class: a capitalised or numeric {cls} is named"
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'&.-]*", text) if len(w) > 3]
    if words and all(w[0].isupper() for w in words):
        return True, "capitalization: every content word capitalised"
    return None, ""


def vote_named(answers: Sequence[bool | None]) -> bool | None:
    """App. A.2: the named/non-named decision by a self-consistency vote of Prompt 2 (11 samples); a tie is
    undecided (None) and treated as non-named by the caller."""
    c = Counter(a for a in answers if a is not None)
    if not c or c[True] == c[False]:
        return None
    return c[True] > c[False]


def vote_synonym(lists: Sequence[list[str] | None], entity: str, sentence: str, taken: set[str]) -> str | None:
    """App. A.2, part 2: the synonym chosen by a self-consistency vote over the repeated Prompt 3/4 replies: the
    candidate found in most replies (ties: the better mean rank, then first seen). A candidate equal to the entity,
    already in the sentence, or already chosen for another entity cannot replace it."""
    support: Counter[str] = Counter()
    ranks: dict[str, list[int]] = {}
    first: dict[str, str] = {}
    low = sentence.casefold()
    for lst in lists:
        if not lst:
            continue
        seen: set[str] = set()
        for rank, cand in enumerate(lst):
            k = norm(cand)
            if not k or k in seen or k == norm(entity) or k in taken or k in low:
                continue
            seen.add(k)
            support[k] += 1
            ranks.setdefault(k, []).append(rank)
            first.setdefault(k, cand.strip())
    if not support:
        return None
    order = list(first)
    best = min(support, key=lambda k: (-support[k], sum(ranks[k]) / len(ranks[k]), order.index(k)))
    return first[best]


# ---------------------------------------------------------------- §3.1: R, the groups and the test
def bounded(entity: str) -> re.Pattern[str]:
    """The entity as whole words (case-insensitive): "the" does not match inside "theme"."""
    left = r"(?<!\w)" if entity[:1].isalnum() else ""
    right = r"(?!\w)" if entity[-1:].isalnum() else ""
    return re.compile(left + re.escape(entity) + right, re.I)


def occurs(entity: str, sentence: str) -> bool:
    """Whether R can replace the entity in the sentence."""
    return bool(entity.strip()) and bool(
        bounded(entity).search(sentence) or bounded(entity.strip("\"'")).search(sentence)
    )


def replace(sentence: str, entities: Sequence[str], synonyms: Sequence[str], v: Vector) -> str:
    """R(v): the sentence with e_j replaced by e'_j wherever b_j = 1 (every occurrence, longest entities first so a
    shorter entity inside a longer one is not replaced within it)."""
    chosen = sorted((j for j, b in enumerate(v) if b), key=lambda j: -len(entities[j]))
    out = sentence
    marks: dict[str, str] = {}
    for j in chosen:
        token = f"\x00{j}\x00"
        pattern = bounded(entities[j])
        if not pattern.search(out):
            pattern = bounded(entities[j].strip("\"'"))
        out = pattern.sub(token, out)
        marks[token] = synonyms[j]
    for token, synonym in marks.items():
        out = out.replace(token, synonym)
    return out


def xor(x: Vector, y: Vector) -> Vector:
    return tuple(a ^ b for a, b in zip(x, y, strict=True))


def xnor(x: Vector, y: Vector) -> Vector:
    return tuple(1 - (a ^ b) for a, b in zip(x, y, strict=True))


def complement(v: Vector) -> Vector:
    return tuple(1 - b for b in v)


Observed = tuple[int | None, ...]


def observe(extracted: Sequence[Entity] | None, entities: Sequence[str], synonyms: Sequence[str]) -> Observed | None:
    """One extraction of R(v) as an element of G_2: u_i = 1 when e_i (and not e'_i) is extracted, 0 when e'_i (and
    not e_i) is, None when neither or both are. None for an unreadable extraction."""
    if extracted is None:
        return None
    got = key_set(extracted)
    out: list[int | None] = []
    for e, s in zip(entities, synonyms, strict=True):
        a, b = norm(e) in got, norm(s) in got
        out.append(1 if a and not b else 0 if b and not a else None)
    return tuple(out)


def holds(fx: Observed | None, fy: Observed | None, fxy: Observed | None) -> bool:
    """f(x ⊕ y) = f(x) ⊖ f(y) for one combination of observed extractions."""
    if fx is None or fy is None or fxy is None or None in fx or None in fy or None in fxy:
        return False
    return fxy == xnor(fx, fy)  # type: ignore[arg-type]


class LinearityResult(BaseModel):
    """One linearity test (§3, §5.1): the vectors, the three R-sentences, and the combinations that passed."""

    x: list[int]
    y: list[int]
    xy: list[int]
    sentences: dict[str, str]
    combinations: int
    passing: int
    passed: bool
    con_r: dict[str, int]

    @property
    def rate(self) -> float:
        return self.passing / self.combinations if self.combinations else 0.0


def linearity_test(
    x: Vector,
    y: Vector,
    observed: dict[str, list[Observed | None]],
    sentences: dict[str, str],
    con_r: dict[str, int],
) -> LinearityResult:
    """§5.1: the test over every combination of the repeated extractions of R(x), R(y), R(x ⊕ y); it passes when
    any combination passes. ``observed`` holds the k observations of each ("x", "y", "x+y")."""
    ox, oy, oxy = (observed[k] for k in ("x", "y", "x+y"))
    # count passing combinations without the k³ loop: group identical observations
    cx, cy, cxy = Counter(ox), Counter(oy), Counter(oxy)
    passing = sum(
        nx * ny * nxy
        for (fx, nx), (fy, ny), (fxy, nxy) in itertools.product(cx.items(), cy.items(), cxy.items())
        if holds(fx, fy, fxy)
    )
    total = len(ox) * len(oy) * len(oxy)
    return LinearityResult(
        x=list(x),
        y=list(y),
        xy=list(xor(x, y)),
        sentences=sentences,
        combinations=total,
        passing=passing,
        passed=passing > 0,
        con_r=con_r,
    )


def homomorphisms(m: int) -> list[dict[Vector, Vector]]:
    """Every homomorphism (G_1, ⊕) → (G_2, ⊖) on m bits: f(v) = ¬(Av) for an m×m matrix A over GF(2) (2^(m²)
    of them; for the small m a test can enumerate)."""
    vectors = list(itertools.product((0, 1), repeat=m))
    out = []
    for bits in itertools.product((0, 1), repeat=m * m):
        rows = [bits[i * m : (i + 1) * m] for i in range(m)]
        out.append({v: tuple(1 - (sum(r[j] * v[j] for j in range(m)) % 2) for r in rows) for v in vectors})
    return out


def distance_to_linear(f: dict[Vector, Observed | None]) -> float:
    """ε: the least share of inputs on which f differs from a homomorphism (§3's δ(f, F)), by enumeration."""
    m = len(next(iter(f)))
    best = 1.0
    for h in homomorphisms(m):
        best = min(best, sum(1 for v, u in f.items() if u != h[v]) / len(f))
    return best
