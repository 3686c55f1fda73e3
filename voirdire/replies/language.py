"""Whether a reply is written in a language the readers do not read.

The readers know English words only. A reply in French, Spanish, German, Italian or Portuguese can hold a word that
looks like an answer ("Ce n'est pas une contradiction.", "No, no tengo más preguntas."), and reading that word
alone would guess; such a reply is refused instead. A reply counts as foreign when it has more words that are
frequent in those languages and not English (articles, copulas, pronouns, "oui", "nein") than English function
words, or when a yes/no word of another language answers alone.
"""

from __future__ import annotations

import re

from .lexicon import words

_WORD = re.compile(r"[^\W\d_]+")
_FOREIGN = words(
    # French
    "est sont pas une les des du je il elle nous vous ce cette c l d qu n j mais avec pour dans oui non réponse "
    "même deux affirmation correcte incorrecte donne voici très aussi "
    # Spanish
    "es una el los las que sí si tengo más preguntas equivalentes contradicción correcto incorrecto pero "
    "respuesta también muy está esta este "
    # German
    "ist nicht der das und ein eine ja nein ich habe noch fragen antwort behauptung korrekt falsch sind auch "
    "keine kein widerspruch "
    # Italian, Portuguese
    "è della sono anche não é sim uma também "
    # what a prompt's answer is called: score, answer, label, rating
    "punteggio risposta etichetta valutazione puntuación etiqueta calificación bewertung punkte punktzahl "
    "pontuação resposta rótulo"
)
_ENGLISH = words(
    "the a an is are was were be been it this that these those of to in on and or but not no yes i you we they "
    "he she my your its their have has had do does did with for as by from so there what which who claim answer "
    "label score correct incorrect sentence sentences premise hypothesis entailment contradiction neutral"
)


def foreign(text: str, limit: int = 2_000) -> bool:
    """Whether the first ``limit`` characters read as another language than English (see the module's docstring)."""
    found = _WORD.findall(text[:limit].lower())
    if not found:
        return False
    theirs = sum(w in _FOREIGN for w in found)
    ours = sum(w in _ENGLISH for w in found)
    return theirs > ours
