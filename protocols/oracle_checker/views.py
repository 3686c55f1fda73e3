"""How the oracle-checker's steps read in ``voirdire show``, the viewer and the export (display hints, no reader
imports this package).

Entities (§5): the extracted entity sets with their agreement (con), the named/non-named vote and the synonym chosen
per entity (App. A.2), each linearity test with its characteristic vectors x, y, x ⊕ y, the sentences R(·) the
replacements give with the expected and the observed vectors, and whether f(x ⊕ y) = f(x) ⊖ f(y) held; the verdict
shows the guarantee of Theorems 3.1/3.2 for each ε. Paraphrase (§4): each φ-alignment with its phrase pairs, the
No-checker's category and coin-toss tests, and the triangular evidence of a rejection (App. B.4).
"""

from __future__ import annotations

from voirdire.kit import Column, StepView, VerdictView, Views

ENTITY_VIEWS = Views(
    steps={
        "extraction": StepView(
            title="extraction of {of}",
            fields=(Column(key="con", label="samples agreeing (con)"),),
            table="chosen",
            columns=(Column(key="#"), Column(key="text", label="entity"), Column(key="cls", label="class")),
        ),
        "named": StepView(
            title="named? {entity}",
            fields=(
                Column(key="named", label="named", format="yesno"),
                Column(key="votes", label="votes", format="list", missing="none"),
                Column(key="rule", label="rule", missing="none: the vote decided"),
            ),
        ),
        "synonym": StepView(
            title="replacement for {entity}",
            fields=(
                Column(key="synonym", label="chosen", missing="none"),
                Column(key="prompt", label="by"),
                Column(key="outcome", label="outcome", missing=""),
            ),
        ),
        "not_in_sentence": StepView(
            title="not in the sentence",
            fields=(Column(key="entities", label="entities", format="list"), Column(key="outcome", label="outcome")),
        ),
        "linearity_test": StepView(
            title="linearity test {test}",
            fields=(
                Column(key="x", label="x", format="bits"),
                Column(key="y", label="y", format="bits"),
                Column(key="xy", label="x ⊕ y", format="bits"),
                Column(key="passed", label="f(x ⊕ y) = f(x) ⊖ f(y)", format="check"),
                Column(key="rate", label="combinations passing", format="percent"),
            ),
            table="sentences",
            columns=(
                Column(key="name", label="R(·)"),
                Column(key="value", label="replaced sentence"),
                Column(key="/expected.{name}", label="expected f", format="bits"),
                Column(key="/observed_most_common.{name}", label="observed f", format="bits", missing="unreadable"),
                Column(key="/con_r.{name}", label="con"),
            ),
        ),
    },
    verdict=VerdictView(
        shows=StepView(
            title="linearity",
            fields=(
                Column(key="a_test", label="tests passed"),
                Column(key="tests", label="of"),
                Column(key="a_rate", label="combinations passing", format="percent"),
                Column(key="con_o", label="con"),
            ),
            table="guarantees",
            columns=(
                Column(key="epsilon", label="ε", format="number"),
                Column(key="tests", label="passing tests"),
                Column(key="confidence", label="P(f is ε-close to a homomorphism), Theorems 3.1/3.2", format="number"),
            ),
        ),
    ),
    folded=("checker",),
)

PARAPHRASE_VIEWS = Views(
    steps={
        "phi_alignment": StepView(
            title="φ_{phi} alignment · {purpose}",
            fields=(Column(key="holds", label="φ holds", format="check"),),
            table="alignments",
            columns=(
                Column(key="name", label="matching"),
                Column(
                    key="pairs",
                    label="aligned phrase pairs (similarity)",
                    format="pairs",
                    missing="none",
                    scores="similarities",
                ),
                Column(key="leftover", label="leftover phrases", format="list"),
                Column(key="aligned", label="oracle agreed", format="check"),
            ),
        ),
        "category": StepView(
            title="category {category}",
            fields=(Column(key="indifferentiable", label="indifferentiable paraphrases"),),
        ),
        "backends": StepView(
            title="backends",
            fields=(Column(key="parser"), Column(key="embedder"), Column(key="phi", label="φ")),
        ),
    },
    verdict=VerdictView(
        shows=StepView(
            title="paraphrase check",
            fields=(
                Column(key="answer", label="oracle's answer"),
                Column(key="category", label="category", missing=""),
                Column(key="triangular_evidence.p", label="triangular evidence: p", missing=""),
                Column(key="triangular_evidence.p_from", label="p is a paraphrase of", missing=""),
                Column(key="phrase_queries", label="phrase queries"),
            ),
            table="tests",
            columns=(
                Column(key="#"),
                Column(key="h", label="side"),
                Column(key="p", label="paraphrase p"),
                Column(key="answer", label="oracle: p ≡ other", missing="unreadable"),
            ),
        ),
    ),
    folded=("checker",),
)
