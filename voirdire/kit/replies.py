"""The core's readers of closed answers, with a protocol's own words: ``read_yes_no``, ``read_polar``,
``read_label``, ``read_number`` (``Polar``, ``Labels``), ``read_conclusion`` around a protocol's own reader (the
conclusion a reply ends on), and ``LONG_REPLY_CHARS`` (a reply longer than this is read in a worker thread).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.replies import (
        Labels as Labels,
        Polar as Polar,
        read_conclusion as read_conclusion,
        read_label as read_label,
        read_number as read_number,
        read_polar as read_polar,
        read_yes_no as read_yes_no,
    )
    from voirdire.session import LONG_REPLY_CHARS as LONG_REPLY_CHARS

__getattr__, __dir__, __all__ = lazy_face(__name__)
