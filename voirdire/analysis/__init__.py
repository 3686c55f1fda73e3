"""Reading finished runs: charts drawn with matplotlib, runs compared item by item, paper tables reproduced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.analysis.compare import (
        By as By,
        CompareError as CompareError,
        Comparison as Comparison,
        RunOverviews as RunOverviews,
        compare as compare,
        compare_runs as compare_runs,
        compared_run as compared_run,
        comparison_charts as comparison_charts,
        run_labels as run_labels,
    )
    from voirdire.analysis.drawing import (
        PlotsUnavailable as PlotsUnavailable,
        render as render,
        require as require,
        save as save,
        transcript_charts as transcript_charts,
    )
    from voirdire.analysis.examples import (
        ExampleOutcome as ExampleOutcome,
        examples as examples,
        examples_table as examples_table,
        find as find,
        replay as replay,
        run_examples as run_examples,
        unprinted as unprinted,
        write_examples as write_examples,
    )
    from voirdire.analysis.reproduce import (
        check as check,
        get as get,
        listing as listing,
        reproductions as reproductions,
        run as run,
        text as text,
        write as write,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
