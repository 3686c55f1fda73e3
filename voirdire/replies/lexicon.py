"""What every reader of closed answers shares: the one front end of the polar, label and yes/no readers.

``tokens``: lower case, quotes and dashes unified, contractions expanded, the caller's words mapped onto its tokens,
fixed phrases resolved (echoes of the prompt's alternatives, "no doubt" and "not only" as emphatic, "by no means" and
"rather than" as negations). ``sentences``: at . ! ? ; and line breaks, with questions, a leading "Yes," and a
question after a lead-in ("...: when was it?") told apart. ``clauses``: a sentence cut at conjunctions and breaks.
``concludes``: a clause that gives the reply's conclusion ("Therefore", "Verdict:", "I conclude"). ``negations``:
the negations in scope, double ones cancelling ("not incorrect"). ``withheld``: a negated verb of knowing ("I
cannot confirm", "I cannot call it correct"). ``answer_word``: a leading answer, emphatic forms included
("Absolutely not", "No doubt."). ``SYNONYMS``: entailment in other words ("inferred from", "implies").
``qualified``: an answer short of sure ("fairly
confident", "I could be wrong"). ``forced_choice``: "If I had to choose, ...". One tokenising regular expression
without nested quantifiers and bounded look-backs: linear in the reply's length.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from itertools import pairwise


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _table(spec: str) -> dict[tuple[str, ...], list[str]]:
    """A phrase table from "a b|c d=x; e f=y": each phrase (split at |) is replaced by the words after its '='."""
    out: dict[tuple[str, ...], list[str]] = {}
    for entry in spec.split(";"):
        phrases, _, replacement = entry.rpartition("=")
        out.update({tuple(p.split()): replacement.split() for p in phrases.split("|")})
    return out


TOKEN = re.compile(r"[a-z0-9]+(?:['\-][a-z0-9]+)*|\n|[^\sa-z0-9]")
TRANSLATE = str.maketrans(
    {"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "’": "'", "‘": "'", "`": "'", "—": " — ", "–": " — ", "…": "."}
)
_NT_BASE = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}
_CONTRACTIONS_S = words("it that there here what he she who this where how")
_SUFFIXES = {"'re": "are", "'m": "am", "'ve": "have", "'ll": "will", "'d": "would"}
_NO_APOSTROPHE = {  # contractions written without their apostrophe
    w: full
    for (w,), full in _table(
        "dont=do not;doesnt=does not;didnt=did not;isnt=is not;cant=can not;cannot=can not;wont=will not;wasnt=was "
        "not;arent=are not;im=i am;couldnt=could not;wouldnt=would not"
    ).items()
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


def _table_shape(table: Mapping[tuple[str, ...], list[str]]) -> tuple[frozenset[str], int]:
    """The words a table's phrases start with, and its longest phrase's length."""
    return frozenset(k[0] for k in table), max(len(k) for k in table)


def resolve_phrases(tokens: list[str], table: Mapping[tuple[str, ...], list[str]]) -> list[str]:
    """Fixed phrases replaced, longest first ("by no means" → not); the table's longest key bounds the look-ahead."""
    # The module's own tables never change: their shapes are computed once (a reply's reading resolves two
    # tables, and walking their 66 keys cost more than the resolving); any other table is walked each time.
    first, longest = _SHAPES[id(table)][1] if id(table) in _SHAPES else _table_shape(table)
    out: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        if tokens[i] in first:
            for size in range(min(longest, n - i), 0, -1):
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


# Fixed phrases: echoes of the prompt's own alternatives ("correct or incorrect"), emphatic positives that contain a
# negation ("no doubt", "not only"), negations spelled in several words, and a few synonyms of the readers' words.
PHRASES = _table(
    "<pos> or possibly <neg>|<pos> or <neg>|<neg> or <pos>|<pos> / <neg>|<neg> / <pos>|<pos> vs <neg>|"
    "<pos> versus <neg>|yes or no|no or yes|yes / no=<echo>;"
    "not only|not just|not merely|no doubt|no doubts|little doubt|hardly any doubt|without a doubt|without any doubt|"
    "without doubt|beyond any doubt|beyond a doubt|beyond reasonable doubt|beyond doubt|no reason to doubt|"
    "no question that|could not be more|can not be more|no question about it=<emph>;"
    "go as far as|go so far as=venture;"
    "by no means|in no way|under no circumstances|far from|anything but|no longer|not at all|rather than|instead of|"
    "as opposed to=not; even though|even if=although; in spite of=despite; sure thing=sure;"
    "at first glance|at first sight|at first=initially"
)
# Paraphrases of entailment, resolved before a caller's words are mapped: "the hypothesis can be inferred from the
# premise" is "... can be entailed by the premise", "the premise implies the hypothesis" is "... entails ...".
SYNONYMS = _table(
    "inferred from|deduced from|derived from|implied by|follows from|follow from|followed from|following from|"
    "a logical consequence of|a consequence of|logical consequence of|a logical implication of=entailed by;"
    "implies=entails; imply=entail; implied=entailed; implying=entailing"
)
NOISE = words("* _ # > ~ |")
# id -> (the table itself, kept so that its id cannot be another's, and its shape)
_SHAPES = {id(t): (t, _table_shape(t)) for t in (PHRASES, SYNONYMS)}


def tokens(
    text: str,
    vocabulary: Mapping[str, str],
    *,
    echo: re.Pattern[str] | None = None,
    quoted: frozenset[str] | None = None,
) -> list[str]:
    """Lower-cased words and punctuation, contractions expanded, the caller's words mapped onto its tokens, fixed
    phrases resolved; one "\\n" ends each line. Lines that ``echo`` matches (the prompt's inputs repeated) are
    skipped. With ``quoted``, quotations are read by ``quotations``; without, quote marks are dropped."""
    text = text.replace("‘‘", '"').replace("’’", '"').replace("''", '"').translate(TRANSLATE).lower()
    raw: list[str] = []
    for line in text.splitlines():
        for tok in () if echo is not None and echo.match(line) else TOKEN.findall(line):
            if tok in NOISE or (quoted is None and tok in ('"', "'")):
                continue
            if tok == "-":  # a dash between spaces separates clauses, a hyphen inside a word was kept with it
                tok = "—"
            head, _, tail = tok.partition("-")
            if head in ("non", "not") and tail in vocabulary:  # "non-entailment"
                raw.extend(("not", vocabulary[tail]))
                continue
            raw.extend(expand(tok))
        if raw and raw[-1] != "\n":
            raw.append("\n")
    raw = [vocabulary.get(w, w) for w in resolve_phrases(raw, SYNONYMS)]
    return resolve_phrases(raw if quoted is None else quotations(raw, quoted), PHRASES)


def quotations(raw: list[str], keep: frozenset[str], span: int = 60) -> list[str]:
    """A quotation of a few words that holds one of ``keep`` is unquoted ('The claim is "correct".'); a longer one
    is one opaque phrase ``<q>`` (a quoted claim is not the reply's verdict). A stray quote mark is dropped."""
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        tok = raw[i]
        if tok not in ('"', "'"):
            out.append(tok)
            i += 1
            continue
        j = i + 1
        limit = span if tok == '"' else span // 5  # a lone ' is as often an apostrophe ("the Nolans'")
        while j < n and j - i <= limit and raw[j] != tok and raw[j] != "\n":
            j += 1
        if j < n and raw[j] == tok and j > i + 1:
            inner = raw[i + 1 : j]
            if len(inner) <= 3 and (tok == "'" or any(w in keep for w in inner)):
                out.extend(inner)
            else:
                out.append("<q>")
            i = j + 1
        else:
            i += 1
    return out


AUX = words("is are was were do does did can could would should will has have am shall may might must")
INTERJECTION_NEXT = words(", . ! ; : — i it the this that we my your its they he she there thank thanks but not sir")


@dataclass(frozen=True, slots=True)
class Sentence:
    tokens: list[str]
    question: bool


def sentences(tokens: list[str]) -> list[Sentence]:
    """Sentences at . ! ? ; and line breaks. A sentence that ends in '?' or opens with an auxiliary verb ("Is the
    claim correct") is a question. A leading "Yes," / "No," is an interjection and kept as its own sentence."""
    out: list[Sentence] = []
    start = 0
    for i, tok in enumerate([*tokens, "\n"]):
        if tok not in ".!?;\n":
            continue
        lead = start
        while lead < i and tokens[lead] in (",", ":", "—", "(", ")"):
            lead += 1  # an index, not repeated slicing: a run of dashes stays linear
        sent = tokens[lead:i]
        start = i + 1
        if sent and sent[0] in ("yes", "no") and len(sent) > 1 and sent[1] in INTERJECTION_NEXT:
            out.append(Sentence([sent[0]], False))
            sent = sent[2:] if sent[1] == "," else sent[1:]
        if sent and tok == "?" and ":" in sent:  # "I have one more question: when was it released?"
            colon = len(sent) - 1 - sent[::-1].index(":")
            out.append(Sentence(sent[:colon], False))
            sent = sent[colon + 1 :]
        if sent:
            out.append(Sentence(sent, tok == "?" or (sent[0] in AUX and (len(sent) < 2 or sent[1] != "not"))))
    return out


HARD_BREAK = words(": — ( ) [ ] { }")
CONTRAST = words("but however yet nevertheless nonetheless still instead rather")
HYPOTHETICAL = words("if unless whether assuming suppose supposing provided")
SUBORDINATE = words(
    "although though whereas while despite because since as which who whom whose where when given considering"
)
# Words that open a new clause anywhere; the rest only after a comma.
SPLIT_ALWAYS = words(
    "but although though whereas while however because and or nevertheless nonetheless despite unless yet"
)
SPLIT_AFTER_COMMA = (
    CONTRAST
    | SUBORDINATE
    | HYPOTHETICAL
    | words("and or so therefore thus hence not meaning indicating suggesting implying making")
)


def clauses(
    sent: list[str],
    always: frozenset[str],
    after_comma: frozenset[str],
    comma_ends: Callable[[int, int], bool] = lambda start, k: True,
    keep: Container[int] = (),
) -> list[tuple[int, int]]:
    """Clause spans [start, end) of a sentence. A clause ends at a hard break (":", a dash, brackets), before a word
    of ``always`` (not after "not"), before a word of ``after_comma`` that follows a comma, and at a comma where
    ``comma_ends(start, comma)``; a position in ``keep`` never ends one. Breaks and commas are left out."""
    out: list[tuple[int, int]] = []
    start = 0
    for k, tok in enumerate(sent):
        prev = sent[k - 1] if k else ""
        if k in keep:
            continue
        if tok in HARD_BREAK or (tok == "," and comma_ends(start, k)):
            out.append((start, k))
            start = k + 1
        elif (tok in always and prev != "not") or (prev == "," and tok in after_comma):
            out.append((start, k - (prev == ",")))
            start = k
    out.append((start, len(sent)))
    return [(a, b) for a, b in out if b > a]


DETERMINERS = words("the a an this that its your my our their his her")
_CONCLUDING_ADVERBS = words("therefore thus hence consequently accordingly overall ultimately finally")
CONCLUSION_HEADINGS = words("so conclusion verdict decision answer summary")
_CONCLUDING_PAIRS = {
    *(("in", w) for w in ("conclusion", "summary", "short")),
    *(("to", w) for w in ("conclude", "summarize")),
    *((a, b) for a in ("my", "our", "final") for b in ("answer", "conclusion", "verdict", "decision")),
    *((a, b) for a in ("i", "we") for b in ("conclude", "concluded")),
    ("the", "end"),
}


def concludes(
    tokens: list[str], window: int = 24, headings: frozenset[str] = CONCLUSION_HEADINGS, pairs: Container[object] = ()
) -> bool:
    """Whether a clause gives the reply's conclusion: it opens with "So" or a heading ("Verdict:", "Conclusion"),
    has a concluding adverb ("therefore", "overall", not "the overall ..."), or says "in conclusion", "my verdict",
    "I conclude", "(leads) me to conclude" (or one of the caller's ``pairs``) in its first ``window`` words."""
    head = tokens[:window]
    if head[:1] and head[0] in headings:
        return True
    if any(w in _CONCLUDING_ADVERBS and (k == 0 or head[k - 1] not in DETERMINERS) for k, w in enumerate(head)):
        return True
    return any(pair in _CONCLUDING_PAIRS or pair in pairs for pair in pairwise(head)) or any(
        a in ("me", "i", "we") and c in ("conclude", "concluded") for a, c in zip(head, head[2:], strict=False)
    )


# Words that negate what they govern ("not", "never", "without", "I doubt", "fails to").
NEGATORS = words(
    "not no never none nobody nothing neither nor hardly barely scarcely without doubt doubts doubted doubtful deny "
    "denied denies dispute disputed disputes refute refuted unlikely fail fails failed failing lack lacks lacking non "
    "absence"
)
# Hedges: a reply that cannot tell ("unclear", "I cannot confirm"), a possibility ("maybe"), a partial degree.
UNDETERMINED = words(
    "unable impossible unclear uncertain unsure insufficient inconclusive unknown unverified unverifiable undetermined "
    "unconfirmed whether unproven unsupported undecided ambiguous"
)
KNOWING = words(
    "confirm confirmed confirms verify verified verifies determine determined say said tell know sure certain clear "
    "establish established ascertain ascertained conclude concluded decide decided prove proven proved judge evidence "
    "proof information enough possible able assess evaluate guarantee vouch indication support supported state "
    "definitively certainty confidence confident conclusively sign signs necessarily convinced persuaded call calling "
    "venture"
)
MAYBE = words("perhaps maybe possibly potentially conceivably possible")
PARTIAL = words(
    "partially partly mostly largely half somewhat nearly almost semi technically generally broadly arguably leaning "
    "lean leans borderline weak weakly slightly"
)


YES_WORDS = words("yes yeah yep yup sure certainly absolutely definitely indeed affirmative surely course naturally")
EMPHATIC = words("certainly absolutely definitely surely course obviously naturally")
_NOT_ANSWERS = words("really now yet quite exactly at this so necessarily currently anymore today")


def answer_word(tokens: list[str]) -> str | None:
    """The answer that opens a sentence: "Yes", "Sure", "Of course" / "No", "Nope", "Not really", and emphatic
    negatives, which are no: "Certainly not", "Absolutely not", "Of course not", "By no means", "Not at all"."""
    k = 1 if tokens[:1] == ["of"] else 0  # "of course"
    first = tokens[k] if k < len(tokens) else ""
    second = tokens[k + 1] if k + 1 < len(tokens) else ""
    ends = second in ("", ",", ".", "!", ";", ":", "—")
    if second == "not" and (first in EMPHATIC or first in ("yes", "no", "course")):
        return "no"
    if first == "<emph>":
        rest = tokens[k + 1 : k + 4]
        alone = not rest or rest[0] in ("!", ".") or rest[:2] == ["about", "it"] or rest[:1] == ["whatsoever"]
        return "yes" if alone else None  # "No doubt.", "No doubt about it"; not "No doubt they differ"
    if first == "not":
        return "no" if ends or second in _NOT_ANSWERS else None
    if first in ("yes", "yeah", "yep", "yup", "affirmative"):
        return "yes"
    if first in YES_WORDS and (ends or second in ("yes", "i")):
        return "yes"
    if first in ("no", "nope", "nah", "negative") and (ends or second in INTERJECTION_NEXT or second in ("no", "way")):
        return "no"
    return None


_NEGATIVE_JUDGEMENTS = words("false wrong untrue mistaken <neg> incorrect inaccurate misleading")


def negations(words: list[str]) -> int:
    """How many negations govern what follows ``words``; "neither A nor B" is one, "it is false that" is one."""
    count = 0
    for k, w in enumerate(words):
        if w in NEGATORS:
            count += 1
        elif w in _NEGATIVE_JUDGEMENTS and k + 1 < len(words) and words[k + 1] in ("to", "that"):
            count += 1  # "it is false that ...", "it is wrong to say ..."
    if "neither" in words and "nor" in words:
        count -= 1  # "neither A nor B is correct": one negation
    return count


# "I would not say / call it correct" gives the opposite verdict; "I cannot call it correct", "I would not go as far
# as calling it correct" ("venture") withhold it.
_SAYING_OPPOSITE = frozenset({"say", "call"})


def withheld(words: list[str], knowing: frozenset[str] = KNOWING) -> bool:
    """A verb of knowing under negation ("I cannot confirm", "not sure", "no way to tell"): no verdict is given.
    "I would not say that ..." is not one: it gives the opposite verdict."""
    negation = next((j for j, w in enumerate(words) if w in NEGATORS), len(words))
    known = knowing.intersection(words[negation + 1 :])
    nobody = words[negation] in ("nobody", "none") if negation < len(words) else False  # "Nobody could call it"
    opposite = known <= _SAYING_OPPOSITE and (nobody or ("would" in words and not {"can", "could"}.intersection(words)))
    return bool(known) and not opposite


def answered(said: list[Sentence], k: int) -> tuple[list[str], str] | None:
    """A question restated and answered right away ("Is the claim correct? No.", "Entailment? Yes.", "Q: ...? A:
    No."): the question's words (without its leading auxiliary) and the answer, "yes" or "no"."""
    if not said[k].question or k + 1 >= len(said):
        return None
    reply = said[k + 1].tokens
    if len(reply) > 2 and reply[0] in ("a", "answer", "response", "reply") and reply[1] == ":":
        reply = reply[2:]
    answer = answer_word(reply)
    asked = said[k].tokens
    return None if answer is None else (asked[1:] if asked[0] in AUX else asked, answer)


# A word that is the subject of a predicate: "Entailment is false", "Correct is my answer", "Incorrect is not how
# I would describe it". Other predicates ("Entailment is when ...") define the word, asserting nothing.
SUBJECT_VERBS = words(
    "is was are does do would will seems seem sounds applies apply holds hold fits fit describes can should must"
)
_DENYING = words("wrong false incorrect inaccurate invalid inappropriate excluded unlikely impossible ruled untrue")
_AFFIRMING = words(
    "correct right true answer appropriate valid case best label applies apply holds hold fits fit accurate "
    "relationship relation one verdict classification guess choice pick bet decision conclusion assessment judgment "
    "judgement"
)


def judged(predicate: list[str]) -> bool | None:
    """Whether the predicate of a word used as its subject affirms the word (True), denies it (False), or does
    neither (None: a definition, or "the last word I would use")."""
    if {"last", "least", "worst"}.intersection(predicate):
        return None
    negative = any(w in _DENYING for w in predicate) != any(w in NEGATORS for w in predicate)
    return None if not negative and not _AFFIRMING.intersection(predicate) else not negative


SURE = words("sure certain confident positive convinced")
_ASKING = words("why how what which who whom where when whether if")


def doubted(clauses: list[list[str]]) -> bool:
    """Whether a sentence doubts itself ("..., though I am not certain", "..., but I'm unsure"): its verdicts are
    then open. A doubt that a later contrast overrides ("I am not sure, but I think it is neutral") is not."""
    last = max((i for i, c in enumerate(clauses) if _doubts(c)), default=None)
    return last is not None and not any(c[:1] and c[0] in CONTRAST for c in clauses[last + 1 :])


def _doubts(clause: list[str]) -> bool:
    for k, w in enumerate(clause):
        before = clause[max(0, k - 5) : k]
        if "i" not in before or (k + 1 < len(clause) and clause[k + 1] in _ASKING):
            continue
        if (w in SURE and "not" in clause[max(0, k - 3) : k]) or w in ("unsure", "uncertain"):
            return True
    return False


# A degree short of certainty ("fairly confident", "mostly", "probably", "to a degree") or a self-doubt ("I could
# be wrong"): an answer that qualifies itself. Asked "Are you sure?" (LMvLM §4, AYS), it is neither the certainty
# that Yes states nor the No of not being sure (docs/replies.md, "Graded confidence").
_GRADED = words("fairly pretty reasonably mostly somewhat moderately relatively quite probably likely largely")
_DEGREE_PHRASES = {("to", "a", "degree"), ("to", "some", "extent"), ("to", "an", "extent"), ("more", "or", "less")}
_DOUBT_MODALS = words("could may might")
_MISTAKEN = words("wrong mistaken")


def qualified(tokens: list[str]) -> bool:
    """Whether a sentence qualifies its answer: a graded degree of sureness ("fairly sure", "mostly", "Probably,
    yes"), a degree phrase ("to a degree"), or "I could / may / might be wrong"."""
    n = len(tokens)
    for k, w in enumerate(tokens):
        nxt = tokens[k + 1] if k + 1 < n else ""
        if w in _GRADED and (nxt in SURE or nxt in ("", ",", ".", "!", ";", "yes") or k == 0):
            return True
        if tuple(tokens[k : k + 3]) in _DEGREE_PHRASES:
            return True
        if w == "i" and nxt in _DOUBT_MODALS and tokens[k + 2 : k + 3] == ["be"] and tokens[k + 3 : k + 4] and (
            tokens[k + 3] in _MISTAKEN
        ):
            return True
    return False


_CHOOSING = words("choose pick decide answer commit")


def forced_choice(clause: list[str]) -> bool:
    """ "If I had to choose, ...": a condition on the asking, not on the verdict; what follows is the verdict."""
    return clause[:2] == ["if", "i"] and clause[2:3] in (["had"], ["have"]) and clause[3:4] == ["to"] and (
        clause[4:5] != [] and clause[4] in _CHOOSING and len(clause) == 5
    )
