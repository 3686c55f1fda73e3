"""A protocol's call budget, declared beside its machine for ``--estimate`` (optional: a registration without
one is estimated as undeclared): ``CallBudget`` with a ``per_item`` function that returns a ``Budget`` of
``RoleCalls`` per role (``merged``), from the run's ``Figure`` values, and ``Assumed`` for what it takes on trust.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.session import (
        Assumed as Assumed,
        Budget as Budget,
        CallBudget as CallBudget,
        Figure as Figure,
        RoleCalls as RoleCalls,
        merged as merged,
    )

__getattr__, __dir__, __all__ = lazy_face(__name__)
