"""Models and rule roles a protocol builds itself: ``RoleSettings``, ``FunctionAgent`` (a role played by a
rule), ``Clients`` and ``Models`` (the clients a run is given), sentence and cross encoders and the device they run
on (``pick_device``, ``Device``, ``DEVICES``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.agents import FunctionAgent as FunctionAgent
    from voirdire.api import Clients as Clients, Models as Models
    from voirdire.models import (
        DEVICES as DEVICES,
        Device as Device,
        RoleSettings as RoleSettings,
        cross_encoder as cross_encoder,
        pick_device as pick_device,
        sentence_encoder as sentence_encoder,
    )

__getattr__, __dir__, __all__ = lazy_face(__name__)
