"""Transcripts and datasets as a protocol's report, reproduction or loader reads them: ``load``,
``iter_records``, ``load_outline``, ``Transcript``, ``SessionRecord``, ``RunHeader``, ``Step``, ``ModelCall``;
``load_items``, ``read_records``, ``as_list``, ``read_text`` and ``DatasetError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.base import read_text as read_text
    from voirdire.registry import (
        DatasetError as DatasetError,
        as_list as as_list,
        load_items as load_items,
        read_records as read_records,
    )
    from voirdire.transcript import (
        ModelCall as ModelCall,
        RunHeader as RunHeader,
        SessionRecord as SessionRecord,
        Step as Step,
        Transcript as Transcript,
        iter_records as iter_records,
        load as load,
        load_outline as load_outline,
    )

__getattr__, __dir__, __all__ = lazy_face(__name__)
